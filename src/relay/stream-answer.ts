// A streaming answer: frames relayed as they arrive (pass-through) or translated, metered on the
// way, with the first frame produced before the Response exists so that a candidate failing
// before it still falls back.
import type { Deps } from '../deps'
import { type JoinedLegs, joinedLegs } from '../exchange/joined-legs'
import { type PausedEnd, resumedLegFailed } from './paused-turn'
import { pipe, type StreamCodec, type StreamEncoder } from '../exchange/stream-codec'
import type { ExchangeEvent, UpstreamErrorInfo, Usage } from '../exchange/types'
import { anthropicMessageAssembler } from '../protocols/anthropic/assemble-message'
import { GatewayError } from '../lib/errors'
import type { SseEvent } from '../protocols/sse'
import { upstreamFailure } from '../providers/call-upstream'
import { codecs, requestToolNames } from '../providers/codecs'
import { errorWithoutSecrets, frameWithoutKey } from '../lib/redact'
import { meterStep, newStreamMeter, type StreamMeter, standInUsage } from './meter'
import { judgeStream, record, servedFirstByte } from './outcome'
import type { AnsweredAttempt } from './attempt'
import { passesThrough, receivedSoFar } from './surface'
import type { LegDraft } from './trace'
import { streamFailure, type UpstreamFrames, upstreamFrames } from './upstream-frames'

const sseHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
}

/**
 * Streams the answer. The first client frame is produced before the Response is returned, so a
 * candidate that fails before its first frame still falls back; after that, errors become
 * error events and the leg records what flowed.
 */
export async function streamAnswer(deps: Deps, a: AnsweredAttempt): Promise<Response> {
  const { idleTimeoutMs, pingIntervalMs } = deps.config.routing
  /** The upstream being relayed: a turn svc sends back goes on in another (paused-turn.ts). */
  let upstream = upstreamFrames(a.upstream, idleTimeoutMs, () => a.controller.abort(), pingIntervalMs)

  const passThrough = passesThrough(a.leg.candidate.provider, a.surface)
  /** The client's next piece of the stream; done once the upstream's body has ended. */
  let clientFrames: AsyncIterator<string>
  /** What the leg received, and whether the upstream finished the message cleanly. */
  // Translated streams never need one (their encoder reports failures in-stream); kept total for safety.
  let errorFrame: (error: GatewayError) => string = () => ''
  let received: () => {
    usage: Usage
    reported: boolean
    outputBytes: number
    clean: boolean
    error?: UpstreamErrorInfo
    /** What broke the stream on our side of it (a malformed frame, a read that failed), if anything did. */
    broken?: GatewayError
  }
  /** Why the upstream failed before producing anything (so nothing reached the client), if it did. */
  let failedBeforeStart: () => GatewayError | undefined
  /** Whether the upstream has finished the message cleanly (what `received().clean` says, without its copy). */
  let complete: () => boolean
  /** Whether the answer has begun: content or the finish, not only the message's opening. */
  let generated: () => boolean
  /** A message of a paused turn sent back whose opening has not come: it has received nothing. */
  let sentBackUnopened: () => boolean = () => false
  if (passThrough) {
    const stream = a.surface.passThroughStream(a.ids, (received) => a.trace.billedUsage(received, a.leg))
    errorFrame = stream.errorFrame
    // The upstream's terminal event (or its error) ends what the client gets: a frame after it is not the client's.
    clientFrames = passThroughText(
      upstream,
      stream.frame,
      () => stream.finished() || stream.error() !== undefined,
      stream.closeCleanly,
    )
    // Checked on the pieces held before the client's first byte (the first, and the opening's hold):
    // an upstream error by then (even one in the same read as a message_start) means the client has
    // had nothing yet, so the request falls back.
    failedBeforeStart = () => {
      const error = stream.error()
      return error ? upstreamFailure(error) : undefined
    }
    complete = () => stream.finished() && !stream.error()
    generated = stream.generated
    received = () => ({ ...receivedSoFar(stream), clean: complete(), error: stream.error() })
  } else {
    let meter = newStreamMeter()
    const encoder = a.surface.streamEncoder(a.ids, {
      upstreamModel: a.leg.candidate.model.upstreamModel,
      body: a.body,
      now: () => a.trace.since(a.ids.createdAt),
    })
    let broken: GatewayError | undefined
    const estimate = (m: typeof meter) =>
      a.trace.billedUsage({ usage: m.usage, reported: m.reported, outputBytes: m.outputBytes }, a.leg)
    // A turn svc may send back on a pause goes on through the same encoder (paused-turn.ts).
    const joint = a.pausedTurn ? joinedLegs(encoder) : undefined
    const last: StreamCodec<ExchangeEvent, string> = joint ?? encoder
    const legOf = (frames: UpstreamFrames, pausedTurn?: unknown[]): TranslatedLeg => ({
      upstream: frames,
      translate: pipe(
        pipe(
          codecs[a.leg.candidate.provider.kind].streamDecoder(
            requestToolNames(a.body),
            a.leg.candidate.provider,
            pausedTurn,
          ),
          meterStep(meter, estimate),
        ),
        last,
      ),
      // The paused message's blocks as Anthropic sent them, for the turn sent back.
      sent: joint && anthropicMessageAssembler(),
    })
    const pausedTurn = a.pausedTurn
    /** The leg that paused and its meter, while the next one has produced nothing yet. */
    let pausedAt: { leg: LegDraft; meter: StreamMeter } | undefined
    const nextLeg =
      joint && pausedTurn
        ? async (paused: TranslatedLeg): Promise<TranslatedLeg | PausedEnd> => {
            a.trace.settleLeg(a.leg, 'ok', meter)
            pausedAt = { leg: a.leg, meter }
            const content = (paused.sent?.json(0) as { content?: unknown[] } | undefined)?.content ?? []
            // The client keeps its keep-alives while the turn is sent back (no upstream is read).
            const quiet = upstream.onQuiet
            const keepAlive = quiet ? setInterval(quiet, pingIntervalMs) : undefined
            let resumed: Awaited<ReturnType<typeof pausedTurn.resume>>
            try {
              resumed = await pausedTurn.resume(content)
            } finally {
              clearInterval(keepAlive)
            }
            // Not sent back for the client's leaving or the drain's cut: the stream ends as they do.
            if (a.controller.signal.aborted) throw streamFailure(a.controller.signal.reason)
            if (typeof resumed === 'string') return resumed
            joint.nextLeg(pausedTurn.billedBefore(resumed.leg))
            a.leg = resumed.leg
            meter = newStreamMeter()
            a.leg.progress = received
            const frames = upstreamFrames(
              resumed.upstream,
              idleTimeoutMs,
              () => resumed.controller.abort(),
              pingIntervalMs,
            )
            frames.onQuiet = upstream.onQuiet
            upstream = frames
            // Its first event is due within first_byte_timeout_ms, as the first message's was.
            const first = withinFirstByte(frames.next(), deps.config.routing.firstByteTimeoutMs, resumed.controller)
            // Awaited by the next pull; should the client leave first, its failure is no one's.
            first.catch(() => {})
            return { ...legOf(frames, resumed.turn), first }
          }
        : undefined
    // A message sent back that fails before its content ends the answer at the pause before it, as
    // a failed send does (paused-turn.ts): not the client's leaving, nor the drain's cut.
    const abandonResumed =
      joint &&
      ((error: GatewayError): string | undefined => {
        if (!pausedAt || meter.started || a.controller.signal.aborted) return undefined
        resumedLegFailed(deps, a.trace, a.leg, error, a.probe)
        a.leg = pausedAt.leg
        meter = pausedAt.meter
        pausedAt = undefined
        return joint.endPaused().join('')
      })
    clientFrames = translatedText(
      legOf(upstream),
      encoder,
      (error) => {
        broken = error
        // The encoder's failure tells the client the usage billed for what flowed.
        for (const event of standInUsage(meter, estimate)) last.push(event)
      },
      joint,
      nextLeg,
      abandonResumed,
    )
    // A stream the encoder ended with an error event failed, whatever the upstream had said before.
    complete = () => meter.finished && !meter.error && !broken && !joint?.paused
    generated = () => meter.started
    sentBackUnopened = () => pausedAt !== undefined && !meter.opened
    received = () => ({ ...meter, clean: complete(), broken })
    // Checked on the pieces held before the client's first byte (the first, and the opening's hold):
    // a failure anywhere in them, even after the message's opening or some of its content, still
    // falls back, as in the pass-through relay, and the failed leg costs nothing (the client has
    // had none of it).
    failedBeforeStart = () => {
      if (meter.error) return upstreamFailure(meter.error)
      if (broken) return new GatewayError(broken.kind, broken.message, { status: broken.status, retryable: true })
      // The stream goes on: its content (or the rest of it) comes with the next reads.
      if (meter.opened || meter.started) return undefined
      return new GatewayError('api_error', 'upstream stream failed before its first event', {
        status: 502,
        retryable: true,
      })
    }
  }

  // Before the first byte: a failure here is the caller's to fall back from.
  let first: IteratorResult<string>
  try {
    first = await withinFirstByte(clientFrames.next(), deps.config.routing.firstByteTimeoutMs, a.controller)
  } catch (err) {
    await clientFrames.return?.(undefined).catch(() => {})
    throw err
  }
  if (first.done)
    throw new GatewayError('api_error', 'upstream stream ended before any event', { status: 502, retryable: true })
  // The first client frame may be only our rendering of an upstream that failed at once (an
  // in-band error as its first event, a 200 stream that closed empty). It has not been sent:
  // fall back as for a 5xx rather than answer 200 with nothing but an error event.
  const early = failedBeforeStart()
  if (early) {
    await clientFrames.return?.(undefined).catch(() => {})
    throw early
  }
  const firstEventMs = performance.now() - a.sentAt
  // What the leg has received so far: for the usage API while it runs, and for the bill of a client
  // that leaves while the opening is held (relay.ts, abandonLeg).
  a.leg.progress = received
  // The opening alone (message_start, response.created, a Chat role chunk) is held until the answer
  // begins, for up to the ping interval: an upstream that fails right after it (Anthropic's
  // overloaded_error after message_start, often a write of its own; an in-band error after a role
  // chunk) has then given the client nothing, and the next candidate is tried. An answer that is
  // slow to begin (a long silent think) gets its opening, and keep-alives, once the hold is over.
  let opening = first.value
  /** The read the hold stopped waiting for, which the relay then takes first. */
  let pending: Promise<IteratorResult<string>> | undefined
  try {
    const holdUntil = performance.now() + pingIntervalMs
    while (!generated()) {
      pending ??= clientFrames.next()
      const next = await settledBy(pending, holdUntil)
      if (next === undefined) {
        // The relay awaits it; should the client leave before that, its failure is no one's.
        pending.catch(() => {})
        break
      }
      pending = undefined
      const failure = next.done
        ? new GatewayError('api_error', 'upstream stream ended before its answer began', {
            status: 502,
            retryable: true,
          })
        : failedBeforeStart()
      if (failure) throw failure
      opening += next.value
    }
  } catch (err) {
    await clientFrames.return?.(undefined).catch(() => {})
    throw err
  }
  servedFirstByte(deps, a, false, firstEventMs)
  // From here the client holds the request id (the response's headers) while the stream runs: the
  // usage API finds the request among the running ones, with the counts so far from the meter.
  // A non-streaming answer hands out its id only once it has ended, so only streams register
  // (holding every request in a registry cost ~4 µs of CPU a request, bench-path).
  // Aborted with a reason, the upstream's next read fails with it: the loop below tells the client.
  a.trace.cut = (why) => a.controller.abort(why)
  deps.running.add(a.trace)

  let done = false
  /**
   * Every frame of a complete message has been handed to the socket: a client that goes away after
   * that (an SDK closes the connection once it has read the message's end) had the whole answer.
   */
  let sentWhole = false
  const finish = (outcome: 'ok' | 'failed' | 'aborted', upstreamError?: GatewayError) => {
    if (done) return
    done = true
    const error = upstreamError && errorWithoutSecrets(upstreamError, a.apiKey)
    deps.metrics.streamEnded()
    // A message of a paused turn sent back that received nothing (paused-turn.ts): still being
    // sent, or its headers in and nothing else. That leg is free, as one before a first byte is;
    // the one before it was settled when it paused.
    const pending = a.trace.legs.at(-1)!
    const unanswered = pending !== a.leg ? pending : sentBackUnopened() ? a.leg : undefined
    if (unanswered && unanswered.outcome === undefined) {
      const why = error ?? streamFailure(a.controller.signal.reason)
      a.trace.failLeg(unanswered, why, outcome === 'aborted' ? 'aborted' : 'failed', true)
    } else if (a.leg.outcome !== undefined) {
      // Settled when it paused; the answer ended there.
    } else if (outcome === 'failed' && error && !generated()) {
      // A leg that failed before its answer began produced nothing: it costs nothing, as one that
      // failed before its first event (Anthropic does not bill an overloaded_error).
      a.trace.failLeg(a.leg, error, 'failed', true)
    } else a.trace.settleLeg(a.leg, outcome, received(), error)
    judgeStream(deps, a.trace, a.leg, a.probe, outcome, error)
    if (outcome === 'failed' && error) {
      deps.metrics.upstreamError(a.leg.candidate.provider.id, a.leg.candidate.model.id, error.kind)
    }
    const status = outcome === 'ok' ? 'completed' : outcome
    record(deps, a.trace, { status, httpStatus: outcome === 'aborted' ? 499 : 200, error })
  }
  // A direct stream: one pull that writes each frame as it is produced and flushes it at once,
  // so no frame waits for another (no batching) and no promise round trip per frame. A write to a
  // client that reads slower than the upstream sends is a promise (Bun's backpressure): the next
  // upstream frame is read only once it settles, so svc holds a frame, not the answer (an audit:
  // 8 clients that never read took a fast upstream's streams to 4.4 GB).
  const stream = new ReadableStream({
    type: 'direct',
    async pull(controller) {
      const send = (frame: string): number | Promise<number> => {
        // An upstream may quote the key svc called it with in an error event (a compatible server
        // echoing the request's headers): relayed or translated, it goes out without it.
        const written = controller.write(frameWithoutKey(frame, a.apiKey))
        const flushed = controller.flush()
        const pending = written instanceof Promise ? written : flushed
        // Handled here: the sends that do not wait (the first frame, keep-alives, a closing error)
        // must not leave a rejection unhandled when the client has gone.
        if (pending instanceof Promise) pending.catch(() => {})
        return pending
      }
      try {
        sentWhole = !(send(opening) instanceof Promise) && complete()
        // From here the client has a stream: a silent upstream no longer leaves it without bytes.
        upstream.onQuiet = () => {
          if (done) return
          try {
            send(a.surface.keepAliveFrame)
          } catch {
            // The client has gone: cancel() stops the upstream and records the leg.
          }
        }
        for (;;) {
          const next = await (pending ?? clientFrames.next())
          pending = undefined
          if (next.done) break
          if (done) return
          const backedUp = send(next.value)
          if (backedUp instanceof Promise) await backedUp
          sentWhole = complete()
        }
        const end = received()
        if (end.clean) {
          finish('ok')
        } else {
          const error =
            end.broken ??
            (end.error
              ? upstreamFailure(end.error)
              : new GatewayError('api_error', 'upstream stream ended before the message was complete', { status: 502 }))
          // A translated stream already told the client (the encoder emits the error event);
          // a pass-through stream has relayed the upstream's own frames, so add ours if it sent none.
          if (passThrough && !end.error) send(errorFrame(error))
          finish('failed', error)
        }
      } catch (err) {
        if (done) return
        const error = streamFailure(err)
        const frame = errorFrame(error)
        if (frame) send(frame)
        finish('failed', error)
      }
      controller.close()
    },
    async cancel() {
      // The client went away: stop the upstream and record what flowed, as served in full if it had it all.
      a.controller.abort()
      if (sentWhole) finish('ok')
      else finish('aborted', new GatewayError('api_error', 'client disconnected mid-stream', { status: 499 }))
      await clientFrames.return?.(undefined).catch(() => {})
    },
  })
  deps.metrics.streamStarted()
  return new Response(stream, { headers: { ...sseHeaders, ...a.idHeader } })
}

/**
 * The pass-through relay's pieces: what one read of the upstream completed, every frame checked,
 * metered and (message_start) given our id by `frame`, as one write. Frames that travelled
 * together go out together; none waits for a later read, so nothing is batched.
 */
function passThroughText(
  upstream: UpstreamFrames,
  frame: (event: SseEvent) => string,
  ended: () => boolean,
  /** At a clean end of the body before `ended()`: the frame that still completes the answer, or ''. */
  closeCleanly: () => string,
): AsyncIterator<string> {
  const finished = { done: true, value: undefined } as const
  let failure: { error: unknown } | undefined
  /**
   * The upstream's terminal event has gone out: what follows is read to the body's end (so that
   * the connection can serve another request) but relayed to no one, and a failure then is no
   * failure of the answer the client has whole.
   */
  let over = false
  const fail = async (error: unknown): Promise<never> => {
    await upstream.close()
    throw error
  }
  return {
    async next() {
      if (failure) return fail(failure.error)
      for (;;) {
        // try rather than .catch(): one promise fewer on every read of every stream.
        let events: readonly SseEvent[] | undefined
        try {
          events = await upstream.next()
        } catch (error) {
          if (over) return finished
          return fail(error)
        }
        if (events === undefined) {
          if (over) return finished
          over = true
          const text = closeCleanly()
          return text === '' ? finished : { done: false, value: text }
        }
        if (over) continue
        let text = ''
        for (const event of events) {
          try {
            text += frame(event)
          } catch (error) {
            if (text === '') return fail(error)
            // The frames before the bad one still go out; the failure comes with the next pull.
            failure = { error }
            break
          }
          if (ended()) {
            over = true
            break
          }
        }
        if (text !== '') return { done: false, value: text }
      }
    },
    async return() {
      await upstream.close()
      return finished
    },
  }
}

/** One upstream message of a translated answer: its frames, their translation, and a copy of it as sent where needed. */
interface TranslatedLeg {
  upstream: UpstreamFrames
  translate: StreamCodec<SseEvent, string>
  /** The message gathered as the upstream sent it (a turn that may pause is sent back so). */
  sent?: ReturnType<typeof anthropicMessageAssembler>
  /** Its first read, started under the first event's bound (a message sent back). */
  first?: Promise<readonly SseEvent[] | undefined>
}

/**
 * The translated relay's pieces: what one read of the upstream completed, decoded, metered and
 * encoded in one synchronous step, as one write. A failure anywhere (a read, a timeout, a
 * malformed frame) becomes the encoder's in-stream error, after the frames before it. A message
 * that ends paused (`joint`) goes on in the next leg, `nextLeg` sending the turn back, once the
 * pause's own frames have gone out; without one, the pause ends the answer.
 */
function translatedText(
  first: TranslatedLeg,
  encoder: StreamEncoder,
  onBroken: (error: GatewayError) => void,
  joint?: JoinedLegs<string>,
  nextLeg?: (paused: TranslatedLeg) => Promise<TranslatedLeg | PausedEnd>,
  /** A resumed leg that failed before its content: the frames that end the answer at the pause, if so. */
  abandonResumed?: (error: GatewayError) => string | undefined,
): AsyncIterator<string> {
  const ended = { done: true, value: undefined } as const
  let leg = first
  let finished = false
  /**
   * The frames that end the answer for `failure`: at the pause before a message sent back that
   * failed before its content, else the encoder's error (for `cause`, what was thrown).
   */
  const failedFrames = (failure: GatewayError, cause: unknown = failure): string => {
    const ended = abandonResumed?.(failure)
    if (ended !== undefined) return ended
    onBroken(failure)
    return encoder.fail(cause).join('')
  }
  /** The leg before ended paused: the next pull goes on with another. */
  let paused = false
  return {
    async next() {
      while (!finished) {
        let text = ''
        let { upstream, translate, sent } = leg
        try {
          if (paused) {
            paused = false
            const resumed = await nextLeg!(leg)
            if (typeof resumed === 'string') {
              finished = true
              return { done: false, value: joint!.endPaused(resumed).join('') }
            }
            leg = resumed
            ;({ upstream, translate, sent } = leg)
          }
          const events = await (leg.first ?? upstream.next())
          leg.first = undefined
          if (events === undefined) {
            text = translate.end().join('')
          } else {
            for (const event of events) {
              sent?.push(event)
              text += translate.push(event).join('')
              if (translate.done) break
            }
            // What the encoder held for the read's next event: the read brought none.
            if (!translate.done) text += translate.flush?.().join('') ?? ''
          }
        } catch (error) {
          // What a step held for what was to follow (a call's double-encoded arguments) flowed:
          // the client sees it, and the leg is billed for it, ahead of the error.
          text += translate.release?.().join('') ?? ''
          text += failedFrames(streamFailure(error), error)
          finished = true
        }
        if (translate.done || finished) {
          await upstream.close()
          const failedBeforeContent = finished ? undefined : joint?.failedBeforeContent
          if (failedBeforeContent) {
            text += failedFrames(upstreamFailure(failedBeforeContent))
            finished = true
          } else if (!finished && joint?.paused && nextLeg) paused = true
          else finished = true
        }
        if (text !== '') return { done: false, value: text }
      }
      return ended
    },
    async return() {
      finished = true
      await leg.upstream.close()
      return ended
    },
  }
}

/** `read`'s result, or undefined if it has not settled by `deadline` (a `performance.now()` time). */
function settledBy<T>(read: Promise<T>, deadline: number): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), Math.max(0, deadline - performance.now()))
    read.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/**
 * `read` (a stream's first), or a retryable timeout once `ms` have passed without it: the attempt
 * is aborted and the next candidate tried.
 */
export async function withinFirstByte<T>(
  read: Promise<T>,
  ms: number,
  controller: AbortController,
  /** The bound as the error names it, where `ms` is what is left of it. */
  boundMs = ms,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    return await Promise.race([
      read,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          controller.abort()
          reject(new GatewayError('timeout', `upstream sent no event within ${boundMs} ms`, { retryable: true }))
        }, ms)
      }),
    ])
  } finally {
    clearTimeout(timer)
  }
}
