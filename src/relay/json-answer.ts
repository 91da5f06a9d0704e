// A non-streaming answer: the upstream's JSON relayed under our ids, or decoded and encoded in
// the client's shape, with the leg settled from the usage the upstream reported.
import type { Deps } from '../deps'
import { addedUsage } from '../exchange/joined-legs'
import type { ExchangeResponse, Usage } from '../exchange/types'
import { GatewayError } from '../lib/errors'
import { maxAnswerBytes, readAnswerText } from '../providers/bounded-body'
import { upstreamFailure } from '../providers/call-upstream'
import { codecs, requestToolNames } from '../providers/codecs'
import { isReported } from '../protocols/unreported-usage'
import { answerBytes, billedAsReported } from './credible-usage'
import { servedFirstByte } from './outcome'
import { expectContentType } from './send'
import type { AnsweredAttempt } from './attempt'
import { passesThrough } from './surface'

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

/**
 * The answer's output bytes where its output is estimated (the trace uses them only then:
 * usage never reported, or counts that cannot be billed), else 0.
 */
const outputBytesIfNeeded = (usage: Usage, answer: () => ExchangeResponse) =>
  billedAsReported(usage, isReported(usage)) ? 0 : answerBytes(answer().content)

export async function jsonAnswer(deps: Deps, a: AnsweredAttempt): Promise<Response> {
  expectContentType(a.upstream, 'json')
  const passThrough = passesThrough(a.leg.candidate.provider, a.surface)
  const declared = a.upstream.headers.get('content-length')
  const length = declared === null ? undefined : Number(declared)
  // Parsed straight from the bytes when its length is known and within bounds, unless it is long
  // enough to be relayed as text; an answer of unknown length (chunked, compressed) is read as
  // bounded text (bounded-body.ts).
  const relayedAsText = passThrough && a.surface.passThroughText !== undefined && (length ?? 0) >= textFromBytes
  const fromBytes = length !== undefined && length <= maxAnswerBytes && !relayedAsText
  let json: unknown
  let text: string | undefined
  // The whole answer is due within first_byte_timeout_ms of the request (its headers may come
  // first, then nothing: a hung server held the request, and its hold on the credit, for good).
  const { firstByteTimeoutMs } = deps.config.routing
  let timedOut = false
  const timer = setTimeout(
    () => {
      timedOut = true
      a.controller.abort()
    },
    Math.max(1, a.sentAt + firstByteTimeoutMs - performance.now()),
  )
  try {
    if (!fromBytes) text = await readAnswerText(a.upstream)
    json = text === undefined ? await a.upstream.json() : JSON.parse(text)
  } catch (err) {
    if (timedOut) {
      throw new GatewayError('timeout', `upstream sent no whole answer within ${firstByteTimeoutMs} ms`, {
        retryable: true,
      })
    }
    if (err instanceof GatewayError) throw err
    throw new GatewayError('api_error', 'upstream answered 200 with a body that is not valid JSON', {
      status: 502,
      retryable: true,
      cause: err,
    })
  } finally {
    clearTimeout(timer)
  }
  const upstreamCodec = codecs[a.leg.candidate.provider.kind]
  const inBand = upstreamCodec.inBandError?.(json)
  if (inBand) throw upstreamFailure(inBand)
  if (passThrough) {
    const { body, usage } = a.surface.passThroughJson(json, a.ids)
    const reported = isReported(usage)
    if (!billedAsReported(usage, reported)) {
      // Decoded only to estimate output never reported, or whose count cannot be billed (credible-usage.ts): rare.
      const outputBytes = answerBytes(decodeAnswer(a, json).content)
      return deliverPassThrough(deps, a, { usage, reported, outputBytes }, body)
    }
    const relayed = text === undefined ? undefined : a.surface.passThroughText?.(text, json, a.ids)
    return deliver(deps, a, { usage, reported, outputBytes: 0 }, relayed ?? body)
  }
  const response = decodeAnswer(a, json)
  const reported = isReported(response.usage)
  return deliverTranslated(deps, a, response, {
    reported,
    outputBytes: outputBytesIfNeeded(response.usage, () => response),
  })
}

/**
 * The upstream's 200 JSON decoded to the neutral answer. A body its kind cannot read as an answer (a
 * proxy's `{"status":"ok"}`, a Chat body without choices) is a failed attempt whatever the kind, as
 * the pass-through routes' check of the same body makes it (surface.passThroughJson): the next
 * candidate is tried, the model's health counts it, the leg is charged nothing. Here rather than at
 * each decoder's throw, so that the rule holds for every kind, the decoders staying readers of
 * their wire that know nothing of fallback.
 */
function decodeAnswer(a: AnsweredAttempt, json: unknown): ExchangeResponse {
  try {
    return codecs[a.leg.candidate.provider.kind].decodeResponse(
      json,
      requestToolNames(a.body),
      a.leg.candidate.provider,
    )
  } catch (err) {
    if (!(err instanceof GatewayError) || err.retryable) throw err
    throw new GatewayError(err.kind, err.message, { status: err.status, retryable: true, cause: err })
  }
}

/**
 * A decoded answer in the client's shape, unless the upstream says it broke off: Chat's
 * finish_reason "error", a Responses answer "failed" or "cancelled". Relayed, it would read as a
 * finished one (end_turn); the client has nothing yet, so this is a failed attempt like any other
 * and the next candidate is tried.
 */
export function deliverTranslated(
  deps: Deps,
  a: AnsweredAttempt,
  response: ExchangeResponse,
  metered: { reported: boolean; outputBytes: number },
  upstreamTtfbMs?: number,
  /** What the answer's earlier messages were billed, where the upstream paused its turn (paused-turn.ts). */
  earlier?: Usage,
): Response {
  if (response.stopReason === 'error') {
    throw new GatewayError('api_error', 'upstream answer ended in an error', { status: 502, retryable: true })
  }
  const received = { usage: response.usage, ...metered }
  // Usage the upstream never reported, or reported as no count can be, reaches the client as svc
  // bills it (an estimate), not as zeros or the incredible count.
  const billed = billedAsReported(response.usage, metered.reported)
    ? response
    : { ...response, usage: a.trace.billedUsage(received, a.leg) }
  const told = earlier ? { ...billed, usage: addedUsage(earlier, billed.usage) } : billed
  const encoded = a.surface.encodeResponse(told, a.ids, {
    upstreamModel: a.leg.candidate.model.upstreamModel,
    body: a.body,
    now: () => a.trace.since(a.ids.createdAt),
  })
  return deliver(deps, a, received, encoded, upstreamTtfbMs)
}

/**
 * A same-shape answer (the upstream's own JSON under our ids), telling the client the usage svc
 * bills where the upstream reported none it can bill, as a translated answer does.
 */
export function deliverPassThrough(
  deps: Deps,
  a: AnsweredAttempt,
  received: { usage: Usage; reported: boolean; outputBytes: number },
  body: Record<string, unknown>,
  upstreamTtfbMs?: number,
  /** The body's usage lists fewer searches than are billed (PassThroughMeter.searchesUnlisted). */
  searchesUnlisted = false,
): Response {
  const told =
    billedAsReported(received.usage, received.reported) && !searchesUnlisted
      ? body
      : a.surface.withBilledUsage(body, a.trace.billedUsage(received, a.leg))
  return deliver(deps, a, received, told, upstreamTtfbMs)
}

/**
 * The leg settled and the answer sent: the JSON body as text already in place, or as a value to
 * serialize. `upstreamTtfbMs`: when the upstream's first byte came, where that was before the
 * answer was whole (a stream gathered for the client).
 */
export function deliver(
  deps: Deps,
  a: AnsweredAttempt,
  received: { usage: Usage; reported: boolean; outputBytes: number },
  body: unknown,
  upstreamTtfbMs?: number,
): Response {
  a.trace.settleLeg(a.leg, 'ok', received)
  servedFirstByte(deps, a, true, upstreamTtfbMs)
  if (typeof body === 'string')
    return new Response(body, { headers: { 'content-type': jsonContentType, ...a.idHeader } })
  return Response.json(body, { headers: a.idHeader })
}
