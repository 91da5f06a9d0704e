// Neutral ExchangeRequest → body for an OpenAI Responses upstream (wire-formats §4.4, §4.8).
import {
  type ConversationMessage,
  documentText,
  type DocumentBlock,
  type ExchangeRequest,
  type ImageBlock,
  type ResponseFormat,
  type ToolChoice,
  type UserContentBlock,
  type WebSearchTool,
} from '../../exchange/types'
import { effortWithoutThinking } from '../../exchange/thinking-budget'
import { openAIToolName } from '../openai-tool-names'
import { withoutThoughtSignature } from '../thought-signature'
import { fitResponsesToModel, type ResponsesModelRules } from './model-fit'
import { readResponsesSignature, readServerSignature } from './reasoning-signature'
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

type Item = Record<string, unknown>

const minOutputTokens = 16

/**
 * `rules`: what the model takes; the body is fitted to them last (model-fit.ts). `compatible`: the
 * server is a Responses-compatible one, not OpenAI (openai_itself off): it runs no hosted search,
 * so the request's is left out, as for a Chat model; and it keeps no encrypted reasoning, so the
 * conversation's thinking goes back as the text it is (encodeInput).
 */
export const encodeResponsesRequest = (
  request: ExchangeRequest,
  model: string,
  rules: ResponsesModelRules & { compatible?: boolean; provider?: string; reasoningInEncryptedContent?: boolean } = {},
): Record<string, unknown> => {
  const compatible = rules.compatible === true
  const req = compatible && request.webSearch !== undefined ? withoutWebSearch(request) : request
  const body: Record<string, unknown> = { model }
  const instructions = req.system.map((block) => block.text).join('\n\n')
  if (instructions !== '') body['instructions'] = instructions
  const { items, replaysReasoning } = encodeInput(req.messages, {
    compatible,
    provider: rules.provider,
    reasoningInEncryptedContent: compatible && rules.reasoningInEncryptedContent === true,
  })
  body['input'] = items
  // strict:false unless the client asked for it: third-party schemas rarely meet strict mode's
  // every-property-required rule (§2.4), and OpenAI's default is strict.
  const tools: Item[] = req.tools.map((tool) => ({
    type: 'function',
    name: openAIToolName(tool.name),
    ...(tool.description ? { description: tool.description } : {}),
    parameters: tool.inputSchema,
    strict: tool.strict === true,
  }))
  if (req.webSearch) tools.push(encodeWebSearchTool(req.webSearch))
  // A choice without tools is refused (OpenAI and compatible servers alike): where the client's
  // allowed_tools left none of the tools offered, the model chooses nothing, as on Chat and Anthropic.
  if (tools.length > 0) {
    body['tools'] = tools
    if (req.toolChoice) Object.assign(body, encodeToolChoice(req.toolChoice, forcesWebSearch(req)))
  }
  // Responses refuses fewer than 16 ("integer below minimum value"), and Claude Code probes with
  // max_tokens 1: a few tokens more than asked, rather than a 400.
  body['max_output_tokens'] = Math.max(minOutputTokens, req.maxTokens)
  if (req.temperature !== undefined) body['temperature'] = req.temperature
  if (req.topP !== undefined) body['top_p'] = req.topP
  // top_k and stop sequences have no Responses equivalent (§4.4) and are dropped.
  // Adaptive thinking without an effort still asks for reasoning: medium, OpenAI's own default.
  const effort =
    req.thinking?.type === 'adaptive' ? (req.thinking.effort ?? 'medium') : reasoningEffortFor(req.thinking)
  const include: string[] = []
  if (effort) body['reasoning'] = { effort, summary: 'auto' }
  // Thinking turned off: the least reasoning the model takes, where svc knows it (thinking-budget.ts).
  const withoutThinking = req.thinking?.type === 'disabled' && effortWithoutThinking(rules.reasoningEfforts)
  if (withoutThinking) body['reasoning'] = { effort: withoutThinking }
  // Ask for the reasoning blob so the next turn can replay it (carried in the thinking signature).
  if (effort || replaysReasoning) include.push('reasoning.encrypted_content')
  // Without it a web_search_call names its query only, and the client could be told of no results.
  if (req.webSearch) include.push('web_search_call.action.sources')
  if (include.length > 0) body['include'] = include
  if (req.responseFormat) body['text'] = { format: encodeTextFormat(req.responseFormat) }
  if (req.user) body['safety_identifier'] = openAIUserId(req.user)
  if (req.promptCacheKey) body['prompt_cache_key'] = req.promptCacheKey
  body['stream'] = req.stream
  body['store'] = false
  fitResponsesToModel(body, rules)
  return body
}

/** The request without its hosted search, and without a tool choice that forces it. */
const withoutWebSearch = (req: ExchangeRequest): ExchangeRequest => ({
  ...req,
  webSearch: undefined,
  toolChoice: forcesWebSearch(req) ? undefined : req.toolChoice,
})

const encodeTextFormat = (format: ResponseFormat): Item =>
  format.type === 'json_object' ? { type: 'json_object' } : { type: 'json_schema', ...openAIJsonSchema(format) }

// input_image requires a detail; `auto`, OpenAI's default, when the client chose none.
const encodeImage = (block: ImageBlock): Item => ({
  type: 'input_image',
  image_url: imageUrl(block.source),
  detail: block.detail ?? 'auto',
})

// input_file takes a file or a link to one; a plain-text document goes as the text it is.
const encodeDocument = (block: DocumentBlock): Item => {
  switch (block.source.kind) {
    case 'base64':
      return {
        type: 'input_file',
        filename: fileNameOf(block),
        file_data: dataUrl(block.source.mediaType, block.source.data),
      }
    case 'url':
      return { type: 'input_file', ...(block.title ? { filename: block.title } : {}), file_url: block.source.url }
    case 'text':
      return { type: 'input_text', text: documentText(block.title, block.source.text) }
    case 'file':
      throw unreadableAnthropicFile(block.source)
  }
}

const encodeUserPart = (block: UserContentBlock): Item => {
  switch (block.type) {
    case 'text':
      return { type: 'input_text', text: block.text }
    case 'image':
      return encodeImage(block)
    case 'document':
      return encodeDocument(block)
  }
}

/**
 * A tool's output. Responses has no error flag: a failed call's output says so in words, as the
 * Chat encoder says it (wire-formats §4.2), or the model takes a tool's error text for its result.
 */
const encodeToolOutput = (content: UserContentBlock[], isError: boolean | undefined): string | Item[] => {
  if (content.every((block) => block.type === 'text')) {
    const text = content.map((block) => (block.type === 'text' ? block.text : '')).join('\n')
    return isError ? `Error: ${text}` : text
  }
  const parts = content.map(encodeUserPart)
  return isError ? [{ type: 'input_text', text: 'Error:' }, ...parts] : parts
}

/**
 * `compatible`: for a Responses-compatible server, thinking goes back as reasoning text, whoever
 * thought it. gpt-oss (vLLM, Ollama, LM Studio) wants a tool loop's earlier reasoning back:
 * llama.cpp's server reads a reasoning item's `content` as the turn's reasoning_content (and refuses
 * one without it: "item['content'] is not an array"), vLLM its `content` too (and refuses any
 * `encrypted_content`), Ollama only its `encrypted_content`, where it writes its thinking as plain
 * text (`reasoningInEncryptedContent`: a provider's reasoning_in_encrypted_content, on by default
 * for Ollama, config/provider-hosts.ts); none reads OpenAI's blobs. And
 * an assistant message item carries an id and a status: vLLM before 0.21 refuses one without
 * ("Field required: status"); the others ignore both.
 */
const encodeInput = (
  messages: ConversationMessage[],
  opts: { compatible: boolean; provider: string | undefined; reasoningInEncryptedContent: boolean },
): { items: Item[]; replaysReasoning: boolean } => {
  const { compatible, reasoningInEncryptedContent } = opts
  const items: Item[] = []
  let replaysReasoning = false
  for (const message of messages) {
    // Text and images gather into one message item; tool calls and outputs are items of their own,
    // so a pending message is flushed first to keep the original order. Instructions given
    // mid-conversation stay in place, a system message item of text.
    let parts: Item[] = []
    /**
     * For a compatible server: the images and files the tool results returned, each after the id of
     * its call, to go as a user message right after the results (llama.cpp takes an output as text
     * only); and the turn's one reasoning item (llama.cpp and Ollama keep only a turn's last one).
     */
    let toolMedia: Item[] = []
    let turnReasoning: { text: string; at: number } | undefined
    const flush = () => {
      if (parts.length === 0) return
      const state = compatible && message.role === 'assistant' ? { id: `msg_${items.length}`, status: 'completed' } : {}
      items.push({ type: 'message', role: message.role, ...state, content: parts })
      parts = []
    }
    const flushToolMedia = () => {
      if (toolMedia.length === 0) return
      items.push({ type: 'message', role: 'user', content: toolMedia })
      toolMedia = []
    }
    for (const block of message.content) {
      if (block.type !== 'tool_result') flushToolMedia()
      switch (block.type) {
        case 'text':
          if (message.role === 'assistant') parts.push({ type: 'output_text', text: block.text, annotations: [] })
          else parts.push({ type: 'input_text', text: block.text })
          break
        case 'image':
        case 'document':
          if (message.role === 'user') parts.push(encodeUserPart(block))
          break
        case 'tool_use':
          flush()
          items.push({
            type: 'function_call',
            call_id: withoutThoughtSignature(block.id),
            name: openAIToolName(block.name),
            arguments: JSON.stringify(block.input ?? {}),
          })
          break
        case 'tool_result': {
          flush()
          // llama.cpp's server takes a tool's output as text only ("Output of tool call should be
          // 'Input text'"): a compatible server gets the text, and the images after the outputs.
          const media = compatible ? block.content.filter((part) => part.type !== 'text') : []
          const callId = withoutThoughtSignature(block.toolUseId)
          if (media.length > 0)
            toolMedia.push(
              { type: 'input_text', text: `Returned by tool call ${callId}:` },
              ...media.map(encodeUserPart),
            )
          items.push({
            type: 'function_call_output',
            call_id: callId,
            output:
              media.length === 0
                ? encodeToolOutput(block.content, block.isError)
                : encodeToolOutput(
                    block.content.filter((part) => part.type === 'text'),
                    block.isError,
                  ) || 'The tool returned what follows.',
          })
          break
        }
        case 'thinking': {
          if (compatible) {
            // This server's own blob goes back to it, in an item of its own (an OpenAI model's
            // encrypted reasoning at OpenRouter: one blob an item, its summary often empty). Not
            // Ollama's, which is the text itself: merged with the turn's other thinking below.
            const own = opts.provider === undefined ? undefined : readServerSignature(block.signature, opts.provider)
            if (own && !reasoningInEncryptedContent) {
              flush()
              items.push(reasoningText(items.length, block.thinking, own))
              break
            }
            if (block.thinking === '') break
            // Any other: the turn's one item, its text in encrypted_content too where the server
            // reads it there (Ollama).
            if (turnReasoning) turnReasoning.text = `${turnReasoning.text}\n\n${block.thinking}`
            else {
              flush()
              turnReasoning = { text: block.thinking, at: items.length }
              items.push({})
            }
            const { text, at } = turnReasoning
            items[at] = reasoningText(at, text, reasoningInEncryptedContent ? text : undefined)
            break
          }
          // Only reasoning OpenAI produced can be replayed; Anthropic's or other providers' is dropped (§4.4).
          const encrypted = readResponsesSignature(block.signature)
          if (!encrypted) break
          flush()
          items.push({
            type: 'reasoning',
            summary: block.thinking === '' ? [] : [{ type: 'summary_text', text: block.thinking }],
            encrypted_content: encrypted,
          })
          replaysReasoning = true
          break
        }
        case 'redacted_thinking':
          break
      }
    }
    flush()
    flushToolMedia()
  }
  return { items, replaysReasoning }
}

/** A reasoning item of text, for a compatible server; an id as OpenAI's input items have (vLLM requires one). */
const reasoningText = (at: number, text: string, blob: string | undefined): Item => ({
  type: 'reasoning',
  id: `rs_${at}`,
  summary: [],
  content: [{ type: 'reasoning_text', text }],
  ...(blob === undefined ? {} : { encrypted_content: blob }),
})

/**
 * The hosted search tool. Anthropic's max_uses has no equivalent (OpenAI sets no limit on searches a
 * turn), nor blocked_domains: the router sends a request with them to an Anthropic model while the
 * profile has one, and its provider_ranks says when it had none.
 */
const encodeWebSearchTool = (search: WebSearchTool): Item => {
  const tool: Item = { type: 'web_search' }
  if (search.allowedDomains) tool['filters'] = { allowed_domains: search.allowedDomains }
  if (search.userLocation) tool['user_location'] = { type: 'approximate', ...search.userLocation }
  return tool
}

const encodeToolChoice = (choice: ToolChoice, webSearch: boolean): Record<string, unknown> => {
  const parallel = choice.type !== 'none' && choice.disableParallel ? { parallel_tool_calls: false } : {}
  switch (choice.type) {
    case 'auto':
      return { tool_choice: 'auto', ...parallel }
    case 'any':
      return { tool_choice: 'required', ...parallel }
    case 'tool':
      // A hosted tool is forced through allowed_tools: the choice by type knows only web_search_preview.
      if (webSearch)
        return {
          tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] },
          ...parallel,
        }
      return { tool_choice: { type: 'function', name: openAIToolName(choice.name) }, ...parallel }
    case 'none':
      return { tool_choice: 'none' }
  }
}

// Budget → effort thresholds as claude-code-router draws them (§4.8).
