// ExchangeResponse → Anthropic non-streaming message JSON, under the gateway's id and the
// model name the client asked for (Claude Code derives context-window math from it).

import type { Citation, ExchangeResponse, OutputBlock, TextBlock, WebSearchBlock } from '../../exchange/types'
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
      return block.text === '' ? [] : [encodeTextBlock(block)]
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
    case 'web_search':
      return [encodeServerToolUse(block, { query: block.query }), encodeWebSearchResult(block)]
  }
}

/**
 * A text block with its citations, all on the whole block: Anthropic cites a block as a whole, so a
 * citation's span (OpenAI marks words of the answer) has no place here. The block is not split at
 * the spans either, to keep it as the stream encoder, which cannot split text already sent, writes it.
 */
function encodeTextBlock(block: TextBlock): Record<string, unknown> {
  // Uncited, the block has no citations member, as Anthropic's own answers have none: a `null`
  // there broke the Vercel AI SDK (its schema takes a list or nothing), on every translated answer.
  if (!block.citations?.length) return { type: 'text', text: block.text }
  return { type: 'text', text: block.text, citations: block.citations.map(encodeCitation) }
}

/**
 * A citation as Anthropic's web_search_result_location. encrypted_index is Anthropic's sealed
 * pointer into its own search results: another upstream's citation has none, so it is empty (the
 * field is required).
 */
export const encodeCitation = (citation: Citation): Record<string, unknown> => ({
  type: 'web_search_result_location',
  url: citation.url,
  title: citation.title,
  cited_text: citation.citedText,
  encrypted_index: '',
})

/**
 * A search's id as a server_tool_use id: Anthropic's are `srvtoolu_…`, so another provider's
 * (OpenAI's `ws_…`) gets the prefix, and a tool_use id's character rules, applied the same way
 * every time so the result block still names its call.
 */
export function serverToolUseId(id: string): string {
  const safe = sanitizeToolUseId(id)
  return safe.startsWith('srvtoolu_') ? safe : `srvtoolu_${safe}`
}

/** The server_tool_use half of a search; a stream's start carries an empty input, its delta the query. */
export const encodeServerToolUse = (search: Omit<WebSearchBlock, 'type'>, input: Record<string, unknown>) => ({
  type: 'server_tool_use',
  id: serverToolUseId(search.id),
  name: 'web_search',
  input,
})

/**
 * The web_search_tool_result half. encrypted_content is Anthropic's sealed page text, which only
 * Anthropic makes and reads: another upstream's search has none, so it is empty (the field is required).
 */
export function encodeWebSearchResult(search: Omit<WebSearchBlock, 'type'>): Record<string, unknown> {
  const content =
    'errorCode' in search.outcome
      ? { type: 'web_search_tool_result_error', error_code: search.outcome.errorCode }
      : search.outcome.results.map((result) => ({
          type: 'web_search_result',
          url: result.url,
          title: result.title,
          encrypted_content: '',
          page_age: result.pageAge ?? null,
        }))
  return { type: 'web_search_tool_result', tool_use_id: serverToolUseId(search.id), content }
}
