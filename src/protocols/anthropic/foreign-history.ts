// A client's conversation as Claude can read it back, for a pass-through body. When another
// provider served some turns (a fallback, a session that moved), svc wrote its answers in
// Anthropic's shape, but two kinds of block carry what only Anthropic can make, and Claude refuses
// a request holding one that it did not make (a 400, that turn and every turn after it):
// - web searches another provider ran: a result's `encrypted_content` (the page, sealed) and a
//   citation's `encrypted_index` are left empty. The search's two blocks go, and so do the
//   citations; the answer's text stays.
// - thinking another provider did: its `signature` is empty or svc's own (thinking-signature.ts).
//   The block goes; its words were that provider's, and no later turn needs them.
// And in a tool loop Claude with thinking on wants its last turn to open with its own signed
// thinking: where another provider made that turn, thinking is off for this request, as the
// translated path does (encode-anthropic-request.ts). Claude's own blocks pass as sent.
import { isForeignSignature, lastToolTurnOpensWithThinking } from './thinking-signature'
import { isObject, type JsonObject } from '../wire-values'

/** A result block svc wrote from another provider's search. */
const isForeignResult = (block: JsonObject): boolean =>
  block.type === 'web_search_tool_result' &&
  Array.isArray(block.content) &&
  block.content.some((result) => isObject(result) && result.encrypted_content === '')

const isForeignCitation = (citation: unknown): boolean => isObject(citation) && citation.encrypted_index === ''

const hasForeignCitation = (block: JsonObject): boolean =>
  block.type === 'text' && Array.isArray(block.citations) && block.citations.some(isForeignCitation)

const isForeignThinking = (block: JsonObject): boolean =>
  block.type === 'thinking' && isForeignSignature(typeof block.signature === 'string' ? block.signature : undefined)

const isForeign = (block: unknown): boolean =>
  isObject(block) && (isForeignThinking(block) || isForeignResult(block) || hasForeignCitation(block))

const isAssistantWithForeignBlocks = (message: unknown): boolean =>
  isObject(message) && message.role === 'assistant' && Array.isArray(message.content) && message.content.some(isForeign)

/** The body Claude can read; the very object when it needs nothing (the common case). */
export function withoutForeignHistory(body: Record<string, unknown>): Record<string, unknown> {
  const { messages } = body
  if (!Array.isArray(messages)) return body
  const cleaned = messages.some(isAssistantWithForeignBlocks)
    ? { ...body, messages: messages.flatMap(withoutForeignBlocks) }
    : body
  return thinksAfterLastTurn(cleaned) ? cleaned : withoutThinking(cleaned)
}

/** The message without blocks Claude cannot read; none at all when nothing else was in it. */
function withoutForeignBlocks(message: unknown): unknown[] {
  if (!isAssistantWithForeignBlocks(message)) return [message]
  const { content } = message as { content: unknown[] }
  const dropped = new Set(
    content.filter((b) => isObject(b) && isForeignResult(b)).map((b) => (b as JsonObject).tool_use_id),
  )
  const kept = content.flatMap((block) => {
    if (!isObject(block)) return [block]
    if (isForeignThinking(block) || isForeignResult(block)) return []
    if (block.type === 'server_tool_use' && dropped.has(block.id)) return []
    if (!hasForeignCitation(block)) return [block]
    const citations = (block.citations as unknown[]).filter((citation) => !isForeignCitation(citation))
    return [{ ...block, citations: citations.length > 0 ? citations : null }]
  })
  // An empty assistant turn is itself a 400; Claude reads the user turns around it as one.
  return kept.length > 0 ? [{ ...(message as JsonObject), content: kept }] : []
}

/** False when thinking is on and the tool loop's last turn cannot open with Claude's own thinking. */
function thinksAfterLastTurn(body: Record<string, unknown>): boolean {
  const { thinking, messages } = body
  if (!isObject(thinking) || thinking.type === 'disabled' || !Array.isArray(messages)) return true
  return lastToolTurnOpensWithThinking(messages)
}

function withoutThinking(body: Record<string, unknown>): Record<string, unknown> {
  const { thinking: _thinking, ...rest } = body
  return rest
}
