// Web searches svc ran on another provider reach an Anthropic client as Anthropic's own blocks,
// with the two fields only Anthropic can fill left empty: a result's `encrypted_content` (the
// page, sealed) and a citation's `encrypted_index`. A client that sends the conversation back
// sends them back too, and Claude cannot open what it did not seal: such a turn would be refused,
// and every turn after it. So an Anthropic upstream gets the conversation without them: the
// search's two blocks go, and so do the citations; the answer's text stays. The searches Claude
// made itself carry their sealed fields and pass as sent.
import { isObject, type JsonObject } from '../wire-values'

/** A result block svc wrote from another provider's search. */
const isForeignResult = (block: JsonObject): boolean =>
  block.type === 'web_search_tool_result' &&
  Array.isArray(block.content) &&
  block.content.some((result) => isObject(result) && result.encrypted_content === '')

const isForeignCitation = (citation: unknown): boolean => isObject(citation) && citation.encrypted_index === ''

const hasForeignCitation = (block: JsonObject): boolean =>
  block.type === 'text' && Array.isArray(block.citations) && block.citations.some(isForeignCitation)

const isForeign = (block: unknown): boolean => isObject(block) && (isForeignResult(block) || hasForeignCitation(block))

/** The body without the searches another provider made; the very object when it has none (the common case). */
export function withoutForeignSearches(body: Record<string, unknown>): Record<string, unknown> {
  const { messages } = body
  if (!Array.isArray(messages)) return body
  const touched = messages.some(
    (message) =>
      isObject(message) &&
      message.role === 'assistant' &&
      Array.isArray(message.content) &&
      message.content.some(isForeign),
  )
  if (!touched) return body
  return { ...body, messages: messages.map(withoutForeignBlocks) }
}

function withoutForeignBlocks(message: unknown): unknown {
  if (!isObject(message) || message.role !== 'assistant' || !Array.isArray(message.content)) return message
  const content = message.content as unknown[]
  if (!content.some(isForeign)) return message
  const dropped = new Set(
    content.filter((b) => isObject(b) && isForeignResult(b)).map((b) => (b as JsonObject).tool_use_id),
  )
  const kept = content.flatMap((block) => {
    if (!isObject(block)) return [block]
    if (isForeignResult(block)) return []
    if (block.type === 'server_tool_use' && dropped.has(block.id)) return []
    if (!hasForeignCitation(block)) return [block]
    const citations = (block.citations as unknown[]).filter((citation) => !isForeignCitation(citation))
    return [{ ...block, citations: citations.length > 0 ? citations : null }]
  })
  return { ...message, content: kept }
}
