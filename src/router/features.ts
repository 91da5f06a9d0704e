// What a request needs from a model, read once from the neutral request before ranking.
import { documentText, type ExchangeRequest, type UserContentBlock } from '../exchange/types'

export interface RequestFeatures {
  tools: boolean
  /** Images or files (PDFs): both need a vision model. */
  images: boolean
  /** Images or files named by an Anthropic Files API id: only an Anthropic upstream can read them. */
  anthropicFiles: boolean
  /**
   * The media type of an attached file that is neither a PDF nor text (a Word or Excel file, say),
   * if any. Anthropic's documents are PDFs or plain text and Chat's file parts PDFs: both refuse
   * anything else, so only a Responses upstream is given it (as sent, to judge for itself).
   */
  otherFileType: string | undefined
  thinking: boolean
  /** The client forces a tool call (Anthropic `any`/`tool`, OpenAI `required`/a named function). */
  forcedToolChoice: boolean
  /**
   * The client offered the upstream's own web search: `any` where Anthropic's or OpenAI's serves,
   * `anthropic` where it excludes domains, which only Anthropic's can.
   */
  webSearch: 'any' | 'anthropic' | undefined
  /** The conversation ends with the client's own assistant turn, for the model to continue (a prefill). */
  assistantPrefill: boolean
  /**
   * The conversation ends with a user turn of blank text only. Anthropic refuses blank text, and
   * without that turn the conversation would end on the assistant's, which Claude would continue
   * as a prefill instead of answering; OpenAI's models answer it.
   */
  endsOnBlankText: boolean
  /** Rough prompt size (≈ 4 characters a token): enough to rule out a too-small context window. */
  estimatedInputTokens: number
  maxTokens: number
  /** No output limit from the client: maxTokens is a ceiling, lowered to the room the context window leaves. */
  openOutput: boolean
}

const charsPerToken = 4
const pdfType = 'application/pdf'
// Anthropic bills an image at about (width × height) / 750 tokens; ~1,600 for a typical one.
const tokensPerImage = 1600
// A file's pages are unknown without parsing it. Anthropic puts a PDF page at 1,500–3,000 tokens of
// text, plus the page as an image: a file counts as two pages at the low end.
const tokensPerFile = 2 * (1500 + tokensPerImage)

/** The prompt text of a user or tool-result part: a plain-text document is its title and text. */
export function textOf(block: UserContentBlock): string {
  if (block.type === 'text') return block.text
  if (block.type === 'document' && block.source.kind === 'text') {
    return documentText(block.title, block.source.text)
  }
  return ''
}

/** What an image or a file (PDF) costs beyond text; both need a vision model, at Anthropic and OpenAI. */
export function mediaTokensOf(block: UserContentBlock): number {
  if (block.type === 'image') return tokensPerImage
  if (block.type === 'document' && block.source.kind !== 'text') return tokensPerFile
  return 0
}

/**
 * The length JSON.stringify would give a parsed JSON value, escapes aside, without building the
 * string: an agent's tool schemas are tens of KB a request, and serialising them only to count
 * them took twice as long (13.7 against 6.0 µs for 20 schemas) and left the strings behind.
 */
export function jsonLength(value: unknown): number {
  if (typeof value === 'string') return value.length + 2
  if (value === null || typeof value !== 'object') return value === undefined ? 0 : String(value).length
  let length = 2
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) length += jsonLength(value[i]) + (i > 0 ? 1 : 0)
    return length
  }
  let first = true
  for (const key in value) {
    const member = (value as Record<string, unknown>)[key]
    if (member === undefined) continue
    length += key.length + 3 + jsonLength(member) + (first ? 0 : 1)
    first = false
  }
  return length
}

const endsOnBlankText = (req: ExchangeRequest): boolean => {
  const last = req.messages.at(-1)
  return last?.role === 'user' && last.content.every((block) => block.type === 'text' && block.text.trim() === '')
}

export function readRequestFeatures(req: ExchangeRequest): RequestFeatures {
  let chars = 0
  let mediaTokens = 0
  let anthropicFiles = false
  let otherFileType: string | undefined
  const countPart = (part: UserContentBlock) => {
    chars += textOf(part).length
    mediaTokens += mediaTokensOf(part)
    if (part.type === 'text') return
    if (part.source.kind === 'file') anthropicFiles = true
    else if (part.type === 'document' && part.source.kind === 'base64' && part.source.mediaType !== pdfType)
      otherFileType ??= part.source.mediaType
  }
  for (const block of req.system) chars += block.text.length
  for (const message of req.messages) {
    for (const block of message.content) {
      switch (block.type) {
        case 'text':
        case 'image':
        case 'document':
          countPart(block)
          break
        case 'thinking':
          chars += block.thinking.length
          break
        case 'tool_use':
          chars += jsonLength(block.input ?? {}) + block.name.length
          break
        case 'tool_result':
          for (const part of block.content) countPart(part)
          break
        default:
          break
      }
    }
  }
  for (const tool of req.tools)
    chars += tool.name.length + (tool.description?.length ?? 0) + jsonLength(tool.inputSchema)
  return {
    tools: req.tools.length > 0 || req.messages.some((m) => m.content.some((b) => b.type === 'tool_use')),
    images: mediaTokens > 0,
    anthropicFiles,
    otherFileType,
    thinking: req.thinking !== undefined && req.thinking.type !== 'disabled',
    forcedToolChoice: req.toolChoice?.type === 'any' || req.toolChoice?.type === 'tool',
    webSearch: req.webSearch ? (req.webSearch.blockedDomains?.length ? 'anthropic' : 'any') : undefined,
    assistantPrefill: req.messages.at(-1)?.role === 'assistant',
    endsOnBlankText: endsOnBlankText(req),
    estimatedInputTokens: Math.ceil(chars / charsPerToken) + mediaTokens,
    maxTokens: req.maxTokens,
    openOutput: req.openOutput === true,
  }
}
