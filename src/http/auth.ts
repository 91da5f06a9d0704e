// Credentials → account. Bearer everywhere; `x-api-key` too where the surface allows it (the
// messages route, as Anthropic's SDK sends it).
import type { Principal } from '../accounts/api-keys'
import type { Deps } from '../deps'
import { GatewayError } from '../lib/errors'

export function readApiKey(headers: Headers, allowXApiKey: boolean): string | undefined {
  const authorization = headers.get('authorization')
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization)
    return match?.[1]
  }
  return allowXApiKey ? (headers.get('x-api-key')?.trim() ?? undefined) : undefined
}

export async function requirePrincipal(deps: Deps, headers: Headers, allowXApiKey: boolean): Promise<Principal> {
  const key = readApiKey(headers, allowXApiKey)
  if (!key) {
    const how = allowXApiKey
      ? 'an `x-api-key` header or `Authorization: Bearer <key>`'
      : '`Authorization: Bearer <key>`'
    throw new GatewayError('authentication', `missing API key: send ${how}`)
  }
  deps.syncCaches()
  const principal = await deps.auth.authenticate(key)
  if (!principal) throw new GatewayError('authentication', 'invalid API key (unknown or revoked)')
  return principal
}
