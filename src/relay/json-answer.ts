// A non-streaming answer: the upstream's JSON relayed under our ids, or decoded and encoded in
// the client's shape, with the leg settled from the usage the upstream reported.
import type { Deps } from '../deps'
import { GatewayError } from '../lib/errors'
import { codecs } from '../providers/codecs'
import { servedFirstByte } from './outcome'
import { expectContentType } from './send'
import type { AnsweredAttempt } from './attempt'

export async function jsonAnswer(deps: Deps, a: AnsweredAttempt) {
  expectContentType(a.upstream, 'json')
  let json: unknown
  try {
    json = await a.upstream.json()
  } catch (err) {
    throw new GatewayError('api_error', 'upstream answered 200 with a body that is not valid JSON', {
      status: 502,
      retryable: true,
      cause: err,
    })
  }
  if (a.leg.candidate.provider.kind === a.surface.nativeKind) {
    const { body, usage } = a.surface.passThroughJson(json, a.ids)
    a.trace.settleLeg(a.leg, 'ok', { usage, reported: true, outputChars: 0 })
    servedFirstByte(deps, a.trace, a.leg)
    return body
  }
  const response = codecs[a.leg.candidate.provider.kind].decodeResponse(json)
  a.trace.settleLeg(a.leg, 'ok', { usage: response.usage, reported: true, outputChars: 0 })
  servedFirstByte(deps, a.trace, a.leg)
  return a.surface.encodeResponse(response, a.ids, a.body)
}
