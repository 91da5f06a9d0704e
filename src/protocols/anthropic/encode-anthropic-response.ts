// ExchangeResponse → Anthropic non-streaming message JSON, under the gateway's id and the
// model name the client asked for (Claude Code derives context-window math from it).

import type { ExchangeResponse, OutputBlock } from '../../exchange/types'
import { isObject } from '../wire-values'
import { encodeAnthropicStopReason } from './stop-reason'
import { sanitizeToolUseId } from './tool-use-id'
import { encodeAnthropicUsage } from './usage'

export function encodeAnthropicResponse(
  resp: ExchangeResponse,
  opts: { id: string; model: string },
): Record<string, unknown> {
  return {
    id: opts.id,
    type: 'message',
    role: 'assistant',
    model: opts.model,
    content: resp.content.flatMap(encodeOutputBlock),
    stop_reason: encodeAnthropicStopReason(resp.stopReason),
    stop_sequence: resp.stopSequence,
    usage: encodeAnthropicUsage(resp.usage),
  }
}

function encodeOutputBlock(block: OutputBlock): Record<string, unknown>[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ type: 'text', text: block.text, citations: null }]
    case 'thinking':
      return [{ type: 'thinking', thinking: block.thinking, signature: block.signature ?? '' }]
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: block.data }]
    case 'tool_use':
      return [
        {
          type: 'tool_use',
          id: sanitizeToolUseId(block.id),
          name: block.name,
          input: isObject(block.input) ? block.input : {},
        },
      ]
  }
}
