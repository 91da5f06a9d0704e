// What a conversation says, read the same way from a body of any dialect: its texts in order
// (user text, tool results, assistant text; not thinking, which may not cross providers), and the
// thinking it replays with what signs it. For the conversation properties: what the client sent
// must reach each upstream whole, whatever dialect the upstream speaks.
import type { ProviderKind } from '../../src/config/schema'
import { isObject } from './is-object'

type Json = Record<string, unknown>

const objects = (v: unknown): Json[] => (Array.isArray(v) ? v.filter(isObject) : [])

/** A string, or the text of each text part of a list (Anthropic's, Chat's and Responses' part types alike). */
function textsOf(content: unknown): string[] {
  if (typeof content === 'string') return [content]
  return objects(content).flatMap((part) =>
    ['text', 'input_text', 'output_text'].includes(part.type as string) && typeof part.text === 'string'
      ? [part.text]
      : [],
  )
}

function anthropicTexts(body: Json): string[] {
  return objects(body.messages).flatMap((m) =>
    typeof m.content === 'string'
      ? [m.content]
      : objects(m.content).flatMap((b) => (b.type === 'tool_result' ? textsOf(b.content) : textsOf([b]))),
  )
}

function chatTexts(body: Json): string[] {
  return objects(body.messages).flatMap((m) =>
    m.role === 'system' || m.role === 'developer' ? [] : textsOf(m.content),
  )
}

function responsesTexts(body: Json): string[] {
  if (typeof body.input === 'string') return [body.input]
  return objects(body.input).flatMap((item) => {
    const type = item.type ?? 'message'
    if (type === 'message') return item.role === 'system' || item.role === 'developer' ? [] : textsOf(item.content)
    if (type === 'function_call_output' || type === 'custom_tool_call_output') return textsOf(item.output)
    return []
  })
}

/** The conversation's texts in order, as a body of the dialect has them. */
export function conversationTexts(dialect: ProviderKind, body: Json): string[] {
  switch (dialect) {
    case 'anthropic':
      return anthropicTexts(body)
    case 'openai-chat':
      return chatTexts(body)
    case 'openai-responses':
      return responsesTexts(body)
  }
}

/**
 * A piece as it reaches the upstream: itself, or (Chat, which has no is_error) a failed tool's
 * output marked as svc marks it (encode-chat-request.ts).
 */
const carries = (got: string, piece: string): boolean => got === piece || got === `Error: ${piece}`

/** The pieces of `want` that `got` does not have, in `want`'s order (each matched once, after the one before). */
export function missingInOrder(want: string[], got: string[]): string[] {
  const missing: string[] = []
  let at = 0
  for (const piece of want) {
    const found = got.findIndex((text, i) => i >= at && carries(text, piece))
    if (found === -1) missing.push(piece)
    else at = found + 1
  }
  return missing
}

/** The thinking blocks an Anthropic body replays: their text, by signature. */
export const anthropicThinking = (body: Json): { thinking: unknown; signature: unknown }[] =>
  objects(body.messages).flatMap((m) =>
    objects(m.content).flatMap((b) =>
      b.type === 'thinking' ? [{ thinking: b.thinking, signature: b.signature }] : [],
    ),
  )

/** The reasoning blobs a Responses body replays. */
export const responsesBlobs = (body: Json): string[] =>
  objects(body.input).flatMap((item) =>
    item.type === 'reasoning' && typeof item.encrypted_content === 'string' ? [item.encrypted_content] : [],
  )
