// The responses surface: OpenAI Responses in. Ids are resp_<ulid> and msg_<ulid>, and
// `response.model` is the routing profile the client sent (the contract), not the upstream model.
// Stateless: previous_response_id is refused with a 400 by the decoder (no conversation store).
import { GatewayError } from '../lib/errors'
import { encodeSse } from '../protocols/sse'
import { responsesAssembler } from '../protocols/openai-responses/assemble-response'
import { decodeResponsesRequest } from '../protocols/openai-responses/decode-responses-request'
import { usageOfResponse } from '../protocols/openai-responses/decode-responses-response'
import {
  encodeResponsesResponse,
  encodeResponsesUsage,
  messageItemId,
} from '../protocols/openai-responses/encode-responses-response'
import { responsesStreamEncoder } from '../protocols/openai-responses/encode-responses-stream'
import { encodeGatewayErrorAsOpenAI } from '../protocols/openai-responses/errors'
import { fitResponsesToListPrice } from '../protocols/openai-responses/list-price'
import { fitResponsesToModel } from '../protocols/openai-responses/model-fit'
import { withoutUnreadableReasoning } from '../protocols/openai-responses/reasoning-signature'
import { withProviderCallIds } from '../protocols/openai-responses/call-ids'
import type { ResponsesBody } from '../protocols/openai-responses/schema'
import { createResponsesPassThroughMeter } from '../protocols/openai-responses/usage-meter'
import { isReported } from '../protocols/unreported-usage'
import { isJson, isObject, parseJson } from '../protocols/wire-values'
import { upstreamFailure } from '../providers/call-upstream'
import { billedAsReported } from './credible-usage'
import type { ClientIds, InboundSurface } from './surface'

/** Without max_output_tokens the model's own limit applies (the ranking clamps to it). */
const unlimitedOutput = 128_000

const unixSeconds = (ms: number) => Math.floor(ms / 1000)

const idsFor = (ids: ClientIds) => ({
  responseId: `resp_${ids.requestId}`,
  messageId: `msg_${ids.requestId}`,
  model: ids.profile,
  createdAt: unixSeconds(ids.createdAt),
})

const sequencePattern = /"sequence_number":(\d+)/

/** The events whose response is the last the client reads: its usage is what svc bills. */
const terminalEvents = new Set(['response.completed', 'response.incomplete', 'response.failed'])

/** A relayed terminal frame with its response's usage replaced; any other frame as it was. */
function withTerminalUsage(frame: string, usage: Record<string, unknown>): string {
  const dataAt = frame.indexOf('data:')
  const parsed = dataAt < 0 ? undefined : parseJson(frame.slice(dataAt + 'data:'.length).trim())
  const payload = parsed?.ok ? parsed.value : undefined
  if (!isObject(payload) || !isObject(payload.response) || typeof payload.type !== 'string') return frame
  if (!terminalEvents.has(payload.type)) return frame
  return encodeSse(payload.type, { ...payload, response: { ...payload.response, usage } })
}

/** A frame whose JSON names its event by a top-level `type`, as every Responses event does. */
function hasOwnType(data: string): boolean {
  const parsed = parseJson(data)
  return parsed.ok && isObject(parsed.value) && parsed.value.type !== undefined
}

export const responsesSurface: InboundSurface = {
  name: 'responses',
  errorShape: 'openai',
  nativeKind: 'openai-responses',
  decode: (body) => decodeResponsesRequest(body as ResponsesBody, { defaultMaxTokens: unlimitedOutput }),
  metadata: (body) => (isObject(body.metadata) ? body.metadata : undefined),
  passThroughBody(body, { upstreamModel, capabilities }, maxTokens) {
    const out: Record<string, unknown> = { ...body, model: upstreamModel }
    // svc chose the model: what it would refuse, svc leaves out or brings within its range.
    fitResponsesToModel(out, capabilities)
    // What OpenAI bills above the list price svc charges (priority, background, hosted tools…) is left out.
    fitResponsesToListPrice(out)
    if (Array.isArray(body.input))
      out.input = withProviderCallIds(withoutUnreadableReasoning(body.input, body.store !== false))
    if (typeof body.max_output_tokens === 'number' || maxTokens < unlimitedOutput) out.max_output_tokens = maxTokens
    return out
  },
  passThroughJson(json, ids) {
    if (!isObject(json) || json.object !== 'response') {
      throw new GatewayError('api_error', 'upstream answered 200 with a body that is not a response', {
        status: 502,
        retryable: true,
      })
    }
    const { responseId, messageId, model } = idsFor(ids)
    let messages = 0
    const output = Array.isArray(json.output)
      ? json.output.map((item: unknown, index: number) =>
          isObject(item) && item.type === 'message'
            ? { ...item, id: messageItemId(messageId, index, messages++) }
            : item,
        )
      : json.output
    const usage = usageOfResponse(json)
    const body: Record<string, unknown> = { ...json, id: responseId, model, output }
    // Usage under a Chat server's names (a proxy), read and billed: told under Responses' names.
    if (isObject(json.usage) && json.usage.input_tokens === undefined && isReported(usage))
      body.usage = encodeResponsesUsage(usage)
    return { body, usage }
  },
  withBilledUsage: (body, usage) => ({ ...body, usage: encodeResponsesUsage(usage) }),
  passThroughStream(ids, billed) {
    const meter = createResponsesPassThroughMeter()
    const rewrite = idsFor(ids)
    let lastSequence = -1
    const errorFrame = (error: GatewayError) => {
      const { code, message, param } = encodeGatewayErrorAsOpenAI(error).error
      return encodeSse('error', { type: 'error', code, message, param, sequence_number: lastSequence + 1 })
    }
    return {
      frame(event) {
        // Chat's sentinel, which some compatible servers end with: Responses has none, and the OpenAI
        // SDK stops reading at it, before the error svc appends to a stream that never finished.
        if (event.data === '[DONE]') return ''
        // Every other Responses frame carries JSON. Relaying one that does not broke the client's
        // parser while the ledger recorded a clean finish (reliability suite): end the stream with an
        // error event instead, as the messages surface does.
        if (!isJson(event.data)) {
          throw new GatewayError('api_error', `upstream sent a malformed ${event.event ?? 'data'} frame`, {
            status: 502,
            retryable: true,
          })
        }
        const erredBefore = meter.error() !== undefined
        meter.observe(event)
        // OpenRouter's mid-stream failure is a bare {"error": …} with no type, which a client reading
        // events by type (Codex) skips: it gets the typed error event svc writes in its place. The
        // type asked is the event's own: llama.cpp's error names one inside (`error.type`).
        if (!erredBefore && event.event === undefined) {
          const failure = meter.error()
          if (failure && !hasOwnType(event.data)) return errorFrame(upstreamFailure(failure))
        }
        const match = sequencePattern.exec(event.data)
        if (match) lastSequence = Number(match[1])
        const text = meter.rewriteResponsesFrame(event, rewrite)
        if (!billed) return text
        // A response that failed here: the client is told what svc bills for what flowed, as the
        // relay bills a stream that did not finish (stream-answer.ts): its output estimated. Relayed
        // as it came, it said no usage (or OpenAI's partial one) where svc billed hundreds of tokens.
        if (!erredBefore && meter.error() !== undefined && !meter.finished()) {
          const usage = { ...meter.usage(), output: meter.estimatedOutputTokens() }
          return withTerminalUsage(text, encodeResponsesUsage(billed({ usage, reported: false, outputBytes: 0 })))
        }
        // The final response without a usage svc can bill: the client is told the estimate it bills.
        if (!meter.finished()) return text
        const usage = meter.usage()
        const reported = isReported(usage)
        // A proxy that keeps a Chat server's usage names: the client reads Responses' (Codex
        // requires input_tokens and output_tokens to read the final response).
        if (billedAsReported(usage, reported))
          return text.includes('"input_tokens"') ? text : withTerminalUsage(text, encodeResponsesUsage(usage))
        return withTerminalUsage(
          text,
          encodeResponsesUsage(billed({ usage, reported, outputBytes: meter.outputBytes() })),
        )
      },
      usage: meter.usage,
      finished: meter.finished,
      // A Responses stream is whole only at its terminal event, which carries the answer.
      closeCleanly: () => '',
      generated: meter.generated,
      estimatedOutputTokens: meter.estimatedOutputTokens,
      outputBytes: meter.outputBytes,
      error: meter.error,
      searchesUnlisted: meter.searchesUnlisted,
      errorFrame,
    }
  },
  passThroughAssembly: responsesAssembler,
  encodeResponse: (response, ids, ctx) =>
    encodeResponsesResponse(response, { ...idsFor(ids), request: ctx.body, completedAt: unixSeconds(ctx.now()) }),
  // The Responses stream has no keep-alive event; an SSE comment is one every parser skips.
  keepAliveFrame: ': keep-alive\n\n',
  streamEncoder: (ids, ctx) =>
    responsesStreamEncoder({ ...idsFor(ids), request: ctx.body, now: () => unixSeconds(ctx.now()) }),
}
