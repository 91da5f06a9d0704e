// Anthropic non-streaming message JSON → ExchangeResponse.

import type {
  Citation,
  ExchangeResponse,
  OutputBlock,
  TextBlock,
  WebSearchBlock,
  WebSearchResult,
} from '../../exchange/types'
import { parseToolArguments } from '../../exchange/tool-arguments'
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
    content: decodeContent(readArray(json, 'content') ?? []),
    stopReason: decodeAnthropicStopReason(json.stop_reason),
    stopSequence: stopSequence ?? null,
    usage: anthropicUsage(json.usage),
  }
}

// A web search is two blocks, the call (its query) and its result, paired by id: they become one
// block where the result is, when the search has run.
function decodeContent(content: unknown[]): OutputBlock[] {
  const queries = new Map<string, string>()
  for (const block of content) {
    if (isWebSearchCall(block)) queries.set(readString(block, 'id') ?? '', webSearchQuery(block.input))
  }
  return content.flatMap((block) => decodeOutputBlock(block, queries))
}

function decodeOutputBlock(block: unknown, queries: Map<string, string>): OutputBlock[] {
  if (!isObject(block)) return []
  switch (block.type) {
    case 'text':
      return [decodeText(block)]
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
    case 'web_search_tool_result': {
      const id = readString(block, 'tool_use_id') ?? ''
      return [{ type: 'web_search', id, query: queries.get(id) ?? '', outcome: decodeWebSearchOutcome(block.content) }]
    }
    default:
      // Other server-tool blocks (web_fetch, code execution…) have no neutral form; a
      // server_tool_use of web_search is its result's query.
      return []
  }
}

/** A text block, with the pages it cites where the answer was written from a web search. */
function decodeText(block: JsonObject): TextBlock {
  const text: TextBlock = { type: 'text', text: readString(block, 'text') ?? '' }
  const cited = readArray(block, 'citations')
  // Most blocks cite nothing (`citations: null`): no list is built for them.
  const citations = cited && cited.length > 0 ? cited.flatMap(decodeCitation) : []
  if (citations.length > 0) text.citations = citations
  return text
}

/**
 * A web search citation, of the whole block it is on (no span). Citations of the client's own
 * documents (char, page, content block locations) have no neutral form, nor has one without a URL.
 */
export function decodeCitation(citation: unknown): Citation[] {
  if (!isObject(citation) || citation.type !== 'web_search_result_location') return []
  const url = readString(citation, 'url')
  if (!url) return []
  // A page may have no title (null); OpenAI's url_citation needs one, and the URL names the page too.
  const title = readString(citation, 'title') ?? url
  return [{ url, title, citedText: readString(citation, 'cited_text') ?? '' }]
}

/** A `server_tool_use` block calling web search. */
export const isWebSearchCall = (block: unknown): block is JsonObject =>
  isObject(block) && block.type === 'server_tool_use' && block.name === 'web_search'

/** The query of a web search call's input, `{query}`. */
export const webSearchQuery = (input: unknown): string =>
  (isObject(input) ? readString(input, 'query') : undefined) ?? ''

/** A `web_search_tool_result` block's content: its results, or the error it failed with. */
export function decodeWebSearchOutcome(content: unknown): WebSearchBlock['outcome'] {
  if (!Array.isArray(content)) {
    // Anthropic names every failure; a content of no known shape is reported as its generic one.
    const code = isObject(content) ? readString(content, 'error_code') : undefined
    return { errorCode: code ?? 'unavailable' }
  }
  return { results: content.flatMap(decodeWebSearchResult) }
}

function decodeWebSearchResult(result: unknown): WebSearchResult[] {
  if (!isObject(result) || result.type !== 'web_search_result') return []
  const decoded: WebSearchResult = { url: readString(result, 'url') ?? '', title: readString(result, 'title') ?? '' }
  const pageAge = readString(result, 'page_age')
  if (pageAge) decoded.pageAge = pageAge
  return [decoded]
}

const decodeToolUse = (block: JsonObject): OutputBlock => ({
  type: 'tool_use',
  id: readString(block, 'id') ?? '',
  name: readString(block, 'name') ?? '',
  input: decodeToolInput(block.input),
})

// Some compatible servers send the input as JSON text, as OpenAI's `arguments` are.
const decodeToolInput = (input: unknown): Record<string, unknown> => {
  if (isObject(input)) return input
  return typeof input === 'string' ? parseToolArguments(input) : {}
}
