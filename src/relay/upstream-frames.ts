// An upstream's SSE body, one network read at a time: the frames each read completes, and a
// watchdog that ends a stream silent for too long and, meanwhile, says when to keep the client's
// connection alive.
import { GatewayError } from '../lib/errors'
import { SseDecoder, type SseEvent } from '../protocols/sse'
import { expectContentType, hasMediaType } from './send'

/**
 * The frames of an upstream's 2xx answer, once it is a stream: a body labelled another type, or no
 * body at all, is the provider's fault, found before any byte is relayed.
 */
export function upstreamFrames(upstream: Response, idleMs: number, onTimeout: () => void, quietMs?: number) {
  if (!unlabelledStream(upstream)) expectContentType(upstream, 'text/event-stream')
  if (!upstream.body) {
    throw new GatewayError('api_error', 'upstream sent an empty stream', { status: 502, retryable: true })
  }
  return new UpstreamFrames(upstream.body, idleMs, onTimeout, quietMs)
}

/**
 * A body asked for as a stream and labelled as no other type: some compatible servers and proxies
 * send their SSE as text/plain or with no content-type at all. Refused, every such answer failed.
 * One that says it is something else (an HTML error page, JSON) still is.
 */
const unlabelledStream = (upstream: Response): boolean => {
  const type = upstream.headers.get('content-type')
  return type === null || type === '' || hasMediaType(type, 'text/plain')
}

/**
 * One frame can hold a whole answer (Responses' `response.completed`, generated images in it), but
 * no real one comes near this: a frame that never ends would otherwise grow until the gateway, and
 * every stream in it, ran out of memory.
 */
const defaultMaxFrameChars = 64 * 1024 * 1024

/**
 * Frames are handed out per read rather than one by one: a relay then handles what one read
 * brought in a single step, one promise a read instead of several a frame (a stream is hundreds
 * of frames).
 *
 * Silence is time spent waiting on the upstream: a client slow to take what was relayed does not
 * count. One watchdog timer a stream, re-armed lazily. When it fires it calls onTimeout (which
 * aborts the attempt) and cancels the body, so the pending read ends even if the source ignores
 * the abort; the read then fails with a retryable timeout.
 *
 * The same timer calls `onQuiet`, once set, every `quietMs` of a silence shorter than that: a
 * model can think for minutes without a token, and the relay then writes the client a keep-alive
 * so that no proxy on the way, nor the server's own idle limit, takes the quiet stream for dead.
 */
export class UpstreamFrames {
  private readonly reader: ReadableStreamDefaultReader<Uint8Array>
  private readonly decoder = new SseDecoder()
  private waitingSince: number | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  /** When the current silence was last broken: by a read starting, or by onQuiet. */
  private quietSince: number | undefined
  private timedOut = false
  private ended = false
  /**
   * Whether a read has brought an event. Silence counts from the first: until then the wait is the
   * caller's `first_byte_timeout_ms` (stream-answer.ts withinFirstByte), which an operator may set
   * above the idle limit (120 s for a long prompt, streams cut after 30 s of silence). Counted from
   * the headers, a first event due within the first was cut at the second, and counted against
   * the model.
   */
  private eventSeen = false
  /** Called every `quietMs` of upstream silence, from when it is set. */
  onQuiet: (() => void) | undefined

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly idleMs: number,
    private readonly onTimeout: () => void,
    private readonly quietMs = idleMs,
    /** A parameter so that tests can reach it without sending 64 MB. */
    private readonly maxFrameChars = defaultMaxFrameChars,
  ) {
    // Bun's lib types the reader of `ReadableStream` as node's, which lacks Bun's readMany.
    this.reader = body.getReader() as ReadableStreamDefaultReader<Uint8Array>
    this.timer = setTimeout(this.check, Math.min(idleMs, quietMs))
  }

  /**
   * The frames completed by the next read(s); undefined once the body has ended. The read is
   * awaited here rather than in a helper: this runs once per network read of every stream, and
   * each async layer is a promise more to allocate and collect.
   */
  async next(): Promise<readonly SseEvent[] | undefined> {
    while (!this.ended) {
      this.waitingSince = performance.now()
      this.quietSince = this.waitingSince
      let result: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>
      try {
        result = await this.reader.read()
      } catch (err) {
        this.finish()
        throw this.timedOut ? this.timeoutError() : streamFailure(err)
      }
      this.waitingSince = undefined
      if (this.timedOut) {
        this.finish()
        throw this.timeoutError()
      }
      if (result.done) this.finish()
      const events = result.done ? this.decoder.end() : this.decoder.push(result.value)
      if (this.decoder.pendingLength > this.maxFrameChars) {
        await this.close()
        const limit = this.maxFrameChars.toLocaleString('en')
        throw new GatewayError('api_error', `upstream sent a stream frame of more than ${limit} characters`, {
          status: 502,
          retryable: true,
        })
      }
      if (events.length > 0) {
        this.eventSeen = true
        return events
      }
    }
    return undefined
  }

  /** Stops the watchdog and cancels the body if it has not ended (the upstream stops sending). */
  async close(): Promise<void> {
    this.stopWatching()
    if (this.ended) return
    this.ended = true
    // After a timeout the source may never settle a cancel: do not wait for it there.
    const cancelling = this.reader.cancel().catch(() => {})
    if (!this.timedOut) await cancelling
  }

  private readonly check = () => {
    const now = performance.now()
    const silentFor = this.waitingSince === undefined || !this.eventSeen ? 0 : now - this.waitingSince
    if (silentFor < this.idleMs) {
      const quietLeft =
        this.onQuiet && this.waitingSince !== undefined ? this.quietMs - (now - this.quietSince!) : this.quietMs
      if (quietLeft > 0) {
        this.timer = setTimeout(this.check, Math.min(this.idleMs - silentFor, quietLeft))
        return
      }
      this.quietSince = now
      this.timer = setTimeout(this.check, Math.min(this.idleMs - silentFor, this.quietMs))
      this.onQuiet!()
      return
    }
    this.timer = undefined
    this.timedOut = true
    this.onTimeout()
    this.reader.cancel().catch(() => {})
  }

  private finish() {
    this.ended = true
    this.stopWatching()
  }

  private stopWatching() {
    clearTimeout(this.timer)
    this.timer = undefined
  }

  private timeoutError() {
    return new GatewayError('timeout', `upstream stream was silent for ${this.idleMs} ms`, { retryable: true })
  }
}

/**
 * A failure met reading a stream (the connection reset or closed mid-body), as the gateway's
 * error: ours as they are, anything else the upstream's 502, which the next candidate may recover
 * from while the client has nothing yet. Raised as it came, it read as svc's own bug: a 500 with
 * no fallback.
 */
export const streamFailure = (err: unknown): GatewayError =>
  err instanceof GatewayError
    ? err
    : new GatewayError('api_error', `upstream stream failed: ${String(err)}`, {
        status: 502,
        retryable: true,
        cause: err,
      })
