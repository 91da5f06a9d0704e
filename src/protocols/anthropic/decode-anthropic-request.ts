// Anthropic Messages request body → ExchangeRequest. The route has checked the envelope
// (schema.ts); this checks each block and throws invalid_request naming the broken field.

import type {
  CacheControl,
  ContentBlock,
  DocumentBlock,
  DocumentSource,
  ExchangeRequest,
  FileReference,
  ImageBlock,
  Message,
  ReasoningEffort,
  ResponseFormat,
  TextBlock,
  Thinking,
  ToolChoice,
  ToolDefinition,
  ToolUseBlock,
  UserContentBlock,
  WebSearchTool,
} from '../../exchange/types'
import { isClaudeCodeBillingLine } from './claude-code-billing-line'
import { invalidRequest } from '../../lib/errors'
import { takesStrictMode } from '../openai-common'
import { isObject, type JsonObject, readArray, readBoolean, readNumber, readObject, readString } from '../wire-values'

export function decodeAnthropicRequest(body: unknown): ExchangeRequest {
  if (!isObject(body)) throw invalidRequest('body: expected a JSON object')
  const rawMessages = readArray(body, 'messages')
  if (!rawMessages) throw invalidRequest('messages: expected an array', 'messages')
  const maxTokens = readNumber(body, 'max_tokens')
  if (maxTokens === undefined) throw invalidRequest('max_tokens: expected a number', 'max_tokens')

  // Claude Code's billing line is Anthropic's alone (claude-code-billing-line.ts): a translated prompt starts without it.
  const system = decodeSystem(body.system).filter((block) => !isClaudeCodeBillingLine(block.text))
  const messages: Message[] = []
  rawMessages.forEach((raw, i) => {
    const path = `messages.${i}`
    if (!isObject(raw)) throw invalidRequest(`${path}: expected an object`, path)
    const role = raw.role
    const content = decodeContent(raw.content, `${path}.content`)
    // Claude Code puts `role: "system"` entries inside messages; Anthropic has only top-level system.
    if (role === 'system') system.push(...content.filter(isText))
    else if (role === 'user' || role === 'assistant') messages.push({ role, content })
    else throw invalidRequest(`${path}.role: expected "user" or "assistant"`, `${path}.role`)
  })

  const { tools, webSearch, deferredWebSearch, anthropicTools } = decodeTools(body.tools, rawMessages)
  const request: ExchangeRequest = { system, messages, tools, maxTokens, stream: readBoolean(body, 'stream') ?? false }
  if (webSearch) request.webSearch = webSearch
  if (deferredWebSearch) request.deferredWebSearch = deferredWebSearch
  if (continuesServerTools(rawMessages)) request.continuesPausedTurn = true
  if (decodeCacheControl(body.cache_control)?.ttl === '1h') request.hourCacheMark = true
  // The MCP connector: Anthropic calls the servers named here for the toolsets that name them.
  const mcpServers = readArray(body, 'mcp_servers')
  if (mcpServers && mcpServers.length > 0) anthropicTools.push('mcp_servers')
  if (anthropicTools.length > 0) request.anthropicTools = anthropicTools
  const safeguards = readArray(body, 'safeguards')
  if (safeguards && safeguards.length > 0) request.anthropicSafeguards = true
  const toolChoice = decodeToolChoice(body.tool_choice)
  if (toolChoice) request.toolChoice = toolChoice
  const outputConfig = readObject(body, 'output_config')
  const thinking = decodeThinking(body.thinking, outputConfig)
  if (thinking) request.thinking = thinking
  const responseFormat = decodeOutputFormat(outputConfig?.format)
  if (responseFormat) request.responseFormat = responseFormat
  const temperature = readNumber(body, 'temperature')
  if (temperature !== undefined) request.temperature = temperature
  const topP = readNumber(body, 'top_p')
  if (topP !== undefined) request.topP = topP
  const topK = readNumber(body, 'top_k')
  if (topK !== undefined) request.topK = topK
  const stopSequences = readArray(body, 'stop_sequences')?.filter((s): s is string => typeof s === 'string')
  if (stopSequences && stopSequences.length > 0) request.stopSequences = stopSequences
  const metadata = readObject(body, 'metadata')
  const user = metadata && readString(metadata, 'user_id')
  if (user) request.user = user
  return request
}

const isText = (block: ContentBlock): block is TextBlock => block.type === 'text'
const isUserContent = (block: ContentBlock): block is UserContentBlock =>
  block.type === 'text' || block.type === 'image' || block.type === 'document'

function decodeSystem(system: unknown): TextBlock[] {
  if (system === undefined || system === null) return []
  if (typeof system === 'string') return system === '' ? [] : [{ type: 'text', text: system }]
  if (!Array.isArray(system)) throw invalidRequest('system: expected a string or an array of text blocks', 'system')
  return decodeBlocks(system, 'system').filter(isText)
}

function decodeContent(content: unknown, path: string): ContentBlock[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }]
  if (!Array.isArray(content)) throw invalidRequest(`${path}: expected a string or an array of content blocks`, path)
  return decodeBlocks(content, path)
}

function decodeBlocks(blocks: unknown[], path: string): ContentBlock[] {
  const out: ContentBlock[] = []
  blocks.forEach((raw, i) => {
    if (!isObject(raw)) throw invalidRequest(`${path}.${i}: expected a content block object`, `${path}.${i}`)
    out.push(...decodeBlock(raw, `${path}.${i}`))
  })
  return out
}

function decodeBlock(block: JsonObject, path: string): ContentBlock[] {
  const cacheControl = decodeCacheControl(block.cache_control)
  switch (block.type) {
    case 'text':
      return [withCache<TextBlock>({ type: 'text', text: requireString(block, 'text', path) }, cacheControl)]
    case 'image': {
      const image = decodeImage(block, path)
      return image ? [withCache(image, cacheControl)] : []
    }
    case 'document':
      return decodeDocument(block, path).map((b) => withCache(b, cacheControl))
    case 'search_result':
      return decodeSearchResult(block)
    case 'tool_use': {
      const id = readString(block, 'id')
      if (!id) throw invalidRequest(`${path}.id: tool_use needs a non-empty id`, `${path}.id`)
      const name = requireString(block, 'name', path)
      return [withCache<ToolUseBlock>({ type: 'tool_use', id, name, input: block.input ?? {} }, cacheControl)]
    }
    case 'tool_result':
      return [decodeToolResult(block, path, cacheControl)]
    case 'thinking': {
      const signature = readString(block, 'signature')
      const thinking = requireString(block, 'thinking', path)
      return [signature === undefined ? { type: 'thinking', thinking } : { type: 'thinking', thinking, signature }]
    }
    case 'redacted_thinking':
      return [{ type: 'redacted_thinking', data: requireString(block, 'data', path) }]
    // A tool search's result (Claude Code's ToolSearch): Anthropic expands it into the tool's
    // definition; elsewhere the named tool is offered from then on (decodeTools), and the model told so.
    case 'tool_reference':
      return [{ type: 'text', text: `Tool ${requireString(block, 'tool_name', path)} loaded: it can be called now.` }]
    case 'web_fetch_tool_result':
      return fetchedPage(block)
    case 'mcp_tool_use':
      return mcpCall(block)
    case 'mcp_tool_result':
      return mcpResult(block)
    default:
      // server_tool_use, web_search_tool_result, container_upload… have no neutral form.
      return []
  }
}

// What Anthropic's server tools brought into an assistant turn that a model of another dialect can
// read, as text: a fetched page, an MCP server's tool call and its result. Their blocks have no
// neutral form; dropped, a later turn served elsewhere answered as though the page had never been
// read, and the prompt's estimate (routing, the credit hold) left the page out. Search results
// stay dropped: their pages are sealed (`encrypted_content`), and the answer's citations quote them.
// These are the upstream's own blocks, sent back: what does not read as expected is left out, not
// refused (Anthropic judges them where they pass through).

function fetchedPage(block: JsonObject): TextBlock[] {
  const result = readObject(block, 'content')
  if (result?.type !== 'web_fetch_result') return []
  const url = readString(result, 'url') ?? 'a page'
  const document = readObject(result, 'content')
  const source = document && readObject(document, 'source')
  const title = document && readString(document, 'title')
  const heading = `Fetched ${url}${title ? ` (${title})` : ''}`
  const text = source?.type === 'text' ? readString(source, 'data') : undefined
  if (text) return [{ type: 'text', text: `${heading}:\n\n${text}` }]
  const mediaType = source && readString(source, 'media_type')
  return [{ type: 'text', text: `${heading}: ${mediaType ?? 'a document'}, not shown here.` }]
}

function mcpCall(block: JsonObject): TextBlock[] {
  const name = readString(block, 'name')
  if (!name) return []
  const server = readString(block, 'server_name')
  const on = server ? ` on the MCP server ${server}` : ''
  return [{ type: 'text', text: `Called the tool ${name}${on} with ${JSON.stringify(block.input ?? {})}.` }]
}

function mcpResult(block: JsonObject): TextBlock[] {
  const content = block.content
  const text = typeof content === 'string' ? content : textsOf(content).join('\n\n')
  const failed = readBoolean(block, 'is_error') === true
  if (!text) return failed ? [{ type: 'text', text: 'The tool failed.' }] : []
  return [{ type: 'text', text: failed ? `The tool failed:\n\n${text}` : `The tool returned:\n\n${text}` }]
}

function decodeToolResult(block: JsonObject, path: string, cacheControl: CacheControl | undefined): ContentBlock {
  const toolUseId = readString(block, 'tool_use_id')
  if (!toolUseId) {
    throw invalidRequest(`${path}.tool_use_id: tool_result needs a non-empty tool_use_id`, `${path}.tool_use_id`)
  }
  const raw = block.content
  let content: UserContentBlock[] = []
  if (typeof raw === 'string') content = [{ type: 'text', text: raw }]
  else if (Array.isArray(raw)) {
    content = decodeBlocks(raw, `${path}.content`).filter(isUserContent)
  } else if (raw !== undefined && raw !== null) {
    throw invalidRequest(`${path}.content: expected a string or an array of blocks`, `${path}.content`)
  }
  const result: ContentBlock = { type: 'tool_result', toolUseId, content }
  if (readBoolean(block, 'is_error')) result.isError = true
  return withCache(result, cacheControl)
}

function decodeImage(block: JsonObject, path: string): ImageBlock | undefined {
  const source = readObject(block, 'source')
  if (!source) throw invalidRequest(`${path}.source: image needs a source object`, `${path}.source`)
  if (source.type === 'base64') {
    const mediaType = requireString(source, 'media_type', `${path}.source`)
    const data = requireString(source, 'data', `${path}.source`)
    return { type: 'image', source: { kind: 'base64', mediaType, data } }
  }
  if (source.type === 'url')
    return { type: 'image', source: { kind: 'url', url: requireString(source, 'url', `${path}.source`) } }
  if (source.type === 'file') return { type: 'image', source: decodeFileReference(source, `${path}.source`) }
  // A source type this gateway does not know: nothing to translate (a pass-through body keeps it).
  return undefined
}

// Kept, not dropped: an encoder for another provider refuses it, naming the field.
function decodeFileReference(source: JsonObject, path: string): FileReference {
  return { kind: 'file', fileId: requireString(source, 'file_id', path), param: `${path}.file_id` }
}

/**
 * A document's `context` (what the client says about it, not to be cited from) has no field in the
 * other dialects: it follows the document as text, so a model there reads it too. An Anthropic
 * upstream gets the client's body as sent, context in place.
 */
function decodeDocument(block: JsonObject, path: string): UserContentBlock[] {
  const document = decodeDocumentOnly(block, path)
  const context = readString(block, 'context')
  return context && document.length > 0 ? [...document, { type: 'text', text: context }] : document
}

function decodeDocumentOnly(block: JsonObject, path: string): UserContentBlock[] {
  const source = readObject(block, 'source')
  if (!source) throw invalidRequest(`${path}.source: document needs a source object`, `${path}.source`)
  const sourcePath = `${path}.source`
  const title = readString(block, 'title')
  const document = (documentSource: DocumentSource): DocumentBlock =>
    title ? { type: 'document', source: documentSource, title } : { type: 'document', source: documentSource }
  switch (source.type) {
    case 'base64': {
      const mediaType = requireString(source, 'media_type', sourcePath)
      return [document({ kind: 'base64', mediaType, data: requireString(source, 'data', sourcePath) })]
    }
    case 'url':
      return [document({ kind: 'url', url: requireString(source, 'url', sourcePath) })]
    case 'text': {
      const text = requireString(source, 'data', sourcePath)
      return text === '' ? [] : [document({ kind: 'text', text })]
    }
    case 'content':
      return decodeContentSource(source.content, sourcePath, document)
    case 'file':
      return [document(decodeFileReference(source, sourcePath))]
    default:
      // A source type this gateway does not know: nothing to translate (a pass-through body keeps it).
      return []
  }
}

// A custom-content document: a string is a plain-text document, blocks are what they are.
function decodeContentSource(
  content: unknown,
  path: string,
  document: (source: DocumentSource) => DocumentBlock,
): UserContentBlock[] {
  if (typeof content === 'string') return content === '' ? [] : [document({ kind: 'text', text: content })]
  if (!Array.isArray(content)) {
    throw invalidRequest(`${path}.content: expected a string or an array of blocks`, `${path}.content`)
  }
  return decodeBlocks(content, `${path}.content`).filter(isUserContent)
}

/** The texts of a list of text blocks (`[{type: "text", text}]`); nothing where it is not a list. */
const textsOf = (blocks: unknown): string[] =>
  Array.isArray(blocks)
    ? blocks.map((b) => (isObject(b) ? readString(b, 'text') : undefined)).filter((t): t is string => Boolean(t))
    : []

function decodeSearchResult(block: JsonObject): TextBlock[] {
  const texts = textsOf(block.content)
  if (texts.length === 0) return []
  const header = [readString(block, 'title'), readString(block, 'source')].filter(Boolean).join('\n')
  return [{ type: 'text', text: header ? `${header}\n\n${texts.join('\n\n')}` : texts.join('\n\n') }]
}

/**
 * Tools only Anthropic's API has, each version a type of its own: those it defines for the client
 * to carry out (its editor, shell, memory store, screen: text_editor_20250728, bash_20250124,
 * memory_20250818, computer_20250124; Claude is trained on them), and those it runs itself beside
 * web search, which crosses: web fetch, tool search (which loads `defer_loading` tools), an MCP
 * toolset. A pass-through keeps them all (list-price.ts); elsewhere the model would answer with the
 * tool gone, as if it had fetched the page or called the server. Code execution is not among them:
 * it is left out everywhere (list-price.ts), as is a server tool svc does not know.
 */
const anthropicOnlyToolType = /^(?:text_editor_|bash_|memory_|computer_|web_fetch_|tool_search_tool_|mcp_toolset$)/

interface DecodedTools {
  tools: ToolDefinition[]
  webSearch?: WebSearchTool
  deferredWebSearch?: WebSearchTool
  /** The types of the tools only Anthropic has (anthropicOnlyToolType). */
  anthropicTools: string[]
}

/**
 * The tools the request offers. A tool marked `defer_loading` stays out of the model's sight until a
 * tool search loads it (a `tool_reference` naming it in a tool result): Anthropic does that itself;
 * translated, such a tool is offered only once the history names it (Claude Code's
 * DeferredToolPlaceholder, which says never to call it, never).
 */
function decodeTools(tools: unknown, messages: unknown[]): DecodedTools {
  if (tools === undefined || tools === null) return { tools: [], anthropicTools: [] }
  if (!Array.isArray(tools)) throw invalidRequest('tools: expected an array', 'tools')
  const out: DecodedTools = { tools: [], anthropicTools: [] }
  let loaded: Set<string> | undefined
  tools.forEach((raw, i) => {
    const path = `tools.${i}`
    if (!isObject(raw)) throw invalidRequest(`${path}: expected an object`, path)
    // Every version of the web search server tool (web_search_20250305, web_search_20260209…) is the
    // same search to the neutral form: an OpenAI Responses upstream has one too.
    const search = typeof raw.type === 'string' && raw.type.startsWith('web_search_')
    if (raw.defer_loading === true) {
      loaded ??= referencedToolNames(messages)
      if (!loaded.has(String(raw.name))) {
        if (search) out.deferredWebSearch = decodeWebSearchTool(raw, path)
        return
      }
    }
    if (search) {
      out.webSearch = decodeWebSearchTool(raw, path)
      return
    }
    // Named, not translated: the router sends the request to an Anthropic upstream, which gets the
    // client's body as sent.
    if (typeof raw.type === 'string' && anthropicOnlyToolType.test(raw.type)) {
      out.anthropicTools.push(raw.type)
      return
    }
    // Other server tools (code execution, ones svc does not know) are left out on every route.
    if (raw.type !== undefined && raw.type !== null && raw.type !== 'custom') return
    const tool: ToolDefinition = {
      name: requireString(raw, 'name', path),
      inputSchema: readObject(raw, 'input_schema') ?? { type: 'object' },
    }
    const description = readString(raw, 'description')
    if (description !== undefined) tool.description = description
    if (raw.strict === true && takesStrictMode(tool.inputSchema)) tool.strict = true
    const cacheControl = decodeCacheControl(raw.cache_control)
    if (cacheControl) tool.cacheControl = cacheControl
    out.tools.push(tool)
  })
  return out
}

/**
 * Whether the conversation ends on an assistant turn that ran server tools (a `server_tool_use`),
 * sent back as Anthropic's docs say to continue a turn it paused (`stop_reason: "pause_turn"`):
 * Anthropic resumes the tools' loop there, which is no prefill of the answer.
 */
function continuesServerTools(messages: unknown[]): boolean {
  const last = messages.at(-1)
  return (
    isObject(last) &&
    last.role === 'assistant' &&
    Array.isArray(last.content) &&
    last.content.some((block) => isObject(block) && block.type === 'server_tool_use')
  )
}

/** The tools a tool search loaded in the conversation: each `tool_reference` in a tool result. */
function referencedToolNames(messages: unknown[]): Set<string> {
  const names = new Set<string>()
  for (const message of messages) {
    if (!isObject(message) || !Array.isArray(message.content)) continue
    for (const block of message.content) {
      if (!isObject(block) || block.type !== 'tool_result' || !Array.isArray(block.content)) continue
      for (const part of block.content)
        if (isObject(part) && part.type === 'tool_reference' && typeof part.tool_name === 'string')
          names.add(part.tool_name)
    }
  }
  return names
}

function decodeWebSearchTool(tool: JsonObject, path: string): WebSearchTool {
  const search: WebSearchTool = {}
  if (isPresent(tool.max_uses)) {
    const maxUses = readNumber(tool, 'max_uses')
    if (maxUses === undefined) throw invalidRequest(`${path}.max_uses: expected a number`, `${path}.max_uses`)
    search.maxUses = maxUses
  }
  const allowedDomains = decodeDomains(tool, 'allowed_domains', path)
  if (allowedDomains) search.allowedDomains = allowedDomains
  const blockedDomains = decodeDomains(tool, 'blocked_domains', path)
  if (blockedDomains) search.blockedDomains = blockedDomains
  const userLocation = decodeUserLocation(tool.user_location, `${path}.user_location`)
  if (userLocation) search.userLocation = userLocation
  return search
}

function decodeDomains(tool: JsonObject, key: string, path: string): string[] | undefined {
  const value = tool[key]
  if (!isPresent(value)) return undefined
  if (!Array.isArray(value) || !value.every((domain) => typeof domain === 'string')) {
    throw invalidRequest(`${path}.${key}: expected an array of domain strings`, `${path}.${key}`)
  }
  return value
}

const locationFields = ['city', 'region', 'country', 'timezone'] as const

function decodeUserLocation(value: unknown, path: string): WebSearchTool['userLocation'] {
  if (!isPresent(value)) return undefined
  if (!isObject(value)) throw invalidRequest(`${path}: expected an object`, path)
  const location: NonNullable<WebSearchTool['userLocation']> = {}
  for (const field of locationFields) {
    if (!isPresent(value[field])) continue
    location[field] = requireString(value, field, path)
  }
  return location
}

/** Anthropic's optional fields may be sent as null: the same as leaving them out. */
const isPresent = (value: unknown): boolean => value !== undefined && value !== null

function decodeToolChoice(choice: unknown): ToolChoice | undefined {
  if (!isObject(choice)) return undefined
  const disableParallel = readBoolean(choice, 'disable_parallel_tool_use')
  const parallel = disableParallel === undefined ? {} : { disableParallel }
  switch (choice.type) {
    case 'auto':
      return { type: 'auto', ...parallel }
    case 'any':
      return { type: 'any', ...parallel }
    case 'tool':
      return { type: 'tool', name: requireString(choice, 'name', 'tool_choice'), ...parallel }
    case 'none':
      return { type: 'none' }
    default:
      throw invalidRequest('tool_choice.type: expected auto, any, tool or none', 'tool_choice.type')
  }
}

const efforts = new Set<string>(['minimal', 'low', 'medium', 'high', 'xhigh', 'max'])

function decodeThinking(thinking: unknown, outputConfig: JsonObject | undefined): Thinking | undefined {
  if (!isObject(thinking)) return undefined
  switch (thinking.type) {
    case 'enabled': {
      const budgetTokens = readNumber(thinking, 'budget_tokens')
      if (budgetTokens === undefined) {
        throw invalidRequest('thinking.budget_tokens: expected a number', 'thinking.budget_tokens')
      }
      return { type: 'enabled', budgetTokens }
    }
    case 'adaptive': {
      // Adaptive thinking takes its depth from output_config.effort.
      const effort = outputConfig && readString(outputConfig, 'effort')
      return effort && efforts.has(effort)
        ? { type: 'adaptive', effort: effort as ReasoningEffort }
        : { type: 'adaptive' }
    }
    case 'disabled':
      return { type: 'disabled' }
    default:
      throw invalidRequest('thinking.type: expected enabled, adaptive or disabled', 'thinking.type')
  }
}

// Structured outputs: json_schema is the only format Anthropic has, and it carries no name.
function decodeOutputFormat(format: unknown): ResponseFormat | undefined {
  if (format === undefined || format === null) return undefined
  if (!isObject(format) || format.type !== 'json_schema') {
    throw invalidRequest('output_config.format: expected {type: "json_schema", schema}', 'output_config.format')
  }
  const schema = readObject(format, 'schema')
  if (!schema) {
    throw invalidRequest('output_config.format.schema: expected a JSON Schema object', 'output_config.format.schema')
  }
  return { type: 'json_schema', schema }
}

function decodeCacheControl(value: unknown): CacheControl | undefined {
  if (!isObject(value) || value.type !== 'ephemeral') return undefined
  const ttl = value.ttl
  return ttl === '5m' || ttl === '1h' ? { type: 'ephemeral', ttl } : { type: 'ephemeral' }
}

function withCache<T extends { cacheControl?: CacheControl }>(block: T, cacheControl: CacheControl | undefined): T {
  if (cacheControl) block.cacheControl = cacheControl
  return block
}

function requireString(object: JsonObject, key: string, path: string): string {
  const value = readString(object, key)
  if (value === undefined) throw invalidRequest(`${path}.${key}: expected a string`, `${path}.${key}`)
  return value
}
