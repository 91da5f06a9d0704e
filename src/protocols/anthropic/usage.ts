// Anthropic usage objects ↔ the exchange Usage (both already in Anthropic semantics).

import type { Usage } from '../../exchange/types'
import { markUnreported } from '../unreported-usage'
import { isObject, type JsonObject, readNumber, readObject } from '../wire-values'

/**
 * A message_start's usage: in its message, or beside it on the event, where vLLM's Anthropic
 * endpoint puts it (its message is serialized without the fields it left unset).
 */
export const startUsage = (payload: JsonObject, message: JsonObject | undefined): JsonObject | undefined =>
  readObject(message ?? {}, 'usage') ?? readObject(payload, 'usage')

/** Only the counts the object actually carries: message_delta usage overwrites field by field. */
export function anthropicUsagePartial(u: unknown): Partial<Usage> {
  if (!isObject(u)) return {}
  const usage: Partial<Usage> = {}
  const input = readNumber(u, 'input_tokens')
  const cacheRead = readNumber(u, 'cache_read_input_tokens')
  const cacheWrite = readNumber(u, 'cache_creation_input_tokens')
  // The writes by TTL; the 5-minute part is the rest of cache_creation_input_tokens.
  const byTtl = readObject(u, 'cache_creation')
  const cacheWrite1h = byTtl && readNumber(byTtl, 'ephemeral_1h_input_tokens')
  const output = readNumber(u, 'output_tokens')
  const details = readObject(u, 'output_tokens_details')
  const reasoning = details && readNumber(details, 'thinking_tokens')
  const serverTools = readObject(u, 'server_tool_use')
  const webSearches = serverTools && readNumber(serverTools, 'web_search_requests')
  if (input !== undefined) usage.input = input
  if (cacheRead !== undefined) usage.cacheRead = cacheRead
  if (cacheWrite !== undefined) usage.cacheWrite = cacheWrite
  if (cacheWrite1h !== undefined) usage.cacheWrite1h = cacheWrite1h
  if (output !== undefined) usage.output = output
  if (reasoning !== undefined) usage.reasoning = reasoning
  if (webSearches !== undefined) usage.webSearches = webSearches
  return usage
}

/**
 * A whole Usage; null or absent token counts are 0 (1-hour cache writes and web searches stay
 * absent: none reported). One without a numeric input or output count (no usage object at all, or
 * counts that are not numbers) is unreported (unreported-usage.ts).
 */
export function anthropicUsage(u: unknown): Usage {
  const partial = anthropicUsagePartial(u)
  const usage: Usage = {
    input: partial.input ?? 0,
    cacheRead: partial.cacheRead ?? 0,
    cacheWrite: partial.cacheWrite ?? 0,
    output: partial.output ?? 0,
    reasoning: partial.reasoning ?? 0,
  }
  if (partial.cacheWrite1h !== undefined) usage.cacheWrite1h = partial.cacheWrite1h
  if (partial.webSearches !== undefined) usage.webSearches = partial.webSearches
  return partial.input === undefined || partial.output === undefined ? markUnreported(usage) : usage
}

export interface AnthropicUsage {
  input_tokens: number
  cache_creation_input_tokens: number
  cache_read_input_tokens: number
  output_tokens: number
  cache_creation?: AnthropicCacheCreation
  server_tool_use?: { web_search_requests: number }
}

interface AnthropicCacheCreation {
  ephemeral_5m_input_tokens: number
  ephemeral_1h_input_tokens: number
}

/**
 * The cache writes by TTL, as Anthropic splits them, where an hour's were written; undefined
 * otherwise, so an answer without them is encoded as before.
 */
export const encodeCacheCreation = (usage: Usage): AnthropicCacheCreation | undefined =>
  usage.cacheWrite1h
    ? {
        ephemeral_5m_input_tokens: usage.cacheWrite - usage.cacheWrite1h,
        ephemeral_1h_input_tokens: usage.cacheWrite1h,
      }
    : undefined

/** Searches the upstream's web search ran go in server_tool_use, as Anthropic counts (and bills) them. */
export function encodeAnthropicUsage(usage: Usage): AnthropicUsage {
  const encoded: AnthropicUsage = {
    input_tokens: usage.input,
    cache_creation_input_tokens: usage.cacheWrite,
    cache_read_input_tokens: usage.cacheRead,
    output_tokens: usage.output,
  }
  const byTtl = encodeCacheCreation(usage)
  if (byTtl) encoded.cache_creation = byTtl
  if (usage.webSearches !== undefined) encoded.server_tool_use = { web_search_requests: usage.webSearches }
  return encoded
}
