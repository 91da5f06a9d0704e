// ExchangeRequest → Anthropic Messages body, for an Anthropic upstream when the client spoke
// another dialect. Applies the rules Anthropic enforces with a 400 (wire-formats §1.3).

import type {
  CacheControl,
  ContentBlock,
  ConversationMessage,
  DocumentBlock,
  DocumentSource,
  ExchangeRequest,
  ImageBlock,
  ImageSource,
  ResponseFormat,
  TextBlock,
  ThinkingBlock,
  ToolChoice,
  WebSearchTool,
} from '../../exchange/types'
import { budgetAsSent, maxTokensAbove } from '../../exchange/thinking-budget'
import { isObject } from '../wire-values'
import { addCacheBreakpoints, type WireBlock, type WireMessage } from './cache-breakpoints'
import { type AnthropicModelRules, fitToModel, thinkingFormFor } from './model-fit'
import { isForeignSignature, isGatewaySignature, lastToolTurnOpensWithThinking } from './thinking-signature'
import { anthropicUpstreamToolId } from './tool-use-id'
import { setClaudeSampling } from './sampling'

export interface AnthropicRequestOptions extends AnthropicModelRules {
  /** The model caches prompts: a request that marks no cache breakpoint gets some (cache-breakpoints.ts). */
  promptCaching?: boolean
  /**
   * The upstream is Anthropic itself (unset: it is), which refuses thinking it did not sign and a
   * tool loop's last turn without its own. A compatible server that is not (DeepSeek, Kimi) wants
   * a tool-call turn's thinking back whoever signed it (thinking-signature.ts).
   */
  anthropicSignatures?: boolean
}

export function encodeAnthropicRequest(
  req: ExchangeRequest,
  model: string,
  opts: AnthropicRequestOptions = {},
  maxOutputTokens?: number,
): Record<string, unknown> {
  const anthropic = opts.anthropicSignatures !== false
  const messages = encodeMessages(req.messages, anthropic)
  const body: Record<string, unknown> = { model, max_tokens: req.maxTokens, messages }

  const system = systemPrompt(req)
    .filter((b) => b.text.trim() !== '')
    .map(encodeText)
  if (system.length > 0) body.system = system
  const tools: Record<string, unknown>[] = req.tools.map((tool) =>
    withCache(
      {
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        input_schema: tool.inputSchema,
      },
      tool.cacheControl,
    ),
  )
  // Last, so a cache breakpoint put on the last tool covers every definition (server tools take one too).
  // Anthropic's search tool is named web_search, and tool names must be unique (a 400): a client
  // function of that name is kept, and the model searches through it instead.
  if (req.webSearch && !req.tools.some((tool) => tool.name === 'web_search'))
    tools.push(encodeWebSearchTool(req.webSearch))
  if (tools.length > 0) {
    body.tools = tools
    if (req.toolChoice) body.tool_choice = encodeToolChoice(req.toolChoice)
  } else {
    tools.push(...toolsOfHistory(messages))
    if (tools.length > 0) {
      body.tools = tools
      body.tool_choice = { type: 'none' }
    }
  }
  if (opts.promptCaching) addCacheBreakpoints({ system, tools, messages })

  const thinking = req.thinking
  const thinkingOn = thinking !== undefined && thinking.type !== 'disabled' && canThink(req, messages, anthropic, opts)
  const outputConfig: Record<string, unknown> = {}
  if (thinkingOn && thinking?.type === 'enabled') {
    const budget = budgetAsSent(thinking.budgetTokens)
    body.thinking = { type: 'enabled', budget_tokens: budget }
    body.max_tokens = maxTokensAbove(budget, req.maxTokens)
  } else if (thinkingOn && thinking?.type === 'adaptive') {
    // The newer models return thinking text only when asked (`display`; their default is empty
    // blocks): a client that reads summaries, as Codex does between tool calls, asks for it.
    body.thinking =
      thinking.summary && opts.adaptiveThinking ? { type: 'adaptive', display: 'summarized' } : { type: 'adaptive' }
    const effort = thinking.effort
    if (effort) outputConfig.effort = effort === 'minimal' ? 'low' : effort
  } else if (thinking?.type === 'disabled') {
    body.thinking = { type: 'disabled' }
  }
  const format = encodeOutputFormat(req.responseFormat)
  if (format) outputConfig.format = format
  if (Object.keys(outputConfig).length > 0) body.output_config = outputConfig

  setClaudeSampling(body, req, thinkingOn)
  // With thinking on Anthropic rejects top_k too.
  if (req.topK !== undefined && !thinkingOn) body.top_k = req.topK
  if (req.stopSequences && req.stopSequences.length > 0) body.stop_sequences = req.stopSequences
  if (req.user) body.metadata = { user_id: req.user }
  body.stream = req.stream
  // The thinking form and sampling parameters the model takes (adaptive as a budget, and so on).
  return fitToModel(body, opts, maxOutputTokens)
}

/**
 * Anthropic refuses tool_use and tool_result blocks in a request that defines no tools (a 400,
 * "Requests which include tool_use or tool_result blocks must define tools"), and Codex sends just
 * that when it compacts a conversation: the history, with `tools: []`, asking for a summary. The
 * tools the history called are defined again, bare, with a tool choice of none: the model reads
 * the history as it was and calls nothing, as the client asked by offering nothing.
 */
function toolsOfHistory(messages: WireMessage[]): Record<string, unknown>[] {
  const names = new Set<string>()
  for (const message of messages) {
    if (message.role !== 'assistant') continue
    for (const block of message.content) if (block.type === 'tool_use') names.add(block.name as string)
  }
  return [...names].map((name) => ({
    name,
    description: 'Called earlier in this conversation; not offered now.',
    input_schema: { type: 'object' },
  }))
}

// Anthropic has no mode that asks for JSON without a schema, so json_object is left out. OpenAI takes
// json_object only when the prompt itself asks for JSON, so the prompt already says what is wanted;
// a made-up open schema would be a guess Anthropic's schema rules may refuse.
const encodeOutputFormat = (format: ResponseFormat | undefined): Record<string, unknown> | undefined =>
  format?.type === 'json_schema' ? { type: 'json_schema', schema: format.schema } : undefined

// Thinking is incompatible with forced tool use, and on Anthropic with a budget a tool loop's last
// assistant turn must open with a signed thinking block (thinking-signature.ts; adaptive need not).
function canThink(req: ExchangeRequest, messages: WireMessage[], anthropic: boolean, model: AnthropicModelRules) {
  if (req.toolChoice?.type === 'any' || req.toolChoice?.type === 'tool') return false
  return (
    !anthropic || thinkingFormFor(req.thinking?.type, model) !== 'enabled' || lastToolTurnOpensWithThinking(messages)
  )
}

// Anthropic has no system role inside the conversation: instructions given mid-way join the
// system prompt, after those given before them. A loop, not a flatMap: this runs per request,
// and nearly every conversation has none.
function systemPrompt(req: ExchangeRequest): TextBlock[] {
  let blocks = req.system
  for (const message of req.messages) if (message.role === 'system') blocks = [...blocks, ...message.content]
  return blocks
}

function encodeMessages(messages: ConversationMessage[], anthropic: boolean): WireMessage[] {
  const merged: WireMessage[] = []
  for (const message of messages) {
    if (message.role === 'system') continue
    const content = message.content.flatMap((block) => encodeBlock(block, anthropic))
    if (content.length === 0) continue
    const previous = merged.at(-1)
    // Anthropic merges consecutive same-role turns itself, but tool_result ordering must hold after it.
    if (previous?.role === message.role) previous.content.push(...content)
    else merged.push({ role: message.role, content })
  }
  for (const message of merged) {
    if (message.role === 'user') message.content = toolResultsFirst(message.content)
  }
  return merged
}

const toolResultsFirst = (blocks: WireBlock[]): WireBlock[] => [
  ...blocks.filter((b) => b.type === 'tool_result'),
  ...blocks.filter((b) => b.type !== 'tool_result'),
]

function encodeBlock(block: ContentBlock, anthropic: boolean): WireBlock[] {
  switch (block.type) {
    case 'text':
      return block.text.trim() === '' ? [] : [encodeText(block)]
    case 'image':
      return [encodeImage(block)]
    case 'document':
      return [encodeDocument(block)]
    case 'thinking':
      return encodeThinking(block, anthropic)
    case 'redacted_thinking':
      return block.data === '' ? [] : [{ type: 'redacted_thinking', data: block.data }]
    case 'tool_use':
      return [
        withCache(
          {
            type: 'tool_use',
            id: anthropicUpstreamToolId(block.id),
            name: block.name,
            input: isObject(block.input) ? block.input : {},
          },
          block.cacheControl,
        ),
      ]
    case 'tool_result': {
      const content = block.content.flatMap((part) => encodeBlock(part, anthropic))
      const result: WireBlock = { type: 'tool_result', tool_use_id: anthropicUpstreamToolId(block.toolUseId) }
      if (content.length > 0) result.content = content
      if (block.isError) result.is_error = true
      return [withCache(result, block.cacheControl)]
    }
  }
}

// Another provider's reasoning (or ours) carries no Anthropic signature: to Anthropic, a 400. Any
// other server gets the words, under its own signature or an empty one, which DeepSeek and Kimi
// take: a signature svc made for another dialect means nothing to it (foreign-history.ts).
function encodeThinking(block: ThinkingBlock, anthropic: boolean): WireBlock[] {
  const { thinking, signature } = block
  if (anthropic) return isForeignSignature(signature) ? [] : [{ type: 'thinking', thinking, signature }]
  if (isGatewaySignature(signature)) return thinking === '' ? [] : [{ type: 'thinking', thinking, signature: '' }]
  return [{ type: 'thinking', thinking, signature: signature ?? '' }]
}

const encodeText = (block: TextBlock): WireBlock => withCache({ type: 'text', text: block.text }, block.cacheControl)

// An image's detail is OpenAI's setting; Anthropic has none, and sizes images itself.
function encodeImage(block: ImageBlock): WireBlock {
  return withCache({ type: 'image', source: encodeSource(block.source) }, block.cacheControl)
}

// Images and documents share the base64, url and file sources; only a document can be plain text.
function encodeSource(source: ImageSource): Record<string, unknown> {
  switch (source.kind) {
    case 'base64':
      return { type: 'base64', media_type: source.mediaType, data: source.data }
    case 'url':
      return { type: 'url', url: source.url }
    case 'file':
      return { type: 'file', file_id: source.fileId }
  }
}

function encodeDocument(block: DocumentBlock): WireBlock {
  const wire: WireBlock = { type: 'document', source: encodeDocumentSource(block.source) }
  if (block.title) wire.title = block.title
  return withCache(wire, block.cacheControl)
}

function encodeDocumentSource(source: DocumentSource): Record<string, unknown> {
  return source.kind === 'text' ? { type: 'text', media_type: 'text/plain', data: source.text } : encodeSource(source)
}

// Anthropic's web search server tool, in the version every Claude model with web search takes
// (web_search_20260209 is for the newest only). Only the settings the client made are sent.
function encodeWebSearchTool(search: WebSearchTool): Record<string, unknown> {
  const tool: Record<string, unknown> = { type: 'web_search_20250305', name: 'web_search' }
  if (search.maxUses !== undefined) tool.max_uses = search.maxUses
  if (search.allowedDomains) tool.allowed_domains = search.allowedDomains
  if (search.blockedDomains) tool.blocked_domains = search.blockedDomains
  if (search.userLocation) tool.user_location = { type: 'approximate', ...search.userLocation }
  return tool
}

function encodeToolChoice(choice: ToolChoice): Record<string, unknown> {
  if (choice.type === 'none') return { type: 'none' }
  const wire: Record<string, unknown> =
    choice.type === 'tool' ? { type: 'tool', name: choice.name } : { type: choice.type }
  if (choice.disableParallel !== undefined) wire.disable_parallel_tool_use = choice.disableParallel
  return wire
}

function withCache<T extends Record<string, unknown>>(wire: T, cacheControl: CacheControl | undefined): T {
  if (cacheControl) Object.assign(wire, { cache_control: { ...cacheControl } })
  return wire
}
