// The messages surface: Anthropic Messages in, and the ids the contract fixes (msg_<ulid>).
import { decodeAnthropicRequest } from '../protocols/anthropic/decode-anthropic-request'
import { anthropicMessageAssembler } from '../protocols/anthropic/assemble-message'
import { anthropicUsage } from '../protocols/anthropic/decode-anthropic-response'
import { encodeAnthropicResponse } from '../protocols/anthropic/encode-anthropic-response'
import { anthropicStreamEncoder } from '../protocols/anthropic/encode-anthropic-stream'
import { encodeGatewayErrorAsAnthropic } from '../protocols/anthropic/errors'
import { withoutForeignHistory } from '../protocols/anthropic/foreign-history'
import { atListPrice } from '../protocols/anthropic/list-price'
import { fitToModel } from '../protocols/anthropic/model-fit'
import {
  createAnthropicPassThroughMeter,
  replaceMessageDeltaUsage,
  rewriteMessageStart,
} from '../protocols/anthropic/usage-meter'
import { encodeAnthropicUsage } from '../protocols/anthropic/usage'
import { decodeChatErrorPayload } from '../protocols/openai-chat/errors'
import { encodeSse, encodeSseText, type SseEvent } from '../protocols/sse'
import { isReported } from '../protocols/unreported-usage'
import { isJson, isObject, type JsonObject, parseJson, replaceStringMember } from '../protocols/wire-values'
import { pricesHourCacheWrites } from '../ledger/pricing'
import { GatewayError } from '../lib/errors'
import { billedAsReported } from './credible-usage'
import { withoutSessionMetadata } from './session'
import type { InboundSurface } from './surface'

const messageId = (requestId: string) => `msg_${requestId}`

/**
 * A frame with no `event:` line, named as Anthropic names it, by its data's `type`: some proxies in
 * front of Claude (LiteLLM's) write `data:` lines only, which the SDK's stream drops, and every
 * request failed as an answer that never began.
 */
function namedByType(event: SseEvent): SseEvent {
  const parsed = parseJson(event.data)
  const payload = parsed.ok && isObject(parsed.value) ? parsed.value : undefined
  const type = payload?.type
  if (payload && type === undefined) return asErrorEvent(payload) ?? event
  if (typeof type !== 'string' || !/^[a-z_]+$/.test(type)) return event
  return { event: type, data: event.data, raw: encodeSseText(type, event.data) }
}

/**
 * A bare `{"error": …}` (a proxy's in-band failure, or llama.cpp's `error:` field as sse.ts reads
 * it) as Anthropic's error event: the SDK reads events by name and skipped it, so the client never
 * heard the upstream's message, and the meter, seeing no error, let the stream pass as merely cut.
 */
function asErrorEvent(payload: JsonObject): SseEvent | undefined {
  const info = decodeChatErrorPayload(200, payload)
  if (!info) return undefined
  const data = JSON.stringify({ type: 'error', error: { type: info.type, message: info.message } })
  return { event: 'error', data, raw: encodeSseText('error', data) }
}

export const anthropicSurface: InboundSurface = {
  name: 'messages',
  errorShape: 'anthropic',
  nativeKind: 'anthropic',
  decode: decodeAnthropicRequest,
  metadata: (body) => (isObject(body.metadata) ? body.metadata : undefined),
  // Claude Code sends `thinking: {type: "adaptive"}` and output_config.effort whatever model it is
  // routed to: fitted, as anything else the model would refuse (model-fit.ts), and so is history
  // another provider made that the upstream cannot read back (foreign-history.ts: Anthropic itself
  // takes only its own thinking, a compatible server such as DeepSeek's wants every tool turn's).
  // What Anthropic bills above the list price svc charges (fast mode, a priority tier, code
  // execution, a 1-hour cache write the model has no price for…) is left out (list-price.ts).
  passThroughBody: (body, model, maxTokens, provider) =>
    fitToModel(
      withoutForeignHistory(
        atListPrice(
          withoutSessionMetadata({ ...body, model: model.upstreamModel, max_tokens: maxTokens }),
          pricesHourCacheWrites(model.price),
        ),
        provider,
        model.capabilities,
      ),
      model.capabilities,
      model.maxOutputTokens,
    ),
  passThroughJson(json, ids) {
    if (!isObject(json) || json.type !== 'message') {
      throw new GatewayError('api_error', 'upstream answered 200 with a body that is not a message', {
        status: 502,
        retryable: true,
      })
    }
    return { body: { ...json, id: messageId(ids.requestId) }, usage: anthropicUsage(json.usage) }
  },
  // The upstream's other usage fields (service_tier, server_tool_use) stay as it sent them.
  withBilledUsage(body, usage) {
    return { ...body, usage: { ...(isObject(body.usage) ? body.usage : {}), ...encodeAnthropicUsage(usage) } }
  },
  // Only the id changes (the answer is serialized again where it cannot be put in place).
  passThroughText(text, json, ids) {
    const upstreamId = isObject(json) ? json.id : undefined
    if (typeof upstreamId !== 'string') return undefined
    return replaceStringMember(text, 'id', upstreamId, messageId(ids.requestId))
  },
  passThroughStream(ids, billed) {
    const meter = createAnthropicPassThroughMeter()
    const id = messageId(ids.requestId)
    /** What svc bills for the stream so far, in Anthropic's shape; only asked where a count is missing. */
    const billedUsage = billed
      ? () => encodeAnthropicUsage(billed({ usage: meter.usage(), reported: false, outputBytes: meter.outputBytes() }))
      : undefined
    return {
      frame(upstreamEvent) {
        // Every Anthropic frame carries JSON. Relaying one that does not would break the client's
        // parser while the ledger saw a clean finish; end the stream with an error event instead.
        if (!isJson(upstreamEvent.data)) {
          throw new GatewayError('api_error', `upstream sent a malformed ${upstreamEvent.event ?? 'data'} frame`, {
            status: 502,
            retryable: true,
          })
        }
        const event = upstreamEvent.event === undefined ? namedByType(upstreamEvent) : upstreamEvent
        meter.observe(event)
        if (event.event === 'message_start') return rewriteMessageStart(event, { id, estimatedUsage: billedUsage })
        if (event.event === 'message_delta') {
          // The final counts, as the SDK reports them and the ledger bills them: the upstream's own
          // where they can be billed as reported (relayed as they came), else svc's estimate in their
          // place: an output count left out (a compatible server's, on which the SDK's stream throws),
          // no prompt count, or counts no usage can have (told -5 or 5e12 while billed an estimate).
          // Frames gathered into JSON are not the client's: that JSON is told its usage (json-answer.ts).
          const usage = meter.usage()
          const reported = isReported(usage)
          if (!billed || (billedAsReported(usage, reported) && !meter.searchesUnlisted())) return event.raw
          return replaceMessageDeltaUsage(
            event,
            encodeAnthropicUsage(billed({ usage, reported, outputBytes: meter.outputBytes() })),
          )
        }
        return event.raw
      },
      usage: meter.usage,
      finished: meter.finished,
      closeCleanly: meter.closeCleanly,
      generated: meter.generated,
      estimatedOutputTokens: meter.estimatedOutputTokens,
      outputBytes: meter.outputBytes,
      error: meter.error,
      searchesUnlisted: meter.searchesUnlisted,
      errorFrame: (error) => encodeSse('error', encodeGatewayErrorAsAnthropic(error)),
    }
  },
  passThroughAssembly: anthropicMessageAssembler,
  // `model` is the concrete upstream model (the contract), by the catalog's name for it, as a
  // translated stream's message_start names it: the upstream's own may be a dated snapshot.
  encodeResponse: (response, ids, ctx) =>
    encodeAnthropicResponse(response, { id: messageId(ids.requestId), model: ctx.upstreamModel }),
  // Anthropic's own keep-alive event: its streams may carry any number, and its SDKs skip them.
  keepAliveFrame: encodeSse('ping', { type: 'ping' }),
  streamEncoder: (ids, ctx) => anthropicStreamEncoder({ id: messageId(ids.requestId), model: ctx.upstreamModel }),
}
