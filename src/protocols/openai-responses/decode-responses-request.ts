// Inbound Responses body → neutral ExchangeRequest (wire-formats §2.2, §2.3, §4.5).
import type {
  ContentBlock,
  ConversationMessage,
  DocumentBlock,
  DocumentSource,
  ExchangeRequest,
  ImageBlock,
  ImageDetail,
  ImageSource,
  JsonSchemaFormat,
  ReasoningEffort,
  ResponseFormat,
  Role,
  TextBlock,
  Thinking,
  ToolChoice,
  ToolDefinition,
  UserContentBlock,
  WebSearchTool,
} from '../../exchange/types'
import { parseToolArguments } from '../../exchange/tool-arguments'
import { invalidRequest } from '../../lib/errors'
import { takesStrictMode, unreadableFileId } from '../openai-common'
import { isObject, type JsonObject, asArray, asString } from '../wire-values'
import { readAnthropicReasoning, readServerReasoning, tagResponsesSignature } from './reasoning-signature'
import type { ResponsesBody } from './schema'
import { customToolAsFunction, freeformArgument, qualifiedToolName, specialToolNames } from './client-tools'
import { isListPriceTool } from './list-price'

export interface DecodeResponsesRequestOptions {
  /** Used when the client sends no `max_output_tokens` (Anthropic upstreams require a limit). */
  defaultMaxTokens: number
}

const efforts: readonly ReasoningEffort[] = ['minimal', 'low', 'medium', 'high', 'xhigh', 'max']

export const decodeResponsesRequest = (body: ResponsesBody, opts: DecodeResponsesRequestOptions): ExchangeRequest => {
  // The gateway keeps no conversation state, so history it cannot see must not be silently dropped (§2.8).
  if (typeof body.previous_response_id === 'string') {
    throw invalidRequest(
      'previous_response_id is not supported: this gateway is stateless, send the full conversation in input',
      'previous_response_id',
    )
  }
  // Likewise a stored conversation and a stored prompt template: objects of the platform's OpenAI
  // account that a pass-through body would otherwise reach by id, whichever account sent it.
  if (body.conversation !== undefined && body.conversation !== null) {
    throw invalidRequest(
      'conversation is not supported: this gateway is stateless, send the full conversation in input',
      'conversation',
    )
  }
  if (body.prompt !== undefined && body.prompt !== null) {
    throw invalidRequest(
      'prompt (a stored prompt template) is not supported: send its text as instructions and input',
      'prompt',
    )
  }
  const system: TextBlock[] = []
  if (typeof body.instructions === 'string' && body.instructions !== '') {
    system.push({ type: 'text', text: body.instructions })
  }
  const messages: ConversationMessage[] = []
  if (typeof body.input === 'string') {
    messages.push({ role: 'user', content: [{ type: 'text', text: body.input }] })
  } else if (Array.isArray(body.input)) {
    body.input.forEach((item, i) => {
      decodeInputItem(item, `input[${i}]`, system, messages)
    })
  } else {
    throw invalidRequest('input must be a string or an array of input items', 'input')
  }
  if (messages.length === 0) throw invalidRequest('input must contain at least one user or assistant item', 'input')
  dropAnswerToGiveAgain(messages)

  const offered = offeredToolsAt(body)
  const request: ExchangeRequest = {
    system,
    messages,
    tools: decodeTools(offered),
    maxTokens: decodeMaxTokens(body.max_output_tokens, opts.defaultMaxTokens),
    stream: body.stream === true,
  }
  if (body.max_output_tokens === undefined || body.max_output_tokens === null) request.openOutput = true
  const webSearch = decodeWebSearchTool(offered.map(({ tool }) => tool))
  if (webSearch) request.webSearch = webSearch
  else if (offered.some(({ tool }) => isWebSearchTool(tool))) request.cachedWebSearch = true
  const openaiTools = openaiOnlyTools(offered, body.input)
  if (openaiTools.length > 0) request.openaiTools = openaiTools
  const toolChoice = decodeToolChoice(body.tool_choice, body.parallel_tool_calls)
  if (toolChoice) request.toolChoice = toolChoice
  const allowed = allowedTools(body.tool_choice)
  if (allowed) narrowToAllowed(request, allowed)
  if (typeof body.temperature === 'number') request.temperature = body.temperature
  if (typeof body.top_p === 'number') request.topP = body.top_p
  const thinking = decodeReasoning(body.reasoning)
  if (thinking) request.thinking = thinking
  const responseFormat = decodeTextFormat(body.text)
  if (responseFormat) request.responseFormat = responseFormat
  const user = asString(body.safety_identifier) ?? asString(body.user)
  if (user) request.user = user
  return request
}

/**
 * A Responses request has no prefill: items after the last user turn are history, and the model
 * answers anew after them. Codex resends a turn whose stream broke with what had finished of it
 * (its reasoning, a message) last; Claude took that as its own turn to continue, which it refuses
 * under thinking (a 400 the resend could not get past) and its 5.x models refuse at all (the turn
 * went to another provider or to none). Such an answer, words and reasoning only, is left out:
 * the model answers the turn again, as OpenAI's does. A turn with tool calls stays (their outputs
 * are owed), as does an assistant turn with nothing before it.
 */
function dropAnswerToGiveAgain(messages: ConversationMessage[]): void {
  // Instructions given after it (a developer message) are no turn: the answer still came last.
  const at = messages.findLastIndex((message) => message.role !== 'system')
  const last = messages[at]
  if (at < 1 || last?.role !== 'assistant') return
  if (last.content.every((block) => answerOnly.has(block.type))) messages.splice(at, 1)
}
const answerOnly = new Set(['text', 'thinking', 'redacted_thinking'])

// Consecutive items of the same role merge into one message, in order: a run of function_call
// items becomes one assistant turn, a run of outputs one user turn (what Anthropic requires).
const appendBlocks = (messages: ConversationMessage[], role: Role, blocks: ContentBlock[]): void => {
  if (blocks.length === 0) return
  const last = messages.at(-1)
  if (last && last.role === role) last.content.push(...blocks)
  else messages.push({ role, content: blocks })
}

const decodeInputItem = (item: unknown, path: string, system: TextBlock[], messages: ConversationMessage[]): void => {
  if (!isObject(item)) throw invalidRequest(`${path} must be an object`, path)
  // An item reference's `type` is optional (the OpenAI SDK's ItemReference): an id and no role is one.
  const type =
    item['type'] ?? (typeof item['id'] === 'string' && item['role'] === undefined ? 'item_reference' : undefined)
  if (type === undefined || type === 'message') {
    decodeMessageItem(item, path, system, messages)
    return
  }
  switch (type) {
    case 'function_call':
      appendBlocks(messages, 'assistant', [decodeFunctionCall(item, path)])
      return
    case 'custom_tool_call':
      appendBlocks(messages, 'assistant', [decodeCustomToolCall(item, path)])
      return
    case 'function_call_output':
    case 'custom_tool_call_output':
      appendBlocks(messages, 'user', [decodeToolCallOutput(item, path)])
      return
    case 'reasoning':
      appendBlocks(messages, 'assistant', decodeReasoningItem(item, path))
      return
    case 'item_reference':
      // The Vercel AI SDK sends one for every earlier output unless told `store: false` (an audit:
      // every chat's second turn refused): the words say what to send instead.
      throw invalidRequest(
        'item_reference is not supported: this gateway is stateless, so send the item itself (with store: false; the Vercel AI SDK: providerOptions.openai.store = false)',
        item['type'] === undefined ? path : `${path}.type`,
      )
    case 'additional_tools':
      // Tools, not conversation: the request's own, with its top-level ones (offeredToolsAt).
      return
    default:
      // Hosted-tool history (web_search_call, …) has no neutral equivalent; like unknown fields, skip it.
      return
  }
}

const decodeMessageItem = (
  item: JsonObject,
  path: string,
  system: TextBlock[],
  messages: ConversationMessage[],
): void => {
  const role = item['role']
  if (role !== 'user' && role !== 'assistant' && role !== 'system' && role !== 'developer') {
    throw invalidRequest(`${path}.role must be one of user, assistant, system, developer`, `${path}.role`)
  }
  const blocks = decodeMessageContent(item['content'], `${path}.content`)
  if (role === 'system' || role === 'developer') {
    const texts = blocks.map((block) => {
      if (block.type !== 'text')
        throw invalidRequest(`${path}.content may hold only text for role ${role}`, `${path}.content`)
      return block
    })
    appendInstructions(messages, system, texts)
    return
  }
  appendBlocks(messages, role, blocks)
}

// Instructions before the conversation starts are the system prompt, as `instructions` is. Later
// ones (a coding agent's, when a setting changes mid-session) stay where they were given: moved to
// the top, they would read as if they had held from the start.
const appendInstructions = (messages: ConversationMessage[], system: TextBlock[], texts: TextBlock[]): void => {
  if (messages.length === 0) {
    system.push(...texts)
    return
  }
  if (texts.length === 0) return
  const last = messages.at(-1)
  if (last?.role === 'system') last.content.push(...texts)
  else messages.push({ role: 'system', content: texts })
}

const decodeMessageContent = (content: unknown, path: string): UserContentBlock[] => {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }]
  if (!Array.isArray(content)) throw invalidRequest(`${path} must be a string or an array of content parts`, path)
  const blocks: UserContentBlock[] = []
  content.forEach((part, j) => {
    const block = decodeContentPart(part, `${path}[${j}]`)
    if (block) blocks.push(block)
  })
  return blocks
}

const decodeContentPart = (part: unknown, path: string): UserContentBlock | undefined => {
  if (!isObject(part)) throw invalidRequest(`${path} must be an object`, path)
  switch (part['type']) {
    case 'input_text':
    case 'output_text':
    case 'text': {
      const text = part['text']
      if (typeof text !== 'string') throw invalidRequest(`${path}.text must be a string`, `${path}.text`)
      return text === '' ? undefined : { type: 'text', text }
    }
    case 'refusal': {
      const text = asString(part['refusal'])
      return text ? { type: 'text', text } : undefined
    }
    case 'input_image':
      return decodeImagePart(part, path)
    case 'input_file':
      return decodeFilePart(part, path)
    default:
      throw invalidRequest(
        `${path}.type ${JSON.stringify(part['type'])} is not a supported content part`,
        `${path}.type`,
      )
  }
}

// `data:<media type>[;<parameter>…];base64,<data>`: parameters such as charset are allowed and skipped.
const dataUrlPattern = /^data:([^;,]+)(?:;[^;,]*)*?;base64,(.*)$/s

/** A base64 data URL's media type and data; `field` names it in the 400 when it is not one. */
const parseDataUrl = (url: string, field: string): { mediaType: string; data: string } => {
  const match = dataUrlPattern.exec(url)
  if (!match?.[1] || match[2] === undefined) throw invalidRequest(`${field} is not a base64 data URL`, field)
  return { mediaType: match[1], data: match[2] }
}

const isHttpUrl = (url: string): boolean => /^https?:\/\//.test(url)

const imageDetails: readonly ImageDetail[] = ['auto', 'low', 'high', 'original']

const decodeImagePart = (part: JsonObject, path: string): ImageBlock => {
  const image: ImageBlock = { type: 'image', source: decodeImageSource(part, path) }
  const detail = decodeImageDetail(part['detail'], `${path}.detail`)
  if (detail) image.detail = detail
  return image
}

const decodeImageDetail = (detail: unknown, field: string): ImageDetail | undefined => {
  if (detail === undefined || detail === null) return undefined
  const known = imageDetails.find((d) => d === detail)
  if (!known) throw invalidRequest(`${field} must be one of ${imageDetails.join(', ')}`, field)
  return known
}

const decodeImageSource = (part: JsonObject, path: string): ImageSource => {
  const url = part['image_url']
  if (typeof url !== 'string' || url === '') {
    if (part['file_id'] !== undefined && part['file_id'] !== null) {
      throw unreadableFileId(`${path}.file_id`, 'OpenAI', 'the image as image_url: a data URL or an http(s) URL')
    }
    throw invalidRequest(`${path}.image_url must be a data URL or an http(s) URL`, `${path}.image_url`)
  }
  if (url.startsWith('data:')) return { kind: 'base64', ...parseDataUrl(url, `${path}.image_url`) }
  if (!isHttpUrl(url)) {
    throw invalidRequest(`${path}.image_url must be a data URL or an http(s) URL`, `${path}.image_url`)
  }
  return { kind: 'url', url }
}

// An input_file carries its bytes (file_data) or a link (file_url). A file_id names a file in the
// client's own OpenAI store, which no upstream the gateway reaches can read: refused, not dropped.
const decodeFilePart = (part: JsonObject, path: string): DocumentBlock | undefined => {
  const source = decodeFileSource(part, path)
  if (!source) return undefined
  const title = asString(part['filename'])
  return title ? { type: 'document', source, title } : { type: 'document', source }
}

const decodeFileSource = (part: JsonObject, path: string): DocumentSource | undefined => {
  const fileData = asString(part['file_data'])
  if (fileData) return decodeFileData(fileData, `${path}.file_data`)
  const fileUrl = asString(part['file_url'])
  if (fileUrl) {
    if (!isHttpUrl(fileUrl)) throw invalidRequest(`${path}.file_url must be an http(s) URL`, `${path}.file_url`)
    return { kind: 'url', url: fileUrl }
  }
  if (part['file_id'] !== undefined && part['file_id'] !== null) {
    throw unreadableFileId(`${path}.file_id`, 'OpenAI', 'file_data or file_url')
  }
  throw invalidRequest(`${path} needs file_data (a base64 data URL) or file_url`, path)
}

// Text files become plain-text documents, which every upstream can take (Anthropic's base64
// documents must be PDFs); an empty one is left out, as empty text is.
const decodeFileData = (fileData: string, field: string): DocumentSource | undefined => {
  const { mediaType, data } = parseDataUrl(fileData, field)
  if (!mediaType.startsWith('text/')) return { kind: 'base64', mediaType, data }
  const text = Buffer.from(data, 'base64').toString('utf8')
  return text === '' ? undefined : { kind: 'text', text }
}

const requireString = (item: JsonObject, field: string, path: string): string => {
  const value = item[field]
  if (typeof value !== 'string' || value === '') {
    throw invalidRequest(`${path}.${field} must be a non-empty string`, `${path}.${field}`)
  }
  return value
}

/** A call's tool under the name other dialects know it by (client-tools.ts). */
const calledToolName = (item: JsonObject, path: string): string => {
  const namespace = item['namespace']
  const ownName = requireString(item, 'name', path)
  return typeof namespace === 'string' && namespace !== '' ? qualifiedToolName(namespace, ownName) : ownName
}

const decodeFunctionCall = (item: JsonObject, path: string): ContentBlock => {
  const id = requireString(item, 'call_id', path)
  const name = calledToolName(item, path)
  const args = item['arguments']
  if (typeof args !== 'string') throw invalidRequest(`${path}.arguments must be a JSON string`, `${path}.arguments`)
  // Read as an answer's are (wire-formats §4.3): arguments that do not parse are `{}`. A call an
  // upstream cut at the output limit reaches the client with its partial arguments, and the client
  // sends them back in every later turn: refused, the conversation could never go on.
  return { type: 'tool_use', id, name, input: parseToolArguments(args) }
}

/** A custom tool's call, as other dialects' models made it: a function call of its text (client-tools.ts). */
const decodeCustomToolCall = (item: JsonObject, path: string): ContentBlock => {
  const id = requireString(item, 'call_id', path)
  const name = calledToolName(item, path)
  const input = item['input']
  if (typeof input !== 'string') throw invalidRequest(`${path}.input must be a string`, `${path}.input`)
  return { type: 'tool_use', id, name, input: { [freeformArgument]: input } }
}

/** A function's or a custom tool's output: the same tool result to other dialects. */
const decodeToolCallOutput = (item: JsonObject, path: string): ContentBlock => {
  const toolUseId = requireString(item, 'call_id', path)
  const output = item['output']
  if (typeof output !== 'string' && !Array.isArray(output)) {
    throw invalidRequest(`${path}.output must be a string or an array of content parts`, `${path}.output`)
  }
  return { type: 'tool_result', toolUseId, content: decodeMessageContent(output, `${path}.output`) }
}

const decodeReasoningItem = (item: JsonObject, path: string): ContentBlock[] => {
  const texts: string[] = []
  for (const [field, partType] of [
    ['summary', 'summary_text'],
    ['content', 'reasoning_text'],
  ] as const) {
    const parts = item[field]
    if (parts !== undefined && parts !== null && !Array.isArray(parts)) {
      throw invalidRequest(`${path}.${field} must be an array`, `${path}.${field}`)
    }
    for (const part of asArray(parts)) {
      if (isObject(part) && part['type'] === partType && typeof part['text'] === 'string') texts.push(part['text'])
    }
    // Summaries stand for the raw reasoning; keep only one of the two.
    if (texts.length > 0) break
  }
  const encrypted = asString(item['encrypted_content'])
  // A blob this gateway made from an Anthropic answer: the block comes back as Anthropic sent it,
  // signed, so an Anthropic upstream keeps it (and thinking stays on through a tool loop).
  const anthropic = encrypted ? readAnthropicReasoning(encrypted) : undefined
  if (anthropic?.type === 'redacted_thinking') return [{ type: 'redacted_thinking', data: anthropic.data }]
  if (anthropic) return [{ type: 'thinking', thinking: texts.join('\n\n'), signature: anthropic.signature }]
  // A compatible server's blob svc wrapped for the client: back to that server alone.
  const server = encrypted ? readServerReasoning(encrypted) : undefined
  if (server) return [{ type: 'thinking', thinking: texts.join('\n\n'), signature: server }]
  // Any other blob (OpenAI's own, or garbage) is tagged: only a Responses upstream replays it.
  if (texts.length === 0 && !encrypted) return []
  return [
    {
      type: 'thinking',
      thinking: texts.join('\n\n'),
      ...(encrypted ? { signature: tagResponsesSignature(encrypted) } : {}),
    },
  ]
}

/** A tool the request offers, and where the request has it (what a 400 about it names). */
interface OfferedTool {
  tool: JsonObject
  path: string
}

/**
 * The tools a Responses request offers. Codex's "Responses lite" (a model whose Codex metadata says
 * `use_responses_lite`, GPT-6's) sends no top-level `tools`: it offers them in an input item,
 * `{type: "additional_tools", role: "developer", tools: [...]}`, first in `input`, whose `tools`
 * are what `tools` would hold (namespaces, functions, custom tools, hosted ones). Offered here: the
 * top-level `tools`, then each such item's, in input order. Where there is such an item, a tool
 * offered again under the same name (offerKey) is its latest offer, in the place of its first:
 * the client's current definition where a replayed history holds an older one, and never one name
 * twice, which Anthropic and Chat upstreams refuse.
 */
const offeredToolsAt = (body: { tools?: unknown; input?: unknown }): OfferedTool[] => {
  const offered: OfferedTool[] = []
  // Top-level tools alone are taken as they come, as they always were.
  const joining = Array.isArray(body.input) && body.input.some(isAdditionalTools)
  const at = new Map<string, number>()
  const offer = (tools: unknown, path: string) => {
    if (tools === undefined || tools === null) return
    if (!Array.isArray(tools)) throw invalidRequest(`${path} must be an array`, path)
    tools.forEach((tool, i) => {
      const toolPath = `${path}[${i}]`
      if (!isObject(tool)) throw invalidRequest(`${toolPath} must be an object`, toolPath)
      const key = joining ? offerKey(tool) : undefined
      const earlier = key === undefined ? undefined : at.get(key)
      if (earlier !== undefined) {
        offered[earlier] = { tool, path: toolPath }
        return
      }
      if (key !== undefined) at.set(key, offered.length)
      offered.push({ tool, path: toolPath })
    })
  }
  offer(body.tools, 'tools')
  if (joining && Array.isArray(body.input)) {
    body.input.forEach((item, i) => {
      if (!isAdditionalTools(item)) return
      // An item without its tools is one svc cannot read: refused, not taken as no tools.
      const tools = item['tools']
      if (!Array.isArray(tools)) {
        throw invalidRequest(`input[${i}].tools must be an array of tools`, `input[${i}].tools`)
      }
      offer(tools, `input[${i}].tools`)
    })
  }
  return offered
}

const isAdditionalTools = (item: unknown): item is JsonObject => isObject(item) && item['type'] === 'additional_tools'

/**
 * What makes two offers one tool: a function's or custom tool's name, a hosted tool's type. A
 * namespace offered twice stays twice: its members are tools of their own, which specialToolNames
 * takes by qualified name, a later one in the place of the first, so a namespace offered again
 * with more members adds them.
 */
const offerKey = (tool: JsonObject): string | undefined => {
  const { type, name } = tool
  if (typeof type !== 'string' || type === 'namespace') return undefined
  if (type === 'function' || type === 'custom') return typeof name === 'string' ? `tool:${name}` : undefined
  return `hosted:${type}`
}

/**
 * The tools a Responses request offers (offeredToolsAt), as the answer's encoders read them to
 * give a call back under its namespace or as a custom tool's: the top-level `tools` as they are
 * when the request has no `additional_tools` item. Only for a body the decoder has read (it
 * refuses one whose tools it cannot).
 */
export const offeredTools = (body: { tools?: unknown; input?: unknown } | undefined): unknown => {
  if (!body || !Array.isArray(body.input) || !body.input.some(isAdditionalTools)) return body?.tools
  return offeredToolsAt(body).map(({ tool }) => tool)
}

const decodeTools = (offered: OfferedTool[]): ToolDefinition[] => {
  const definitions: ToolDefinition[] = []
  for (const { tool, path } of offered) {
    // Hosted tools (file_search, …) have no equivalent on other upstreams; web search is decodeWebSearchTool's.
    // Custom and namespaced tools are specialToolNames'.
    if (tool['type'] === 'custom') requireString(tool, 'name', path)
    if (tool['type'] !== 'function') continue
    definitions.push(decodeFunctionTool(tool, path, requireString(tool, 'name', path)))
  }
  const special = specialToolNames(offered.map(({ tool }) => tool))
  for (const [name, { tool, path, custom }] of special ?? []) {
    // specialToolNames names a tool by its place in the list it was given: `tools[i]…`.
    const where = offeredPath(offered, path)
    definitions.push(custom ? decodeCustomTool(tool, where, name) : decodeFunctionTool(tool, where, name))
  }
  return definitions
}

/** `tools[i]…` of the offered list, as the request has it (`input[0].tools[3]…` for an additional_tools item's). */
const offeredPath = (offered: OfferedTool[], path: string): string => {
  const match = /^tools\[(\d+)\]/.exec(path)
  const own = match ? offered[Number(match[1])] : undefined
  return own && match ? own.path + path.slice(match[0].length) : path
}

/**
 * Tools only OpenAI's Responses API has, which a pass-through keeps (list-price.ts): those the
 * client runs (a local shell, apply_patch, computer use) and those OpenAI runs at token prices
 * (remote MCP, tool search over deferred tools). Another dialect's model would be offered none of
 * them, and answer as if it had run the command or called the server; their calls and results in
 * the history, which only OpenAI reads, too. Hosted tools OpenAI bills above list price (code
 * interpreter, file search, a shell in its container…) are left out on every route, so they steer
 * nothing.
 */
const openaiOnlyToolTypes = new Set([
  'local_shell',
  'shell',
  'apply_patch',
  'computer_use_preview',
  'computer',
  'mcp',
  'tool_search',
])
const openaiOnlyItemType = /^(?:local_shell|shell|apply_patch|computer|mcp|tool_search)_/

/** The types of the tools only OpenAI has that the request offers, then those of such items in its input. */
const openaiOnlyTools = (offered: OfferedTool[], input: unknown): string[] => {
  const types: string[] = []
  for (const { tool } of offered) {
    const { type } = tool
    if (typeof type === 'string' && openaiOnlyToolTypes.has(type) && isListPriceTool(tool)) types.push(type)
  }
  for (const item of asArray(input)) {
    if (isObject(item) && typeof item.type === 'string' && openaiOnlyItemType.test(item.type)) types.push(item.type)
  }
  return types
}

/** The hosted web search tool's names: the current one and the older ones OpenAI still takes. */
const webSearchToolTypes = new Set([
  'web_search',
  'web_search_2025_08_26',
  'web_search_preview',
  'web_search_preview_2025_03_11',
])

/**
 * The hosted web search, for the upstream's own (Anthropic runs it as a server tool). Its
 * `search_context_size` (how much page text OpenAI feeds the model) has no Anthropic equivalent
 * and is left out. A search limited to OpenAI's cache of pages (`external_web_access: false`,
 * which Codex offers on every request by default, to keep live pages and the prompt injections
 * they may carry away from an agent) is not one: Anthropic's searches the live web, which the
 * client did not ask for, so such a request reaches other upstreams without a search, as before.
 */
const decodeWebSearchTool = (tools: unknown): WebSearchTool | undefined => {
  const tool = asArray(tools).find(isWebSearchTool)
  if (!tool || tool['external_web_access'] === false) return undefined
  const webSearch: WebSearchTool = {}
  const filters = tool['filters']
  const allowedDomains = isObject(filters) ? asArray(filters['allowed_domains']).filter(isNonEmptyString) : []
  if (allowedDomains.length > 0) webSearch.allowedDomains = allowedDomains
  const userLocation = decodeUserLocation(tool['user_location'])
  if (userLocation) webSearch.userLocation = userLocation
  return webSearch
}

const isWebSearchTool = (tool: unknown): tool is JsonObject =>
  isObject(tool) && typeof tool['type'] === 'string' && webSearchToolTypes.has(tool['type'])

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== ''

const decodeUserLocation = (location: unknown): WebSearchTool['userLocation'] => {
  if (!isObject(location)) return undefined
  const decoded: NonNullable<WebSearchTool['userLocation']> = {}
  for (const field of ['city', 'region', 'country', 'timezone'] as const) {
    const value = location[field]
    if (isNonEmptyString(value)) decoded[field] = value
  }
  return Object.keys(decoded).length > 0 ? decoded : undefined
}

/** A function tool as other dialects are offered it, under `name`. */
const decodeFunctionTool = (tool: JsonObject, path: string, name: string): ToolDefinition => {
  const parameters = tool['parameters']
  if (parameters !== undefined && parameters !== null && !isObject(parameters)) {
    throw invalidRequest(`${path}.parameters must be a JSON Schema object`, `${path}.parameters`)
  }
  const definition: ToolDefinition = { name, inputSchema: parameters ?? { type: 'object', properties: {} } }
  const description = asString(tool['description'])
  if (description) definition.description = description
  if (tool['strict'] === true && takesStrictMode(definition.inputSchema)) definition.strict = true
  return definition
}

const decodeCustomTool = (tool: JsonObject, path: string, name: string): ToolDefinition => {
  if (tool['format'] !== undefined && !isObject(tool['format'])) {
    throw invalidRequest(`${path}.format must be an object`, `${path}.format`)
  }
  return { name, ...customToolAsFunction(tool) }
}

const decodeToolChoice = (choice: unknown, parallel: unknown): ToolChoice | undefined => {
  const disableParallel = parallel === false ? { disableParallel: true } : {}
  if (choice === undefined || choice === null)
    return parallel === false ? { type: 'auto', disableParallel: true } : undefined
  if (choice === 'none') return { type: 'none' }
  if (choice === 'auto') return { type: 'auto', ...disableParallel }
  if (choice === 'required') return { type: 'any', ...disableParallel }
  if (isObject(choice)) {
    if (choice['type'] === 'function' || choice['type'] === 'custom') {
      const name = choice['name']
      if (typeof name !== 'string' || name === '') {
        throw invalidRequest(`tool_choice.name must name a ${choice['type']} tool`, 'tool_choice.name')
      }
      return { type: 'tool', name, ...disableParallel }
    }
    // allowed_tools keeps its mode here; the tools it leaves out are taken out of the offer
    // (narrowToAllowed).
    if (choice['type'] === 'allowed_tools') {
      return choice['mode'] === 'required' ? { type: 'any', ...disableParallel } : { type: 'auto', ...disableParallel }
    }
    // A hosted-tool choice cannot be honoured elsewhere; let the model decide.
    if (typeof choice['type'] === 'string') return { type: 'auto', ...disableParallel }
  }
  throw invalidRequest('tool_choice must be "auto", "none", "required" or {type:"function", name}', 'tool_choice')
}

/** The tools an `allowed_tools` choice leaves the model: function and custom tools by name, and web search. */
function allowedTools(choice: unknown): { names: Set<string>; webSearch: boolean } | undefined {
  if (!isObject(choice) || choice['type'] !== 'allowed_tools') return undefined
  const listed = Array.isArray(choice['tools']) ? choice['tools'].filter(isObject) : []
  return {
    names: new Set(listed.flatMap((tool) => (typeof tool['name'] === 'string' ? [tool['name']] : []))),
    webSearch: listed.some((tool) => typeof tool['type'] === 'string' && tool['type'].startsWith('web_search')),
  }
}

/**
 * The offer narrowed to what an `allowed_tools` choice allows ("constrains the tools available to
 * the model", OpenAI's reference): other dialects have no such choice, and were offered every tool,
 * so a model could call one the client had excluded. One tool left and required is that tool.
 */
function narrowToAllowed(request: ExchangeRequest, allowed: { names: Set<string>; webSearch: boolean }): void {
  request.tools = request.tools.filter((tool) => allowed.names.has(tool.name))
  if (!allowed.webSearch) delete request.webSearch
  const only = request.tools.length === 1 && !request.webSearch ? request.tools[0] : undefined
  if (only && request.toolChoice?.type === 'any') {
    const { disableParallel } = request.toolChoice
    request.toolChoice = { type: 'tool', name: only.name, ...(disableParallel ? { disableParallel } : {}) }
  }
}

const decodeMaxTokens = (value: unknown, fallback: number): number => {
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    throw invalidRequest('max_output_tokens must be an integer of at least 1', 'max_output_tokens')
  }
  return value
}

// reasoning.effort becomes adaptive thinking with that effort. The Anthropic encoder sends it as
// `adaptive` + output_config.effort to a model whose catalog entry says adaptive_thinking, and to
// any other as `{type: "enabled", budget_tokens}` (§4.8: minimal/low 1024, medium 2048, high and up 4096).
const decodeReasoning = (reasoning: unknown): Thinking | undefined => {
  if (reasoning === undefined || reasoning === null) return undefined
  if (!isObject(reasoning)) throw invalidRequest('reasoning must be an object', 'reasoning')
  const effort = reasoning['effort']
  if (effort === undefined || effort === null) return undefined
  if (effort === 'none') return { type: 'disabled' }
  const known = efforts.find((e) => e === effort)
  if (!known) {
    throw invalidRequest(`reasoning.effort must be one of none, ${efforts.join(', ')}`, 'reasoning.effort')
  }
  // A summary asked for (auto, concise, detailed) is reasoning the client shows its user.
  const summary = typeof reasoning['summary'] === 'string'
  return summary ? { type: 'adaptive', effort: known, summary } : { type: 'adaptive', effort: known }
}

// text.format (§2.2). Its `text` type is free text, the default: nothing to ask of the upstream.
const decodeTextFormat = (text: unknown): ResponseFormat | undefined => {
  if (text === undefined || text === null) return undefined
  if (!isObject(text)) throw invalidRequest('text must be an object', 'text')
  const format = text['format']
  if (format === undefined || format === null) return undefined
  if (!isObject(format)) throw invalidRequest('text.format must be an object', 'text.format')
  switch (format['type']) {
    case 'text':
      return undefined
    case 'json_object':
      return { type: 'json_object' }
    case 'json_schema':
      return decodeJsonSchemaFormat(format)
    default:
      throw invalidRequest('text.format.type must be one of text, json_schema, json_object', 'text.format.type')
  }
}

const decodeJsonSchemaFormat = (format: JsonObject): JsonSchemaFormat => {
  const schema = format['schema']
  if (!isObject(schema)) {
    throw invalidRequest('text.format.schema must be a JSON Schema object', 'text.format.schema')
  }
  const decoded: JsonSchemaFormat = { type: 'json_schema', schema }
  const name = asString(format['name'])
  if (name) decoded.name = name
  const description = asString(format['description'])
  if (description) decoded.description = description
  if (typeof format['strict'] === 'boolean') decoded.strict = format['strict']
  return decoded
}
