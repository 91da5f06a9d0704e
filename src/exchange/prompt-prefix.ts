// Whether a request's prompt begins with an earlier one's, told by a fingerprint of each: what the
// estimate of a cut stream's cached part needs (relay/trace.ts, likelyCachedTokens), without keeping
// the earlier prompt. An upstream's automatic cache reads only an exact prefix, so a prompt that
// merely has as many tokens as the last one (a compacted conversation, another agent's system
// prompt under the same session id, a prompt made up to look so) has nothing cached.
import type { ContentBlock, ExchangeRequest } from './types'

/**
 * A prompt's system, tools, first `messages` − 1 messages and first `blocks` blocks of the next,
 * hashed together. Blocks, not only messages: svc joins a client's consecutive user items into one
 * message, so the next request's first message may hold a block more (Codex after a compaction).
 */
export interface PromptPrefix {
  messages: number
  blocks: number
  hash: bigint
}

/**
 * Keyed with a secret of the process: wyhash is fast (a 100 KB prompt in ~10 µs) but no defence
 * against collisions made on purpose, unless whoever makes them cannot know the key.
 */
const key = crypto.getRandomValues(new BigUint64Array(1))[0]!

const hashed = (text: string, seed: bigint): bigint => Bun.hash.wyhash(text, seed)

/** The fingerprint of `exchange`'s whole prompt. */
export function promptPrefix(exchange: ExchangeRequest): PromptPrefix {
  const last = exchange.messages.at(-1)
  return fingerprint(exchange, exchange.messages.length, last?.content.length ?? 0)
}

/** Whether `exchange`'s prompt begins with the one `prefix` fingerprints. */
export function beginsWith(exchange: ExchangeRequest, prefix: PromptPrefix): boolean {
  const through = exchange.messages[prefix.messages - 1]
  if (prefix.messages > 0 && (!through || through.content.length < prefix.blocks)) return false
  return fingerprint(exchange, prefix.messages, prefix.blocks).hash === prefix.hash
}

function fingerprint(exchange: ExchangeRequest, messages: number, blocks: number): PromptPrefix {
  let hash = key
  for (const block of exchange.system) hash = hashed(block.text, hashed('system', hash))
  for (const tool of exchange.tools) {
    hash = hashed(tool.name, hashed('tool', hash))
    hash = hashed(tool.description ?? '', hash)
    hash = hashed(JSON.stringify(tool.inputSchema), hash)
  }
  if (exchange.webSearch) hash = hashed(JSON.stringify(exchange.webSearch), hashed('web_search', hash))
  for (let i = 0; i < messages; i++) {
    const message = exchange.messages[i]!
    hash = hashed(message.role, hash)
    const count = i === messages - 1 ? blocks : message.content.length
    for (let j = 0; j < count; j++) hash = blockHash(message.content[j]!, hash)
  }
  return { messages, blocks, hash }
}

/** A block's words or data; a text block's (most of a conversation) without serializing it. */
function blockHash(block: ContentBlock, seed: bigint): bigint {
  switch (block.type) {
    case 'text':
      return hashed(block.text, hashed('text', seed))
    case 'tool_result': {
      let hash = hashed(block.toolUseId, hashed(block.isError ? 'tool_error' : 'tool_result', seed))
      for (const part of block.content) hash = blockHash(part, hash)
      return hash
    }
    default:
      return hashed(JSON.stringify(block), seed)
  }
}
