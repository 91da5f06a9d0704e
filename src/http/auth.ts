// Credentials → account. Bearer everywhere; `x-api-key` too where the surface allows it (the
// messages route, as Anthropic's SDK sends it).
import type { Principal } from '../accounts/api-keys'
import type { Deps } from '../deps'
import { GatewayError } from '../lib/errors'

export function readApiKey(headers: Headers, allowXApiKey: boolean): string | undefined {
  const authorization = headers.get('authorization')
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
    if (match) return match[1]
    // Not a Bearer (a proxy's own `Basic` credentials in front of the Anthropic SDK's x-api-key):
    // the key the client sent is still its key; read as missing, it was refused as never sent.
  }
  return allowXApiKey ? headers.get('x-api-key')?.trim() || undefined : undefined
}

/** Requests whose key was checked before their body was read (app.ts): not checked twice. */
const checkedBeforeBody = new WeakMap<Request, Principal>()

/**
 * The account a model request's key names, checked from its headers alone: a large body is read
 * only for a known account, so that no one without a key can make svc parse 32 MB (an audit: 1.2
 * GB of memory and seconds of a stalled event loop per such body, with no key at all).
 */
export async function requirePrincipalBeforeBody(deps: Deps, request: Request, allowXApiKey: boolean) {
  checkedBeforeBody.set(request, await requirePrincipal(deps, request, allowXApiKey))
}

export async function requirePrincipal(deps: Deps, request: Request, allowXApiKey: boolean): Promise<Principal> {
  const early = checkedBeforeBody.get(request)
  if (early) return early
  const key = readApiKey(request.headers, allowXApiKey)
  if (!key) {
    const how = allowXApiKey
      ? 'an `x-api-key` header or `Authorization: Bearer <key>`'
      : '`Authorization: Bearer <key>`'
    // A Basic header (a proxy's own) is something sent: say what svc could not read in it.
    const what = request.headers.has('authorization') ? 'no API key in the Authorization header' : 'missing API key'
    throw new GatewayError('authentication', `${what}: send ${how}`)
  }
  deps.syncCaches()
  const principal = await deps.auth.authenticate(key)
  if (!principal) throw new GatewayError('authentication', 'invalid API key (unknown or revoked)')
  return principal
}
