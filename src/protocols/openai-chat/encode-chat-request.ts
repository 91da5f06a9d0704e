// ExchangeRequest → OpenAI Chat Completions body for OpenAI-compatible upstreams (wire-formats §4.2).

import {
  type ConversationMessage,
  documentText,
  type DocumentBlock,
  type ExchangeRequest,
  type ImageBlock,
  type ImageDetail,
  type Message,
  type ModelEffort,
  type ResponseFormat,
  type TextBlock,
  type ToolChoice,
  type UserContentBlock,
} from '../../exchange/types'
import { budgetAsSent, effortWithin, effortWithoutThinking, maxTokensAbove } from '../../exchange/thinking-budget'
import {
  dataUrl,
  forcesWebSearch,
  fileNameOf,
  imageUrl,
  openAIJsonSchema,
  openAIUserId,
  reasoningEffortFor,
  unreadableAnthropicFile,
} from '../openai-common'
import { openAIToolName } from '../openai-tool-names'
import {
  checksThoughtSignatures,
  extraContentWith,
  reasoningDetailsWith,
  splitThoughtSignature,
  type ThoughtSignatureForm,
  unsignedCallSignature,
  withoutThoughtSignature,
} from '../thought-signature'
import { setClaudeSampling } from '../anthropic/sampling'

export interface ChatRequestOptions {
  /** OpenAI wants max_completion_tokens; most compatible servers still read max_tokens (the default). */
  maxTokensField?: 'max_tokens' | 'max_completion_tokens'
  /**
   * Replay thinking as `reasoning_content` on assistant turns with tool calls. DeepSeek's thinking
   * mode answers 400 without it; strict OpenAI endpoints reject the unknown field, so it is opt-in.
   */
  reasoningContent?: boolean
  /** Turn thinking off with DeepSeek's `thinking: {type: "disabled"}` (its V4 models think by default). */
  thinkingToggle?: boolean
  /**
   * `in_place` (the default) keeps instructions given mid-conversation where they were given;
   * `merged` appends them to the leading system message, for servers whose chat template refuses
   * a system message anywhere else ("System message must be at the beginning").
   */
  systemMessages?: 'in_place' | 'merged'
  /**
   * Ask for prompt caching with Anthropic's top-level `cache_control`, which a router serving Claude
   * (OpenRouter) applies at the request's last cacheable block: Chat has no field for the marks an
   * Anthropic client set, and a Responses client sets none.
   */
  cacheControl?: boolean
  /** false: the model refuses temperature, top_p and top_k (a reasoning model), so they are left out. */
  samplingParameters?: boolean
  /**
   * The server takes `top_k` (vLLM, llama.cpp, OpenRouter). Chat has no such field and OpenAI's
   * endpoints refuse unknown ones, so an Anthropic client's top_k goes only where the provider says.
   */
  topK?: boolean
  /**
   * A Claude model behind a Chat router (OpenRouter's `anthropic/…`). Anthropic's sampling rules
   * hold there (setClaudeSampling: Claude 4.5 refused an OpenAI client's temperature and top_p together,
   * a 400 the client could not avoid).
   * `routerReasoning`: the router takes OpenRouter's `reasoning` ({max_tokens} or {effort}), where
   * the model's reasoning_effort list is Anthropic's own effort parameter's (none for 4.5): a
   * client's thinking was dropped without a word.
   */
  claude?: { routerReasoning: boolean }
  /** The reasoning efforts the model takes (absent: any; empty: none). */
  reasoningEfforts?: readonly ModelEffort[]
  /**
   * Send tool calls' Gemini thought signatures back (thought-signature.ts) in the form the provider
   * reads: Google's `extra_content`, OpenRouter's `reasoning_details`. Strict OpenAI endpoints reject
   * either field, so it is opt-in.
   */
  thoughtSignatures?: ThoughtSignatureForm
}

type ChatPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: ChatImageDetail } }
  | { type: 'file'; file: { filename: string; file_data: string } }
type ChatMessage = Record<string, unknown>
type ChatImageDetail = Exclude<ImageDetail, 'original'>

// Chat accepts at most four stop strings.
const maxStopSequences = 4

export function encodeChatRequest(
  req: ExchangeRequest,
  model: string,
  opts: ChatRequestOptions = {},
): Record<string, unknown> {
  const messages = encodeSystem(req.system)
  const leadingCount = messages.length
  let instructionsMidway = false
  let merged: TextBlock[] | undefined
  for (const message of req.messages) {
    if (message.role === 'system') {
      if (opts.systemMessages === 'merged') {
        merged ??= [...req.system]
        merged.push(...message.content)
        continue
      }
      instructionsMidway = true
    }
    messages.push(...encodeMessage(message, opts, model))
  }
  if (merged) messages.splice(0, leadingCount, ...encodeSystem(merged))

  // The reordering copies the list: only for the rare conversation that needs it (this runs per request).
  const body: Record<string, unknown> = {
    model,
    messages: instructionsMidway || answersInterrupted(messages) ? toolCallsAnsweredFirst(messages) : messages,
  }
  body[opts.maxTokensField ?? 'max_tokens'] = req.maxTokens
  if (opts.cacheControl) body.cache_control = { type: 'ephemeral' }
  const claudeThinks = opts.claude !== undefined && req.thinking !== undefined && req.thinking.type !== 'disabled'
  if (opts.samplingParameters !== false) {
    if (!opts.claude) {
      if (req.temperature !== undefined) body.temperature = req.temperature
      if (req.topP !== undefined) body.top_p = req.topP
    } else setClaudeSampling(body, req, claudeThinks)
    // Claude refuses top_k with thinking on, as on Anthropic's own API.
    if (opts.topK && req.topK !== undefined && !claudeThinks) body.top_k = req.topK
  }
  if (req.stopSequences && req.stopSequences.length > 0) body.stop = req.stopSequences.slice(0, maxStopSequences)
  if (req.tools.length > 0) {
    body.tools = req.tools.map((tool) => ({
      type: 'function',
      function: {
        name: openAIToolName(tool.name),
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.inputSchema,
        // Only when the client asked: a server that does not know the field sees it only then.
        ...(tool.strict ? { strict: true } : {}),
      },
    }))
    // No Chat upstream runs a search (the router sends one here only when no model of the profile
    // can), and a choice naming a function not offered is a 400: the model chooses instead.
    if (req.toolChoice && !forcesWebSearch(req)) Object.assign(body, encodeToolChoice(req.toolChoice))
  }
  const effort = reasoningEffortFor(req.thinking)
  const off = req.thinking?.type === 'disabled'
  if (opts.claude?.routerReasoning && req.thinking && req.thinking.type !== 'disabled') {
    const reasoning = claudeReasoning(req.thinking)
    body.reasoning = reasoning
    // Anthropic wants max_tokens above the budget (a 400 otherwise), as its own encoder makes it.
    if ('max_tokens' in reasoning)
      body[opts.maxTokensField ?? 'max_tokens'] = maxTokensAbove(reasoning.max_tokens, req.maxTokens)
  } else if (off && opts.thinkingToggle) body.thinking = { type: 'disabled' }
  else {
    const within = off
      ? effortWithoutThinking(opts.reasoningEfforts)
      : effort && effortWithin(effort, opts.reasoningEfforts)
    if (within) body.reasoning_effort = within
  }
  if (req.responseFormat) body.response_format = encodeResponseFormat(req.responseFormat)
  if (req.user) body.user = openAIUserId(req.user)
  // Said either way: some compatible servers stream unless told not to, and a JSON request then
  // got SSE it could not read.
  body.stream = req.stream
  // Without include_usage a Chat stream carries no token counts at all.
  if (req.stream) body.stream_options = { include_usage: true }
  return body
}

function encodeMessage(message: ConversationMessage, opts: ChatRequestOptions, model: string): ChatMessage[] {
  switch (message.role) {
    case 'system':
      return encodeSystem(message.content)
    case 'user':
      return encodeUserTurn(message)
    case 'assistant':
      return encodeAssistantTurn(message, opts, model)
  }
}

// A plain string: several compatible servers reject array content on system messages. Chat keeps
// instructions given mid-conversation in place, as `system` (which every server knows; `developer`
// only OpenAI's).
function encodeSystem(blocks: TextBlock[]): ChatMessage[] {
  const texts = blocks.map((b) => b.text).filter((t) => t !== '')
  return texts.length === 0 ? [] : [{ role: 'system', content: texts.join('\n\n') }]
}

/**
 * Whether a `tool` message follows something other than a call or another answer: results a
 * client sent over two user turns, the first with an image (which rides in a user message).
 */
const answersInterrupted = (messages: ChatMessage[]): boolean =>
  messages.some(
    (m, i) => m.role === 'tool' && i > 0 && messages[i - 1]!.role !== 'tool' && messages[i - 1]!.role !== 'assistant',
  )

/**
 * Chat wants an assistant's tool calls answered by the `tool` messages right after it; what a
 * client said between a call and its outputs (instructions, a result's image) moves to just after
 * the last answer.
 */
function toolCallsAnsweredFirst(messages: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = []
  let held: ChatMessage[] = []
  let answering = false
  for (const message of messages) {
    if (message.role === 'tool') out.push(message)
    else if ((message.role === 'system' || message.role === 'user') && answering) held.push(message)
    else {
      out.push(...held, message)
      held = []
      answering = message.role === 'assistant' && message.tool_calls !== undefined
    }
  }
  out.push(...held)
  return out
}

// Tool results become `tool` messages that must directly follow the assistant's tool_calls, so
// they come before whatever else the user said in that turn. Tool messages are text-only: images
// and files inside results ride along in the user message that follows.
function encodeUserTurn(message: Message): ChatMessage[] {
  const out: ChatMessage[] = []
  const parts: ChatPart[] = []
  for (const block of message.content) {
    if (block.type === 'tool_result') {
      const resultParts = block.content.map(encodeUserPart)
      const text = resultParts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('\n')
      const toolCallId = withoutThoughtSignature(block.toolUseId)
      out.push({ role: 'tool', tool_call_id: toolCallId, content: block.isError ? `Error: ${text}` : text })
      parts.push(...resultParts.filter((p) => p.type !== 'text'))
    } else if (block.type === 'text') {
      if (block.text !== '') parts.push({ type: 'text', text: block.text })
    } else if (block.type === 'image' || block.type === 'document') {
      parts.push(encodeUserPart(block))
    }
  }
  if (parts.length === 0) return out
  // Text-only turns go as a plain string, which every compatible server accepts.
  const textOnly = parts.every((p) => p.type === 'text')
  const content = textOnly ? parts.map((p) => (p.type === 'text' ? p.text : '')).join('\n\n') : parts
  out.push({ role: 'user', content })
  return out
}

function encodeAssistantTurn(message: Message, opts: ChatRequestOptions, model: string): ChatMessage[] {
  const texts: string[] = []
  const thinking: string[] = []
  const toolCalls: Record<string, unknown>[] = []
  const signed: { id: string; signature: string }[] = []
  for (const block of message.content) {
    if (block.type === 'text' && block.text !== '') texts.push(block.text)
    else if (block.type === 'thinking' && block.thinking !== '') thinking.push(block.thinking)
    else if (block.type === 'tool_use') {
      const { id, signature } = splitThoughtSignature(block.id)
      toolCalls.push({
        id,
        type: 'function',
        function: { name: openAIToolName(block.name), arguments: JSON.stringify(block.input ?? {}) },
      })
      if (signature !== undefined) signed.push({ id, signature })
    }
  }
  if (texts.length === 0 && toolCalls.length === 0) return []
  const out: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('\n\n') : null }
  if (toolCalls.length > 0) {
    out.tool_calls = toolCalls
    // Empty when the turn came from a model that did not think (history from another upstream):
    // DeepSeek's thinking mode refuses a tool-call turn without the field, and takes it empty.
    if (opts.reasoningContent) out.reasoning_content = thinking.join('\n\n')
    if (opts.thoughtSignatures && opts.thoughtSignatures !== 'off' && checksThoughtSignatures(model))
      withThoughtSignatures(out, toolCalls, signed, opts.thoughtSignatures)
  }
  return [out]
}

/**
 * Gemini's signatures on a tool-call turn, in the provider's form. Gemini checks a turn's first call
 * for its signature; a turn another model wrote has none, and gets the value that skips the check.
 */
function withThoughtSignatures(
  out: ChatMessage,
  toolCalls: Record<string, unknown>[],
  signed: { id: string; signature: string }[],
  form: 'extra_content' | 'reasoning_details',
) {
  if (signed.length === 0) signed.push({ id: toolCalls[0]!.id as string, signature: unsignedCallSignature })
  if (form === 'extra_content') {
    for (const call of toolCalls) {
      const signature = signed.find(({ id }) => id === call.id)?.signature
      if (signature !== undefined) call.extra_content = extraContentWith(signature)
    }
  } else out.reasoning_details = reasoningDetailsWith(signed)
}

const encodeUserPart = (block: UserContentBlock): ChatPart => {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text }
    case 'image':
      return encodeImagePart(block)
    case 'document':
      return encodeDocumentPart(block)
  }
}

const encodeImagePart = (block: ImageBlock): ChatPart => ({
  type: 'image_url',
  image_url: {
    url: imageUrl(block.source),
    ...(block.detail ? { detail: chatImageDetail(block.detail) } : {}),
  },
})

// Chat has no `original` (full resolution, a Responses-only setting): `high` is the closest it has.
const chatImageDetail = (detail: ImageDetail): ChatImageDetail => (detail === 'original' ? 'high' : detail)

// Chat has no text document, and its file part takes only inline data: a plain-text document is
// its text, and a linked one its link, which the model can at least name (or fetch, given a tool).
function encodeDocumentPart(block: DocumentBlock): ChatPart {
  switch (block.source.kind) {
    case 'base64':
      return {
        type: 'file',
        file: { filename: fileNameOf(block), file_data: dataUrl(block.source.mediaType, block.source.data) },
      }
    case 'url':
      return { type: 'text', text: documentText(block.title, block.source.url) }
    case 'text':
      return { type: 'text', text: documentText(block.title, block.source.text) }
    case 'file':
      throw unreadableAnthropicFile(block.source)
  }
}

const encodeResponseFormat = (format: ResponseFormat): Record<string, unknown> =>
  format.type === 'json_object'
    ? { type: 'json_object' }
    : { type: 'json_schema', json_schema: openAIJsonSchema(format) }

function encodeToolChoice(choice: ToolChoice): Record<string, unknown> {
  const wire: Record<string, unknown> = {}
  if (choice.type === 'none') wire.tool_choice = 'none'
  else if (choice.type === 'auto') wire.tool_choice = 'auto'
  else if (choice.type === 'any') wire.tool_choice = 'required'
  else wire.tool_choice = { type: 'function', function: { name: openAIToolName(choice.name) } }
  if (choice.type !== 'none' && choice.disableParallel) wire.parallel_tool_calls = false
  return wire
}

/**
 * Thinking asked of a Claude model, in OpenRouter's `reasoning`: a budget as `max_tokens` (at least
 * Anthropic's least), an effort as itself (OpenRouter's list ends at `xhigh`), adaptive thinking
 * with no effort as `enabled`.
 */
function claudeReasoning(
  thinking: Exclude<ExchangeRequest['thinking'], undefined | { type: 'disabled' }>,
): { max_tokens: number } | { effort: string } | { enabled: true } {
  if (thinking.type === 'enabled') return { max_tokens: budgetAsSent(thinking.budgetTokens) }
  if (thinking.effort === undefined) return { enabled: true }
  return { effort: thinking.effort === 'max' ? 'xhigh' : thinking.effort }
}
