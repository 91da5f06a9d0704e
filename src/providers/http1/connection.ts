// One kept-alive HTTP/1.1 connection to an upstream: writes a request, reads its answer (head,
// then a body that streams with backpressure), and goes back to the pool when the answer is
// complete and the connection still in step.
import type { Socket } from 'bun'
import { bodyOf, type EncodedRequest, type Framing, joinedBodyMaxChars, parseHead, type ResponseHead } from './wire'

/** The blank line that ends a head: at its LF when lines end in CRLF, or a bare LF's (RFC 9112 §2.2). */
const lfcrlf = Buffer.from('\n\r\n')
const lflf = Buffer.from('\n\n')
const crlf = Buffer.from('\r\n')
const empty = Buffer.alloc(0)
/** Bodies buffered ahead of the reader before the socket is paused. */
const bodyHighWaterMark = 64 * 1024
/** A response head, or a line of a chunked body, longer than this is refused. */
const maxHeadBytes = 64 * 1024
/**
 * A reused connection that closes soon after the request went out, with no answer byte, was closed
 * by the server while idle (its FIN was already on the way): the request was not taken. Later, the
 * server may have been working on it, and a POST is not sent twice. "Soon" is within a round trip:
 * a FIN sent just before the request arrived reaches us before the request's round trip is over.
 * The round trip is not known, but opening the connection took one (TCP) or two (TCP and TLS 1.3)
 * plus the DNS lookup: twice that is at least one round trip, with room for a server's slow close.
 * At least 50 ms (on a LAN a server may be slow to close); at most a second, so that a connect
 * slowed by a lost SYN (retried after 1 s) does not make every later close look stale.
 */
export const staleWindowFor = (connectMs: number) => Math.min(1000, Math.max(50, 2 * connectMs))
/**
 * A connection is given back this long before the idle limit its server announced, so that a
 * request is not written into a close already on its way.
 */
const announcedIdleMarginMs = 1000

/** Raised when a reused connection ends before any byte of the answer: safe to send again. */
export class StaleConnection extends Error {}

/**
 * Raised when the upstream's certificate is refused. The message reaches API clients: it names the
 * problem and OpenSSL's code, never the host names Bun's text quotes ("Host: … is not in the
 * cert's altnames: DNS:…"), which are the operator's business; those stay in `cause`.
 */
export class TlsFailure extends Error {}

/** Certificate problems in plain words, by the code Bun (OpenSSL) gives them. */
const certificateProblems: Record<string, string> = {
  ERR_TLS_CERT_ALTNAME_INVALID: 'the certificate does not name the host in base_url',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in the chain',
  UNABLE_TO_GET_ISSUER_CERT: 'the certificate’s issuer is not trusted',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'the certificate’s issuer is not trusted',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'the certificate’s issuer is not trusted',
  CERT_UNTRUSTED: 'the certificate is not trusted',
  CERT_HAS_EXPIRED: 'the certificate has expired',
  CERT_NOT_YET_VALID: 'the certificate is not yet valid',
  CERT_REVOKED: 'the certificate was revoked',
  CERT_SIGNATURE_FAILURE: 'the certificate’s signature is invalid',
}

function tlsFailure(error: Error | null): TlsFailure {
  const code = (error as { code?: unknown } | null)?.code
  const words =
    typeof code === 'string'
      ? `${Object.hasOwn(certificateProblems, code) ? certificateProblems[code] : 'the handshake failed'} (${code})`
      : error
        ? 'the connection closed during the handshake'
        : 'handshake refused'
  return new TlsFailure(`TLS with the upstream failed: ${words}`, { cause: error ?? undefined })
}

/** A certificate problem fetch met (through a proxy), in the words svc's own client gives it; undefined for any other error. */
export function certificateFailure(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && Object.hasOwn(certificateProblems, code)
    ? tlsFailure(error as Error).message
    : undefined
}

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

export const socketHandlers = {
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

export class Connection {
  private socket?: Socket<Connection>
  private buffered: Buffer = empty
  private unsent: Buffer = empty
  private exchange?: Exchange
  private uses = 0
  /** False once the upstream said it closes after this answer. */
  private keepAlive = true
  private closed = false
  private paused = false
  /** The pool's idle limit, and the one the server announced (Keep-Alive: timeout), if lower. */
  private idleLimitMs = 0
  private idleSince = 0
  reusable = false
  /** For TLS: settles once the server's certificate is verified, or refused. */
  readonly verified?: Promise<void>
  /** How soon after a request a close with no answer is taken for a stale connection (staleWindowFor). */
  staleWindowMs = staleWindowFor(0)
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
    this.settleHandshake?.(success ? undefined : tlsFailure(error))
    this.settleHandshake = undefined
  }

  attach(socket: Socket<Connection>, idleTimeoutMs: number) {
    this.socket = socket
    this.idleLimitMs = idleTimeoutMs
    socket.setNoDelay(true)
    if (!this.closed) this.checkOut()
  }

  /** Idle past its limit: the server may be closing it, so it must not carry a request. */
  expired(now: number): boolean {
    return now - this.idleSince >= this.idleLimitMs
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
        // No `once`: abort fires at most once anyway, and the option made each call ~0.4 µs dearer.
        signal.addEventListener('abort', onAbort)
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
    if (!exchange.received && exchange.reused && performance.now() - exchange.sentAt < this.staleWindowMs)
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
      const head = this.takeHead()
      if (head === undefined) return
      const parsed = parseHead(head)
      // 1xx answers are interim (100 Continue, 103 Early Hints): the real one follows.
      if (parsed.status < 200) continue
      const { framing, bodiless, keepAlive, keptIdleMs } = bodyOf(parsed, exchange.method)
      exchange.framing = framing
      if (!keepAlive) this.keepAlive = false
      if (keptIdleMs !== undefined) this.idleLimitMs = Math.min(this.idleLimitMs, keptIdleMs - announcedIdleMarginMs)
      exchange.respond(this.respond(exchange, parsed, framing, bodiless))
      return
    }
  }

  /** The Response for a parsed head; a body already here in full skips the stream. */
  private respond(exchange: Exchange, head: ResponseHead, framing: Framing, bodiless: boolean) {
    const { status } = head
    let headers = head.headers
    const coding = head.special['content-encoding']
    let format = coding === undefined ? undefined : decoderFormat(coding)
    if (format !== undefined) {
      headers = headers.filter(([name]) => !/^content-(?:encoding|length)$/i.test(name))
      // A compressed empty body (a 429 with content-length 0) is nothing to inflate.
      if (framing.kind === 'length' && framing.remaining === 0) format = undefined
    }
    if (framing.kind === 'length' && format === undefined && this.buffered.length >= framing.remaining) {
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
    if (format !== undefined) body = inflated(body, format)
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
    this.readChunked(exchange, framing)
  }

  /**
   * A chunked body, read with a cursor over what has arrived: a read of a streamed answer is
   * typically a size line, one chunk and its CRLF, and slicing a Buffer per line cost more than
   * parsing it (Buffer views are slow to make). Only the chunk data becomes a view.
   */
  private readChunked(exchange: Exchange, framing: Extract<Framing, { kind: 'chunked' }>) {
    const buffered = this.buffered
    let at = 0
    for (;;) {
      if (framing.state === 'data') {
        const n = Math.min(framing.remaining, buffered.length - at)
        if (n > 0) this.deliver(exchange, buffered.subarray(at, at + n))
        at += n
        framing.remaining -= n
        if (framing.remaining > 0) return this.keepFrom(buffered, at)
        framing.state = 'data-end'
        continue
      }
      const end = buffered.indexOf(crlf, at)
      if (end < 0) {
        if (buffered.length - at > maxHeadBytes) throw new Error('upstream sent a malformed chunked body')
        return this.keepFrom(buffered, at)
      }
      const line = at
      at = end + crlf.length
      if (framing.state === 'data-end') {
        if (end !== line) throw new Error('upstream sent a malformed chunked body')
        framing.state = 'size'
      } else if (framing.state === 'size') {
        framing.remaining = chunkSize(buffered, line, end)
        framing.state = framing.remaining === 0 ? 'trailers' : 'data'
      } else if (end === line) {
        // The blank line after the (ignored) trailers ends the body.
        this.keepFrom(buffered, at)
        this.finishExchange(exchange, true)
        return
      }
    }
  }

  /**
   * Keeps what is left unread of `buffered`; done before finishing, which checks that nothing is.
   * A method, not a closure in readChunked: that ran once per network read of every stream.
   */
  private keepFrom(buffered: Buffer, at: number) {
    this.buffered = at === buffered.length ? empty : buffered.subarray(at)
  }

  /**
   * The head before its blank line (without the last line's CR), consumed with it; undefined until
   * the blank line has arrived. Lines end in CRLF, or in a bare LF (RFC 9112 §2.2: some servers
   * send them): the blank line is the first LF followed by CRLF or by LF. The usual CRLF head costs
   * one search, as before, and a look for a bare "\n\n" within the head's own text.
   */
  private takeHead(): string | undefined {
    const buffered = this.buffered
    const end = buffered.indexOf(lfcrlf)
    if (end >= 0) {
      const text = buffered.toString('latin1', 0, buffered[end - 1] === 13 ? end - 1 : end)
      const bare = text.indexOf('\n\n')
      if (bare < 0) {
        this.buffered = buffered.subarray(end + lfcrlf.length)
        return text
      }
      // A head of bare LFs whose body holds a CRLF blank line (an SSE frame, say).
      this.buffered = buffered.subarray(bare + lflf.length)
      return text.charCodeAt(bare - 1) === 13 ? text.slice(0, bare - 1) : text.slice(0, bare)
    }
    const bare = buffered.indexOf(lflf)
    if (bare < 0) {
      if (buffered.length > maxHeadBytes) throw new Error('upstream sent a response head over 64 KB')
      return undefined
    }
    this.buffered = buffered.subarray(bare + lflf.length)
    return buffered.toString('latin1', 0, buffered[bare - 1] === 13 ? bare - 1 : bare)
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
    if (!reusable || this.closed || !inStep || !this.keepAlive || this.idleLimitMs <= 0) {
      this.close()
      return
    }
    this.reusable = true
    this.idleSince = performance.now()
    // Only a sweep for connections nobody takes again: Bun checks socket timeouts every few
    // seconds, so whether one is still fresh is decided by `expired`, when the pool hands it out.
    this.socket!.timeout(Math.ceil(this.idleLimitMs / 1000))
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

/**
 * The DecompressionStream format for a Content-Encoding; undefined for none. This client asks for
 * identity, but some servers compress anyway (fetch undoes what it is sent, and so does this).
 * Bun's DecompressionStream has brotli and zstd natively. A coding it lacks (or a list of them,
 * which nobody sends unasked) is refused with its name.
 */
function decoderFormat(value: string): string | undefined {
  const coding = value.trim().toLowerCase()
  switch (coding) {
    case '':
    case 'identity':
      return undefined
    case 'gzip':
    case 'x-gzip':
      return 'gzip'
    case 'deflate':
      return 'deflate'
    case 'br':
      return 'brotli'
    case 'zstd':
      return 'zstd'
  }
  throw new Error(
    `upstream answered in an encoding this gateway does not decode (it asks for identity): ${coding.slice(0, 40)}`,
  )
}

/**
 * `body` inflated, the decoder made at its first byte: a chunked or close-delimited body that turns
 * out empty is nothing to inflate, where a decoder fed nothing calls it truncated.
 */
function inflated(body: ReadableStream<Uint8Array>, format: string): ReadableStream<Uint8Array> {
  let input: WritableStreamDefaultWriter<Uint8Array> | undefined
  let output: Promise<void> | undefined
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (!input) {
          // The format is one decoderFormat returned, all of which Bun's DecompressionStream knows.
          const decoder = new DecompressionStream(format as 'gzip') as ReadableWritablePair<Uint8Array, Uint8Array>
          input = decoder.writable.getWriter()
          output = decoder.readable.pipeTo(new WritableStream({ write: (part) => controller.enqueue(part) }))
          output.catch(() => {}) // the same error fails the write, which is what errors the body
        }
        return input.write(chunk)
      },
      async flush() {
        if (!input) return
        await input.close()
        await output
      },
    }),
  )
}

/** A hex digit's value, or -1. */
function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48
  if (c >= 65 && c <= 70) return c - 55
  if (c >= 97 && c <= 102) return c - 87
  return -1
}

/**
 * A chunk-size line (1–12 hex digits, optional blanks, optional extensions), read in place: the
 * value is summed digit by digit, no string made (this runs once per chunk of every stream).
 */
function chunkSize(bytes: Buffer, start: number, end: number): number {
  let at = start
  let size = 0
  for (; at < end; at++) {
    const digit = hexValue(bytes[at]!)
    if (digit < 0) break
    size = size * 16 + digit
  }
  const digits = at - start
  while (at < end && (bytes[at] === 0x20 || bytes[at] === 0x09)) at++
  if (digits === 0 || digits > 12 || (at < end && bytes[at] !== 0x3b)) {
    throw new Error('upstream sent a malformed chunked body')
  }
  return size
}
