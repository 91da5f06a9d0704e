// Anthropic SSE frames → neutral exchange events. Block indices are renumbered densely because
// server-tool blocks (server_tool_use, web_search_tool_result…) have no neutral form and are skipped.

import type { BlockStart, ExchangeEvent } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import type { SseEvent } from '../sse'
import { isObject, type JsonObject, parseJson, readNumber, readObject, readString } from '../wire-values'
import { statusForAnthropicErrorType } from './errors'
import { decodeAnthropicStopReason } from './stop-reason'
import { anthropicUsage, anthropicUsagePartial } from './usage'

const handled = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'error',
])

export async function* decodeAnthropicStream(events: AsyncIterable<SseEvent>): AsyncGenerator<ExchangeEvent> {
  // Upstream index → our index; a missing entry means the block was skipped, and so are its deltas.
  const indices = new Map<number, number>()
  let nextIndex = 0
  for await (const event of events) {
    // New event types may appear at any time; only the ones we act on are parsed.
    if (event.event !== undefined && !handled.has(event.event)) continue
    const payload = parseFrame(event)
    const type = event.event ?? readString(payload, 'type')
    switch (type) {
      case 'message_start': {
        const message = readObject(payload, 'message') ?? {}
        yield {
          type: 'start',
          id: readString(message, 'id') ?? '',
          model: readString(message, 'model') ?? '',
          usage: anthropicUsage(message.usage),
        }
        break
      }
      case 'content_block_start': {
        const upstreamIndex = readNumber(payload, 'index')
        const block = readObject(payload, 'content_block')
        const start = block && decodeBlockStart(block)
        if (upstreamIndex === undefined || !block || !start) break
        const index = nextIndex++
        indices.set(upstreamIndex, index)
        yield { type: 'block_start', index, block: start }
        // Anthropic starts text and thinking empty; anything else would otherwise be lost.
        const text = start.kind === 'text' ? readString(block, 'text') : undefined
        if (text) yield { type: 'text_delta', index, text }
        const thinking = start.kind === 'thinking' ? readString(block, 'thinking') : undefined
        if (thinking) yield { type: 'thinking_delta', index, thinking }
        break
      }
      case 'content_block_delta': {
        const index = indices.get(readNumber(payload, 'index') ?? -1)
        const delta = readObject(payload, 'delta')
        if (index === undefined || !delta) break
        const decoded = decodeDelta(index, delta)
        if (decoded) yield decoded
        break
      }
      case 'content_block_stop': {
        const index = indices.get(readNumber(payload, 'index') ?? -1)
        if (index !== undefined) yield { type: 'block_stop', index }
        break
      }
      case 'message_delta': {
        if (isObject(payload.usage)) yield { type: 'usage', usage: anthropicUsagePartial(payload.usage) }
        const delta = readObject(payload, 'delta')
        if (delta && typeof delta.stop_reason === 'string') {
          yield {
            type: 'finish',
            reason: decodeAnthropicStopReason(delta.stop_reason),
            stopSequence: readString(delta, 'stop_sequence') ?? null,
          }
        }
        break
      }
      case 'message_stop':
        return
      case 'error': {
        const error = readObject(payload, 'error') ?? {}
        const errorType = readString(error, 'type') ?? 'api_error'
        const message = readString(error, 'message') ?? 'upstream stream error'
        yield { type: 'error', error: { status: statusForAnthropicErrorType(errorType), type: errorType, message } }
        return
      }
    }
  }
}

function decodeBlockStart(block: JsonObject): BlockStart | undefined {
  switch (block.type) {
    case 'text':
      return { kind: 'text' }
    case 'thinking':
      return { kind: 'thinking' }
    case 'redacted_thinking':
      return { kind: 'redacted_thinking', data: readString(block, 'data') ?? '' }
    case 'tool_use':
      // The SDK builds input from input_json_delta only; a non-empty start `input` is ignored the same way.
      return { kind: 'tool_use', id: readString(block, 'id') ?? '', name: readString(block, 'name') ?? '' }
    default:
      return undefined
  }
}

function decodeDelta(index: number, delta: JsonObject): ExchangeEvent | undefined {
  switch (delta.type) {
    case 'text_delta':
      return { type: 'text_delta', index, text: readString(delta, 'text') ?? '' }
    case 'thinking_delta':
      return { type: 'thinking_delta', index, thinking: readString(delta, 'thinking') ?? '' }
    case 'signature_delta':
      return { type: 'signature_delta', index, signature: readString(delta, 'signature') ?? '' }
    case 'input_json_delta':
      return { type: 'tool_args_delta', index, partialJson: readString(delta, 'partial_json') ?? '' }
    default:
      // citations_delta and future delta types have no neutral form.
      return undefined
  }
}

function parseFrame(event: SseEvent): JsonObject {
  const parsed = parseJson(event.data)
  if (parsed.ok && isObject(parsed.value)) return parsed.value
  const name = event.event ?? 'unnamed'
  throw new GatewayError('api_error', `upstream sent malformed JSON in a ${name} event`, { status: 502 })
}
