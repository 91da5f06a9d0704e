// What each real API answers 400 to, as checks on a request body svc sent upstream. Each check
// returns the broken rules as sentences (empty: the provider would take the body); every rule names
// the page that states it. Only rules a provider is known to enforce are here: where a page was
// unsure, the rule was left out rather than guessed.
//
// Sources, cited by key below:
//   [a-tools]     https://platform.claude.com/docs/en/agents-and-tools/tool-use/handle-tool-calls
//                 (tool_result blocks immediately after their tool_use, first in the user message);
//                 400 text: "messages.1: `tool_use` ids were found without `tool_result` blocks
//                 immediately after" and "Did not find 1 tool_result block(s) at the beginning of
//                 this message" (apify/tester-mcp-client#12)
//   [a-messages]  https://platform.claude.com/docs/en/api/messages/create (max_tokens required;
//                 roles user and assistant, the system prompt top-level; "all messages must have
//                 non-empty content except for the optional final assistant message", tidyverse/ellmer#710)
//   [a-text]      400 "messages: text content blocks must be non-empty" and "… must contain
//                 non-whitespace text" (anthropics/claude-code#59812, #23369)
//   [a-ids]       400 "messages.1.content.1.tool_use.id: String should match pattern
//                 '^[a-zA-Z0-9_-]+$'" (CommandCodeAI/command-code#323, HKUDS/nanobot#4356)
//   [a-names]     400 "tools.8.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"
//                 (github/copilot-cli#454)
//   [a-unique]    400 "tools: Tool names must be unique." (danny-avila/LibreChat#13162: a function named
//                 web_search beside the web search server tool)
//   [a-define]    400 "Requests which include tool_use or tool_result blocks must define tools"
//                 (https://portkey.ai/error-library/tool-definition-error-10488)
//   [a-thinking]  https://platform.claude.com/docs/en/build-with-claude/extended-thinking
//                 (#feature-compatibility: not with temperature, top_k or forced tool use, top_p
//                 0.95–1; budget_tokens ≥ 1024 and < max_tokens; with a budget, in a tool loop the
//                 last assistant turn opens with its thinking block, signature and all —
//                 anthropics/claude-code#19414, router-for-me/CLIProxyAPI#928)
//   [a-cache]     400 "A maximum of 4 blocks with cache_control may be provided" (Wei-Shaw/sub2api#176)
//   [a-sampling]  400 "`temperature` and `top_p` cannot both be specified for this model" from the
//                 Claude 4.5 generation on (langfuse/langfuse#9882, fwdai/reticle#7)
//   [c-create]    https://platform.openai.com/docs/api-reference/chat/create (assistant content
//                 "required unless tool_calls"; tool messages carry text; stream_options "only set
//                 this when you set stream: true"; user content parts text, image_url,
//                 input_audio, file; an array content has at least one part)
//   [c-tools]     400 "An assistant message with 'tool_calls' must be followed by tool messages
//                 responding to each 'tool_call_id'" (agno-agi/agno#3105) and "messages with role
//                 'tool' must be a response to a preceeding message with 'tool_calls'"
//   [c-names]     "Must be a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of
//                 64" ([c-create] tools[].function.name); history names are checked too:
//                 400 param 'messages[9].tool_calls[0].function.name' (mcp-use/mcp-use#90)
//   [c-choice]    400 "'tool_choice' is only allowed when 'tools' are specified", likewise
//                 parallel_tool_calls (dphnAI/sonar#1143); a named choice must name an offered
//                 function (no public page found: src/protocols/openai-chat/encode-chat-request.ts
//                 states the 400, so the check guards svc's own claim)
//   [c-stop]      https://help.openai.com/en/articles/5072263 ("you can pass up to four stop sequences")
//   [c-json]      400 "'messages' must contain the word 'json' in some form, to use 'response_format'
//                 of type 'json_object'" (https://portkey.ai/error-library/response-format-error-10006)
//   [r-calls]     400 "No tool call found for function call output with call_id …" and
//                 "No tool output found for function call …" (continuedev/continue#10092,
//                 router-for-me/CLIProxyAPI#2368)
//   [r-names]     400 "Invalid 'tools[16].name': string does not match pattern … '^[a-zA-Z0-9_-]+$'"
//                 (justrach/codegraff#930, openai/openai-dotnet#441)
//   [r-parts]     400 "Invalid value: 'input_text'. Supported values are: 'output_text' and
//                 'refusal'" for assistant items (jeremychone/rust-genai#119), and "Invalid value:
//                 'output_text'. Supported values are: 'input_text', 'input_image', 'input_file' …"
//                 for user content and function_call_output parts (querymt/querymt#953)
//   [r-items]     https://platform.openai.com/docs/api-reference/responses/create (input item
//                 types; a reasoning item's `summary` is required: openai-node's ResponseReasoningItem)
//   [r-max]       400 "Invalid 'max_output_tokens': integer below minimum value. Expected a value
//                 >= 16" (vectorize-io/hindsight#58)
//   [r-custom]    custom_tool_call and custom_tool_call_output are input items, an output mapped
//                 to its custom tool call by call_id (openai-node src/resources/responses/responses.ts
//                 ResponseInputItem: ResponseCustomToolCall, ResponseCustomToolCallOutput)
//   [r-store]     404 "Item with id 'rs_…' not found. Items are not persisted when `store` is set to
//                 false" for a reasoning item sent by id without its encrypted_content
//                 (vercel/ai#7543, anomalyco/opencode#7724)
//   [r-blob]      400 invalid_encrypted_content "The encrypted content for item rs_… could not be
//                 verified. Reason: Encrypted content could not be decrypted or parsed." for a blob
//                 another organisation (or anyone else) issued (QuantumNous/new-api#4662, Wei-Shaw/sub2api#2863)

import { isObject } from './is-object'

type Json = Record<string, unknown>

const asArray = (v: unknown): unknown[] => (Array.isArray(v) ? v : [])
const objects = (v: unknown): Json[] => asArray(v).filter(isObject)
const isBlank = (v: unknown): boolean => typeof v !== 'string' || v.trim() === ''

/** Collects broken rules; `at` prefixes each with where in the body it broke. */
class Problems {
  readonly list: string[] = []
  check(ok: boolean, at: string, rule: string): void {
    if (!ok) this.list.push(`${at}: ${rule}`)
  }
}

// ---- Anthropic Messages --------------------------------------------------------------------------

const anthropicToolUseId = /^[a-zA-Z0-9_-]+$/
const anthropicToolName = /^[a-zA-Z0-9_-]{1,128}$/
const anthropicUserBlocks = new Set(['text', 'image', 'document', 'tool_result', 'search_result'])
const anthropicAssistantBlocks = new Set(['text', 'thinking', 'redacted_thinking', 'tool_use'])
const anthropicToolResultBlocks = new Set(['text', 'image', 'document', 'search_result'])

export interface AnthropicExpectations {
  /** Every thinking signature the client sent: one svc sends must be one of them, unmodified. */
  clientSignatures?: ReadonlySet<string>
}

export function anthropicProblems(body: Json, expect: AnthropicExpectations = {}): string[] {
  const p = new Problems()
  p.check(Number.isInteger(body.max_tokens) && (body.max_tokens as number) >= 1, 'max_tokens', 'required [a-messages]')
  checkAnthropicSystem(p, body.system)
  const messages = asArray(body.messages)
  p.check(messages.length > 0, 'messages', 'at least one message [a-messages]')
  for (const [i, m] of messages.entries()) checkAnthropicMessage(p, m, i, i === messages.length - 1, expect)
  checkAnthropicToolPairs(p, objects(body.messages))
  checkAnthropicTools(p, body)
  checkAnthropicThinking(p, body)
  p.check(countCacheControls(body) <= 4, 'cache_control', 'at most 4 blocks marked [a-cache]')
  p.check(
    body.temperature === undefined || body.top_p === undefined,
    'temperature/top_p',
    'not both (Claude 4.5 generation on) [a-sampling]',
  )
  return p.list
}

function checkAnthropicSystem(p: Problems, system: unknown): void {
  if (system === undefined || typeof system === 'string') return
  p.check(Array.isArray(system), 'system', 'a string or text blocks [a-messages]')
  for (const [j, b] of objects(system).entries()) {
    p.check(b.type === 'text', `system.${j}`, 'only text blocks [a-messages]')
    p.check(!isBlank(b.text), `system.${j}.text`, 'non-whitespace text [a-text]')
  }
}

function checkAnthropicMessage(p: Problems, m: unknown, i: number, last: boolean, expect: AnthropicExpectations): void {
  const at = `messages.${i}`
  if (!isObject(m)) {
    p.check(false, at, 'an object [a-messages]')
    return
  }
  // The newest models take a mid-conversation system message; the ones svc routes to do not.
  p.check(
    m.role === 'user' || m.role === 'assistant',
    `${at}.role`,
    'user or assistant; system is top-level [a-messages]',
  )
  if (typeof m.content === 'string') {
    p.check(!isBlank(m.content) || (last && m.role === 'assistant'), `${at}.content`, 'non-empty [a-text]')
    return
  }
  const blocks = asArray(m.content)
  p.check(blocks.length > 0 || (last && m.role === 'assistant'), `${at}.content`, 'non-empty [a-messages]')
  const allowed = m.role === 'user' ? anthropicUserBlocks : anthropicAssistantBlocks
  for (const [j, b] of blocks.entries()) {
    const where = `${at}.content.${j}`
    p.check(isObject(b), where, 'a block object [a-messages]')
    if (!isObject(b)) continue
    p.check(
      allowed.has(b.type as string),
      `${where}.type`,
      `${String(b.type)} is not allowed in a ${m.role} turn [a-messages]`,
    )
    checkAnthropicBlock(p, b, where, expect)
  }
}

function checkAnthropicBlock(p: Problems, b: Json, at: string, expect: AnthropicExpectations): void {
  switch (b.type) {
    case 'text':
      p.check(!isBlank(b.text), `${at}.text`, 'non-whitespace text [a-text]')
      return
    case 'tool_use':
      p.check(typeof b.id === 'string' && anthropicToolUseId.test(b.id), `${at}.id`, 'matches ^[a-zA-Z0-9_-]+$ [a-ids]')
      p.check(isObject(b.input), `${at}.input`, 'an object [a-messages]')
      return
    case 'tool_result':
      p.check(
        typeof b.tool_use_id === 'string' && anthropicToolUseId.test(b.tool_use_id),
        `${at}.tool_use_id`,
        'matches ^[a-zA-Z0-9_-]+$ [a-ids]',
      )
      if (Array.isArray(b.content)) {
        for (const [k, c] of objects(b.content).entries()) {
          p.check(
            anthropicToolResultBlocks.has(c.type as string),
            `${at}.content.${k}.type`,
            'text, image or document [a-tools]',
          )
          if (c.type === 'text') p.check(!isBlank(c.text), `${at}.content.${k}.text`, 'non-whitespace text [a-text]')
        }
      }
      return
    case 'thinking': {
      const signature = b.signature
      p.check(typeof signature === 'string' && signature !== '', `${at}.signature`, 'a signature [a-thinking]')
      if (expect.clientSignatures && typeof signature === 'string')
        p.check(
          expect.clientSignatures.has(signature),
          `${at}.signature`,
          'the one the client sent, unmodified [a-thinking]',
        )
      return
    }
  }
}

/** Each assistant turn's tool_use ids are answered, first thing, by the user turn right after it. */
function checkAnthropicToolPairs(p: Problems, messages: Json[]): void {
  for (const [i, m] of messages.entries()) {
    const blocks = objects(m.content)
    const results = blocks.filter((b) => b.type === 'tool_result')
    if (m.role === 'user' && results.length > 0) {
      const leading = blocks.findIndex((b) => b.type !== 'tool_result')
      p.check(leading === -1 || leading >= results.length, `messages.${i}`, 'tool_result blocks come first [a-tools]')
      const asked = new Set(toolUseIds(messages[i - 1]))
      for (const r of results)
        p.check(
          asked.has(r.tool_use_id as string),
          `messages.${i}`,
          `tool_result ${String(r.tool_use_id)} answers no tool_use of the turn before [a-tools]`,
        )
    }
    if (m.role !== 'assistant' || i === messages.length - 1) continue
    const answered = new Set(
      objects(messages[i + 1]?.content).flatMap((b) => (b.type === 'tool_result' ? [b.tool_use_id] : [])),
    )
    for (const id of toolUseIds(m))
      p.check(answered.has(id), `messages.${i}`, `tool_use ${id} has no tool_result in the next message [a-tools]`)
  }
}

const toolUseIds = (m: Json | undefined): string[] =>
  objects(m?.content).flatMap((b) => (b.type === 'tool_use' ? [b.id as string] : []))

function checkAnthropicTools(p: Problems, body: Json): void {
  for (const [i, t] of objects(body.tools).entries()) {
    // Server tools (web_search_…) carry a versioned type and a fixed name.
    if (t.type !== undefined && t.type !== 'custom') continue
    p.check(
      typeof t.name === 'string' && anthropicToolName.test(t.name),
      `tools.${i}.name`,
      'matches ^[a-zA-Z0-9_-]{1,128}$ [a-names]',
    )
    p.check(isObject(t.input_schema), `tools.${i}.input_schema`, 'a JSON Schema object [a-messages]')
  }
  const names = objects(body.tools).map((t) => t.name)
  p.check(new Set(names).size === names.length, 'tools', 'names unique [a-unique]')
  const usesTools = objects(body.messages).some((m) =>
    objects(m.content).some((b) => b.type === 'tool_use' || b.type === 'tool_result'),
  )
  p.check(
    !usesTools || asArray(body.tools).length > 0,
    'tools',
    'defined when the conversation has tool blocks [a-define]',
  )
}

function checkAnthropicThinking(p: Problems, body: Json): void {
  const thinking = body.thinking
  if (!isObject(thinking) || (thinking.type !== 'enabled' && thinking.type !== 'adaptive')) return
  if (thinking.type === 'enabled') {
    const budget = thinking.budget_tokens as number
    p.check(Number.isInteger(budget) && budget >= 1024, 'thinking.budget_tokens', 'at least 1024 [a-thinking]')
    p.check(budget < (body.max_tokens as number), 'thinking.budget_tokens', 'below max_tokens [a-thinking]')
  }
  const choice = isObject(body.tool_choice) ? body.tool_choice.type : undefined
  p.check(choice !== 'any' && choice !== 'tool', 'tool_choice', 'not forced while thinking [a-thinking]')
  p.check(
    body.temperature === undefined || body.temperature === 1,
    'temperature',
    'left out while thinking [a-thinking]',
  )
  p.check(body.top_k === undefined, 'top_k', 'left out while thinking [a-thinking]')
  const topP = body.top_p
  p.check(
    topP === undefined || (typeof topP === 'number' && topP >= 0.95),
    'top_p',
    '0.95 or more while thinking [a-thinking]',
  )
  // With a budget only: under adaptive thinking Claude calls tools without thinking first on simple
  // steps, and Claude Code sends such turns back to Anthropic with adaptive thinking on.
  if (thinking.type !== 'enabled') return
  const messages = objects(body.messages)
  const last = messages.at(-1)
  if (last?.role !== 'user' || !objects(last.content).some((b) => b.type === 'tool_result')) return
  const first = objects(messages.at(-2)?.content)[0]?.type
  p.check(
    first === 'thinking' || first === 'redacted_thinking',
    `messages.${messages.length - 2}`,
    'opens with its thinking block in a tool loop [a-thinking]',
  )
}

/** cache_control marks anywhere in the prompt: system, tools, messages and the blocks inside tool results. */
function countCacheControls(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + countCacheControls(v), 0)
  if (!isObject(value)) return 0
  let n = value.cache_control !== undefined ? 1 : 0
  for (const [key, v] of Object.entries(value)) if (key !== 'cache_control') n += countCacheControls(v)
  return n
}

// ---- OpenAI Chat Completions ---------------------------------------------------------------------

const openAIFunctionName = /^[a-zA-Z0-9_-]{1,64}$/
const chatRoles = new Set(['system', 'developer', 'user', 'assistant', 'tool'])
const chatUserParts = new Set(['text', 'image_url', 'input_audio', 'file'])

export function chatProblems(body: Json): string[] {
  const p = new Problems()
  const messages = asArray(body.messages)
  p.check(messages.length > 0, 'messages', 'at least one message [c-create]')
  for (const [i, m] of messages.entries()) checkChatMessage(p, m, i)
  checkChatToolPairs(p, objects(body.messages))
  const toolNames = objects(body.tools).map((t) => (isObject(t.function) ? t.function.name : undefined))
  for (const [i, name] of toolNames.entries())
    p.check(
      typeof name === 'string' && openAIFunctionName.test(name),
      `tools[${i}].function.name`,
      'matches ^[a-zA-Z0-9_-]{1,64}$ [c-names]',
    )
  const hasTools = toolNames.length > 0
  p.check(hasTools || body.tool_choice === undefined, 'tool_choice', 'only with tools [c-choice]')
  p.check(hasTools || body.parallel_tool_calls === undefined, 'parallel_tool_calls', 'only with tools [c-choice]')
  const choice = body.tool_choice
  if (isObject(choice) && isObject(choice.function))
    p.check(
      toolNames.includes(choice.function.name as string),
      'tool_choice.function.name',
      'names an offered tool [c-choice]',
    )
  const stop = body.stop
  p.check(!Array.isArray(stop) || stop.length <= 4, 'stop', 'at most 4 sequences [c-stop]')
  p.check(
    body.stream_options === undefined || body.stream === true,
    'stream_options',
    'only when stream is true [c-create]',
  )
  const format = isObject(body.response_format) ? body.response_format.type : undefined
  p.check(
    format !== 'json_object' || /json/i.test(JSON.stringify(messages)),
    'response_format',
    'json_object with "json" in the messages [c-json]',
  )
  return p.list
}

function checkChatMessage(p: Problems, m: unknown, i: number): void {
  const at = `messages[${i}]`
  if (!isObject(m)) {
    p.check(false, at, 'an object [c-create]')
    return
  }
  p.check(chatRoles.has(m.role as string), `${at}.role`, 'system, developer, user, assistant or tool [c-create]')
  const content = m.content
  switch (m.role) {
    case 'user':
      p.check(
        typeof content === 'string' || asArray(content).length > 0,
        `${at}.content`,
        'a string or at least one part [c-create]',
      )
      for (const [j, part] of objects(content).entries())
        p.check(
          chatUserParts.has(part.type as string),
          `${at}.content[${j}].type`,
          'text, image_url, input_audio or file [c-create]',
        )
      return
    case 'assistant': {
      const calls = objects(m.tool_calls)
      const hasContent = (typeof content === 'string' && content !== '') || asArray(content).length > 0
      p.check(hasContent || calls.length > 0, at, 'content or tool_calls [c-create]')
      for (const [j, c] of calls.entries()) checkChatToolCall(p, c, `${at}.tool_calls[${j}]`)
      return
    }
    case 'tool':
    case 'system':
    case 'developer':
      p.check(isTextContent(content), `${at}.content`, 'text only [c-create]')
      if (m.role === 'tool') p.check(typeof m.tool_call_id === 'string', `${at}.tool_call_id`, 'required [c-create]')
      return
  }
}

const isTextContent = (content: unknown): boolean =>
  typeof content === 'string' || (Array.isArray(content) && objects(content).every((part) => part.type === 'text'))

function checkChatToolCall(p: Problems, call: Json, at: string): void {
  p.check(typeof call.id === 'string' && call.id !== '', `${at}.id`, 'required [c-create]')
  const fn = isObject(call.function) ? call.function : {}
  p.check(
    typeof fn.name === 'string' && openAIFunctionName.test(fn.name),
    `${at}.function.name`,
    'matches ^[a-zA-Z0-9_-]{1,64}$ [c-names]',
  )
  p.check(isJsonObjectText(fn.arguments), `${at}.function.arguments`, 'JSON text of an object [c-create]')
}

const isJsonObjectText = (text: unknown): boolean => {
  if (typeof text !== 'string') return false
  try {
    return isObject(JSON.parse(text))
  } catch {
    return false
  }
}

/** Tool calls answered by the tool messages right after them, each once, and no tool message unasked. */
function checkChatToolPairs(p: Problems, messages: Json[]): void {
  let pending: Set<string> | undefined
  let pendingAt = -1
  const close = () => {
    if (pending && pending.size > 0)
      p.check(
        false,
        `messages[${pendingAt}]`,
        `tool_calls ${[...pending].join(', ')} have no tool message right after [c-tools]`,
      )
    pending = undefined
  }
  for (const [i, m] of messages.entries()) {
    if (m.role === 'tool') {
      const id = m.tool_call_id as string
      p.check(
        pending?.has(id) === true,
        `messages[${i}]`,
        `tool message ${id} answers no call of the assistant message before [c-tools]`,
      )
      pending?.delete(id)
      continue
    }
    close()
    if (m.role === 'assistant' && objects(m.tool_calls).length > 0) {
      pending = new Set(objects(m.tool_calls).map((c) => c.id as string))
      pendingAt = i
    }
  }
  close()
}

// ---- OpenAI Responses ----------------------------------------------------------------------------

const responsesToolName = /^[a-zA-Z0-9_-]+$/
const responsesItemTypes = new Set([
  'message',
  'function_call',
  'function_call_output',
  'custom_tool_call',
  'custom_tool_call_output',
  'reasoning',
])
const responsesCallTypes = new Set(['function_call', 'custom_tool_call'])
const responsesOutputTypes = new Set(['function_call_output', 'custom_tool_call_output'])
const responsesInputParts = new Set(['input_text', 'input_image', 'input_file'])
const responsesAssistantParts = new Set(['output_text', 'refusal'])
const responsesRoles = new Set(['user', 'assistant', 'system', 'developer'])

export interface ResponsesExpectations {
  /** Every reasoning blob the upstream issued: one svc sends must be one of them, unmodified. */
  issuedBlobs?: ReadonlySet<string>
}

export function responsesProblems(body: Json, expect: ResponsesExpectations = {}): string[] {
  const p = new Problems()
  if (typeof body.input !== 'string') {
    const items = asArray(body.input)
    for (const [i, item] of items.entries()) checkResponsesItem(p, item, i)
    checkResponsesCalls(p, objects(body.input))
    checkResponsesReasoning(p, objects(body.input), body.store === false, expect)
  }
  const tools = objects(body.tools)
  const names = tools.filter((t) => t.type === 'function').map((t) => t.name)
  for (const [i, name] of names.entries())
    p.check(
      typeof name === 'string' && responsesToolName.test(name),
      `tools[${i}].name`,
      'matches ^[a-zA-Z0-9_-]+$ [r-names]',
    )
  const max = body.max_output_tokens
  p.check(max === undefined || (typeof max === 'number' && max >= 16), 'max_output_tokens', 'at least 16 [r-max]')
  return p.list
}

function checkResponsesItem(p: Problems, item: unknown, i: number): void {
  const at = `input[${i}]`
  if (!isObject(item)) {
    p.check(false, at, 'an object [r-items]')
    return
  }
  const type = item.type ?? 'message'
  p.check(responsesItemTypes.has(type as string), `${at}.type`, `${String(type)} is an input item type [r-items]`)
  switch (type) {
    case 'message': {
      p.check(responsesRoles.has(item.role as string), `${at}.role`, 'user, assistant, system or developer [r-items]')
      const allowed = item.role === 'assistant' ? responsesAssistantParts : responsesInputParts
      for (const [j, part] of objects(item.content).entries())
        p.check(
          allowed.has(part.type as string),
          `${at}.content[${j}].type`,
          `${String(part.type)} in a ${String(item.role)} message [r-parts]`,
        )
      return
    }
    case 'function_call':
      p.check(typeof item.call_id === 'string' && item.call_id !== '', `${at}.call_id`, 'required [r-items]')
      p.check(typeof item.name === 'string', `${at}.name`, 'required [r-items]')
      p.check(typeof item.arguments === 'string', `${at}.arguments`, 'a string [r-items]')
      return
    case 'custom_tool_call':
      p.check(typeof item.call_id === 'string' && item.call_id !== '', `${at}.call_id`, 'required [r-custom]')
      p.check(typeof item.name === 'string', `${at}.name`, 'required [r-custom]')
      p.check(typeof item.input === 'string', `${at}.input`, 'a string [r-custom]')
      return
    case 'function_call_output':
    case 'custom_tool_call_output':
      p.check(
        typeof item.output === 'string' || Array.isArray(item.output),
        `${at}.output`,
        'a string or parts [r-items]',
      )
      for (const [j, part] of objects(item.output).entries())
        p.check(
          responsesInputParts.has(part.type as string),
          `${at}.output[${j}].type`,
          `${String(part.type)} in a tool output [r-parts]`,
        )
      return
    case 'reasoning':
      p.check(Array.isArray(item.summary), `${at}.summary`, 'required [r-items]')
      return
  }
}

/** Every output follows its call, and every call has its output (custom tool calls alike [r-custom]). */
function checkResponsesCalls(p: Problems, items: Json[]): void {
  const called = new Set<unknown>()
  const answered = new Set<unknown>()
  for (const [i, item] of items.entries()) {
    if (responsesCallTypes.has(item.type as string)) called.add(item.call_id)
    if (!responsesOutputTypes.has(item.type as string)) continue
    p.check(
      called.has(item.call_id),
      `input[${i}]`,
      `no function_call before the output for ${String(item.call_id)} [r-calls]`,
    )
    answered.add(item.call_id)
  }
  for (const id of called) p.check(answered.has(id), 'input', `no function_call_output for ${String(id)} [r-calls]`)
}

/** A reasoning item carries a blob the upstream issued, or (sent by id, as stored items are) is stored. */
function checkResponsesReasoning(p: Problems, items: Json[], unstored: boolean, expect: ResponsesExpectations): void {
  for (const [i, item] of items.entries()) {
    if (item.type !== 'reasoning') continue
    const blob = item.encrypted_content
    if (typeof blob === 'string' && expect.issuedBlobs)
      p.check(expect.issuedBlobs.has(blob), `input[${i}].encrypted_content`, 'one the upstream issued [r-blob]')
    if (unstored)
      p.check(
        typeof blob === 'string' || item.id === undefined,
        `input[${i}]`,
        `reasoning item ${String(item.id)} sent by id under store:false, without its encrypted_content [r-store]`,
      )
  }
}
