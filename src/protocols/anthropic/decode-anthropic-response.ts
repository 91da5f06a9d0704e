// Anthropic non-streaming message JSON → ExchangeResponse.

import type { ExchangeResponse, OutputBlock } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { isObject, type JsonObject, readArray, readString } from '../wire-values'
import { decodeAnthropicStopReason } from './stop-reason'
import { anthropicUsage } from './usage'

export { anthropicUsage } from './usage'

export function decodeAnthropicResponse(json: unknown): ExchangeResponse {
  if (!isObject(json) || !Array.isArray(json.content)) {
    throw new GatewayError('api_error', 'upstream returned a message without a content array', { status: 502 })
  }
  const stopSequence = readString(json, 'stop_sequence')
  return {
    id: readString(json, 'id') ?? '',
    model: readString(json, 'model') ?? '',
    content: (readArray(json, 'content') ?? []).flatMap(decodeOutputBlock),
    stopReason: decodeAnthropicStopReason(json.stop_reason),
    stopSequence: stopSequence ?? null,
    usage: anthropicUsage(json.usage),
  }
}

function decodeOutputBlock(block: unknown): OutputBlock[] {
  if (!isObject(block)) return []
  switch (block.type) {
    case 'text':
      return [{ type: 'text', text: readString(block, 'text') ?? '' }]
    case 'thinking':
      return [
        {
          type: 'thinking',
          thinking: readString(block, 'thinking') ?? '',
          signature: readString(block, 'signature') ?? '',
        },
      ]
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: readString(block, 'data') ?? '' }]
    case 'tool_use':
      return [decodeToolUse(block)]
    default:
      // Server-tool blocks (server_tool_use, web_search_tool_result…) have no neutral form.
      return []
  }
}

const decodeToolUse = (block: JsonObject): OutputBlock => ({
  type: 'tool_use',
  id: readString(block, 'id') ?? '',
  name: readString(block, 'name') ?? '',
  input: isObject(block.input) ? block.input : {},
})
