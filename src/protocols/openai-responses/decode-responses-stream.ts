// A Responses upstream's SSE events → neutral exchange events (wire-formats §2.6, §4.11).
//
// Each output item becomes one block: reasoning → thinking, message → text (a declined one where
// its parts are all refusal: TextBlock.refusal, its block opening with its first content part),
// function_call → tool_use, a web_search_call that searched → web_search (whole, once its item is
// done). A url_citation annotation cites the words streamed before it, so it becomes a citation
// event after them.
// Upstreams may interleave items (§4.11), while neutral blocks run one after another, so every
// item-level event is queued on its item and only the oldest unfinished item emits; later items
// replay their queue when it closes. llama.cpp's server (and Lemonade, built on it) sends no
// output_index at all: its items are placed in the order they are added, and their events by item_id.
import type { StreamCodec } from '../../exchange/stream-codec'
import type { ExchangeEvent, UpstreamErrorInfo } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { anthropicErrorTypeForStatus } from '../anthropic/errors'
import type { SseEvent } from '../sse'
import {
  mapResponsesStopReason,
  readIncompleteReason,
  readMessageText,
  readReasoningText,
  readUrlCitation,
  readWebSearch,
  type ResponsesDecodeOptions,
  usageOfResponse,
} from './decode-responses-response'
import { isObject, type JsonObject, asArray, asNumber, asString } from '../wire-values'
import { noToolNames, type RequestToolNames, toolNameRestorer } from '../openai-tool-names'
import { tagResponsesSignature } from './reasoning-signature'
import { ownEntry } from '../../lib/own-entry'
import { isReported } from '../unreported-usage'

type ItemKind = 'text' | 'thinking' | 'tool_use' | 'web_search' | 'other'

/** `refusal` (a message's): its block opens as the model's words declining (TextBlock.refusal). */
type Action =
  | { kind: 'open'; refusal?: true }
  /** `part`: the content_index of a message's text, where its annotations' indices start. */
  | { kind: 'delta'; text: string; part?: number; refusal?: true }
  | { kind: 'citation'; annotation: JsonObject; part: number }
  /** Between reasoning summary parts: a paragraph break, only once something was said. */
  | { kind: 'separator' }
  | { kind: 'arguments_done'; arguments: string }
  | { kind: 'close'; item: JsonObject }

interface ItemState {
  kind: ItemKind
  item: JsonObject
  actions: Action[]
  /** Set once the block is emitted; thinking opens lazily, and late thinking never opens. */
  blockIndex?: number
  dropped: boolean
  sawDelta: boolean
  closed: boolean
  /** Added with no output_index (llama.cpp): placed by the order items come in. */
  placedByOrder: boolean
  /** Closed because a later item began (closeStreamedByOrder), its close perhaps still queued. */
  endedByOrder: boolean
  /** A message's text streamed so far, and where each of its content parts starts in it. */
  text: string
  partStarts: Map<number, number>
}

const itemKinds: Record<string, ItemKind> = {
  message: 'text',
  reasoning: 'thinking',
  function_call: 'tool_use',
  web_search_call: 'web_search',
}

/** Failure codes (response.error.code / error event code) → the neutral error vocabulary. */
export const mapResponsesFailure = (code: unknown, message: unknown): UpstreamErrorInfo => {
  const text = asString(message) ?? 'the upstream response failed'
  if (code === 'rate_limit_exceeded') return { status: 429, type: 'rate_limit_error', message: text }
  if (code === 'insufficient_quota') return { status: 402, type: 'billing_error', message: text }
  if (typeof code === 'string' && (code.startsWith('invalid_') || code === 'context_length_exceeded')) {
    return { status: 400, type: 'invalid_request_error', message: text }
  }
  // OpenRouter puts the HTTP status in `code`, as in its Chat errors: a 429 is still a rate limit.
  if (typeof code === 'number' && code >= 400 && code < 600) {
    return { status: code, type: anthropicErrorTypeForStatus(code), message: text }
  }
  return { status: 500, type: 'api_error', message: text }
}

/**
 * The failure an in-band error reports: an `error` event, a response.error, a 200 body. OpenAI
 * documents code and message at the top level of its error event but also nests them under `error`
 * (openai-dotnet#881), as OpenRouter does: each is read at the top level, then under `error`. A
 * nested type stands in for a missing code; the top-level one names the event.
 */
export const readResponsesFailure = (value: unknown): UpstreamErrorInfo => {
  const json = isObject(value) ? value : {}
  // Some proxies send the error as its message alone: `{"error": "…"}`.
  const said = json['error']
  const nested = isObject(said) ? said : typeof said === 'string' ? { message: said } : {}
  const read = (field: string) => json[field] ?? nested[field]
  return mapResponsesFailure(read('code') ?? nested['type'], read('message'))
}

/** A frame's type; OpenRouter's mid-stream failure is a bare `{"error":{…}}`, an error event all the same. */
export const responsesEventType = (json: JsonObject | undefined, sseEvent?: string): string | undefined =>
  asString(json?.['type']) ?? sseEvent ?? (json?.['error'] == null ? undefined : 'error')

/** The id an item's events name in item_id: llama.cpp's function calls carry only their call_id. */
const itemId = (item: JsonObject): string | undefined => asString(item['id']) ?? asString(item['call_id'])

const parseEvent = (event: SseEvent): JsonObject | undefined => {
  const data = event.data.trim()
  // Some compatible servers end with Chat's sentinel; Responses has none.
  if (data === '' || data === '[DONE]') return undefined
  let json: unknown
  try {
    json = JSON.parse(data)
  } catch (cause) {
    throw new GatewayError('api_error', 'upstream sent malformed JSON in a Responses stream event', {
      status: 502,
      retryable: true,
      cause,
    })
  }
  if (!isObject(json)) {
    throw new GatewayError('api_error', 'upstream sent a Responses stream event that is not an object', {
      status: 502,
      retryable: true,
    })
  }
  return json
}

/** `toolNames`: the request's, to restore the names encodeResponsesRequest shortened; `opts`: whose blobs. */
export function responsesStreamDecoder(
  toolNames: RequestToolNames = noToolNames,
  opts: ResponsesDecodeOptions = {},
): StreamCodec<SseEvent, ExchangeEvent> {
  const restoreName = toolNameRestorer(toolNames)
  let done = false
  const items = new Map<number, ItemState>()
  const itemIndexById = new Map<string, number>()
  /** Where an item that comes with no output_index goes: after every item placed so far. */
  let nextIndex = 0
  /** Output indices in the order items were added; the head is the one allowed to emit. */
  const queue: number[] = []
  let nextBlock = 0
  let started = false
  /** Once text or a tool call is out, later reasoning is dropped: Claude Code discards a turn with thinking after text (§4.8). */
  let answerStarted = false
  let hasFunctionCall = false
  let hasRefusal = false

  const startEvent = (response: unknown): ExchangeEvent[] => {
    if (started) return []
    started = true
    const r = isObject(response) ? response : {}
    return [{ type: 'start', id: asString(r['id']) ?? '', model: asString(r['model']) ?? '' }]
  }

  const addItem = (outputIndex: number, item: JsonObject): ItemState => {
    const existing = items.get(outputIndex)
    if (existing) return existing
    const kind = ownEntry(itemKinds, asString(item['type']) ?? '') ?? 'other'
    const state: ItemState = {
      kind,
      item,
      actions: [],
      dropped: false,
      sawDelta: false,
      closed: false,
      placedByOrder: false,
      endedByOrder: false,
      text: '',
      partStarts: new Map(),
    }
    items.set(outputIndex, state)
    nextIndex = Math.max(nextIndex, outputIndex + 1)
    const id = itemId(item)
    if (id) itemIndexById.set(id, outputIndex)
    queue.push(outputIndex)
    return state
  }

  const indexOfId = (id: string | undefined) => (id === undefined ? undefined : itemIndexById.get(id))

  /** An item's output_index; with none, where its id put it, or, new, the next place. */
  const placeOf = (json: JsonObject, item: JsonObject): number =>
    asNumber(json['output_index']) ?? indexOfId(itemId(item)) ?? nextIndex

  const findItem = (json: JsonObject, implicitKind?: ItemKind): ItemState | undefined => {
    const id = asString(json['item_id'])
    const index = asNumber(json['output_index']) ?? indexOfId(id)
    const state = index === undefined ? undefined : items.get(index)
    if (state || !implicitKind || (index === undefined && id === undefined)) return state
    // A delta for an item never announced: tolerate it for text and reasoning, whose block needs no header.
    const type = implicitKind === 'text' ? 'message' : 'reasoning'
    return addItem(index ?? nextIndex, { type, ...(id ? { id } : {}) })
  }

  const open = (state: ItemState, refusal?: true): ExchangeEvent[] => {
    // A search is no streamed block: it comes out whole at its close.
    if (state.blockIndex !== undefined || state.dropped || state.kind === 'other' || state.kind === 'web_search')
      return []
    if (state.kind === 'thinking' && answerStarted) {
      state.dropped = true
      return []
    }
    state.blockIndex = nextBlock++
    if (state.kind === 'text') {
      answerStarted = true
      return [
        { type: 'block_start', index: state.blockIndex, block: refusal ? { kind: 'text', refusal } : { kind: 'text' } },
      ]
    }
    if (state.kind === 'tool_use') {
      answerStarted = true
      hasFunctionCall = true
      const id = asString(state.item['call_id']) ?? asString(state.item['id']) ?? ''
      const name = restoreName(asString(state.item['name']) ?? '')
      return [{ type: 'block_start', index: state.blockIndex, block: { kind: 'tool_use', id, name } }]
    }
    return [{ type: 'block_start', index: state.blockIndex, block: { kind: 'thinking' } }]
  }

  const delta = (state: ItemState, text: string, part = 0, refusal?: true): ExchangeEvent[] => {
    if (text === '') return []
    const out = open(state, refusal)
    const index = state.blockIndex
    if (index === undefined) return out
    state.sawDelta = true
    if (state.kind === 'text') {
      if (!state.partStarts.has(part)) state.partStarts.set(part, state.text.length)
      state.text += text
      out.push({ type: 'text_delta', index, text })
    } else if (state.kind === 'thinking') out.push({ type: 'thinking_delta', index, thinking: text })
    else if (state.kind === 'tool_use') out.push({ type: 'tool_args_delta', index, partialJson: text })
    return out
  }

  /**
   * An annotation quotes the text of its part streamed so far: OpenAI sends it after the words it
   * marks, and a span past them is clamped to them.
   */
  const citation = (state: ItemState, annotation: JsonObject, part: number): ExchangeEvent[] => {
    const index = state.blockIndex
    const start = state.partStarts.get(part)
    if (state.kind !== 'text' || index === undefined || start === undefined) return []
    const cited = readUrlCitation(annotation, state.text.slice(start), start)
    return cited ? [{ type: 'citation', index, citation: cited }] : []
  }

  /** A message that streamed nothing, from its finished item: its text, then the citations of it. */
  const wholeMessage = (state: ItemState, item: JsonObject): ExchangeEvent[] => {
    const { text, refusal, declined, citations } = readMessageText(item)
    hasRefusal ||= refusal
    const out = delta(state, text, 0, declined || undefined)
    const index = state.blockIndex
    if (index === undefined) return out
    return [...out, ...citations.map((citation): ExchangeEvent => ({ type: 'citation', index, citation }))]
  }

  const close = (state: ItemState, item: JsonObject): ExchangeEvent[] => {
    state.closed = true
    if (state.kind === 'web_search') return searchBlock(item)
    if (state.kind === 'other' || state.dropped) return []
    const out: ExchangeEvent[] = []
    // Backends that send no deltas (only the .done events or the finished item) still deliver content (§2.6).
    if (!state.sawDelta) {
      if (state.kind === 'text') out.push(...wholeMessage(state, item))
      else if (state.kind === 'thinking') out.push(...delta(state, readReasoningText(item)))
      else out.push(...delta(state, asString(item['arguments']) ?? ''))
    }
    const encrypted = state.kind === 'thinking' ? asString(item['encrypted_content']) : undefined
    if (encrypted) out.push(...open(state))
    // A tool call opens even with no arguments at all; an empty message or reasoning item yields no block.
    if (state.kind === 'tool_use') out.push(...open(state))
    const index = state.blockIndex
    if (index === undefined) return out
    // A compatible server's blob is its own (decode-responses-response.ts, ResponsesDecodeOptions).
    if (encrypted)
      out.push({ type: 'signature_delta', index, signature: tagResponsesSignature(encrypted, opts.blobMaker) })
    out.push({ type: 'block_stop', index })
    return out
  }

  /**
   * A search opens and closes at once, when its item is done and its sources are in. Titles are
   * the URLs: the answer's citations, which name the pages, come after it. It leaves later
   * reasoning in place (OpenAI reasons between searches); a client that refuses it drops it.
   */
  const searchBlock = (item: JsonObject): ExchangeEvent[] => {
    const search = readWebSearch(item)
    if (!search) return []
    const index = nextBlock++
    return [
      { type: 'block_start', index, block: { kind: 'web_search', search } },
      { type: 'block_stop', index },
    ]
  }

  const apply = (state: ItemState, action: Action): ExchangeEvent[] => {
    switch (action.kind) {
      case 'open':
        return open(state, action.refusal)
      case 'delta':
        return delta(state, action.text, action.part, action.refusal)
      case 'citation':
        return citation(state, action.annotation, action.part)
      case 'separator':
        return state.sawDelta ? delta(state, '\n\n') : []
      case 'arguments_done':
        return state.sawDelta ? [] : delta(state, action.arguments)
      case 'close':
        return close(state, action.item)
    }
  }

  /** Emits queued actions of the head item; when it closes, moves on to the next. */
  const drain = (): ExchangeEvent[] => {
    const out: ExchangeEvent[] = []
    for (;;) {
      const head = queue[0]
      if (head === undefined) return out
      const state = items.get(head)
      if (!state) return out
      for (const action of state.actions.splice(0)) out.push(...apply(state, action))
      if (!state.closed) return out
      queue.shift()
    }
  }

  const enqueue = (state: ItemState | undefined, action: Action): ExchangeEvent[] => {
    if (state?.endedByOrder) return continueAfter(state, action)
    if (!state || state.closed) return []
    state.actions.push(action)
    return drain()
  }

  /**
   * llama.cpp's server sends every item's output_item.done at the end of the stream, so an item's
   * close would hold back every later item (text after reasoning, say) until the answer is whole,
   * and lose it if the stream is cut. Its items never interleave: a new one placed by order ends
   * the ones before it. Only those whose content has streamed: one that sent no delta still needs
   * its done item for its content (a call's whole arguments).
   */
  const closeStreamedByOrder = (): ExchangeEvent[] => {
    let closing = false
    for (const state of items.values()) {
      if (!state.placedByOrder || state.closed || !state.sawDelta) continue
      if (state.actions.some((action) => action.kind === 'close')) continue
      state.actions.push({ kind: 'close', item: state.item })
      state.endedByOrder = true
      closing = true
    }
    return closing ? drain() : []
  }

  /**
   * A delta for an item ended by order: llama.cpp keeps one content string a turn, so text (or
   * reasoning) may go on after a tool call began. It goes on in a new item after the others, of
   * the same kind and id (its deltas and done item now name that one); reasoning there is dropped
   * as any after the answer began is.
   */
  const continueAfter = (ended: ItemState, action: Action): ExchangeEvent[] => {
    if (action.kind !== 'delta' || (ended.kind !== 'text' && ended.kind !== 'thinking')) return []
    const out = closeStreamedByOrder()
    const next = addItem(nextIndex, ended.item)
    next.placedByOrder = true
    if (next.kind === 'text') next.actions.push({ kind: 'open' })
    next.actions.push(action)
    return [...out, ...drain()]
  }

  /** At the end, close what the upstream left open, taking content from the final output. */
  const closeAll = (response: JsonObject): ExchangeEvent[] => {
    const output = asArray(response['output'])
    output.forEach((item, index) => {
      if (isObject(item) && !items.has(index)) addItem(index, item)
    })
    for (const [index, state] of items) {
      if (state.closed || state.actions.some((action) => action.kind === 'close')) continue
      const final = output[index]
      state.actions.push({ kind: 'close', item: isObject(final) ? final : state.item })
    }
    return drain()
  }

  const decode = (event: SseEvent): ExchangeEvent[] => {
    const json = parseEvent(event)
    if (!json) return []
    const type = responsesEventType(json, event.event)
    const out: ExchangeEvent[] = []
    switch (type) {
      case 'response.created':
      case 'response.queued':
      case 'response.in_progress':
        out.push(...startEvent(json['response']))
        break
      case 'response.output_item.added': {
        out.push(...startEvent(undefined))
        if (!isObject(json['item'])) break
        const byOrder = asNumber(json['output_index']) === undefined && indexOfId(itemId(json['item'])) === undefined
        if (byOrder) out.push(...closeStreamedByOrder())
        const state = addItem(placeOf(json, json['item']), json['item'])
        state.placedByOrder = byOrder
        // A tool block opens as soon as its item is announced; a message's with its first content
        // part, which says whether the model answers or declines (refusal); reasoning with content.
        if (state.kind === 'tool_use') state.actions.push({ kind: 'open' })
        out.push(...drain())
        break
      }
      case 'response.content_part.added': {
        const state = findItem(json)
        if (state?.kind !== 'text') break
        const part = isObject(json['part']) ? json['part'] : {}
        out.push(...enqueue(state, part['type'] === 'refusal' ? { kind: 'open', refusal: true } : { kind: 'open' }))
        break
      }
      case 'response.output_text.delta':
        out.push(...startEvent(undefined))
        out.push(
          ...enqueue(findItem(json, 'text'), {
            kind: 'delta',
            text: asString(json['delta']) ?? '',
            part: asNumber(json['content_index']) ?? 0,
          }),
        )
        break
      // A message with no content_part.added opens declined with its first refusal words; after an
      // answer's text (not something OpenAI sends), they join that text.
      case 'response.refusal.delta':
        out.push(...startEvent(undefined))
        hasRefusal = true
        out.push(
          ...enqueue(findItem(json, 'text'), {
            kind: 'delta',
            text: asString(json['delta']) ?? '',
            part: asNumber(json['content_index']) ?? 0,
            refusal: true,
          }),
        )
        break
      case 'response.output_text.annotation.added':
        if (isObject(json['annotation'])) {
          const part = asNumber(json['content_index']) ?? 0
          out.push(...enqueue(findItem(json), { kind: 'citation', annotation: json['annotation'], part }))
        }
        break
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        out.push(...startEvent(undefined))
        out.push(...enqueue(findItem(json, 'thinking'), { kind: 'delta', text: asString(json['delta']) ?? '' }))
        break
      case 'response.reasoning_summary_part.added':
        if ((asNumber(json['summary_index']) ?? 0) > 0) out.push(...enqueue(findItem(json), { kind: 'separator' }))
        break
      case 'response.function_call_arguments.delta':
        out.push(...enqueue(findItem(json), { kind: 'delta', text: asString(json['delta']) ?? '' }))
        break
      case 'response.function_call_arguments.done':
        out.push(...enqueue(findItem(json), { kind: 'arguments_done', arguments: asString(json['arguments']) ?? '' }))
        break
      case 'response.output_item.done': {
        const item = json['item']
        if (!isObject(item)) break
        out.push(...startEvent(undefined))
        out.push(...enqueue(addItem(placeOf(json, item), item), { kind: 'close', item }))
        break
      }
      case 'response.completed':
      case 'response.incomplete': {
        const response = isObject(json['response']) ? json['response'] : {}
        out.push(...startEvent(response))
        out.push(...closeAll(response))
        // Only a usage with numeric counts: a usage event says the upstream reported it (relay/meter.ts).
        const usage = usageOfResponse(response)
        if (isReported(usage)) out.push({ type: 'usage', usage })
        const reason = mapResponsesStopReason(
          response['status'] ?? type.slice('response.'.length),
          readIncompleteReason(response),
          {
            hasFunctionCall,
            hasRefusal,
          },
        )
        out.push({ type: 'finish', reason, stopSequence: null })
        done = true
        break
      }
      case 'response.failed': {
        const response = isObject(json['response']) ? json['response'] : {}
        out.push(...startEvent(response))
        const usage = usageOfResponse(response)
        if (isReported(usage)) out.push({ type: 'usage', usage })
        out.push({ type: 'error', error: readResponsesFailure(response['error']) })
        done = true
        break
      }
      // No start before it: an error that comes first means the client has had nothing of this
      // upstream yet, and the request may still fall back (stream-answer.ts, failedBeforeStart).
      case 'error':
        out.push({ type: 'error', error: readResponsesFailure(json) })
        done = true
        break
      default:
        // New event types appear without notice (§0); content_part.done, *.done texts and the like add nothing.
        break
    }
    return out
  }

  return {
    push: (event) => (done ? [] : decode(event)),
    // No terminal event: the upstream connection ended mid-answer (or before it began: then, with
    // no start, the request may still fall back).
    end() {
      if (done) return []
      done = true
      const message = 'upstream Responses stream ended before the response finished'
      // A fault of the gateway's kind (500), as before upstream errors were read by status.
      return [{ type: 'error', error: { status: 500, type: 'api_error', message } }]
    },
    get done() {
      return done
    },
  }
}
