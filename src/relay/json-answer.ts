// A non-streaming answer: the upstream's JSON relayed under our ids, or decoded and encoded in
// the client's shape, with the leg settled from the usage the upstream reported.
import type { Deps } from '../deps'
import { GatewayError } from '../lib/errors'
import { codecs, requestToolNames } from '../providers/codecs'
import { servedFirstByte } from './outcome'
import { expectContentType } from './send'
import type { AnsweredAttempt } from './attempt'

/**
 * From about this size the upstream's own text with our id put in costs less than its JSON
 * serialized again, answer text being slow to serialize (measured, the body's write included:
 * ~2 µs less at 3 KB, ~7 µs at 16 KB; even at 1.5 KB). Below it, json() parsing straight from
 * the bytes and Response.json's body cost less than text(), JSON.parse and a string body (~1 µs
 * less at 0.5 KB).
 */
const textFromBytes = 2048

/** As Response.json sets it, so that the two kinds of answer look alike. */
const jsonContentType = 'application/json;charset=utf-8'

export async function jsonAnswer(
  deps: Deps,
  a: AnsweredAttempt & { idHeader: Record<string, string> },
): Promise<Response> {
  expectContentType(a.upstream, 'json')
  const passThrough = a.leg.candidate.provider.kind === a.surface.nativeKind
  let asText = false
  if (passThrough && a.surface.passThroughText) {
    // No length (a chunked answer): likely a long one.
    const length = a.upstream.headers.get('content-length')
    asText = length === null || Number(length) >= textFromBytes
  }
  let json: unknown
  let text: string | undefined
  try {
    if (asText) {
      text = await a.upstream.text()
      json = JSON.parse(text)
    } else {
      json = await a.upstream.json()
    }
  } catch (err) {
    throw new GatewayError('api_error', 'upstream answered 200 with a body that is not valid JSON', {
      status: 502,
      retryable: true,
      cause: err,
    })
  }
  if (passThrough) {
    const { body, usage } = a.surface.passThroughJson(json, a.ids)
    a.trace.settleLeg(a.leg, 'ok', { usage, reported: true, outputChars: 0 })
    servedFirstByte(deps, a.trace, a.leg)
    const relayed = text === undefined ? undefined : a.surface.passThroughText?.(text, json, a.ids)
    if (relayed !== undefined)
      return new Response(relayed, { headers: { 'content-type': jsonContentType, ...a.idHeader } })
    return Response.json(body, { headers: a.idHeader })
  }
  const response = codecs[a.leg.candidate.provider.kind].decodeResponse(json, requestToolNames(a.body))
  if (response.stopReason === 'error') {
    // Chat's finish_reason "error", a Responses answer "failed" or "cancelled": the upstream says
    // the answer broke off. Relayed, it would read as a finished one (end_turn); the client has
    // nothing yet, so this is a failed attempt like any other and the next candidate is tried.
    throw new GatewayError('api_error', 'upstream answer ended in an error', { status: 502, retryable: true })
  }
  a.trace.settleLeg(a.leg, 'ok', { usage: response.usage, reported: true, outputChars: 0 })
  servedFirstByte(deps, a.trace, a.leg)
  return Response.json(a.surface.encodeResponse(response, a.ids, a.body), { headers: a.idHeader })
}
