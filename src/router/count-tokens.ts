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

/** The most `/Pages` names a scan looks at: a real tree has a node for about every ten pages. */
const maxPageNames = 20_000
/** How far either side of a node's `/Type /Pages` its dictionary is looked for. */
const nodeReach = 512

/**
 * The pages of a base64 PDF, read off its page tree without parsing the file: the largest `/Count`
 * in a `/Type /Pages` dictionary, which is the root's. Undefined where the tree is not in plain
 * text (PDF 1.5 object streams compress it) or the data is no PDF: the caller assumes two pages.
 * A 300-page PDF counted as two sent a prompt of ~1M tokens to a 200K-token model, which refused
 * it. Native searches, a bounded window each, and a bounded number of them: hostile data costs a
 * scan of the text, never a quadratic one.
 */
export function pdfPages(base64: string): number | undefined {
  const text = Buffer.from(base64, 'base64').toString('latin1')
  if (!text.startsWith('%PDF')) return undefined
  let pages: number | undefined
  let names = 0
  for (let at = text.indexOf('/Pages'); at !== -1 && names++ < maxPageNames; at = text.indexOf('/Pages', at + 6)) {
    // `/Pages 2 0 R` in the catalog names the tree; only `/Type /Pages` is a node of it.
    if (!/\/Type\s*$/.test(text.slice(Math.max(0, at - 12), at))) continue
    // The node's dictionary: from the `<<` before to the `>>` after, within reach.
    const from = Math.max(0, at - nodeReach)
    const near = text.slice(from, at + nodeReach)
    const here = at - from
    const open = near.lastIndexOf('<<', here)
    const close = near.indexOf('>>', here)
    const count = /\/Count\s+(\d+)/.exec(near.slice(Math.max(open, 0), close === -1 ? near.length : close))
    const n = count ? Number(count[1]) : 0
    if (n > 0 && n <= 100_000 && n > (pages ?? 0)) pages = n
  }
  return pages
}

type CountTokens = (text: string) => number
let countTokens: CountTokens | undefined

/**
 * The o200k tables cost ~55 MB of memory and ~0.7 s to load, and only count_tokens, cut streams
 * and prompts near a context window need them: load them on first use, not at start. `require`
 * keeps the call synchronous and still lets `bun build --compile` embed the module.
 */
function tokenizer(): CountTokens {
  countTokens ??= (require('gpt-tokenizer/encoding/o200k_base') as { countTokens: CountTokens }).countTokens
  return countTokens
}

/** Per-message framing (role markers) that every chat template adds. */
const tokensPerMessage = 4

type CountedRequest = Pick<ExchangeRequest, 'system' | 'messages' | 'tools'>

/** The request's tokens, every character of its text counted. */
export function countRequestTokens(req: CountedRequest): number {
  const { text, extra } = requestText(req)
  return tokenizer()(text) + extra
}

/** Text up to this length is counted whole by `estimateRequestTokens`; longer text, by slices. */
const sampledAbove = 64_000
const slices = 8
const sliceChars = sampledAbove / slices

/**
 * The request's tokens for routing, at a bounded cost: text up to 64,000 characters counted whole,
 * longer text by eight slices of 8,000 spread across it, their tokens per character applied to the
 * whole (~4 ms however long the prompt, where a whole count takes ~6 ms per 100,000 characters on
 * the event loop every stream shares). Within a few per cent on text of one kind throughout.
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
