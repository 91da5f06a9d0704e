// HTTP/1.1 on the wire for the upstream client: a request's bytes, a response head, and how
// its body is delimited. No sockets here.

/** Where a request goes, parsed once per URL: upstream URLs are few and used over and over. */
export interface Target {
  origin: string
  tls: boolean
  hostname: string
  port: number
  /** The Host header. */
  host: string
  path: string
}

export function createTargetCache(size = 256) {
  const cache = new Map<string, Target | null>()
  return {
    /**
     * null for a URL this client does not serve: neither http nor https, or with credentials in it
     * (`user:pass@`, nginx's basic auth in front of a self-hosted server), which fetch sends as
     * Basic authorization and this client would silently drop.
     */
    get(input: string | URL): Target | null {
      const href = String(input)
      let target = cache.get(href)
      if (target === undefined) {
        const url = new URL(href)
        const tls = url.protocol === 'https:'
        target =
          (url.protocol === 'http:' || tls) && url.username === '' && url.password === ''
            ? {
                origin: url.origin,
                tls,
                hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
                port: Number(url.port) || (tls ? 443 : 80),
                host: url.host,
                path: `${url.pathname}${url.search}`,
              }
            : null
        if (cache.size >= size) cache.clear()
        cache.set(href, target)
      }
      return target
    },
  }
}

export interface EncodedRequest {
  method: string
  /** Through the blank line that ends it. */
  head: string
  body: string
}

/**
 * Bodies up to this size are joined to the head and written once. A larger one is written on its
 * own: joining would first copy it whole into the JS heap (and long prompts are large).
 */
export const joinedBodyMaxChars = 16 * 1024

/** Headers this client writes itself. */
const ownHeaders = new Set(['host', 'content-length', 'transfer-encoding', 'connection'])
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const unsafeValue = /[\r\n\0]/

export function encodeRequest(target: Target, init: RequestInit): EncodedRequest {
  const method = (init.method ?? 'GET').toUpperCase()
  const body = typeof init.body === 'string' ? init.body : ''
  let head = `${method} ${target.path} HTTP/1.1\r\nhost: ${target.host}\r\n`
  let acceptEncoding = false
  let userAgent = false
  for (const [name, value] of headerEntries(init.headers)) {
    const lower = name.toLowerCase()
    if (ownHeaders.has(lower)) continue
    if (!headerName.test(name) || unsafeValue.test(value)) throw new TypeError(`invalid request header ${name}`)
    if (lower === 'accept-encoding') acceptEncoding = true
    else if (lower === 'user-agent') userAgent = true
    head += `${name}: ${value}\r\n`
  }
  if (!acceptEncoding) head += 'accept-encoding: identity\r\n'
  if (!userAgent) head += 'user-agent: svc\r\n'
  if (body !== '' || method === 'POST' || method === 'PUT' || method === 'PATCH')
    head += `content-length: ${Buffer.byteLength(body)}\r\n`
  return { method, head: `${head}\r\n`, body }
}

function headerEntries(headers: RequestInit['headers']): Iterable<[string, string]> {
  if (!headers) return []
  if (headers instanceof Headers || Array.isArray(headers)) return headers as Iterable<[string, string]>
  return Object.entries(headers) as [string, string][]
}

/** How the body of the answer in progress is delimited. */
export type Framing =
  | { kind: 'length'; remaining: number }
  | { kind: 'chunked'; remaining: number; state: 'size' | 'data' | 'data-end' | 'trailers' }
  | { kind: 'close' }

/** The headers that frame the body, picked out while parsing rather than looked up after. */
type FramingHeader = 'content-length' | 'transfer-encoding' | 'connection' | 'keep-alive' | 'content-encoding'
const framingHeaders = new Set<string>([
  'content-length',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'content-encoding',
])

export interface ResponseHead {
  status: number
  http10: boolean
  /** As received, for the Response (which builds its own Headers from them once). */
  headers: [string, string][]
  /** Repeated ones joined with ", ", as Headers would. */
  special: Partial<Record<FramingHeader, string>>
}

/** Lines end in CRLF, or in a bare LF, which RFC 9112 §2.2 lets a recipient accept (a CR before it ignored). */
const lineEnd = /\r?\n/

/** A response head without its blank line (and without the CR of its last line). */
export function parseHead(head: string): ResponseHead {
  const lines = head.split(lineEnd)
  const statusLine = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0]!)
  if (!statusLine) throw new Error(`upstream sent a malformed status line: ${JSON.stringify(lines[0]!.slice(0, 80))}`)
  const status = Number(statusLine[2])
  if (status > 599) throw new Error(`upstream sent status ${status}`)
  const headers: [string, string][] = []
  const special: ResponseHead['special'] = {}
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!
    const colon = line.indexOf(':')
    if (colon <= 0) throw new Error('upstream sent a malformed header line')
    const name = line.slice(0, colon)
    const value = line.slice(colon + 1).trim()
    headers.push([name, value])
    const lower = name.toLowerCase()
    if (framingHeaders.has(lower)) {
      const key = lower as FramingHeader
      special[key] = special[key] === undefined ? value : `${special[key]}, ${value}`
    }
  }
  return { status, http10: statusLine[1] === '0', headers, special }
}

// Module-level: a regular expression literal is a new object each time it is evaluated.
const keepAliveToken = /keep-alive/i
const closeToken = /(?:^|,)\s*close\s*(?:,|$)/i
const chunkedLast = /(?:^|,)\s*chunked\s*$/i
const keepAliveTimeout = /(?:^|,)\s*timeout\s*=\s*(\d{1,9})\s*(?:,|$)/i

/**
 * How the body after `head` is delimited, whether the connection may carry another request, and
 * for how long idle the server says it keeps it (`Keep-Alive: timeout=5`, as Node's servers send).
 */
export function bodyOf(
  head: ResponseHead,
  method: string,
): { framing: Framing; bodiless: boolean; keepAlive: boolean; keptIdleMs?: number } {
  const { status, special } = head
  const bodiless = method === 'HEAD' || status === 204 || status === 304
  const connection = special.connection ?? ''
  let keepAlive = head.http10 ? keepAliveToken.test(connection) : !closeToken.test(connection)
  let framing: Framing
  if (bodiless) framing = { kind: 'length', remaining: 0 }
  else if (chunkedLast.test(special['transfer-encoding'] ?? '')) {
    framing = { kind: 'chunked', remaining: 0, state: 'size' }
    // Chunked wins over a Content-Length sent with it, but such an answer is a framing attack or a
    // broken intermediary: the connection is closed after it (RFC 9112 §6.3), never reused.
    if (special['content-length'] !== undefined) keepAlive = false
  } else if (special['content-length'] !== undefined)
    framing = { kind: 'length', remaining: parseLength(special['content-length']) }
  else framing = { kind: 'close' }
  const hint = special['keep-alive'] === undefined ? undefined : keepAliveTimeout.exec(special['keep-alive'])
  return { framing, bodiless, keepAlive, keptIdleMs: hint ? Number(hint[1]) * 1000 : undefined }
}

const lengthDigits = /^\d{1,15}$/

function parseLength(value: string): number {
  // Repeated identical values (a proxy that merged headers) are one length; differing ones are
  // a framing attack or a broken server. Compared in place: a Set per answer cost ~0.1 µs.
  let only = value
  if (value.includes(',')) {
    const values = value.split(',')
    only = values[0]!.trim()
    for (let i = 1; i < values.length; i++) if (values[i]!.trim() !== only) only = ''
  }
  // At most 15 digits: always a safe integer.
  if (!lengthDigits.test(only)) throw new Error(`upstream sent a bad content-length: ${value.slice(0, 40)}`)
  return Number(only)
}
