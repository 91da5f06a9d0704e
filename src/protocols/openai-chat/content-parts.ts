// A Chat message's `content` as text and thinking, in order. OpenAI and most compatible servers
// send a string; Mistral sends a list of chunks, its reasoning models' thinking among them:
// `[{"type":"thinking","thinking":[{"type":"text","text":"…"}]}, {"type":"text","text":"…"}]`.
import { isObject, readString } from '../wire-values'

export interface ContentPart {
  kind: 'thinking' | 'text'
  text: string
}

export function chatContentParts(content: unknown): ContentPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ kind: 'text', text: content }]
  if (!Array.isArray(content)) return []
  const parts: ContentPart[] = []
  for (const chunk of content) {
    if (!isObject(chunk)) continue
    // Other chunk types (Mistral's references, images) have no words for the answer.
    const text =
      chunk.type === 'text' ? readString(chunk, 'text') : chunk.type === 'thinking' ? thinkingText(chunk) : undefined
    if (text) parts.push({ kind: chunk.type === 'text' ? 'text' : 'thinking', text })
  }
  return parts
}

/** A thinking chunk's words: a list of text chunks (Mistral), or a plain string. */
const thinkingText = (chunk: Record<string, unknown>): string => {
  const thinking = chunk.thinking
  if (typeof thinking === 'string') return thinking
  if (!Array.isArray(thinking)) return ''
  return thinking.map((part) => (isObject(part) ? (readString(part, 'text') ?? '') : '')).join('')
}
