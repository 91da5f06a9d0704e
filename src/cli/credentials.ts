// Where `svc login` keeps the gateway URL and key: <config dir>/credentials.json, mode 0600 in a
// 0700 directory, so only the user can read the key. And the one rule for a gateway URL, wherever
// it comes from (`svc login URL`, $SVC_URL, the stored sign-in).
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ConfigError, userConfigDir } from '../config/load'
import { GatewayError } from '../lib/errors'
import { ipv6ZoneProblem } from '../lib/ipv6-zone'
import type { Io } from './context'
import { UsageError } from './context'

export interface Credentials {
  gateway: string
  api_key: string
  key_id?: string
  account?: string
  /**
   * `given`: a key the user already had (`svc login --with-token`), perhaps used elsewhere too:
   * signing out forgets it and leaves it working. Absent: a key the device sign-in made for this
   * machine (files written before this field held only those), revoked on signing out.
   */
  origin?: 'given'
}

export const credentialsPath = (io: Io) => join(userConfigDir(io.env), 'credentials.json')

/** A credentials file that is there but holds no sign-in svc can use (a hand edit, another program's file). */
export class UnreadableCredentials extends ConfigError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`the sign-in file ${path} is unreadable (${reason}): run \`svc login\` to replace it`)
  }
}

/** The stored sign-in; undefined when there is none; UnreadableCredentials when the file is broken. */
export function readCredentials(io: Io): Credentials | undefined {
  const path = credentialsPath(io)
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw new UnreadableCredentials(path, (err as NodeJS.ErrnoException).code ?? (err as Error).message)
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new UnreadableCredentials(path, 'not valid JSON')
  }
  const fields = parsed as Partial<Record<keyof Credentials, unknown>> | null
  if (typeof fields?.gateway !== 'string' || !fields.gateway || typeof fields.api_key !== 'string' || !fields.api_key)
    throw new UnreadableCredentials(path, 'no gateway and key in it')
  return parsed as Credentials
}

export function writeCredentials(io: Io, credentials: Credentials): string {
  const dir = userConfigDir(io.env)
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const path = credentialsPath(io)
  writeFileSync(path, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 })
  chmodSync(path, 0o600)
  return path
}

export const forgetCredentials = (io: Io) => rmSync(credentialsPath(io), { force: true })

/**
 * Path segments that end an address inside the gateway: a client's base URL (`…/compat-a`,
 * `…/compat-b/v1`) or a route copied whole (`…/v1/messages`, `…/login`). Only at the end of the
 * path: before other segments they are a reverse proxy's prefix (`https://example.com/v1/svc`),
 * which is kept, as any other prefix is.
 */
const routeTails = new Set([
  'compat-a',
  'compat-b',
  'v1',
  'messages',
  'responses',
  'models',
  'usage',
  'login',
  'dashboard',
  'healthz',
  'readyz',
  'openapi.json',
])
/** svc's alias prefixes: inside the gateway when a route tail follows (`…/openai/v1`), a proxy's prefix alone. */
const aliasPrefixes = new Set(['anthropic', 'openai'])

/** Where the path's address inside the gateway begins, or -1 where it names none. */
function routeTailAt(segments: string[]): number {
  let at = segments.length
  while (at > 0 && routeTails.has(segments[at - 1]!.toLowerCase())) at--
  if (at < segments.length && at > 0 && aliasPrefixes.has(segments[at - 1]!.toLowerCase())) at--
  return at < segments.length ? at : -1
}

/**
 * 127.0.0.0/8, ::1 (and ::ffff:127.x), localhost, and the unspecified addresses (0.0.0.0, ::) that
 * `svc serve --host 0.0.0.0` logs, which reach this machine: the key never leaves it.
 */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase()
  return (
    host === 'localhost' ||
    host === '0.0.0.0' ||
    host === '[::]' ||
    /^127(\.\d{1,3}){3}$/.test(host) ||
    host === '[::1]' ||
    /^\[::ffff:(127(\.\d{1,3}){3}|7f[0-9a-f]{2}:[0-9a-f]{1,4})\]$/.test(host)
  )
}

/**
 * The gateway URL normalised (scheme and host lower case, default port dropped, no trailing
 * slash): what is stored and what requests are made under. `what` names where it came from in
 * the messages. Plain http to another machine sends the key in clear, so it needs `insecure`.
 */
export function gatewayUrl(raw: string, opts: { insecure?: boolean; what?: string } = {}): string {
  const what = opts.what ?? 'the gateway URL'
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    url = new URL('none:')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    const zone = ipv6ZoneProblem(raw)
    if (zone) throw new UsageError(`${what} ${JSON.stringify(raw)}: ${zone}`)
    // `localhost:8080` parses as a URL of scheme "localhost:", `127.0.0.1:8080` as none.
    const bare = raw.includes('://') ? undefined : URL.canParse(`http://${raw}`) ? new URL(`http://${raw}`) : undefined
    const example = bare ? `${isLoopback(bare.hostname) ? 'http' : 'https'}://${raw}` : 'https://svc.example.com'
    throw new UsageError(
      `${what} ${JSON.stringify(raw)} is not an http:// or https:// URL: give it whole, e.g. ${example}`,
    )
  }
  if (url.username || url.password) throw new UsageError(`${what} must not hold a user name or password`)
  const segments = url.pathname.split('/').filter(Boolean)
  const inside = routeTailAt(segments)
  const path = (from: number, to?: number) =>
    segments
      .slice(from, to)
      .map((s) => `/${s}`)
      .join('')
  const root = `${url.origin}${path(0, inside === -1 ? undefined : inside)}`
  if (inside !== -1 || url.search || url.hash)
    throw new UsageError(
      `give the gateway's root URL, e.g. ${root}, not …${inside === -1 ? '' : path(inside)}${url.search}${url.hash}`,
    )
  if (url.protocol === 'http:' && !opts.insecure && !isLoopback(url.hostname))
    throw new UsageError(
      `refusing ${root}: over plain http the API key would travel in clear to ${url.hostname}, readable on every ` +
        'network between. Use https://, or pass --insecure if that network is yours alone',
    )
  return root
}

/** Where the key a verb sends came from, for what to say when the gateway refuses it. */
export type KeySource = 'SVC_API_KEY' | 'sign-in'

/**
 * $SVC_URL and $SVC_API_KEY win over the stored sign-in, for scripts and CI. $SVC_URL alone uses
 * the stored key only for the gateway it was made for: sent to another URL it would be given away.
 * `insecure`: the --insecure of the verb, for a plain-http $SVC_URL to another machine.
 */
export function requireCredentials(io: Io, opts: { insecure?: boolean } = {}): Credentials & { keyFrom: KeySource } {
  const envUrl = io.env.SVC_URL || undefined
  const envKey = io.env.SVC_API_KEY || undefined
  const gateway = envUrl === undefined ? undefined : gatewayUrl(envUrl, { insecure: opts.insecure, what: 'SVC_URL' })
  if (gateway !== undefined && envKey !== undefined) return { gateway, api_key: envKey, keyFrom: 'SVC_API_KEY' }
  const stored = readCredentials(io)
  if (!stored) throw new UsageError('not signed in: run `svc login [URL]` (or set SVC_URL and SVC_API_KEY)')
  // Checked when it was stored; a file from before that check may hold what no request can use.
  let storedGateway: string
  try {
    storedGateway = gatewayUrl(stored.gateway, { insecure: true })
  } catch (err) {
    throw new ConfigError(
      `the stored sign-in's gateway ${JSON.stringify(stored.gateway)} is not usable (${(err as Error).message}): run \`svc login URL\` again`,
    )
  }
  if (gateway !== undefined && gateway !== storedGateway)
    throw new GatewayError(
      'authentication',
      `SVC_URL names ${gateway}, but this machine is signed in to ${storedGateway}: set SVC_API_KEY to a key for ${gateway} (the stored key is not sent to another gateway)`,
    )
  return envKey === undefined
    ? { ...stored, gateway: storedGateway, keyFrom: 'sign-in' }
    : { ...stored, gateway: storedGateway, api_key: envKey, keyFrom: 'SVC_API_KEY' }
}
