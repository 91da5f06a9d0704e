// A non-streaming answer streamed from the upstream and gathered into JSON: for a request whose
// answer may take longer than `first_byte_timeout_ms` to write (a long output limit), where a
// non-streaming upstream call would send nothing until the end. Streamed, the first event bounds
// a hung provider (first_byte_timeout_ms) and each silence a stalled one (idle_timeout_ms), while
// a slow, steady answer takes as long as it needs. Nothing reaches the client until the answer is
// whole, so a failure anywhere in it still falls back to the next candidate, as a JSON call's would.
import type { Deps } from '../deps'
import { responseAssembler } from '../exchange/assemble-response'
import { pipe } from '../exchange/stream-codec'
import type { SseEvent } from '../protocols/sse'
import { GatewayError } from '../lib/errors'
import { upstreamFailure } from '../providers/call-upstream'
import { codecs, requestToolNames } from '../providers/codecs'
import { isReported } from '../protocols/unreported-usage'
import type { AnsweredAttempt } from './attempt'
import { deliver, deliverTranslated } from './json-answer'
import { meterStep, newStreamMeter } from './meter'
import { expectContentType } from './send'
import { withinFirstByte } from './stream-answer'
import { UpstreamFrames } from './upstream-frames'

export async function assembledAnswer(
  deps: Deps,
  a: AnsweredAttempt & { controller: AbortController; idHeader: Record<string, string> },
): Promise<Response> {
  expectContentType(a.upstream, 'text/event-stream')
  const body = a.upstream.body
  if (!body) throw new GatewayError('api_error', 'upstream sent an empty stream', { status: 502, retryable: true })
  const { idleTimeoutMs, firstByteTimeoutMs } = deps.config.routing
  const upstream = new UpstreamFrames(body, idleTimeoutMs, () => a.controller.abort())
  try {
    const first = await withinFirstByte(upstream.next(), firstByteTimeoutMs, a.controller)
    const upstreamTtfbMs = deps.clock() - a.leg.startedAt
    /**
     * Feeds every read to `take` until it says the answer is whole or the body ends. A read that
     * fails (a reset) is the provider's failure, as before any answer: the next candidate is tried.
     */
    const readAll = async (take: (event: SseEvent) => boolean) => {
      let events: readonly SseEvent[] | undefined = first
      while (events !== undefined) {
        for (const event of events) if (take(event)) return
        try {
          events = await upstream.next()
        } catch (err) {
          if (err instanceof GatewayError) throw err
          if (a.controller.signal.aborted)
            throw new GatewayError('api_error', 'client went away', { status: 499, cause: err })
          throw new GatewayError('api_error', `upstream stream failed: ${String(err)}`, {
            status: 502,
            retryable: true,
            cause: err,
          })
        }
      }
    }

    if (a.leg.candidate.provider.kind === a.surface.nativeKind) {
      // Metered as the streamed relay meters it (a message that finishes without its usage is estimated).
      const meter = a.surface.passThroughStream(a.ids)
      const assembly = a.surface.passThroughAssembly()
      await readAll((event) => {
        meter.frame(event)
        assembly.push(event)
        const error = meter.error()
        if (error) throw upstreamFailure(error)
        return meter.finished()
      })
      if (!meter.finished()) throw endedEarly()
      const { body: answer } = a.surface.passThroughJson(assembly.json(), a.ids)
      const usage = meter.usage()
      const received = { usage, reported: isReported(usage), outputChars: meter.outputChars() }
      return deliver(deps, a, received, answer, upstreamTtfbMs)
    }

    const meter = newStreamMeter()
    const assembler = responseAssembler()
    const decoder = codecs[a.leg.candidate.provider.kind].streamDecoder(requestToolNames(a.body))
    const chain = pipe(pipe(decoder, meterStep(meter)), assembler)
    await readAll((event) => {
      chain.push(event)
      if (meter.error) throw upstreamFailure(meter.error)
      return chain.done
    })
    chain.end()
    if (meter.error) throw upstreamFailure(meter.error)
    if (!meter.finished) throw endedEarly()
    const response = { ...assembler.response(), usage: meter.usage }
    return deliverTranslated(deps, a, response, meter, upstreamTtfbMs)
  } finally {
    await upstream.close()
  }
}

const endedEarly = () =>
  new GatewayError('api_error', 'upstream stream ended before the message was complete', {
    status: 502,
    retryable: true,
  })
