// Neutral ExchangeResponse → the client's Response object (wire-formats §2.5, §4.6, §4.7).
import {
  type Citation,
  type ExchangeResponse,
  type RedactedThinkingBlock,
  type StopReason,
  type ThinkingBlock,
  totalInput,
  type Usage,
  type WebSearchBlock,
} from '../../exchange/types'
import { isObject } from '../wire-values'
import { encryptedContentOf, wantsEncryptedReasoning } from './reasoning-signature'
import { type ClientTool, callName, clientTool, freeformInput, specialToolNames } from './client-tools'
import { offeredTools } from './decode-responses-request'

/** Request fields a Response echoes back; pass the inbound body (unknown fields are ignored). */
export interface ResponsesEcho {
  instructions?: unknown
  max_output_tokens?: unknown
  temperature?: unknown
  top_p?: unknown
  tools?: unknown
  tool_choice?: unknown
  parallel_tool_calls?: unknown
  reasoning?: unknown
  text?: unknown
  metadata?: unknown
  store?: unknown
  truncation?: unknown
  user?: unknown
  safety_identifier?: unknown
  prompt_cache_key?: unknown
  service_tier?: unknown
  /** Not echoed: `reasoning.encrypted_content` in it decides whether reasoning items carry their blob. */
  include?: unknown
  /** Not echoed: its `additional_tools` items offer tools as `tools` does (offeredTools). */
  input?: unknown
}

export interface ResponseIds {
  /** `resp_<request-derived>` */
  responseId: string
  /** `msg_<request-derived>`: the first message item; later ones get `_<output_index>` appended. */
  messageId: string
  /** The routing profile the client sent, never the upstream model. */
  model: string
  /** Unix seconds. */
  createdAt: number
}

export interface EncodeResponsesResponseOptions extends ResponseIds {
  /** Unix seconds for `completed_at`; defaults to createdAt. */
  completedAt?: number
  request?: ResponsesEcho
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed'

// Item ids are derived from the message id so one request always yields the same ids.
const idSuffix = (messageId: string): string => messageId.replace(/^msg_/, '')

export const messageItemId = (messageId: string, outputIndex: number, ordinal: number): string =>
  ordinal === 0 ? messageId : `${messageId}_${outputIndex}`
export const reasoningItemId = (messageId: string, outputIndex: number): string =>
  `rs_${idSuffix(messageId)}_${outputIndex}`
export const functionCallItemId = (messageId: string, outputIndex: number): string =>
  `fc_${idSuffix(messageId)}_${outputIndex}`
export const customToolCallItemId = (messageId: string, outputIndex: number): string =>
  `ctc_${idSuffix(messageId)}_${outputIndex}`
/** A web search's item id, `ws_…` as OpenAI's are, whatever the upstream named it (Anthropic: `srvtoolu_…`). */
export const webSearchItemId = (messageId: string, outputIndex: number): string =>
  `ws_${idSuffix(messageId)}_${outputIndex}`

/**
 * Neutral usage → Responses usage: input_tokens counts cache reads and writes (§4.7). OpenAI now
 * sends cache_write_tokens beside cached_tokens and openai-node types it as required; without it
 * a client of an Anthropic upstream could not see the cache writes it pays for.
 */
export const encodeResponsesUsage = (usage: Usage): Record<string, unknown> => {
  const input = totalInput(usage)
  return {
    input_tokens: input,
    input_tokens_details: { cached_tokens: usage.cacheRead, cache_write_tokens: usage.cacheWrite },
    output_tokens: usage.output,
    output_tokens_details: { reasoning_tokens: usage.reasoning },
    total_tokens: input + usage.output,
  }
}

/**
 * Terminal status and incomplete reason for a stop reason (§4.6). `declined`: the answer has the
 * model's words declining (TextBlock.refusal), a refusal part: then a `refusal` stop is the answer
 * complete, as OpenAI sends it; without one (Anthropic's classifier stopping the answer, a content
 * filter) it is one a filter cut.
 */
export const mapStopReasonToStatus = (
  reason: StopReason,
  declined = false,
): { status: Exclude<ResponseStatus, 'in_progress'>; incompleteReason?: 'max_output_tokens' | 'content_filter' } => {
  switch (reason) {
    case 'max_tokens':
    case 'context_exceeded':
      return { status: 'incomplete', incompleteReason: 'max_output_tokens' }
    case 'refusal':
      return declined ? { status: 'completed' } : { status: 'incomplete', incompleteReason: 'content_filter' }
    case 'error':
      return { status: 'failed' }
    default:
      return { status: 'completed' }
  }
}

const pick = <T>(value: unknown, fallback: T): unknown => (value === undefined ? fallback : value)

/**
 * The client's `text` settings: its format is honoured on every route (the encoders send it
 * upstream), so it is echoed as sent. Strict clients read `text.format`, so a request that named
 * none (or only `verbosity`) gets the default, free text.
 */
const echoText = (text: unknown): Record<string, unknown> => {
  const sent = isObject(text) ? text : {}
  return { ...sent, format: isObject(sent.format) ? sent.format : { type: 'text' } }
}

/**
 * The full Response object with every field strict clients require (§2.5, §2.6 client invariants:
 * text.format, usage.output_tokens_details, id/object/model and output). Unset fields echo the
 * request or take OpenAI's defaults.
 */
export const buildResponseObject = (
  opts: ResponseIds & { request?: ResponsesEcho },
  state: {
    status: ResponseStatus
    output: unknown[]
    usage: Usage | null
    completedAt?: number | null
    incompleteReason?: string
    error?: { code: string; message: string }
  },
): Record<string, unknown> => {
  const req = opts.request ?? {}
  return {
    id: opts.responseId,
    object: 'response',
    created_at: opts.createdAt,
    status: state.status,
    completed_at: state.completedAt ?? null,
    error: state.error ?? null,
    incomplete_details: state.incompleteReason ? { reason: state.incompleteReason } : null,
    instructions: pick(req.instructions, null),
    max_output_tokens: pick(req.max_output_tokens, null),
    model: opts.model,
    output: state.output,
    parallel_tool_calls: pick(req.parallel_tool_calls, true),
    previous_response_id: null,
    reasoning: pick(req.reasoning, { effort: null, summary: null }),
    store: pick(req.store, false),
    temperature: pick(req.temperature, 1),
    text: echoText(req.text),
    tool_choice: pick(req.tool_choice, 'auto'),
    tools: pick(req.tools, []),
    top_p: pick(req.top_p, 1),
    truncation: pick(req.truncation, 'disabled'),
    usage: state.usage ? encodeResponsesUsage(state.usage) : null,
    user: pick(req.user, null),
    metadata: pick(req.metadata, {}),
    ...(req.safety_identifier !== undefined ? { safety_identifier: req.safety_identifier } : {}),
    ...(req.prompt_cache_key !== undefined ? { prompt_cache_key: req.prompt_cache_key } : {}),
    // What ran, not what was asked: a translated request runs at the provider's standard tier.
    ...(req.service_tier !== undefined ? { service_tier: 'default' } : {}),
  }
}

export interface UrlCitation {
  type: 'url_citation'
  start_index: number
  end_index: number
  url: string
  title: string
}

/**
 * A citation of a text block as a `url_citation` annotation of the output_text it becomes: its
 * span, or all of `text` (the block's) where it has none, as Anthropic cites. Each text block is
 * a message item of its own, so the block's indices are the output_text's.
 */
export const urlCitation = (citation: Citation, text: string): UrlCitation => {
  const { start, end } = citation.span ?? { start: 0, end: text.length }
  return { type: 'url_citation', start_index: start, end_index: end, url: citation.url, title: citation.title }
}

/** `annotations`: the output_text's, in the order the client was given them. */
export const buildMessageItem = (
  id: string,
  text: string,
  status: 'in_progress' | 'completed' | 'incomplete',
  annotations: UrlCitation[] = [],
) => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: status === 'in_progress' && text === '' ? [] : [{ type: 'output_text', text, annotations, logprobs: [] }],
})

/** A message whose one part is the model's refusal, in its words (TextBlock.refusal), as OpenAI's. */
export const buildRefusalItem = (id: string, refusal: string, status: 'in_progress' | 'completed' | 'incomplete') => ({
  id,
  type: 'message',
  status,
  role: 'assistant',
  content: status === 'in_progress' && refusal === '' ? [] : [{ type: 'refusal', refusal }],
})

/**
 * A reasoning item: the thinking as its summary (a redacted block has none) and, when the client
 * asked for it (`include: ["reasoning.encrypted_content"]`), the blob that lets the next turn rebuild
 * the block (reasoning-signature.ts).
 */
export const buildReasoningItem = (
  id: string,
  block: ThinkingBlock | RedactedThinkingBlock,
  includeEncrypted: boolean,
) => {
  const encrypted = includeEncrypted ? encryptedContentOf(block) : undefined
  return {
    id,
    type: 'reasoning',
    // No words, no summary part (Anthropic's omitted thinking display), as OpenAI's own items.
    summary: block.type === 'thinking' && block.thinking !== '' ? [{ type: 'summary_text', text: block.thinking }] : [],
    ...(encrypted ? { encrypted_content: encrypted } : {}),
  }
}

/**
 * Whether a block becomes a reasoning item at all. A redacted block has no text to show: without
 * its blob the item would be empty, so it is left out unless the client asked for the blob.
 */
export const emitsReasoningItem = (block: ThinkingBlock | RedactedThinkingBlock, includeEncrypted: boolean) =>
  block.type === 'thinking' || (includeEncrypted && encryptedContentOf(block) !== undefined)

/** A call to a function, under its namespace when it has one (client-tools.ts). */
export const buildFunctionCallItem = (
  id: string,
  call: { callId: string; tool: ClientTool; arguments: string },
  status: 'in_progress' | 'completed' | 'incomplete',
) => ({
  id,
  type: 'function_call',
  status,
  arguments: call.arguments,
  call_id: call.callId,
  ...callName(call.tool),
})

/** A call to a custom tool: its text as `input` (client-tools.ts). */
export const buildCustomToolCallItem = (
  id: string,
  call: { callId: string; tool: ClientTool; input: string },
  status: 'in_progress' | 'completed' | 'incomplete',
) => ({
  id,
  type: 'custom_tool_call',
  status,
  input: call.input,
  call_id: call.callId,
  ...callName(call.tool),
})

/**
 * A `web_search_call` item: the search action with its query and, once done, the pages it found as
 * sources (OpenAI names only their URLs). A search that failed is a failed item with no sources.
 */
export const buildWebSearchItem = (
  id: string,
  search: Omit<WebSearchBlock, 'type'>,
  status: 'in_progress' | 'completed',
): Record<string, unknown> => {
  if (status === 'in_progress') {
    return { id, type: 'web_search_call', status, action: { type: 'search', query: search.query } }
  }
  const { outcome } = search
  if (!('results' in outcome)) {
    return { id, type: 'web_search_call', status: 'failed', action: { type: 'search', query: search.query } }
  }
  const sources = outcome.results.map((result) => ({ type: 'url', url: result.url }))
  return { id, type: 'web_search_call', status, action: { type: 'search', query: search.query, sources } }
}

export const encodeResponsesResponse = (
  resp: ExchangeResponse,
  opts: EncodeResponsesResponseOptions,
): Record<string, unknown> => {
  const output: unknown[] = []
  let messages = 0
  let declined = false
  const includeEncrypted = wantsEncryptedReasoning(opts.request?.include)
  const special = specialToolNames(offeredTools(opts.request))
  for (const block of resp.content) {
    const index = output.length
    switch (block.type) {
      case 'thinking':
      case 'redacted_thinking':
        if (emitsReasoningItem(block, includeEncrypted))
          output.push(buildReasoningItem(reasoningItemId(opts.messageId, index), block, includeEncrypted))
        break
      case 'text': {
        if (block.refusal) {
          declined = true
          output.push(buildRefusalItem(messageItemId(opts.messageId, index, messages++), block.text, 'completed'))
          break
        }
        const annotations = block.citations
          ? block.citations
              .map((citation) => urlCitation(citation, block.text))
              .sort((a, b) => a.start_index - b.start_index)
          : []
        const id = messageItemId(opts.messageId, index, messages++)
        output.push(buildMessageItem(id, block.text, 'completed', annotations))
        break
      }
      case 'tool_use': {
        const tool = clientTool(special, block.name)
        output.push(
          tool.custom
            ? buildCustomToolCallItem(
                customToolCallItemId(opts.messageId, index),
                { callId: block.id, tool, input: freeformInput(block.input) },
                'completed',
              )
            : buildFunctionCallItem(
                functionCallItemId(opts.messageId, index),
                { callId: block.id, tool, arguments: JSON.stringify(block.input ?? {}) },
                'completed',
              ),
        )
        break
      }
      case 'web_search':
        output.push(buildWebSearchItem(webSearchItemId(opts.messageId, index), block, 'completed'))
        break
    }
  }
  const { status, incompleteReason } = mapStopReasonToStatus(resp.stopReason, declined)
  // The item the limit cut is incomplete, as in OpenAI's own answers (a reasoning item has no
  // status, a search arrives whole).
  const last = output.at(-1) as { type: string; status?: string } | undefined
  if (status === 'incomplete' && last && last.type !== 'web_search_call') last.status &&= 'incomplete'
  return buildResponseObject(opts, {
    status,
    output,
    usage: resp.usage,
    completedAt: status === 'completed' ? (opts.completedAt ?? opts.createdAt) : null,
    ...(incompleteReason ? { incompleteReason } : {}),
    ...(status === 'failed' ? { error: { code: 'server_error', message: 'the upstream model failed' } } : {}),
  })
}
