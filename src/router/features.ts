// What a request needs from a model, read once from the neutral request before ranking.
import { budgetAsSent, budgetForEffort } from '../exchange/thinking-budget'
import { estimateTokensFromBytes, utf8Length } from '../exchange/token-estimate'
import type { CatalogModel } from '../config/load'
import type { RoutingMode } from '../config/schema'
import type { CacheControl, ExchangeRequest, Thinking, UserContentBlock, WebSearchTool } from '../exchange/types'
import { maxCredibleSearches } from '../relay/credible-usage'
import { estimateRequestTokens, mediaTokensOf, textOf } from './count-tokens'

/** A tool only one provider's API has: its type, and whose. */
export interface ExclusiveTool {
  type: string
  of: 'Anthropic' | 'OpenAI'
}

export interface RequestFeatures {
  tools: boolean
  /** Images or files (PDFs): both need a vision model. */
  images: boolean
  /** Images or files named by an Anthropic Files API id: only an Anthropic upstream can read them. */
  anthropicFiles: boolean
  /**
   * The first tool offered that only one provider's API has (Anthropic's text_editor_20250728,
   * web_fetch_20250910, mcp_servers…; OpenAI's local_shell, mcp…), if any, and whose: elsewhere the
   * model would be offered no such tool, and a forced tool_choice naming it none either, so only
   * that provider serves the request.
   */
  exclusiveTool: ExclusiveTool | undefined
  /**
   * The media type of an attached file that is neither a PDF nor text (a Word or Excel file, say),
   * if any. Anthropic's documents are PDFs or plain text and Chat's file parts PDFs: both refuse
   * anything else, so only a Responses upstream is given it (as sent, to judge for itself).
   */
  otherFileType: string | undefined
  thinking: boolean
  /**
   * The thinking budget a model that thinks by budget is sent, where the client asked for thinking:
   * an enabled request's own (at least the least Anthropic takes), an adaptive one's effort's. The
   * encoders raise max_tokens above it, which the credit a request holds counts (rank.ts).
   */
  thinkingBudget: { form: 'enabled' | 'adaptive'; tokens: number } | undefined
  /** A cache mark asks for an hour (`ttl: "1h"`): the prompt may be written at the 1-hour price. */
  hourCacheWrites: boolean
  /** The client forces a tool call (Anthropic `any`/`tool`, OpenAI `required`/a named function). */
  forcedToolChoice: boolean
  /**
   * The client offered the upstream's own web search: `any` where Anthropic's or OpenAI's serves,
   * `anthropic` where it excludes domains, which only Anthropic's can.
   */
  webSearch: 'any' | 'anthropic' | undefined
  /** Anthropic's web search, deferred until a tool search loads it (ExchangeRequest `deferredWebSearch`). */
  deferredWebSearch: boolean
  /** Anthropic's `max_uses`, the most searches a message may run there, where the client set one. */
  searchLimit: number | undefined
  /** OpenAI's web search limited to its cache (ExchangeRequest `cachedWebSearch`): OpenAI itself runs it. */
  cachedWebSearch: boolean
  /** The client asks Anthropic to judge its tool calls (Claude Code's `safeguards`): only Anthropic does. */
  anthropicSafeguards: boolean
  /** The conversation ends with the client's own assistant turn, for the model to continue (a prefill). */
  assistantPrefill: boolean
  /**
   * That turn is one Anthropic paused in its server tools, sent back to resume their loop: no
   * prefill to Anthropic itself; translated for another, the server-tool blocks are gone and it is.
   */
  continuesPausedTurn: boolean
  /**
   * The conversation ends with a user turn of blank text only. Anthropic refuses blank text, and
   * without that turn the conversation would end on the assistant's, which Claude would continue
   * as a prefill instead of answering; OpenAI's models answer it.
   */
  endsOnBlankText: boolean
  /**
   * The prompt's size: ≈ 4 bytes of its text a token (token-estimate.ts), raised to the
   * tokenizer's count where the prompt may come near a context window (promptTokens).
   */
  estimatedInputTokens: number
  maxTokens: number
  /** No output limit from the client: maxTokens is a ceiling, lowered to the room the context window leaves. */
  openOutput: boolean
}

/** The catalog's models, those of the request's profile checked against its size. */
type RankedModels = readonly Pick<CatalogModel, 'profiles' | 'contextWindow' | 'maxOutputTokens'>[]

const pdfType = 'application/pdf'

/** The client's `max_uses`, whole, at most the most searches svc bills a message (credible-usage.ts). */
const searchLimit = (search: WebSearchTool | undefined): number | undefined => {
  const asked = search?.maxUses
  if (asked === undefined || !Number.isFinite(asked)) return undefined
  return Math.min(Math.max(Math.ceil(asked), 0), maxCredibleSearches)
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

// Past instructions given last, as the prefill rule reads (they join Claude's system prompt).
const endsOnBlankText = (req: ExchangeRequest): boolean => {
  const last = req.messages.findLast((m) => m.role !== 'system')
  return last?.role === 'user' && last.content.every((block) => block.type === 'text' && block.text.trim() === '')
}

/** `mode` and `models`: the profile the request names and the catalog, for its size (promptTokens). */
export function readRequestFeatures(req: ExchangeRequest, mode?: RoutingMode, models?: RankedModels): RequestFeatures {
  /** The prompt's text in UTF-8 bytes, and its JSON (tool schemas, a call's input: mostly ASCII) in characters. */
  let size = 0
  let hourCacheWrites = req.hourCacheMark === true
  const markedForAnHour = (block: object) => {
    if ((block as { cacheControl?: CacheControl }).cacheControl?.ttl === '1h') hourCacheWrites = true
  }
  let mediaTokens = 0
  let anthropicFiles = false
  let otherFileType: string | undefined
  const countPart = (part: UserContentBlock) => {
    markedForAnHour(part)
    size += utf8Length(textOf(part))
    mediaTokens += mediaTokensOf(part)
    if (part.type === 'text') return
    if (part.source.kind === 'file') anthropicFiles = true
    else if (part.type === 'document' && part.source.kind === 'base64' && part.source.mediaType !== pdfType)
      otherFileType ??= part.source.mediaType
  }
  for (const block of req.system) {
    markedForAnHour(block)
    size += utf8Length(block.text)
  }
  for (const message of req.messages) {
    for (const block of message.content) {
      markedForAnHour(block)
      switch (block.type) {
        case 'text':
        case 'image':
        case 'document':
          countPart(block)
          break
        case 'thinking':
          size += utf8Length(block.thinking)
          break
        case 'tool_use':
          size += jsonLength(block.input ?? {}) + block.name.length
          break
        case 'tool_result':
          for (const part of block.content) countPart(part)
          break
        default:
          break
      }
    }
  }
  for (const tool of req.tools) {
    markedForAnHour(tool)
    size += tool.name.length + utf8Length(tool.description ?? '') + jsonLength(tool.inputSchema)
  }
  const exclusiveTool: ExclusiveTool | undefined = req.anthropicTools?.length
    ? { type: req.anthropicTools[0]!, of: 'Anthropic' }
    : req.openaiTools?.length
      ? { type: req.openaiTools[0]!, of: 'OpenAI' }
      : undefined
  const rough = estimateTokensFromBytes(size) + mediaTokens
  return {
    tools:
      req.tools.length > 0 ||
      exclusiveTool !== undefined ||
      req.messages.some((m) => m.content.some((b) => b.type === 'tool_use')),
    images: mediaTokens > 0,
    anthropicFiles,
    exclusiveTool,
    otherFileType,
    thinking: req.thinking !== undefined && req.thinking.type !== 'disabled',
    thinkingBudget: thinkingBudgetOf(req.thinking),
    hourCacheWrites,
    forcedToolChoice: req.toolChoice?.type === 'any' || req.toolChoice?.type === 'tool',
    webSearch: req.webSearch ? (req.webSearch.blockedDomains?.length ? 'anthropic' : 'any') : undefined,
    deferredWebSearch: req.deferredWebSearch !== undefined,
    searchLimit: searchLimit(req.webSearch ?? req.deferredWebSearch),
    cachedWebSearch: req.cachedWebSearch === true,
    anthropicSafeguards: req.anthropicSafeguards === true,
    // Instructions given last (a Responses client's developer message) go into Anthropic's system
    // prompt, so the conversation Claude sees ends on the turn before them.
    assistantPrefill: req.messages.findLast((m) => m.role !== 'system')?.role === 'assistant',
    continuesPausedTurn: req.continuesPausedTurn === true,
    endsOnBlankText: endsOnBlankText(req),
    estimatedInputTokens: promptTokens(req, rough, mode, models),
    maxTokens: req.maxTokens,
    openOutput: req.openOutput === true,
  }
}

/**
 * How far below the tokenizer's count the rough size can fall: o200k counts JSON at ~2.1 × its
 * characters ÷ 4, and CJK text at ~1 × its bytes ÷ 4 (~3 × its characters', as it was counted
 * before), English prose and code at ~1; Claude's tokenizer counts more.
 */
const worstUnderestimate = 3

/**
 * The prompt's size for the window checks, the prices of a long prompt's tier and the output an
 * open request is given. Characters ÷ 4 would let a model whose window the prompt overflows try
 * (and refuse it), and size an open output past the window, so the tokenizer counts it, but only
 * where that can change the answer: where the rough size, at its worst underestimate, and the
 * output asked for come near some model's window (a count of slices of a long prompt, ~4 ms, and
 * the tokenizer's ~0.7 s load the first time, which a small request must not pay). The count only
 * ever raises the rough size: o200k counts English and code at ~0.9 × it, and Claude's tokenizer,
 * which is not public, counts more than o200k does.
 */
function promptTokens(req: ExchangeRequest, rough: number, mode?: RoutingMode, models?: RankedModels): number {
  if (!mode || !models) return rough
  const worst = rough * worstUnderestimate
  for (const model of models) {
    if (!model.profiles.includes(mode)) continue
    const output = Math.min(req.maxTokens, model.maxOutputTokens)
    if (worst + output > model.contextWindow * windowMargin) return Math.max(rough, estimateRequestTokens(req))
  }
  return rough
}
/** The open-output sizing keeps 5 % of the window back (rank.ts): the count matters from there. */
const windowMargin = 0.95

/** The budget the encoders send for the request's thinking, as encode-anthropic-request.ts and model-fit.ts make it. */
function thinkingBudgetOf(thinking: Thinking | undefined): RequestFeatures['thinkingBudget'] {
  if (thinking?.type === 'enabled') return { form: 'enabled', tokens: budgetAsSent(thinking.budgetTokens) }
  if (thinking?.type === 'adaptive') return { form: 'adaptive', tokens: budgetForEffort(thinking.effort) }
  return undefined
}
