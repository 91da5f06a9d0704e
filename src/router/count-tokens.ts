// Token counts with a real BPE tokenizer (o200k_base), for count_tokens when no upstream can
// count, for legs whose upstream never reported usage and for prompts the router's rough estimate
// puts near a context window. Claude's own tokenizer is not public;
// o200k is close enough for compaction decisions and estimates, and never a made-up zero.
import { documentText, type ExchangeRequest, type UserContentBlock } from '../exchange/types'

// Anthropic bills an image at about (width × height) / 750 tokens; ~1,600 for a typical one.
const tokensPerImage = 1600
// Anthropic puts a PDF page at 1,500–3,000 tokens of text, plus the page as an image: the low end.
const tokensPerPage = 1500 + tokensPerImage
/** A file whose pages cannot be told (a URL, a file id, a PDF whose page tree is compressed): two pages. */
const pagesUnknown = 2

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
  if (block.type !== 'document' || block.source.kind === 'text') return 0
  const pages = block.source.kind === 'base64' ? pdfPages(block.source.data) : undefined
  return (pages ?? pagesUnknown) * tokensPerPage
}

/** The most `/Pages` names the fallback scan looks at: a real tree has a node for about every ten pages. */
const maxPageNames = 2_000
/** How far before a node's `/Type /Pages` the fallback looks for its dictionary's opening. */
const nodeReach = 512
/** How long the root's dictionary may be: a flat page tree's `/Kids` of thousands of pages is tens of KB. */
const longestRoot = 256 * 1024
/** How long another node's may be, for the fallback (a few thousand nodes at most). */
const longestNode = 4096

/**
 * The pages of a base64 PDF, read off its page tree without parsing the file: the `/Count` of the
 * tree's root, which the catalog names (the last catalog and the last version of the root: an
 * incremental save appends them). Where that cannot be followed, the largest `/Count` of a
 * `/Type /Pages` node. Undefined where the tree is not in plain text (PDF 1.5 object streams
 * compress it) or the data is no PDF: the caller assumes two pages. A 300-page PDF counted as two
 * sent a prompt of ~1M tokens to a 200K-token model, which refused it. Native searches and bounded
 * scans: hostile data costs a pass over the text, never a quadratic one.
 */
export function pdfPages(base64: string): number | undefined {
  const text = Buffer.from(base64, 'base64').toString('latin1')
  if (!text.startsWith('%PDF')) return undefined
  return rootPageCount(text) ?? largestPageCount(text)
}

const pageCountOf = (dictionary: string | undefined): number | undefined => {
  const count = dictionary && /\/Count\s+(\d+)/.exec(dictionary)
  const n = count ? Number(count[1]) : 0
  return n > 0 && n <= 100_000 ? n : undefined
}

/** The root's count: the catalog's `/Pages n g R`, then the last `n g obj`'s dictionary. */
function rootPageCount(text: string): number | undefined {
  const catalog = text.lastIndexOf('/Catalog')
  if (catalog === -1) return undefined
  const ref = /\/Pages\s+(\d+)\s+(\d+)\s+R/.exec(text.slice(Math.max(0, catalog - 1024), catalog + 1024))
  if (!ref) return undefined
  const name = `${ref[1]} ${ref[2]} obj`
  // The last definition whose number is not the tail of a longer one ("11 0 obj" for "1 0 obj").
  let at = text.lastIndexOf(name)
  while (at > 0 && /\d/.test(text[at - 1]!)) at = text.lastIndexOf(name, at - 1)
  return at === -1 ? undefined : pageCountOf(dictionaryAt(text, at + name.length, longestRoot))
}

/** The dictionary opening right after `from`, to its matching `>>` (nested ones skipped), if within bounds. */
function dictionaryAt(text: string, from: number, longest: number): string | undefined {
  const open = text.indexOf('<<', from)
  if (open === -1 || open - from > 64) return undefined
  const end = Math.min(text.length, open + longest)
  let depth = 0
  for (let i = open; i < end - 1; i++) {
    const pair =
      text.charCodeAt(i) === 60 && text.charCodeAt(i + 1) === 60
        ? 1
        : text.charCodeAt(i) === 62 && text.charCodeAt(i + 1) === 62
          ? -1
          : 0
    if (pair === 0) continue
    depth += pair
    i++
    // Only the root's own members: a nested dictionary (its /Resources) is cut out of the count's search.
    if (depth === 0)
      return text.slice(open, i + 1).replace(/<<(?:(?!<<|>>)[\s\S])*>>/g, (d, offset) => (offset === 0 ? d : ''))
  }
  return undefined
}

/** The largest `/Count` of a `/Type /Pages` node, looked for near each: where the catalog cannot be followed. */
function largestPageCount(text: string): number | undefined {
  let pages: number | undefined
  let names = 0
  for (let at = text.indexOf('/Pages'); at !== -1 && names++ < maxPageNames; at = text.indexOf('/Pages', at + 6)) {
    // `/Pages 2 0 R` in the catalog names the tree; only `/Type /Pages` is a node of it.
    if (!/\/Type\s*$/.test(text.slice(Math.max(0, at - 12), at))) continue
    // The node's dictionary: from the `<<` just before it to its matching `>>`.
    const from = Math.max(0, at - nodeReach)
    const open = text.slice(from, at).lastIndexOf('<<')
    const n = open === -1 ? undefined : pageCountOf(dictionaryAt(text, from + open, longestNode))
    if (n !== undefined && n > (pages ?? 0)) pages = n
  }
  return pages
}

type CountTokens = (text: string) => number
let countTokens: CountTokens | undefined

/**
 * A prompt's `<|endoftext|>` (any code or document about language models has it) is text to
 * count: by default the library refuses it ("Disallowed special token"), and such a prompt was
 * answered 500 near a window, on count_tokens, and when its stream was interrupted (an audit).
 */
const specialTokensAsText = { disallowedSpecial: new Set<string>() }

/**
 * The o200k tables cost ~55 MB of memory and ~0.7 s to load, and only count_tokens, cut streams
 * and prompts near a context window need them: load them on first use, not at start. `require`
 * keeps the call synchronous and still lets `bun build --compile` embed the module.
 *
 * The library caches the merges of each piece of text it has seen, 100,000 of them, keyed by the
 * piece: in JavaScriptCore a piece of 14 characters or more is a view of the whole text, so every
 * cached piece kept its whole prompt alive (an audit: a gateway serving agents' long prompts went
 * from 131 to 1,321 MB in 35 s). The cache is emptied after each count: it still serves the text's
 * own repeats (without it a count takes ~2 × as long), never holds a prompt past its count, and
 * loses only the warmth of the last prompt (a count ~1.3 × as long as with it).
 */
function tokenizer(): CountTokens {
  if (countTokens === undefined) {
    const o200k = require('gpt-tokenizer/encoding/o200k_base') as {
      countTokens: (text: string, options: typeof specialTokensAsText) => number
      clearMergeCache: () => void
    }
    countTokens = (text) => {
      try {
        return o200k.countTokens(text, specialTokensAsText)
      } finally {
        o200k.clearMergeCache()
      }
    }
  }
  return countTokens
}

/** Per-message framing (role markers) that every chat template adds. */
const tokensPerMessage = 4

type CountedRequest = Pick<ExchangeRequest, 'system' | 'messages' | 'tools'>

/** Text up to this length is counted whole by `estimateRequestTokens`; longer text, by slices. */
const sampledAbove = 64_000
const slices = 64
const sliceChars = sampledAbove / slices

/**
 * The request's tokens, at a bounded cost (for routing, count_tokens and a leg's estimated prompt):
 * text up to 64,000 characters counted whole, longer text by 64 slices of 1,000 spread across it,
 * their tokens per character applied to the whole (~4 ms however long the prompt, where a whole
 * count takes ~6 ms per 100,000 characters on the event loop every stream shares). Within ~1.5 %
 * on prompts that mix code, prose, JSON and CJK text (measured); eight slices of 8,000 were 13–18 %
 * off where a CJK file fell on one slice of a long English prompt (a review).
 */
export function estimateRequestTokens(req: CountedRequest): number {
  const { text, extra } = requestText(req)
  if (text.length <= sampledAbove) return tokenizer()(text) + extra
  const stride = Math.floor((text.length - sliceChars) / (slices - 1))
  let tokens = 0
  for (let i = 0; i < slices; i++) tokens += tokenizer()(text.slice(i * stride, i * stride + sliceChars))
  return Math.ceil((tokens / sampledAbove) * text.length) + extra
}

/** The request's text, joined, and the tokens of what is not text (images, files, message framing). */
function requestText(req: CountedRequest): { text: string; extra: number } {
  const texts: string[] = []
  let extra = 0
  // Images and files are not text: they count as the router estimates them.
  const countPart = (part: UserContentBlock) => {
    const text = textOf(part)
    if (text !== '') texts.push(text)
    extra += mediaTokensOf(part)
  }
  for (const block of req.system) texts.push(block.text)
  for (const message of req.messages) {
    extra += tokensPerMessage
    for (const block of message.content) {
      switch (block.type) {
        case 'text':
        case 'image':
        case 'document':
          countPart(block)
          break
        case 'thinking':
          texts.push(block.thinking)
          break
        case 'tool_use':
          texts.push(block.name, JSON.stringify(block.input ?? {}))
          break
        case 'tool_result':
          for (const part of block.content) countPart(part)
          break
        default:
          break
      }
    }
  }
  for (const tool of req.tools) texts.push(tool.name, tool.description ?? '', JSON.stringify(tool.inputSchema))
  return { text: texts.join('\n'), extra }
}
