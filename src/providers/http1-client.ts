// The upstream HTTP client: HTTP/1.1 over keep-alive Bun.connect sockets (TLS for https), with
// fetch's signature so nothing above it changes. Why not fetch: Bun runs fetch's I/O on its own
// thread, and every request then crosses threads twice; with the gateway on one core the
// hand-offs cost ~10–15 µs of a ~88 µs request (perf: 9% of samples switching tasks, 22% on
// fetch's thread; bench/README.md). These sockets live on the event loop that serves the client.
//
// Scope, on purpose: what an LLM API call needs. Requests carry a string body (or none). Answers
// may be length-delimited, chunked or close-delimited; a response is returned as soon as its head
// arrives, and its body streams with backpressure. Redirects are not followed (an upstream 3xx
// is an upstream error, as it should be for an API); identity encoding is asked for, gzip and
// deflate are still undone if sent. With a proxy configured in the environment every call goes
// to Bun's fetch instead, which honours it.
import type { Socket } from 'bun'

export interface Http1ClientOptions {
  /** An idle connection is closed after this long; kept under common server keep-alive timeouts. */
  idleTimeoutMs?: number
  /** Idle connections kept per origin beyond which a finished one is closed. */
  maxIdlePerOrigin?: number
  /** Used for what this client does not do (a proxy from the environment). */
  fallback?: typeof fetch
  /** Where proxy variables are looked up; the process's environment unless given. */
  env?: Record<string, string | undefined>
}

const proxyVariables = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy']
const crlfcrlf = Buffer.from('\r\n\r\n')
const crlf = Buffer.from('\r\n')
const empty = Buffer.alloc(0)
/** Bodies buffered ahead of the reader before the socket is paused. */
const bodyHighWaterMark = 64 * 1024
const maxHeadBytes = 64 * 1024
/**
 * A reused connection that closes this soon after the request went out, with no answer byte, was
 * closed by the server while idle (its FIN was already on the way): the request was not taken.
 * Later, the server may have been working on it, and a POST is not sent twice.
 */
const staleCloseWindowMs = 50

export function createHttp1Client(opts: Http1ClientOptions = {}): typeof fetch {
  const fallback = opts.fallback ?? fetch
  const env = opts.env ?? process.env
  if (proxyVariables.some((name) => env[name])) return fallback
  const pool = new ConnectionPool(opts.idleTimeoutMs ?? 4_000, opts.maxIdlePerOrigin ?? 256)
  const targets = createTargetCache()

  const client = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (input instanceof Request || (init.body != null && typeof init.body !== 'string')) return fallback(input, init)
    const target = targets.get(input)
    if (!target) return fallback(input, init)
    const signal = init.signal ?? undefined
    signal?.throwIfAborted()
    const request = encodeRequest(target, init)
    // A kept-alive connection the server has just closed fails before any answer byte: the
    // request never reached it, so it goes once more on a fresh connection.
    for (let attempt = 0; ; attempt++) {
      const connection = attempt === 0 ? pool.take(target) : undefined
      try {
        return await (connection ?? (await pool.open(target, signal))).send(request, signal)
      } catch (err) {
        if (!(err instanceof StaleConnection) || attempt > 0) throw err
      }
    }
  }
  return client as typeof fetch
}

/** Where a request goes, parsed once per URL: upstream URLs are few and used over and over. */
interface Target {
  origin: string
  tls: boolean
  hostname: string
  port: number
  /** The Host header. */
  host: string
  path: string
}

function createTargetCache(size = 256) {
  const cache = new Map<string, Target | null>()
  return {
    /** null for a URL this client does not serve (neither http nor https). */
    get(input: string | URL): Target | null {
      const href = String(input)
      let target = cache.get(href)
      if (target === undefined) {
        const url = new URL(href)
        const tls = url.protocol === 'https:'
        target =
          url.protocol === 'http:' || tls
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

interface EncodedRequest {
  method: string
  /** Through the blank line that ends it. */
  head: string
  body: string
}

/**
 * Bodies up to this size are joined to the head and written once. A larger one is written on its
 * own: joining would first copy it whole into the JS heap (and long prompts are large).
 */
const joinedBodyMaxChars = 16 * 1024

/** Headers this client writes itself. */
const ownHeaders = new Set(['host', 'content-length', 'transfer-encoding', 'connection'])
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const unsafeValue = /[\r\n\0]/

function encodeRequest(target: Target, init: RequestInit): EncodedRequest {
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

/** The kept-alive connections of every origin, newest first: a warm one is most likely alive. */
class ConnectionPool {
  private readonly idle = new Map<string, Connection[]>()

  constructor(
    private readonly idleTimeoutMs: number,
    private readonly maxIdlePerOrigin: number,
  ) {}

  take(target: Target): Connection | undefined {
    const list = this.idle.get(target.origin)
    for (let connection = list?.pop(); connection; connection = list?.pop()) {
      if (connection.reusable) return connection.checkOut()
    }
    return undefined
  }

  async open(target: Target, signal: AbortSignal | undefined): Promise<Connection> {
    const { origin: key, tls, hostname, port } = target
    const connection = new Connection(
      (c) => this.release(key, c),
      (c) => this.forget(key, c),
      tls,
    )
    const connecting = Bun.connect<Connection>({
      hostname,
      port,
      tls: tls ? { serverName: hostname } : undefined,
      data: connection,
      socket: socketHandlers,
    })
    // A connect that outlives the caller's abort is left to finish and then closed.
    const aborted = signal ? abortPromise(signal) : undefined
    try {
      const socket = await (aborted ? Promise.race([connecting, aborted.promise]) : connecting)
      connection.attach(socket as Socket<Connection>, this.idleTimeoutMs)
      // Nothing (an API key least of all) is written before the server's certificate verified.
      if (connection.verified)
        await (aborted ? Promise.race([connection.verified, aborted.promise]) : connection.verified)
      return connection
    } catch (err) {
      connecting.then(
        (socket) => socket.terminate(),
        () => {},
      )
      connection.close()
      if (signal?.aborted) throw signal.reason
      throw err instanceof TlsFailure ? err : connectError(err, hostname, port)
    } finally {
      aborted?.dispose()
    }
  }

  private release(key: string, connection: Connection) {
    let list = this.idle.get(key)
    if (!list) {
      list = []
      this.idle.set(key, list)
    }
    if (list.length >= this.maxIdlePerOrigin) connection.close('graceful')
    else list.push(connection)
  }

  private forget(key: string, connection: Connection) {
    const list = this.idle.get(key)
    const at = list?.indexOf(connection) ?? -1
    if (at >= 0) list!.splice(at, 1)
  }
}

/** Raised when a reused connection ends before any byte of the answer: safe to send again. */
class StaleConnection extends Error {}

class TlsFailure extends Error {}

/** How the body of the answer in progress is delimited. */
type Framing =
  | { kind: 'length'; remaining: number }
  | { kind: 'chunked'; remaining: number; state: 'size' | 'data' | 'data-end' | 'trailers' }
  | { kind: 'close' }

/** One exchange in flight on a connection. */
interface Exchange {
  reused: boolean
  sentAt: number
  method: string
  received: boolean
  respond: (response: Response) => void
  fail: (err: unknown) => void
  /** Set once the head is parsed and the body streams. */
  body?: ReadableStreamDefaultController<Uint8Array>
  framing?: Framing
  /** Settled by the caller's abort signal. */
  abort?: () => void
}

const socketHandlers = {
  data(socket: Socket<Connection>, chunk: Buffer) {
    socket.data.onData(chunk)
  },
  drain(socket: Socket<Connection>) {
    socket.data.onDrain()
  },
  close(socket: Socket<Connection>, err?: Error) {
    socket.data.onClose(err)
  },
  error(socket: Socket<Connection>, err: Error) {
    socket.data.onClose(err)
  },
  end(socket: Socket<Connection>) {
    // The server finished sending: a close-delimited body ends here; anything else in flight
    // was cut short. The socket is closed either way.
    socket.data.onClose()
    socket.end()
  },
  handshake(socket: Socket<Connection>, success: boolean, authorizationError: Error | null) {
    socket.data.onHandshake(success, authorizationError)
  },
  timeout(socket: Socket<Connection>) {
    // Only idle connections have a timeout: the pool's idle limit.
    socket.end()
  },
}

class Connection {
  private socket?: Socket<Connection>
  private buffered: Buffer = empty
  private unsent: Buffer = empty
  private exchange?: Exchange
  private uses = 0
  private closed = false
  private paused = false
  private idleSeconds = 0
  reusable = false
  /** For TLS: settles once the server's certificate is verified, or refused. */
  readonly verified?: Promise<void>
  private settleHandshake?: (error?: Error) => void

  constructor(
    private readonly onIdle: (c: Connection) => void,
    private readonly onGone: (c: Connection) => void,
    tls: boolean,
  ) {
    if (!tls) return
    this.verified = new Promise<void>((resolve, reject) => {
      this.settleHandshake = (error) => (error ? reject(error) : resolve())
    })
    this.verified.catch(() => {})
  }

  onHandshake(success: boolean, error: Error | null) {
    this.settleHandshake?.(
      success ? undefined : new TlsFailure(`TLS with the upstream failed: ${error?.message ?? 'handshake refused'}`),
    )
    this.settleHandshake = undefined
  }

  attach(socket: Socket<Connection>, idleTimeoutMs: number) {
    this.socket = socket
    this.idleSeconds = Math.max(1, Math.round(idleTimeoutMs / 1000))
    socket.setNoDelay(true)
    if (this.closed) return
    this.reusable = true
    this.checkOut()
  }

  checkOut(): this {
    this.reusable = false
    this.socket!.timeout(0)
    this.socket!.ref()
    return this
  }

  /** Graceful for an idle connection; an abandoned exchange resets it, so the upstream stops. */
  close(how: 'graceful' | 'reset' = 'reset') {
    this.reusable = false
    if (how === 'graceful') this.socket?.end()
    else this.socket?.terminate()
  }

  send(request: EncodedRequest, signal: AbortSignal | undefined): Promise<Response> {
    const reused = this.uses++ > 0
    return new Promise<Response>((respond, fail) => {
      if (this.closed) {
        fail(reused ? new StaleConnection() : new Error('upstream closed the connection'))
        return
      }
      if (signal?.aborted) {
        // Aborted while the connection was being made: the request never goes out.
        fail(signal.reason)
        this.close()
        return
      }
      const exchange: Exchange = {
        reused,
        sentAt: performance.now(),
        method: request.method,
        received: false,
        respond,
        fail,
      }
      this.exchange = exchange
      if (signal) {
        const onAbort = () => this.abortExchange(exchange, signal.reason)
        signal.addEventListener('abort', onAbort, { once: true })
        exchange.abort = () => signal.removeEventListener('abort', onAbort)
      }
      if (request.body.length > joinedBodyMaxChars) {
        this.write(request.head)
        this.write(request.body)
      } else this.write(request.head + request.body)
    })
  }

  private write(data: string | Buffer) {
    if (this.unsent.length > 0) {
      // Still waiting for a drain: queue behind what is unsent, in order.
      this.unsent = Buffer.concat([this.unsent, typeof data === 'string' ? Buffer.from(data) : data])
      return
    }
    const written = this.socket!.write(data)
    if (written < 0) this.onClose(new Error('upstream closed the connection'))
    // A short write (a large body): the rest goes out on drain, counted in bytes.
    else if (written < Buffer.byteLength(data)) this.unsent = Buffer.from(data).subarray(written)
  }

  onDrain() {
    if (this.unsent.length === 0) return
    const rest = this.unsent
    this.unsent = empty
    this.write(rest)
  }

  onData(chunk: Buffer) {
    const exchange = this.exchange
    if (!exchange) {
      // Bytes nobody asked for: the connection is out of step, never reuse it.
      this.close()
      return
    }
    exchange.received = true
    this.buffered = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk])
    try {
      if (!exchange.framing) this.readHead(exchange)
      if (exchange.framing) this.readBody(exchange)
    } catch (err) {
      this.failExchange(exchange, err)
      this.close()
    }
  }

  onClose(err?: Error) {
    if (this.closed) return
    this.closed = true
    this.reusable = false
    this.onGone(this)
    this.onHandshake(false, err ?? new Error('the connection closed during the handshake'))
    const exchange = this.exchange
    if (!exchange) return
    if (exchange.framing?.kind === 'close' && !err) {
      this.finishExchange(exchange, false)
      return
    }
    if (!exchange.received && exchange.reused && performance.now() - exchange.sentAt < staleCloseWindowMs)
      this.failExchange(exchange, new StaleConnection())
    else
      this.failExchange(
        exchange,
        new Error(
          exchange.framing
            ? 'upstream closed the connection before the body ended'
            : `upstream closed the connection before answering${err ? ` (${err.message})` : ''}`,
        ),
      )
  }

  private readHead(exchange: Exchange) {
    for (;;) {
      const end = this.buffered.indexOf(crlfcrlf)
      if (end < 0) {
        if (this.buffered.length > maxHeadBytes) throw new Error('upstream sent a response head over 64 KB')
        return
      }
      const head = this.buffered.toString('latin1', 0, end)
      this.buffered = this.buffered.subarray(end + 4)
      const parsed = parseHead(head)
      // 1xx answers are interim (100 Continue, 103 Early Hints): the real one follows.
      if (parsed.status < 200) continue
      const { status, special } = parsed
      const chunked = /(?:^|,)\s*chunked\s*$/i.test(special['transfer-encoding'] ?? '')
      const bodiless = exchange.method === 'HEAD' || status === 204 || status === 304
      const connection = special.connection ?? ''
      const keepAlive = parsed.http10 ? /keep-alive/i.test(connection) : !/(?:^|,)\s*close\s*(?:,|$)/i.test(connection)
      let framing: Framing
      if (bodiless) framing = { kind: 'length', remaining: 0 }
      else if (chunked) framing = { kind: 'chunked', remaining: 0, state: 'size' }
      else if (special['content-length'] !== undefined)
        framing = { kind: 'length', remaining: parseLength(special['content-length']) }
      else framing = { kind: 'close' }
      exchange.framing = framing
      if (!keepAlive) this.uses = Number.POSITIVE_INFINITY
      exchange.respond(this.respond(exchange, parsed, framing, bodiless))
      return
    }
  }

  /** The Response for a parsed head; a body already here in full skips the stream. */
  private respond(exchange: Exchange, head: ResponseHead, framing: Framing, bodiless: boolean) {
    const { status } = head
    let headers = head.headers
    const encoding = (head.special['content-encoding'] ?? 'identity').trim().toLowerCase()
    if (encoding !== 'identity' && encoding !== 'gzip' && encoding !== 'deflate') {
      throw new Error(`upstream answered in an encoding this gateway does not decode: ${encoding}`)
    }
    if (framing.kind === 'length' && encoding === 'identity' && this.buffered.length >= framing.remaining) {
      const body = bodiless ? null : this.buffered.subarray(0, framing.remaining)
      this.buffered = this.buffered.subarray(framing.remaining)
      framing.remaining = 0
      const response = new Response(body, { status, headers })
      this.finishExchange(exchange, true)
      return response
    }
    let body: ReadableStream<Uint8Array> = new ReadableStream<Uint8Array>(
      {
        start: (controller) => {
          exchange.body = controller
        },
        pull: () => this.resumeReading(),
        cancel: () => {
          // The reader gave up: the rest of the body would arrive on a connection nobody reads.
          if (this.exchange === exchange) {
            exchange.abort?.()
            this.exchange = undefined
            this.close()
          }
        },
      },
      new ByteLengthQueuingStrategy({ highWaterMark: bodyHighWaterMark }),
    )
    if (encoding !== 'identity') {
      body = body.pipeThrough(
        new DecompressionStream(encoding as 'gzip' | 'deflate') as ReadableWritablePair<Uint8Array, Uint8Array>,
      )
      headers = headers.filter(([name]) => !/^content-(?:encoding|length)$/i.test(name))
    }
    return new Response(body, { status, headers })
  }

  private readBody(exchange: Exchange) {
    const framing = exchange.framing!
    if (framing.kind === 'close') {
      this.deliver(exchange, this.take(this.buffered.length))
      return
    }
    if (framing.kind === 'length') {
      if (framing.remaining > 0 && this.buffered.length > 0) {
        const part = this.take(Math.min(framing.remaining, this.buffered.length))
        framing.remaining -= part.length
        this.deliver(exchange, part)
      }
      if (framing.remaining === 0) this.finishExchange(exchange, true)
      return
    }
    for (;;) {
      if (framing.state === 'data') {
        if (this.buffered.length === 0) return
        const part = this.take(Math.min(framing.remaining, this.buffered.length))
        framing.remaining -= part.length
        this.deliver(exchange, part)
        if (framing.remaining > 0) return
        framing.state = 'data-end'
        continue
      }
      const lineEnd = this.buffered.indexOf(crlf)
      if (lineEnd < 0) {
        if (this.buffered.length > maxHeadBytes) throw new Error('upstream sent a malformed chunked body')
        return
      }
      const line = this.buffered.toString('latin1', 0, lineEnd)
      this.buffered = this.buffered.subarray(lineEnd + 2)
      if (framing.state === 'data-end') {
        if (line !== '') throw new Error('upstream sent a malformed chunked body')
        framing.state = 'size'
      } else if (framing.state === 'size') {
        const size = /^([0-9a-fA-F]{1,12})[ \t]*(?:;.*)?$/.exec(line)
        if (!size) throw new Error('upstream sent a malformed chunked body')
        framing.remaining = Number.parseInt(size[1]!, 16)
        framing.state = framing.remaining === 0 ? 'trailers' : 'data'
      } else if (line === '') {
        // The blank line after the (ignored) trailers ends the body.
        this.finishExchange(exchange, true)
        return
      }
    }
  }

  private take(n: number): Buffer {
    const part = this.buffered.subarray(0, n)
    this.buffered = this.buffered.subarray(n)
    return part
  }

  private deliver(exchange: Exchange, part: Buffer) {
    const body = exchange.body
    if (!body || part.length === 0) return
    // Each data event brings a fresh buffer (Bun does not reuse them), so no copy is needed.
    body.enqueue(part)
    if ((body.desiredSize ?? 1) <= 0 && !this.paused) {
      this.paused = true
      this.socket?.pause()
    }
  }

  private resumeReading() {
    if (!this.paused) return
    this.paused = false
    this.socket?.resume()
  }

  /** The answer is complete: close its body and hand the connection back if it can serve again. */
  private finishExchange(exchange: Exchange, reusable: boolean) {
    if (this.exchange !== exchange) return
    this.exchange = undefined
    exchange.abort?.()
    exchange.body?.close()
    this.resumeReading()
    // Reused only in step: nothing read ahead, nothing of the request still unsent (an early answer).
    const inStep = this.buffered.length === 0 && this.unsent.length === 0
    if (!reusable || this.closed || !inStep || this.uses === Number.POSITIVE_INFINITY) {
      this.close()
      return
    }
    this.reusable = true
    this.socket!.timeout(this.idleSeconds)
    this.socket!.unref()
    this.onIdle(this)
  }

  private failExchange(exchange: Exchange, err: unknown) {
    if (this.exchange !== exchange) return
    this.exchange = undefined
    exchange.abort?.()
    if (exchange.body) exchange.body.error(err)
    else exchange.fail(err)
  }

  private abortExchange(exchange: Exchange, reason: unknown) {
    this.failExchange(exchange, reason ?? new DOMException('The operation was aborted.', 'AbortError'))
    this.close()
  }
}

/** The headers that frame the body, picked out while parsing rather than looked up after. */
type FramingHeader = 'content-length' | 'transfer-encoding' | 'connection' | 'content-encoding'
const framingHeaders = new Set<string>(['content-length', 'transfer-encoding', 'connection', 'content-encoding'])

interface ResponseHead {
  status: number
  http10: boolean
  /** As received, for the Response (which builds its own Headers from them once). */
  headers: [string, string][]
  /** Repeated ones joined with ", ", as Headers would. */
  special: Partial<Record<FramingHeader, string>>
}

function parseHead(head: string): ResponseHead {
  const lines = head.split('\r\n')
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

function parseLength(value: string): number {
  // Repeated identical values (a proxy that merged headers) are one length; differing ones are
  // a framing attack or a broken server.
  const values = value.includes(',') ? new Set(value.split(',').map((v) => v.trim())) : new Set([value])
  const [only] = values
  const length = Number(only)
  if (values.size !== 1 || !/^\d{1,15}$/.test(only!) || !Number.isSafeInteger(length)) {
    throw new Error(`upstream sent a bad content-length: ${value.slice(0, 40)}`)
  }
  return length
}

function connectError(err: unknown, hostname: string, port: number): Error {
  const code = (err as { code?: string })?.code
  return new Error(
    code ? `connect ${code} ${hostname}:${port}` : `connect to ${hostname}:${port} failed: ${String(err)}`,
    {
      cause: err,
    },
  )
}

function abortPromise(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  let onAbort = () => {}
  const promise = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason)
    signal.addEventListener('abort', onAbort, { once: true })
  })
  promise.catch(() => {})
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) }
}
