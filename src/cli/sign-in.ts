// `svc login`, `svc logout`, `svc whoami`: the CLI side of device sign-in.
import { hostname } from 'node:os'
import { formatUsd } from '../ledger/pricing'
import { GatewayError } from '../lib/errors'
import { isObject } from '../protocols/wire-values'
import { type Io, parseFlags, print, UsageError } from './context'
import { type GrantScopeView, scopeText } from './grant-scope'
import {
  type Credentials,
  credentialsPath,
  forgetCredentials,
  gatewayUrl,
  readCredentials,
  requireCredentials,
  UnreadableCredentials,
  writeCredentials,
} from './credentials'
import { reach, refusedKey } from './reach'

const defaultGateway = 'http://127.0.0.1:8080'
/** How long one request to the gateway may take. */
const requestTimeoutMs = 30_000

async function postJson(gateway: string, path: string, body: unknown, key?: string) {
  const headers = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) }
  const response = await reach(gateway, path, { method: 'POST', headers, body: JSON.stringify(body) }, requestTimeoutMs)
  return { status: response.status, body: await jsonObject(response) }
}

/** The answer's JSON object; {} for anything else (an empty body, a proxy's HTML page, `null`). */
async function jsonObject(response: Response): Promise<Record<string, unknown>> {
  const parsed: unknown = await response.json().catch(() => undefined)
  return isObject(parsed) ? parsed : {}
}

/** The message of an answer in svc's error shape, if it is one. */
function errorMessage(body: Record<string, unknown>): string | undefined {
  const error = body.error
  return isObject(error) && typeof error.message === 'string' ? error.message : undefined
}

/** Why the gateway did not start a sign-in: its own words when it answered in svc's error shape (a 429 when too many sign-ins wait). */
function signInRefusal(gateway: string, start: { status: number; body: Record<string, unknown> }): string {
  const message = errorMessage(start.body)
  return message
    ? `${gateway} did not start a sign-in (HTTP ${start.status}): ${message}`
    : `${gateway} did not start a sign-in (HTTP ${start.status}); is it an svc gateway?`
}

/** `refusal`: the error to throw for an answer that is not the account, given why and the status. */
async function whoami(gateway: string, key: string, refusal: (why: string, status: number) => Error) {
  const response = await reach(
    gateway,
    '/v1/auth/whoami',
    { headers: { authorization: `Bearer ${key}` } },
    requestTimeoutMs,
  )
  const body = await jsonObject(response)
  if (!response.ok) {
    const message = errorMessage(body)
    throw refusal(
      message
        ? `the gateway refused the key: ${message}`
        : `${gateway} answered HTTP ${response.status} to a sign-in check; is it an svc gateway?`,
      response.status,
    )
  }
  return body as {
    account?: { id: string; name: string }
    key?: { id: string; name: string; prefix: string }
    credit?: {
      limit_nanos: number
      used_nanos: number
      remaining_nanos: number
      /** Absent from a gateway older than the field. */
      scoped?: (GrantScopeView & { remaining_nanos: number })[]
    }
  }
}

/**
 * The gateway's link, moved under the base URL the user gave us. Behind a reverse proxy the server
 * may only know its internal address (http://127.0.0.1:8080/login) and not a path prefix the proxy
 * strips (https://example.com/svc/ -> /), but the base we just reached works for this user: keep
 * its origin and prefix and append the link's path and query. A link already under the base
 * (a server that knows its public URL) is kept as it is. Either way the user is sent nowhere but
 * the gateway they named.
 */
export function linkUnderGateway(gateway: string, link: unknown): string | undefined {
  if (typeof link !== 'string' || !link) return undefined
  try {
    const base = new URL(`${gateway}/`)
    const url = new URL(link, base)
    if (url.origin === base.origin && url.pathname.startsWith(base.pathname)) return url.href
    return `${gateway}${url.pathname}${url.search}${url.hash}`
  } catch {
    return undefined
  }
}

/** Opens the approval page where a desktop session exists; the URL is printed either way. */
function openBrowser(io: Io, url: string) {
  const opener =
    process.platform === 'darwin' ? 'open' : io.env.DISPLAY || io.env.WAYLAND_DISPLAY ? 'xdg-open' : undefined
  if (!opener || !Bun.which(opener)) return
  try {
    Bun.spawn([opener, url], { stdio: ['ignore', 'ignore', 'ignore'] }).unref()
  } catch {
    // No browser is fine: the user opens the printed URL.
  }
}

export async function runLogin(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    'with-token': { type: 'boolean' },
    'no-browser': { type: 'boolean' },
    name: { type: 'string' },
    insecure: { type: 'boolean' },
  })
  const [raw, what] =
    positionals[0] !== undefined
      ? [positionals[0], 'the gateway URL']
      : io.env.SVC_URL
        ? [io.env.SVC_URL, 'SVC_URL']
        : [storedSignIn(io).stored?.gateway ?? defaultGateway, 'the last gateway']
  const gateway = gatewayUrl(raw, { insecure: values.insecure, what })

  if (values['with-token']) {
    const key = (await (io.stdin?.() ?? Promise.resolve(''))).trim()
    if (!key) throw new UsageError('pipe the API key on standard input: `svc login --with-token < key-file`')
    const me = await whoami(gateway, key, (why) => new UsageError(why))
    const path = await storeSignIn(io, {
      gateway,
      api_key: key,
      key_id: me.key?.id,
      account: me.account?.name,
      origin: 'given',
    })
    print(
      io,
      values.json,
      { gateway, account: me.account },
      () => `signed in to ${gateway} as ${me.account?.name} (key stored in ${path})`,
    )
    return 0
  }

  const deviceName = values.name ?? `svc CLI on ${hostname()}`
  const start = await postJson(gateway, '/v1/auth/device/code', { device_name: deviceName })
  if (start.status !== 200) throw new UsageError(signInRefusal(gateway, start))
  const { device_code, user_code, expires_in } = start.body as Record<string, string & number>
  const verificationUri = linkUnderGateway(gateway, start.body.verification_uri) ?? `${gateway}/login`
  const verificationUriComplete = linkUnderGateway(gateway, start.body.verification_uri_complete)
  let interval = Number(start.body.interval ?? 5)
  io.err(
    verificationUriComplete
      ? `To sign in, open ${verificationUriComplete}\n(or go to ${verificationUri} and enter the code ${user_code})`
      : `To sign in, go to ${verificationUri} and enter the code ${user_code}`,
  )
  if (!values['no-browser']) openBrowser(io, verificationUriComplete ?? verificationUri)

  const deadline = Date.now() + Number(expires_in) * 1000
  let lostGateway = false
  while (Date.now() < deadline) {
    await Bun.sleep(interval * 1000)
    // The gateway may restart while the user approves: polls go on until the code expires.
    const poll = await postJson(gateway, '/v1/auth/device/token', { device_code }).catch((err: unknown) => {
      if (!lostGateway) io.err(`${(err as Error).message}; trying again until the code expires`)
      lostGateway = true
      return undefined
    })
    if (!poll) continue
    lostGateway = false
    if (poll.status === 200) {
      const account = poll.body.account as { id: string; name: string }
      const path = await storeSignIn(io, {
        gateway,
        api_key: String(poll.body.access_token),
        key_id: String(poll.body.key_id),
        account: account.name,
      })
      print(
        io,
        values.json,
        { gateway, account },
        () => `signed in to ${gateway} as ${account.name} (key stored in ${path})`,
      )
      return 0
    }
    // The command was right; the sign-in did not happen: exit 1, no usage hint.
    switch (poll.body.error) {
      case 'authorization_pending':
        continue
      case 'slow_down':
        interval += 5
        continue
      case 'access_denied':
        throw new GatewayError('authentication', 'the sign-in was denied on the gateway')
      case 'expired_token':
        throw codeExpired()
      default:
        throw new GatewayError(
          'authentication',
          `sign-in failed: ${String(poll.body.error_description ?? poll.body.error ?? `HTTP ${poll.status}`)}`,
        )
    }
  }
  throw codeExpired()
}

const codeExpired = () =>
  new GatewayError('authentication', 'the code expired before it was approved: run `svc login` again')

/** Revokes a sign-in's key at its gateway; false when the gateway cannot be reached. */
async function revoke(stored: Credentials): Promise<boolean> {
  try {
    const result = await postJson(stored.gateway, '/v1/auth/logout', {}, stored.api_key)
    return result.status === 200 || result.status === 401
  } catch {
    return false
  }
}

/** `svc keys revoke` is an operator's verb, run where the gateway's database is: said as such. */
const revokeElsewhere = (stored: Credentials) =>
  `the gateway's operator revokes it with \`svc keys revoke ${stored.key_id ?? 'ID'}\` on its machine`

/** The stored sign-in, none, or why its file is unreadable: for the verbs that replace or delete it. */
function storedSignIn(io: Io): { stored?: Credentials; unreadable?: UnreadableCredentials } {
  try {
    return { stored: readCredentials(io) }
  } catch (err) {
    if (err instanceof UnreadableCredentials) return { unreadable: err }
    throw err
  }
}

/**
 * Stores a new sign-in in place of the old. A key the device sign-in made for this machine would
 * otherwise stay valid with nothing left that uses it: it is revoked. A key the user gave is theirs
 * to keep. An unreadable file is replaced, and said so: a key it may hold stays valid.
 */
async function storeSignIn(io: Io, credentials: Credentials): Promise<string> {
  const { stored: replaced, unreadable } = storedSignIn(io)
  if (unreadable)
    io.err(
      `replacing the unreadable sign-in file ${unreadable.path} (${unreadable.reason}); a key it may hold was not revoked`,
    )
  const path = writeCredentials(io, credentials)
  if (!replaced || replaced.origin === 'given' || replaced.api_key === credentials.api_key) return path
  if (!(await revoke(replaced)))
    io.err(`could not reach ${replaced.gateway} to revoke this machine's previous key; ${revokeElsewhere(replaced)}`)
  return path
}

export async function runLogout(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, {})
  const { stored, unreadable } = storedSignIn(io)
  if (unreadable) {
    forgetCredentials(io)
    io.err(
      `deleted the unreadable sign-in file ${unreadable.path} (${unreadable.reason}); a key it may hold could not be revoked: the gateway's operator revokes it with \`svc keys revoke ID\` on its machine`,
    )
    print(io, values.json, { signed_in: false, revoked: false }, () => 'signed out')
    return 0
  }
  if (!stored) {
    print(io, values.json, { signed_in: false }, () => 'not signed in')
    return 0
  }
  // A key given with --with-token may serve other machines and scripts: forgotten here, kept there.
  const given = stored.origin === 'given'
  const revoked = given ? false : await revoke(stored)
  forgetCredentials(io)
  if (!given && !revoked)
    io.err(`could not reach ${stored.gateway} to revoke the key; it was forgotten here, ${revokeElsewhere(stored)}`)
  print(io, values.json, { signed_in: false, revoked }, () =>
    given
      ? `signed out of ${stored.gateway} (the key you gave was forgotten here and still works; ${revokeElsewhere(stored)} to end it)`
      : `signed out of ${stored.gateway}${revoked ? ' (key revoked)' : ''}`,
  )
  return 0
}

export async function runWhoami(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, { insecure: { type: 'boolean' } })
  // Not signed in is an answer to the question, not a mistyped command: exit 1, no usage hint.
  const credentials = (() => {
    try {
      return requireCredentials(io, { insecure: values.insecure })
    } catch (err) {
      throw err instanceof UsageError ? new GatewayError('authentication', err.message) : err
    }
  })()
  // A refused key is the sign-in's to renew (or $SVC_API_KEY's to change), as the launchers say;
  // anything else is the gateway's.
  const me = await whoami(credentials.gateway, credentials.api_key, (why, status) =>
    status === 401 ? refusedKey(credentials.gateway, credentials.keyFrom) : new GatewayError('api_error', why),
  )
  const credit = me.credit ?? { limit_nanos: 0, used_nanos: 0, remaining_nanos: 0 }
  print(io, values.json, { gateway: credentials.gateway, ...me, credentials_file: credentialsPath(io) }, () =>
    [
      `account  ${me.account?.name} (${me.account?.id})`,
      `gateway  ${credentials.gateway}`,
      `key      ${me.key?.name} (${me.key?.prefix}…)`,
      `credit   ${formatUsd(credit.remaining_nanos)} USD left of ${formatUsd(credit.limit_nanos)} (used ${formatUsd(credit.used_nanos)})`,
      // What of it pays only some requests, as `svc grants list` words a scope.
      ...(me.credit?.scoped ?? []).map(
        (g) => `         ${formatUsd(g.remaining_nanos)} USD of it only for ${scopeText(g)}`,
      ),
    ].join('\n'),
  )
  return 0
}
