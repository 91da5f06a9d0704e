// Anthropic SSE frames → neutral exchange events. Block indices are renumbered densely because
// server-tool blocks (web_fetch, code execution…) have no neutral form and are skipped. A web
// search is two blocks, its call (whose input streams the query) and its result: the call is held
// back, and the search opens, complete, at its result.

import type { StreamCodec } from '../../exchange/stream-codec'
import type { BlockStart, ExchangeEvent } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import type { SseEvent } from '../sse'
import { isObject, type JsonObject, parseJson, readNumber, readObject, readString } from '../wire-values'
import { statusForAnthropicErrorType } from './errors'
import { decodeAnthropicStopReason } from './stop-reason'
import { decodeCitation, decodeWebSearchOutcome, isWebSearchCall, webSearchQuery } from './decode-anthropic-response'
import { anthropicUsage, anthropicUsagePartial, startUsage } from './usage'

const handled = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'error',
])

/**
 * `pausedTurn`: the turn sent back to go on after a pause (relay/paused-turn.ts). A pause may fall
 * between a search's call and its result: the result, in this stream, is named by the call there.
 */
export function anthropicStreamDecoder(pausedTurn?: unknown[]): StreamCodec<SseEvent, ExchangeEvent> {
  // Upstream index → our index; a missing entry means the block was skipped, and so are its deltas.
  const indices = new Map<number, number>()
  // Upstream index → a web search call held back: its id and the input JSON streamed so far (the
  // paused turn's calls under negative indices, which no block of this stream has).
  const searchCalls = new Map<number, { id: string; input: string }>()
  for (const [i, block] of (pausedTurn ?? []).entries()) {
    if (isObject(block) && block.type === 'server_tool_use' && typeof block.id === 'string')
      searchCalls.set(-1 - i, { id: block.id, input: JSON.stringify(block.input ?? {}) })
  }
  // Our index → a tool call's whole input, sent in its content_block_start by some compatible
  // servers (Anthropic's is `{}`). Held until the block stops: as in the SDK, input_json_delta
  // text, once any arrives, replaces it, so it goes out only if none did.
  const startInputs = new Map<number, string>()
  let nextIndex = 0
  let finished = false
  let done = false
  /**
   * A block's stop, held for the upstream's next event: the last block's end comes just before the
   * finish, which says whether the output limit cut it (a Responses item's `incomplete`), and the
   * two then go out together. Any other next event (a block, a server tool's start) releases it.
   */
  let heldStop: ExchangeEvent | undefined
  const takeHeldStop = (): ExchangeEvent[] => {
    if (!heldStop) return []
    const stop = heldStop
    heldStop = undefined
    return [stop]
  }

  const decode = (event: SseEvent): ExchangeEvent[] => {
    // New event types may appear at any time; only the ones we act on are parsed.
    if (event.event !== undefined && !handled.has(event.event)) return []
    const payload = parseFrame(event)
    const type = event.event ?? readString(payload, 'type')
    const prior = heldStop
    heldStop = undefined
    const out = decodeEvent(type, payload)
    if (type === 'content_block_stop' && out.at(-1)?.type === 'block_stop') heldStop = out.pop()
    if (prior) out.unshift(prior)
    return out
  }

  const decodeEvent = (type: string | undefined, payload: JsonObject): ExchangeEvent[] => {
    switch (type) {
      case 'message_start': {
        const message = readObject(payload, 'message') ?? {}
        return [
          {
            type: 'start',
            id: readString(message, 'id') ?? '',
            model: readString(message, 'model') ?? '',
            usage: anthropicUsage(startUsage(payload, message)),
          },
        ]
      }
      case 'content_block_start': {
        const upstreamIndex = readNumber(payload, 'index')
        const block = readObject(payload, 'content_block')
        if (upstreamIndex !== undefined && isWebSearchCall(block)) {
          searchCalls.set(upstreamIndex, { id: readString(block, 'id') ?? '', input: '' })
          return []
        }
        const start = block && decodeBlockStart(block, searchQuery)
        if (upstreamIndex === undefined || !block || !start) return []
        const index = nextIndex++
        indices.set(upstreamIndex, index)
        const out: ExchangeEvent[] = [{ type: 'block_start', index, block: start }]
        // Anthropic starts text and thinking empty; anything else would otherwise be lost.
        const text = start.kind === 'text' ? readString(block, 'text') : undefined
        if (text) out.push({ type: 'text_delta', index, text })
        const thinking = start.kind === 'thinking' ? readString(block, 'thinking') : undefined
        if (thinking) out.push({ type: 'thinking_delta', index, thinking })
        const input = start.kind === 'tool_use' ? readObject(block, 'input') : undefined
        if (input && Object.keys(input).length > 0) startInputs.set(index, JSON.stringify(input))
        return out
      }
      case 'content_block_delta': {
        const upstreamIndex = readNumber(payload, 'index') ?? -1
        const index = indices.get(upstreamIndex)
        const delta = readObject(payload, 'delta')
        const call = searchCalls.get(upstreamIndex)
        if (call && delta?.type === 'input_json_delta') call.input += readString(delta, 'partial_json') ?? ''
        if (index === undefined || !delta) return []
        if (delta.type === 'input_json_delta' && readString(delta, 'partial_json')) startInputs.delete(index)
        return decodeDelta(index, delta)
      }
      case 'content_block_stop': {
        const index = indices.get(readNumber(payload, 'index') ?? -1)
        if (index === undefined) return []
        const input = startInputs.get(index)
        startInputs.delete(index)
        const stop: ExchangeEvent = { type: 'block_stop', index }
        return input === undefined ? [stop] : [{ type: 'tool_args_delta', index, partialJson: input }, stop]
      }
      case 'message_delta': {
        const out: ExchangeEvent[] = []
        if (isObject(payload.usage)) out.push({ type: 'usage', usage: anthropicUsagePartial(payload.usage) })
        const delta = readObject(payload, 'delta')
        if (delta && typeof delta.stop_reason === 'string') {
          finished = true
          out.push({
            type: 'finish',
            reason: decodeAnthropicStopReason(delta.stop_reason),
            stopSequence: readString(delta, 'stop_sequence') ?? null,
          })
        }
        return out
      }
      case 'message_stop':
        done = true
        // Some compatible servers never name a stop reason (null, or no message_delta at all); the
        // answer is whole all the same, as the pass-through and JSON paths take it.
        return finished ? [] : [{ type: 'finish', reason: 'end_turn', stopSequence: null }]
      case 'error': {
        done = true
        const error = readObject(payload, 'error') ?? {}
        const errorType = readString(error, 'type') ?? 'api_error'
        const message = readString(error, 'message') ?? 'upstream stream error'
        return [{ type: 'error', error: { status: statusForAnthropicErrorType(errorType), type: errorType, message } }]
      }
      default:
        return []
    }
  }

  /** The query of the search call `id`, from its streamed input (`{"query": …}`). */
  const searchQuery = (id: string): string => {
    for (const call of searchCalls.values()) {
      if (call.id !== id) continue
      const parsed = parseJson(call.input)
      return parsed.ok ? webSearchQuery(parsed.value) : ''
    }
    return ''
  }

  return {
    push: (event) => (done ? [] : decode(event)),
    // The body ended without message_stop. After a message_delta's stop reason the finish has gone
    // out and the answer is whole (some compatible servers close there); before it, no finish
    // comes, so the encoder reports the stream as broken.
    end: takeHeldStop,
    get done() {
      return done
    },
  }
}

/** `searchQuery`: the query of the web search call an id names, for the search's result block. */
function decodeBlockStart(block: JsonObject, searchQuery: (id: string) => string): BlockStart | undefined {
  switch (block.type) {
    case 'text':
      return { kind: 'text' }
    case 'thinking':
      return { kind: 'thinking' }
    case 'redacted_thinking':
      return { kind: 'redacted_thinking', data: readString(block, 'data') ?? '' }
    case 'tool_use':
      return { kind: 'tool_use', id: readString(block, 'id') ?? '', name: readString(block, 'name') ?? '' }
    case 'web_search_tool_result': {
      const id = readString(block, 'tool_use_id') ?? ''
      return {
        kind: 'web_search',
        search: { id, query: searchQuery(id), outcome: decodeWebSearchOutcome(block.content) },
      }
    }
    default:
      return undefined
  }
}

function decodeDelta(index: number, delta: JsonObject): ExchangeEvent[] {
  switch (delta.type) {
    case 'text_delta':
      return [{ type: 'text_delta', index, text: readString(delta, 'text') ?? '' }]
    case 'thinking_delta':
      return [{ type: 'thinking_delta', index, thinking: readString(delta, 'thinking') ?? '' }]
    case 'signature_delta':
      return [{ type: 'signature_delta', index, signature: readString(delta, 'signature') ?? '' }]
    case 'input_json_delta':
      return [{ type: 'tool_args_delta', index, partialJson: readString(delta, 'partial_json') ?? '' }]
    case 'citations_delta':
      // A web search citation of the whole block, sent before its text; others have no neutral form.
      return decodeCitation(delta.citation).map((citation) => ({ type: 'citation', index, citation }))
    default:
      // Future delta types have no neutral form.
      return []
  }
}

function parseFrame(event: SseEvent): JsonObject {
  const parsed = parseJson(event.data)
  if (parsed.ok && isObject(parsed.value)) return parsed.value
  const name = event.event ?? 'unnamed'
  // The provider's fault: where the client has nothing yet, the next candidate is tried.
  throw new GatewayError('api_error', `upstream sent malformed JSON in a ${name} event`, {
    status: 502,
    retryable: true,
  })
}
