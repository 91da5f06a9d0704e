// A non-streaming answer streamed from the upstream and gathered into JSON: for a request whose
// answer may take longer than `first_byte_timeout_ms` to write (a long output limit), where a
// non-streaming upstream call would send nothing until the end. Streamed, the first event bounds
// a hung provider (first_byte_timeout_ms) and each silence a stalled one (idle_timeout_ms), while
// a slow, steady answer takes as long as it needs. Nothing reaches the client until the answer is
// whole, so a failure anywhere in it still falls back to the next candidate, as a JSON call's would.
// A client that leaves is charged what the upstream had sent by then (the leg's progress, as for a
// cut stream): the provider bills it, and long answers left near their end cost the account nothing.
import type { Deps } from '../deps'
import { responseAssembler } from '../exchange/assemble-response'
import { anthropicMessageAssembler } from '../protocols/anthropic/assemble-message'
import { pipe } from '../exchange/stream-codec'
import type { SseEvent } from '../protocols/sse'
import { GatewayError } from '../lib/errors'
import { upstreamFailure } from '../providers/call-upstream'
import { answerTooLarge, maxAnswerBytes } from '../providers/bounded-body'
import { codecs, requestToolNames } from '../providers/codecs'
import type { AnsweredAttempt } from './attempt'
import { passesThrough, receivedSoFar } from './surface'
import { deliverPassThrough, deliverTranslated, jsonAnswer } from './json-answer'
import { hasMediaType } from './send'
import { meterStep, newStreamMeter, type StreamMeter } from './meter'
import { resumedLegFailed } from './paused-turn'
import { withinFirstByte } from './stream-answer'
import { streamFailure, type UpstreamFrames, upstreamFrames } from './upstream-frames'

export async function assembledAnswer(deps: Deps, a: AnsweredAttempt): Promise<Response> {
  // An upstream (or a compatible server's model) that cannot stream answers JSON all the same:
  // the answer as a JSON call's, as before svc asked for a stream.
  if (hasMediaType(a.upstream.headers.get('content-type') ?? '', 'json')) return jsonAnswer(deps, a)
  const { idleTimeoutMs, firstByteTimeoutMs } = deps.config.routing
  const upstream = upstreamFrames(a.upstream, idleTimeoutMs, () => a.controller.abort())
  try {
    // The headers took some of the first byte's time (send.ts): the first event has what is left.
    const left = Math.max(1, a.sentAt + firstByteTimeoutMs - performance.now())
    const first = await withinFirstByte(upstream.next(), left, a.controller, firstByteTimeoutMs)
    const upstreamTtfbMs = performance.now() - a.sentAt
    /**
     * Feeds every read of `frames` (from its first, `read`) to `take` until it says the answer is
     * whole or the body ends. Held whole until then, the answer is bounded as a JSON one is.
     */
    let size = 0
    const readAll = async (
      frames: UpstreamFrames,
      read: readonly SseEvent[] | undefined,
      take: (event: SseEvent) => boolean,
    ) => {
      for (let events = read; events !== undefined; events = await frames.next()) {
        for (const event of events) {
          size += event.data.length
          if (size > maxAnswerBytes) throw answerTooLarge()
          if (take(event)) return
        }
      }
    }

    if (passesThrough(a.leg.candidate.provider, a.surface)) {
      // Metered as the streamed relay meters it (a message that finishes without its usage is estimated).
      const meter = a.surface.passThroughStream(a.ids)
      const assembly = a.surface.passThroughAssembly()
      a.leg.progress = () => receivedSoFar(meter)
      await readAll(upstream, first, (event) => {
        meter.frame(event)
        assembly.push(event)
        const error = meter.error()
        if (error) throw upstreamFailure(error)
        return meter.finished()
      })
      // The body ended cleanly: whole without its terminal event where it said how it ended.
      if (!meter.finished()) meter.closeCleanly()
      if (!meter.finished()) throw endedEarly()
      const { body: answer } = a.surface.passThroughJson(assembly.json(meter.estimatedOutputTokens()), a.ids)
      return deliverPassThrough(deps, a, receivedSoFar(meter), answer, upstreamTtfbMs, meter.searchesUnlisted())
    }

    /** The meter of the message being gathered: what a message sent back had sent when it broke. */
    let gathering: StreamMeter | undefined
    /** One upstream message, whole: decoded, metered, and as sent where its turn may be sent back. */
    const gather = async (frames: UpstreamFrames, read: readonly SseEvent[] | undefined, pausedTurn?: unknown[]) => {
      const meter = newStreamMeter()
      gathering = meter
      a.leg.progress = () => meter
      const assembler = responseAssembler()
      const sent = a.pausedTurn && anthropicMessageAssembler()
      const decoder = codecs[a.leg.candidate.provider.kind].streamDecoder(
        requestToolNames(a.body),
        a.leg.candidate.provider,
        pausedTurn,
      )
      const chain = pipe(pipe(decoder, meterStep(meter)), assembler)
      try {
        await readAll(frames, read, (event) => {
          sent?.push(event)
          chain.push(event)
          if (meter.error) throw upstreamFailure(meter.error)
          return chain.done
        })
      } catch (error) {
        // What the decoder held (a call's double-encoded arguments) flowed: the meter counts it
        // for a client that left, or a message sent back that broke.
        chain.release?.()
        throw error
      }
      chain.end()
      if (meter.error) throw upstreamFailure(meter.error)
      if (!meter.finished) throw endedEarly()
      return { response: { ...assembler.response(), usage: meter.usage }, meter, sent }
    }
    let part = await gather(upstream, first)
    const content = part.response.content
    /** How the answer ends where the upstream paused it and it was not sent back (paused-turn.ts). */
    let stopReason = part.response.stopReason
    // A turn the upstream paused, sent back until it ends (paused-turn.ts): its messages' blocks in
    // one answer. A message that fails then ends the answer at the pause before it; the client's
    // leaving (or the drain's cut) ends the request as it would any other (relay.ts).
    while (stopReason === 'pause_turn' && a.pausedTurn) {
      const paused = a.leg
      a.trace.settleLeg(paused, 'ok', part.meter)
      const resumed = await a.pausedTurn.resume(
        (part.sent?.json(0) as { content?: unknown[] } | undefined)?.content ?? [],
      )
      if (a.controller.signal.aborted) {
        // The leg the client left is the one sent back, if it was: the relay books it aborted.
        a.leg = a.trace.legs.at(-1)!
        throw streamFailure(a.controller.signal.reason)
      }
      if (typeof resumed === 'string') {
        stopReason = resumed
        break
      }
      a.leg = resumed.leg
      const frames = upstreamFrames(resumed.upstream, idleTimeoutMs, () => resumed.controller.abort())
      try {
        // Its headers took some of the first byte's time, as the first message's did.
        const left = Math.max(1, resumed.sentAt + firstByteTimeoutMs - performance.now())
        const read = await withinFirstByte(frames.next(), left, resumed.controller, firstByteTimeoutMs)
        part = await gather(frames, read, resumed.turn)
        content.push(...part.response.content)
        stopReason = part.response.stopReason
      } catch (err) {
        const error = streamFailure(err)
        // The attempt's controller is aborted only by the client's leaving or the drain (the
        // message's own timeouts abort its own): the relay ends the request as it would any other.
        if (a.controller.signal.aborted) throw error
        resumedLegFailed(deps, a.trace, a.leg, error, a.probe, gathering?.started ? gathering : undefined)
        a.leg = paused
        break
      } finally {
        await frames.close()
      }
    }
    const earlier = a.pausedTurn?.billedBefore(a.leg)
    const answer = { ...part.response, content, stopReason }
    return deliverTranslated(deps, a, answer, part.meter, upstreamTtfbMs, earlier)
  } finally {
    await upstream.close()
  }
}

const endedEarly = () =>
  new GatewayError('api_error', 'upstream stream ended before the message was complete', {
    status: 502,
    retryable: true,
  })
