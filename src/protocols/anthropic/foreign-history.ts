// A client's conversation as the upstream can read it back, for a pass-through body. When another
// provider served some turns (a fallback, a session that moved), svc wrote its answers in
// Anthropic's shape, but some blocks carry what only Anthropic can make, and Claude refuses a
// request holding one that it did not make (a 400, that turn and every turn after it):
// - web searches another provider ran: a result's `encrypted_content` (the page, sealed) and a
//   citation's `encrypted_index` are left empty. The search's two blocks go, and so do the
//   citations; the answer's text stays.
// - thinking another provider did: its `signature` is empty or svc's own (thinking-signature.ts).
//   The block goes; its words were that provider's, and no later turn needs them.
// And in a tool loop Claude with thinking on wants its last turn to open with its own signed
// thinking: where another provider made that turn, thinking is off for this request, as the
// translated path does (encode-anthropic-request.ts). Tool ids another provider made (Kimi's
// `functions.Read:0`) Anthropic refuses outside ^[a-zA-Z0-9_-]+$: they are rewritten as the
// translated path writes them (tool-use-id.ts), calls and results alike. Claude's own blocks pass
// as sent. Every reader gets a Gemini call's id without the signature svc carries in it
// (thought-signature.ts): only Gemini reads it, and it can be kilobytes long.
//
// An Anthropic-compatible server that is not Anthropic (DeepSeek, Kimi: `anthropicSignatures`
// false) signs thinking its own way, or with an empty signature, and refuses a tool-call turn
// without its thinking ("reasoning_content is missing in assistant tool call message"). It gets
// the thinking, the `thinking` parameter and the ids as the client sent them. A signature svc made
// for another dialect means nothing to it either, but the words are what such a server asks a
// tool-call turn for, as DeepSeek's Chat API gets them in `reasoning_content`: they stay, under an
// empty signature, which these servers take.
import { type AnthropicModelRules, thinkingFormFor } from './model-fit'
import { isForeignSignature, isGatewaySignature, lastToolTurnOpensWithThinking } from './thinking-signature'
import { anthropicUpstreamToolId } from './tool-use-id'
import { withoutClaudeCodeBillingLine } from './claude-code-billing-line'
import { withoutThoughtSignature } from '../thought-signature'
import { isObject, type JsonObject } from '../wire-values'

/** Who reads the body (a ProviderConfig is one). */
export interface HistoryReader {
  /** The upstream is Anthropic itself, which checks its signatures (config: anthropic_signatures); unset counts as true. */
  anthropicSignatures?: boolean
}

/** A result block svc wrote from another provider's search. */
const isForeignResult = (block: JsonObject): boolean =>
  block.type === 'web_search_tool_result' &&
  Array.isArray(block.content) &&
  block.content.some((result) => isObject(result) && result.encrypted_content === '')

const isForeignCitation = (citation: unknown): boolean => isObject(citation) && citation.encrypted_index === ''

const hasForeignCitation = (block: JsonObject): boolean =>
  block.type === 'text' && Array.isArray(block.citations) && block.citations.some(isForeignCitation)

const signatureOf = (block: JsonObject): string | undefined =>
  typeof block.signature === 'string' ? block.signature : undefined

/** Thinking the reader cannot take as it is: for Anthropic any it did not sign, for others svc's own. */
const isForeignThinking = (block: JsonObject, anthropic: boolean): boolean =>
  block.type === 'thinking' && (anthropic ? isForeignSignature : isGatewaySignature)(signatureOf(block))

const isForeign = (block: unknown, anthropic: boolean): boolean =>
  isObject(block) && (isForeignThinking(block, anthropic) || isForeignResult(block) || hasForeignCitation(block))

const isAssistantWithForeignBlocks = (message: unknown, anthropic: boolean): boolean =>
  isObject(message) &&
  message.role === 'assistant' &&
  Array.isArray(message.content) &&
  message.content.some((block) => isForeign(block, anthropic))

/**
 * The body the upstream can read; the very object when it needs nothing (the common case). `model`:
 * the rules it is fitted to next (model-fit.ts), which decide the form its thinking goes in.
 */
export function withoutForeignHistory(
  body: Record<string, unknown>,
  reader: HistoryReader,
  model: AnthropicModelRules = {},
): Record<string, unknown> {
  const { messages } = body
  if (!Array.isArray(messages)) return body
  const anthropic = reader.anthropicSignatures !== false
  const cleaned = messages.some((message) => isAssistantWithForeignBlocks(message, anthropic))
    ? { ...body, messages: messages.flatMap((message) => withoutForeignBlocks(message, anthropic)) }
    : body
  const named = withToolIds(cleaned, anthropic ? anthropicUpstreamToolId : withoutThoughtSignature)
  if (!anthropic) return withoutClaudeCodeBillingLine(named)
  return thinksAfterLastTurn(named, model) ? named : withoutThinking(named)
}

/**
 * Anthropic's refusal of thinking it did not sign (`messages.1.content.0: Invalid \`signature\` in
 * \`thinking\` block`). Compatible servers (GLM, MiniMax, DeepSeek) sign thinking in a form svc
 * cannot tell from Claude's, so a conversation one of them served in part meets it at Anthropic.
 */
export const refusesThinkingSignature = (message: string): boolean =>
  /invalid `?signature`? in `?thinking`? block/i.test(message)

/**
 * The body with no thinking left in its history, and with thinking off where a tool loop's last
 * turn then does not open with it: what Anthropic is sent again after refusing a signature.
 */
export function withoutThinkingHistory(body: Record<string, unknown>): Record<string, unknown> {
  const { messages } = body
  if (!Array.isArray(messages)) return body
  const stripped = { ...body, messages: messages.flatMap(withoutThinkingBlocks) }
  return thinksAfterLastTurn(stripped) ? stripped : withoutThinking(stripped)
}

const isThinkingBlock = (block: unknown): boolean =>
  isObject(block) && (block.type === 'thinking' || block.type === 'redacted_thinking')

function withoutThinkingBlocks(message: unknown): unknown[] {
  if (!isObject(message) || message.role !== 'assistant' || !Array.isArray(message.content)) return [message]
  if (!message.content.some(isThinkingBlock)) return [message]
  const kept = message.content.filter((block) => !isThinkingBlock(block))
  return kept.length > 0 ? [{ ...message, content: kept }] : []
}

/** The message without blocks the reader cannot read; none at all when nothing else was in it. */
function withoutForeignBlocks(message: unknown, anthropic: boolean): unknown[] {
  if (!isAssistantWithForeignBlocks(message, anthropic)) return [message]
  const { content } = message as { content: unknown[] }
  const dropped = new Set(
    content.filter((b) => isObject(b) && isForeignResult(b)).map((b) => (b as JsonObject).tool_use_id),
  )
  const kept = content.flatMap((block) => {
    if (!isObject(block)) return [block]
    if (isForeignThinking(block, anthropic)) return anthropic ? [] : unsigned(block)
    if (isForeignResult(block)) return []
    if (block.type === 'server_tool_use' && dropped.has(block.id)) return []
    if (!hasForeignCitation(block)) return [block]
    const citations = (block.citations as unknown[]).filter((citation) => !isForeignCitation(citation))
    return [{ ...block, citations: citations.length > 0 ? citations : null }]
  })
  // An empty assistant turn is itself a 400; Claude reads the user turns around it as one.
  return kept.length > 0 ? [{ ...(message as JsonObject), content: kept }] : []
}

/** svc-signed thinking for a server that is not Anthropic: its words, under the empty signature such servers take. */
const unsigned = (block: JsonObject): JsonObject[] =>
  typeof block.thinking === 'string' && block.thinking !== '' ? [{ ...block, signature: '' }] : []

const toolIdOf = (block: unknown): unknown =>
  !isObject(block)
    ? undefined
    : block.type === 'tool_use'
      ? block.id
      : block.type === 'tool_result'
        ? block.tool_use_id
        : undefined

/** How the reader wants a tool id: Anthropic's rules, or the provider's id without a Gemini signature. */
type ToolIdRewrite = (id: string) => string

const isRewritten = (block: unknown, rewrite: ToolIdRewrite): boolean => {
  const id = toolIdOf(block)
  return typeof id === 'string' && rewrite(id) !== id
}

const hasRewrittenToolId = (message: unknown, rewrite: ToolIdRewrite): boolean =>
  isObject(message) && Array.isArray(message.content) && message.content.some((block) => isRewritten(block, rewrite))

/** Tool ids as the reader wants them, calls and results alike; the very body when all are. */
function withToolIds(body: Record<string, unknown>, rewrite: ToolIdRewrite): Record<string, unknown> {
  const messages = body.messages as unknown[]
  if (!messages.some((message) => hasRewrittenToolId(message, rewrite))) return body
  return {
    ...body,
    messages: messages.map((message) =>
      hasRewrittenToolId(message, rewrite)
        ? {
            ...(message as JsonObject),
            content: ((message as JsonObject).content as unknown[]).map((block) => withToolId(block, rewrite)),
          }
        : message,
    ),
  }
}

function withToolId(block: unknown, rewrite: ToolIdRewrite): unknown {
  if (!isRewritten(block, rewrite)) return block
  const wire = block as JsonObject
  return wire.type === 'tool_use'
    ? { ...wire, id: rewrite(wire.id as string) }
    : { ...wire, tool_use_id: rewrite(wire.tool_use_id as string) }
}

/**
 * False when thinking goes with a budget and the tool loop's last turn cannot open with Claude's
 * own thinking. Adaptive thinking asks nothing of the turn (thinking-signature.ts). `model`: the
 * rules the body is yet to be fitted to; none for a body already in the model's form.
 */
function thinksAfterLastTurn(body: Record<string, unknown>, model?: AnthropicModelRules): boolean {
  const { thinking, messages } = body
  if (!isObject(thinking) || !Array.isArray(messages)) return true
  const form = model ? thinkingFormFor(thinking.type, model) : thinking.type
  return form !== 'enabled' || lastToolTurnOpensWithThinking(messages)
}

/**
 * Anthropic's refusal of a tool loop whose last turn does not open with thinking while thinking is
 * on ("a final `assistant` message must start with a thinking block"), should it make one of a turn
 * svc let through under adaptive thinking: the same request with thinking off, once.
 */
export const refusesTurnWithoutThinking = (message: string): boolean =>
  /must start with a thinking block/i.test(message)

/**
 * The body with thinking off: no `thinking`, and no `clear_thinking_*` context edit, which manages
 * thinking blocks and which Anthropic takes only with thinking on (Claude Code sends one).
 */
export function withoutThinking(body: Record<string, unknown>): Record<string, unknown> {
  const { thinking: _thinking, ...rest } = body
  const management = rest.context_management
  if (!isObject(management) || !Array.isArray(management.edits)) return rest
  const edits = management.edits.filter((edit) => !(isObject(edit) && String(edit.type).startsWith('clear_thinking')))
  if (edits.length === management.edits.length) return rest
  if (edits.length > 0) return { ...rest, context_management: { ...management, edits } }
  const { context_management: _management, ...withoutManagement } = rest
  return withoutManagement
}
