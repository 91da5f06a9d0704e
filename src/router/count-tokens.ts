// Token counts with a real BPE tokenizer (o200k_base), for count_tokens when no upstream can
// count and for legs whose upstream never reported usage. Claude's own tokenizer is not public;
// o200k is close enough for compaction decisions and estimates, and never a made-up zero.
import type { ExchangeRequest, UserContentBlock } from '../exchange/types'
import { mediaTokensOf, textOf } from './features'

type CountTokens = (text: string) => number
let countTokens: CountTokens | undefined

/**
 * The o200k tables cost ~55 MB of memory, and only count_tokens and cut streams need them: load
 * them on first use, not at start. `require` keeps the call synchronous and still lets
 * `bun build --compile` embed the module.
 */
function tokenizer(): CountTokens {
  countTokens ??= (require('gpt-tokenizer/encoding/o200k_base') as { countTokens: CountTokens }).countTokens
  return countTokens
}

/** Per-message framing (role markers) that every chat template adds. */
const tokensPerMessage = 4

export function countRequestTokens(req: Pick<ExchangeRequest, 'system' | 'messages' | 'tools'>): number {
  const texts: string[] = []
  let extra = 0
  // Images and files are not text: they count as the router estimates them.
  const countPart = (part: UserContentBlock) => {
    const text = textOf(part)
    if (text !== '') texts.push(text)
    extra += mediaTokensOf(part)
  }
  for (const block of req.system) texts.push(block.text)
  for (const message of req.messages) {
    extra += tokensPerMessage
    for (const block of message.content) {
      switch (block.type) {
        case 'text':
        case 'image':
        case 'document':
          countPart(block)
          break
        case 'thinking':
          texts.push(block.thinking)
          break
        case 'tool_use':
          texts.push(block.name, JSON.stringify(block.input ?? {}))
          break
        case 'tool_result':
          for (const part of block.content) countPart(part)
          break
        default:
          break
      }
    }
  }
  for (const tool of req.tools) texts.push(tool.name, tool.description ?? '', JSON.stringify(tool.inputSchema))
  return tokenizer()(texts.join('\n')) + extra
}
