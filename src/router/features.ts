// What a request needs from a model, read once from the neutral request before ranking.
import type { ExchangeRequest } from '../exchange/types'

export interface RequestFeatures {
  tools: boolean
  images: boolean
  thinking: boolean
  /** Rough prompt size (≈ 4 characters a token): enough to rule out a too-small context window. */
  estimatedInputTokens: number
  maxTokens: number
}

const charsPerToken = 4

export function readRequestFeatures(req: ExchangeRequest): RequestFeatures {
  let chars = 0
  let images = false
  let imageTokens = 0
  for (const block of req.system) chars += block.text.length
  for (const message of req.messages) {
    for (const block of message.content) {
      switch (block.type) {
        case 'text':
          chars += block.text.length
          break
        case 'thinking':
          chars += block.thinking.length
          break
        case 'tool_use':
          chars += JSON.stringify(block.input ?? {}).length + block.name.length
          break
        case 'tool_result':
          for (const part of block.content) {
            if (part.type === 'text') chars += part.text.length
            else {
              images = true
              imageTokens += 1600
            }
          }
          break
        case 'image':
          images = true
          // Anthropic bills an image at about (width × height) / 750 tokens; ~1,600 for a typical one.
          imageTokens += 1600
          break
        default:
          break
      }
    }
  }
  for (const tool of req.tools)
    chars += tool.name.length + (tool.description?.length ?? 0) + JSON.stringify(tool.inputSchema).length
  return {
    tools: req.tools.length > 0 || req.messages.some((m) => m.content.some((b) => b.type === 'tool_use')),
    images,
    thinking: req.thinking !== undefined && req.thinking.type !== 'disabled',
    estimatedInputTokens: Math.ceil(chars / charsPerToken) + imageTokens,
    maxTokens: req.maxTokens,
  }
}
