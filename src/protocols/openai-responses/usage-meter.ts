// Responses → Responses pass-through: meter usage off the upstream frames and rewrite the few
// identifiers the client must see as the gateway's own (response id, message item ids, model).
//
// Cost model: a frame is parsed only when it can carry something we read or rewrite — lifecycle
// frames (`response.*` with a `response` object), output_item.added/done, the terminal usage and
// the deltas the output estimate counts. Text-delta frames, the bulk of a stream, name the message
// item in `item_id`; that token is replaced as the exact compact string `"item_id":"<upstream id>"`,
// which cannot occur inside a JSON string value (its quotes would be escaped), so the replacement
// is exact; frames where the id appears in any other form fall back to a full parse. Everything
// else (function-call and reasoning frames, unknown events) is forwarded byte-for-byte.
import { reportedOrEstimatedOutput, utf8Length } from '../../exchange/token-estimate'
import { emptyUsage, type UpstreamErrorInfo } from '../../exchange/types'
import { encodeSse, encodeSseText, type SseEvent } from '../sse'
import { isBilledSearch, usageOfResponse } from './decode-responses-response'
import { readResponsesFailure, responsesEventType } from './decode-responses-stream'
import { messageItemId } from './encode-responses-response'
import { isReported, markUnreported } from '../unreported-usage'
import type { PassThroughMeter } from '../pass-through-meter'
import { asNumber, asString, isObject, type JsonObject, replaceStringMember } from '../wire-values'

export interface ResponsesRewriteOptions {
  /** `resp_<request-derived>` */
  responseId: string
  /** `msg_<request-derived>` for the first message item; later ones get `_<output_index>`. */
  messageId: string
  /** The routing profile the client sent. */
  model: string
  /** When set, the frame's sequence_number becomes this value (every frame is then parsed). */
  sequence?: number
}

/**
 * Usage comes from response.completed, incomplete or failed; finished once response.completed or
 * response.incomplete arrived; the in-band error is an `error` event or response.failed.
 */
export interface ResponsesPassThroughMeter extends PassThroughMeter {
  /** Feed every upstream frame, in order. */
  observe(event: SseEvent): void
  /** The frame to send the client. Stateful: message item ids are numbered in the order they appear. */
  rewriteResponsesFrame(event: SseEvent, opts: ResponsesRewriteOptions): string
}

const lifecycleTypes = new Set([
  'response.created',
  'response.queued',
  'response.in_progress',
  'response.completed',
  'response.incomplete',
  'response.failed',
])

const estimatedTypes = new Set([
  'response.output_text.delta',
  'response.refusal.delta',
  'response.function_call_arguments.delta',
  'response.reasoning_summary_text.delta',
  'response.reasoning_text.delta',
])

/** Events whose `item_id` may name a message item. */
const messageScopedTypes = new Set([
  'response.content_part.added',
  'response.content_part.done',
  'response.output_text.delta',
  'response.output_text.done',
  'response.output_text.annotation.added',
  'response.refusal.delta',
  'response.refusal.done',
])

export const createResponsesPassThroughMeter = (): ResponsesPassThroughMeter => {
  let usage = emptyUsage()
  let done = false
  /** An item was added or a delta came (a compatible server may leave out output_item.added). */
  let contentCame = false
  let deltaBytes = 0
  let searchesRun = 0
  /** The terminal response's usage arrived with numeric counts: they are final. */
  let reported = false
  let upstreamError: UpstreamErrorInfo | undefined
  /** Upstream message item id → the gateway's. */
  const messageIds = new Map<string, string>()
  // observe and rewrite usually see the same frame back to back; parse it once.
  let cached: { event: SseEvent; json: JsonObject | undefined } | undefined

  const parse = (event: SseEvent): JsonObject | undefined => {
    if (cached?.event === event) return cached.json
    let json: JsonObject | undefined
    try {
      const value: unknown = JSON.parse(event.data)
      json = isObject(value) ? value : undefined
    } catch {
      json = undefined
    }
    cached = { event, json }
    return json
  }

  /** The event type, from the `event:` line when there is one (OpenAI always sends it). */
  const typeOf = (event: SseEvent): string | undefined => event.event ?? responsesEventType(parse(event))

  const gatewayMessageId = (upstreamId: string, outputIndex: number | undefined, opts: ResponsesRewriteOptions) => {
    const known = messageIds.get(upstreamId)
    if (known) return known
    const id = messageItemId(opts.messageId, outputIndex ?? messageIds.size, messageIds.size)
    messageIds.set(upstreamId, id)
    return id
  }

  /** Rewrites a message item's id in place; true when something changed. */
  const rewriteItem = (item: unknown, outputIndex: number | undefined, opts: ResponsesRewriteOptions): boolean => {
    if (!isObject(item) || item['type'] !== 'message') return false
    const id = asString(item['id'])
    if (id === undefined) return false
    item['id'] = gatewayMessageId(id, outputIndex, opts)
    return true
  }

  const rewriteJson = (json: JsonObject, type: string, opts: ResponsesRewriteOptions): boolean => {
    let changed = false
    if (lifecycleTypes.has(type) && isObject(json['response'])) {
      const response = json['response']
      response['id'] = opts.responseId
      response['model'] = opts.model
      if (Array.isArray(response['output'])) {
        response['output'].forEach((item, index) => {
          rewriteItem(item, index, opts)
        })
      }
      changed = true
    }
    if (type === 'response.output_item.added' || type === 'response.output_item.done') {
      changed = rewriteItem(json['item'], asNumber(json['output_index']), opts) || changed
    }
    const itemId = asString(json['item_id'])
    const mapped = itemId === undefined ? undefined : messageIds.get(itemId)
    if (mapped) {
      json['item_id'] = mapped
      changed = true
    }
    if (opts.sequence !== undefined) {
      json['sequence_number'] = opts.sequence
      changed = true
    }
    return changed
  }

  return {
    observe(event) {
      const type = typeOf(event)
      if (type === undefined) return
      if (type === 'response.output_item.added') contentCame = true
      if (estimatedTypes.has(type)) {
        contentCame = true
        deltaBytes += utf8Length(asString(parse(event)?.['delta']) ?? '')
        return
      }
      // Billed per search that ran, told by its done item's action (an open_page is no search):
      // counted for a stream cut before the terminal response lists them.
      if (type === 'response.output_item.done') {
        // Parsed only where it can be a search: most done items are messages and calls.
        if (event.data.includes('"web_search_call"') && isBilledSearch(parse(event)?.['item'])) searchesRun++
        return
      }
      // The upstream's own terminal failure has reached the client as relayed; recording it here
      // keeps the relay from appending a second, generic error event after it.
      if (type === 'error') {
        upstreamError = readResponsesFailure(parse(event))
        return
      }
      if (type === 'response.completed' || type === 'response.incomplete' || type === 'response.failed') {
        const response = parse(event)?.['response']
        if (isObject(response) && isObject(response['usage'])) {
          usage = usageOfResponse(response)
          reported = isReported(usage)
        }
        if (type !== 'response.failed') done = true
        else {
          upstreamError = readResponsesFailure(isObject(response) ? response['error'] : undefined)
        }
      }
    },

    usage: () => {
      const counted = { ...usage }
      // The searches that ran so far, until the terminal response lists them, and after it where it
      // lists fewer: a compatible server's may leave its output empty, and each done search ran.
      if (searchesRun > (counted.webSearches ?? 0)) counted.webSearches = searchesRun
      return reported ? counted : markUnreported(counted)
    },

    finished: () => done,

    generated: () => contentCame || done,

    estimatedOutputTokens: () => reportedOrEstimatedOutput(usage.output, reported, deltaBytes),

    outputBytes: () => deltaBytes,

    error: () => upstreamError,

    // Its usage has no search count: a client counts the search items it was sent.
    searchesUnlisted: () => false,

    rewriteResponsesFrame(event, opts) {
      const type = typeOf(event)
      const needsParse =
        opts.sequence !== undefined ||
        type === undefined ||
        lifecycleTypes.has(type) ||
        type === 'response.output_item.added' ||
        type === 'response.output_item.done'
      if (!needsParse) {
        if (!messageScopedTypes.has(type) || messageIds.size === 0) return event.raw
        let mentioned = false
        for (const [upstream, gateway] of messageIds) {
          if (!event.data.includes(upstream)) continue
          mentioned = true
          const data = replaceStringMember(event.data, 'item_id', upstream, gateway)
          if (data !== undefined) return encodeSseText(event.event, data)
        }
        if (!mentioned) return event.raw
        const json = parse(event)
        if (!json || !rewriteJson(json, type, opts)) return event.raw
        return encodeSse(type, json)
      }
      const json = parse(event)
      if (!json) return event.raw
      const jsonType = type ?? asString(json['type'])
      if (jsonType === undefined || !rewriteJson(json, jsonType, opts)) return event.raw
      return encodeSse(event.event ?? jsonType, json)
    },
  }
}
