// A Responses upstream's Response object → neutral ExchangeResponse (wire-formats §2.5, §4.6, §4.7).
import { parseToolArguments } from '../../exchange/tool-arguments'
import type { Citation, ExchangeResponse, OutputBlock, StopReason, Usage, WebSearchBlock } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { isObject, type JsonObject, asArray, asNumber, asString, readObject } from '../wire-values'
import { noToolNames, type RequestToolNames, toolNameRestorer } from '../openai-tool-names'
import { tagResponsesSignature } from './reasoning-signature'
import { openAIUsage } from '../openai-common'
import { markUnreported } from '../unreported-usage'

/**
 * Responses usage → neutral usage. OpenAI's input_tokens include cache reads and writes; the
 * neutral `input` does not, so both are subtracted (openAIUsage; forgetting it bills cache hits
 * twice). No usage object, or counts that are not numbers, is an unreported usage.
 */
export const responsesUsage = (u: unknown): Usage => {
  if (!isObject(u)) return markUnreported({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 })
  // Proxies that bridge a Chat server may keep its names: those stand in where Responses' are absent.
  const inputDetails = readObject(u, 'input_tokens_details') ?? readObject(u, 'prompt_tokens_details') ?? {}
  const outputDetails = readObject(u, 'output_tokens_details') ?? readObject(u, 'completion_tokens_details') ?? {}
  return openAIUsage({
    prompt: asNumber(u['input_tokens'] ?? u['prompt_tokens']),
    cacheRead: asNumber(inputDetails['cached_tokens']) ?? 0,
    cacheWrite: asNumber(inputDetails['cache_write_tokens']) ?? 0,
    output: asNumber(u['output_tokens'] ?? u['completion_tokens']),
    reasoning: asNumber(outputDetails['reasoning_tokens']) ?? 0,
  })
}

/**
 * Whether an output item is a search OpenAI bills: a `web_search_call` that did not fail and whose
 * action is a search. Its web search guide bills search actions only ("Search actions incur a tool
 * call cost"); the model's open_page and find_in_page are calls of the tool too, and were billed
 * as searches (three where one was run). An item naming no action (an older server's) is a search.
 */
export const isBilledSearch = (item: unknown): boolean => {
  if (!isObject(item) || item['type'] !== 'web_search_call' || item['status'] === 'failed') return false
  const action = isObject(item['action']) ? item['action']['type'] : undefined
  return action === undefined || action === 'search'
}

/**
 * A Response object's usage, with the searches its hosted web search tool ran: Responses usage has
 * no count of them, but each is a `web_search_call` item in the output.
 */
export const usageOfResponse = (response: JsonObject): Usage => {
  const usage = responsesUsage(response['usage'])
  const searches = asArray(response['output']).filter(isBilledSearch).length
  if (searches > 0) usage.webSearches = searches
  return usage
}

/**
 * Terminal status → neutral stop reason (§4.6). A completed turn with function calls is tool_use
 * (there is no tool_calls status); incomplete splits on its reason, treating the openapi example's
 * `max_tokens` like `max_output_tokens`.
 */
export const mapResponsesStopReason = (
  status: unknown,
  incompleteReason: unknown,
  output: { hasFunctionCall: boolean; hasRefusal: boolean },
): StopReason => {
  switch (status) {
    case 'incomplete':
      return incompleteReason === 'content_filter' ? 'refusal' : 'max_tokens'
    case 'failed':
    case 'cancelled':
      return 'error'
    default:
      if (output.hasFunctionCall) return 'tool_use'
      return output.hasRefusal ? 'refusal' : 'end_turn'
  }
}

export const readIncompleteReason = (response: JsonObject): unknown =>
  isObject(response['incomplete_details']) ? response['incomplete_details']['reason'] : undefined

/** Summary texts of a reasoning item (or its raw reasoning_text when there is no summary). */
export const readReasoningText = (item: JsonObject): string => {
  const summary = asArray(item['summary']).flatMap((part) =>
    isObject(part) && typeof part['text'] === 'string' ? [part['text']] : [],
  )
  if (summary.length > 0) return summary.join('\n\n')
  return asArray(item['content'])
    .flatMap((part) => (isObject(part) && typeof part['text'] === 'string' ? [part['text']] : []))
    .join('')
}

const clamp = (value: number, max: number): number => Math.min(Math.max(value, 0), max)

/**
 * A url_citation annotation of an output_text part whose text `partText` starts at `offset` in
 * its block → a citation of that span of the block, quoting the answer's own words there. The span
 * is clamped into the part; one empty or reversed after that marks nothing and is dropped, as are
 * other annotation types (file_citation, …).
 */
export const readUrlCitation = (annotation: unknown, partText: string, offset: number): Citation | undefined => {
  if (!isObject(annotation) || annotation['type'] !== 'url_citation') return undefined
  const url = asString(annotation['url'])
  const startIndex = asNumber(annotation['start_index'])
  const endIndex = asNumber(annotation['end_index'])
  if (!url || startIndex === undefined || endIndex === undefined) return undefined
  const start = clamp(startIndex, partText.length)
  const end = clamp(endIndex, partText.length)
  if (end <= start) return undefined
  return {
    url,
    // A page OpenAI names without a title is titled by its URL, as its search results are.
    title: asString(annotation['title']) ?? url,
    citedText: partText.slice(start, end),
    span: { start: offset + start, end: offset + end },
  }
}

/**
 * Text of a message item: output_text parts, and refusal parts as text, joined into one block,
 * with the output_text parts' citations placed in the joined text. `refusal`: it has a refusal
 * part; `declined`: its words are all a refusal's (the block is a declined one, TextBlock.refusal).
 * A message that mixes both (not something OpenAI sends) stays text.
 */
export const readMessageText = (
  item: JsonObject,
): { text: string; refusal: boolean; declined: boolean; citations: Citation[] } => {
  let text = ''
  let refusal = false
  let answered = false
  const citations: Citation[] = []
  for (const part of asArray(item['content'])) {
    if (!isObject(part)) continue
    if (part['type'] === 'output_text') {
      const partText = asString(part['text']) ?? ''
      for (const annotation of asArray(part['annotations'])) {
        const citation = readUrlCitation(annotation, partText, text.length)
        if (citation) citations.push(citation)
      }
      text += partText
      answered ||= partText !== ''
    } else if (part['type'] === 'refusal') {
      text += asString(part['refusal']) ?? ''
      refusal = true
    }
  }
  return { text, refusal, declined: refusal && !answered && text !== '', citations }
}

/** Page titles by URL, from the answer's url_citation annotations: a search's sources carry none. */
export const citedTitles = (output: unknown[]): Map<string, string> => {
  const titles = new Map<string, string>()
  for (const item of output) {
    if (!isObject(item) || item['type'] !== 'message') continue
    for (const part of asArray(item['content'])) {
      if (!isObject(part)) continue
      for (const annotation of asArray(part['annotations'])) {
        if (!isObject(annotation) || annotation['type'] !== 'url_citation') continue
        const url = asString(annotation['url'])
        const title = asString(annotation['title'])
        if (url && title && !titles.has(url)) titles.set(url, title)
      }
    }
  }
  return titles
}

/**
 * A web_search_call item that ran a search → the search and what it found, titled from `titles`
 * where the answer cited the page, else by its URL. Other actions (open_page, find) are not
 * searches: undefined. A failed call has no reason on the wire: `unavailable`, Anthropic's nearest.
 */
export const readWebSearch = (
  item: JsonObject,
  titles: ReadonlyMap<string, string> = new Map(),
): Omit<WebSearchBlock, 'type'> | undefined => {
  const action = isObject(item['action']) ? item['action'] : undefined
  if (action?.['type'] !== 'search') return undefined
  const id = asString(item['id']) ?? ''
  const query = asString(action['query']) ?? ''
  if (item['status'] === 'failed') return { id, query, outcome: { errorCode: 'unavailable' } }
  // Sources come back only when the request includes web_search_call.action.sources.
  const results = asArray(action['sources']).flatMap((source) => {
    const url = isObject(source) ? asString(source['url']) : undefined
    return url ? [{ url, title: titles.get(url) ?? url }] : []
  })
  return { id, query, outcome: { results } }
}

/**
 * Output items → neutral blocks; other hosted-tool items are skipped. `restoreName` gives a function
 * call the name the client's tool has where the encoder shortened it (openai-tool-names.ts).
 */
export const decodeOutputItems = (
  output: unknown[],
  restoreName: (name: string) => string = (name) => name,
  opts: ResponsesDecodeOptions = {},
): { blocks: OutputBlock[]; hasFunctionCall: boolean; hasRefusal: boolean } => {
  const blocks: OutputBlock[] = []
  let hasFunctionCall = false
  let hasRefusal = false
  const titles = citedTitles(output)
  for (const item of output) {
    if (!isObject(item)) continue
    switch (item['type']) {
      case 'reasoning': {
        const thinking = readReasoningText(item)
        const encrypted = asString(item['encrypted_content'])
        if (thinking === '' && !encrypted) break
        blocks.push({
          type: 'thinking',
          thinking,
          ...(encrypted ? { signature: tagResponsesSignature(encrypted, opts.blobMaker) } : {}),
        })
        break
      }
      case 'message': {
        const { text, refusal, declined, citations } = readMessageText(item)
        hasRefusal ||= refusal
        if (declined) blocks.push({ type: 'text', text, refusal: true })
        else if (text !== '') blocks.push({ type: 'text', text, ...(citations.length > 0 ? { citations } : {}) })
        break
      }
      case 'function_call':
        hasFunctionCall = true
        blocks.push({
          type: 'tool_use',
          id: asString(item['call_id']) ?? asString(item['id']) ?? '',
          name: restoreName(asString(item['name']) ?? ''),
          input: parseToolArguments(asString(item['arguments']) ?? ''),
        })
        break
      case 'web_search_call': {
        const search = readWebSearch(item, titles)
        if (search) blocks.push({ type: 'web_search', ...search })
        break
      }
    }
  }
  return { blocks, hasFunctionCall, hasRefusal }
}

/** `toolNames`: the request's, to restore the names encodeResponsesRequest shortened. */
/**
 * `blobMaker`: the Responses-compatible server that answered, whose reasoning items'
 * `encrypted_content` is its own (OpenRouter's and xAI's a model's encrypted reasoning, Ollama's
 * the thinking as plain text): tagged with it, to be replayed to it alone, never to OpenAI.
 * Unset: OpenAI's own blobs, replayed to OpenAI.
 */
export interface ResponsesDecodeOptions {
  blobMaker?: string
}

export const decodeResponsesResponse = (
  json: unknown,
  toolNames: RequestToolNames = noToolNames,
  opts: ResponsesDecodeOptions = {},
): ExchangeResponse => {
  if (!isObject(json) || !Array.isArray(json['output'])) {
    throw new GatewayError('api_error', 'upstream Responses body is not a response object', { status: 502 })
  }
  const { blocks, hasFunctionCall, hasRefusal } = decodeOutputItems(json['output'], toolNameRestorer(toolNames), opts)
  return {
    id: asString(json['id']) ?? '',
    model: asString(json['model']) ?? '',
    content: blocks,
    stopReason: mapResponsesStopReason(json['status'], readIncompleteReason(json), { hasFunctionCall, hasRefusal }),
    stopSequence: null,
    usage: usageOfResponse(json),
  }
}
