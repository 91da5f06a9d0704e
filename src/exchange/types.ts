// The neutral exchange: every inbound shape decodes into these types and every upstream shape
// encodes from them, so each wire format needs one decoder and one encoder, never a pair matrix.
// Usage keeps Anthropic semantics (uncached input apart from cache reads and writes); the edges
// convert.

export type Role = 'user' | 'assistant'

export interface CacheControl {
  type: 'ephemeral'
  ttl?: '5m' | '1h'
}

/**
 * A file in the client's own Anthropic store (Files API), named by its id. The gateway cannot read
 * it, nor can another provider: an Anthropic client's body reaches an Anthropic upstream as sent,
 * and any other upstream's encoder refuses the request with a 400 naming `param`, the field the
 * client sent, rather than asking the model without the file.
 */
export interface FileReference {
  kind: 'file'
  fileId: string
  param: string
}

export type ImageSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string }
  | FileReference

/**
 * A page the answer's text cites, found by the upstream's web search: Anthropic's
 * `web_search_result_location` citation, OpenAI's `url_citation` annotation. Output only.
 */
export interface Citation {
  url: string
  title: string
  /** The cited words: Anthropic's quote of the page, or the answer's own words OpenAI marks. */
  citedText: string
  /**
   * Where in its text block the citation applies, in string indices: OpenAI marks a span of the
   * answer. Absent: the whole block, as Anthropic cites (it starts a new block for each cited passage).
   */
  span?: { start: number; end: number }
}

export interface TextBlock {
  type: 'text'
  text: string
  cacheControl?: CacheControl
  /** Pages this text cites (answers only). */
  citations?: Citation[]
  /**
   * Answers only: the model declined, and these are its words saying so (OpenAI's `refusal`: Chat's
   * `message.refusal`, a Responses `refusal` content part). A flag rather than a block type of its
   * own: to an Anthropic client, to the ledger and to every request encoder a refusal is text like
   * any other, and only a Responses client's encoders tell it apart, as a `refusal` part in a
   * completed response. The stop reason stays `refusal`; one without a declined block (Anthropic's
   * classifier stopping the answer, a content filter) is an answer cut, not a refusal part.
   */
  refusal?: true
}

/** How closely an OpenAI model looks at an image (`original`: full resolution, Responses only). */
export type ImageDetail = 'auto' | 'low' | 'high' | 'original'

export interface ImageBlock {
  type: 'image'
  source: ImageSource
  /** Absent when the client chose none (Anthropic has no such setting): the upstream's default. */
  detail?: ImageDetail
  cacheControl?: CacheControl
}

/** A file (in practice a PDF), a link to one, or a plain-text document kept as its text. */
export type DocumentSource =
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'url'; url: string }
  | { kind: 'text'; text: string }
  | FileReference

export interface DocumentBlock {
  type: 'document'
  source: DocumentSource
  /** Anthropic's title, OpenAI's filename: the name the model knows the document by. */
  title?: string
  cacheControl?: CacheControl
}

/** A document as prompt text, where it goes as text (or is counted as text): its title, a blank line, its text. */
export const documentText = (title: string | undefined, text: string): string => (title ? `${title}\n\n${text}` : text)

/** What a user turn or a tool result carries besides tool calls. */
export type UserContentBlock = TextBlock | ImageBlock | DocumentBlock

export interface ThinkingBlock {
  type: 'thinking'
  thinking: string
  /** Anthropic's opaque signature; empty or absent when another provider produced the reasoning. */
  signature?: string
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking'
  data: string
}

export interface ToolUseBlock {
  type: 'tool_use'
  id: string
  name: string
  input: unknown
  cacheControl?: CacheControl
}

export interface ToolResultBlock {
  type: 'tool_result'
  toolUseId: string
  content: UserContentBlock[]
  isError?: boolean
  cacheControl?: CacheControl
}

export type ContentBlock =
  | TextBlock
  | ImageBlock
  | DocumentBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ToolResultBlock

export interface Message {
  role: Role
  content: ContentBlock[]
}

/**
 * Instructions given mid-conversation (a Responses system or developer item after the first user
 * or assistant item; leading ones join ExchangeRequest.system). Chat and Responses upstreams keep
 * them in place; Anthropic, which has a system prompt only, appends them to it.
 */
export interface SystemMessage {
  role: 'system'
  content: TextBlock[]
}

export type ConversationMessage = Message | SystemMessage

export interface ToolDefinition {
  name: string
  description?: string
  /** JSON Schema of the arguments object. */
  inputSchema: Record<string, unknown>
  /**
   * The client asked that calls follow the schema exactly (OpenAI's and Anthropic's `strict: true`):
   * kept for an OpenAI-dialect upstream, which enforces it.
   */
  strict?: true
  cacheControl?: CacheControl
}

/**
 * The upstream's own web search, offered to the model: Anthropic's `web_search` server tool or
 * OpenAI's hosted `web_search` tool. Each runs inside its provider, so the router sends a request
 * that has it to an Anthropic or a Responses upstream where the profile has one (rank.ts).
 */
export interface WebSearchTool {
  /** Anthropic's limit on searches a turn; OpenAI has none. */
  maxUses?: number
  allowedDomains?: string[]
  /** Anthropic only: OpenAI cannot exclude domains, so the router prefers Anthropic for such a request. */
  blockedDomains?: string[]
  /** Where the user is, to localise results (both providers' approximate location). */
  userLocation?: { city?: string; region?: string; country?: string; timezone?: string }
}

export type ToolChoice =
  | { type: 'auto'; disableParallel?: boolean }
  | { type: 'any'; disableParallel?: boolean }
  | { type: 'tool'; name: string; disableParallel?: boolean }
  | { type: 'none' }

export type ReasoningEffort = 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max'

/** An effort a model may take: the ones above, and OpenAI's `none` (no reasoning at all). */
export type ModelEffort = 'none' | ReasoningEffort

export type Thinking =
  | { type: 'enabled'; budgetTokens: number }
  /** `summary`: the client asked to read the reasoning (a Responses client's reasoning.summary). */
  | { type: 'adaptive'; effort?: ReasoningEffort; summary?: boolean }
  | { type: 'disabled' }

/** `name` and `description` are OpenAI's (Chat requires a name); Anthropic's format carries only the schema. */
export interface JsonSchemaFormat {
  type: 'json_schema'
  schema: Record<string, unknown>
  name?: string
  description?: string
  strict?: boolean
}

/** The shape the answer's text must take (structured outputs); absent, free text. */
export type ResponseFormat = JsonSchemaFormat | { type: 'json_object' }

export interface ExchangeRequest {
  system: TextBlock[]
  /** The conversation in order: user and assistant turns, and instructions given along the way. */
  messages: ConversationMessage[]
  tools: ToolDefinition[]
  /** The upstream's own web search, where the client offered it. */
  webSearch?: WebSearchTool
  /**
   * Anthropic's web search marked `defer_loading`, not yet loaded by a tool search: out of the
   * model's sight, so no search is routed for, but an Anthropic upstream, sent the client's tools,
   * loads it when the model looks for it, runs it and bills it.
   */
  deferredWebSearch?: WebSearchTool
  /**
   * The client offered OpenAI's web search limited to its cache of pages (Codex's default): no
   * other provider has it, so it is no `webSearch`, but OpenAI itself runs it, and bills it.
   */
  cachedWebSearch?: true
  /**
   * The types of the tools only Anthropic's API has (text_editor_…, bash_…, memory_…, computer_…,
   * which the client runs; web_fetch_…, tool_search_tool_…, mcp_toolset and the MCP connector's
   * `mcp_servers`, which Anthropic runs), where an Anthropic client offered any.
   */
  anthropicTools?: string[]
  /**
   * The types of the tools (and of their calls in the history) only OpenAI's Responses API has:
   * those the client runs (local_shell, shell, apply_patch, computer_use_preview) and remote MCP,
   * which OpenAI calls, where a Responses client offered any.
   */
  openaiTools?: string[]
  /**
   * Claude Code's auto and plan modes send `safeguards` for Anthropic's API to judge each tool call
   * (its verdicts come back as `safeguard_results`): a pass-through carries both, and only Anthropic
   * itself answers them.
   */
  anthropicSafeguards?: boolean
  /**
   * The conversation ends on the assistant turn Anthropic paused in its server tools' loop
   * (`pause_turn`), sent back for it to continue: not a prefill, though it ends on the assistant.
   */
  continuesPausedTurn?: boolean
  /**
   * Anthropic's top-level cache mark (its automatic caching) asks for an hour: a 1-hour cache write,
   * priced dearer, as a block's `ttl: "1h"` mark is (cacheControl). The credit a request holds counts it.
   */
  hourCacheMark?: boolean
  toolChoice?: ToolChoice
  maxTokens: number
  /**
   * The client set no output limit (a Responses request may leave it out; Codex does): maxTokens
   * is a ceiling, and the router gives the answer what room the model's context window leaves.
   */
  openOutput?: boolean
  temperature?: number
  topP?: number
  topK?: number
  stopSequences?: string[]
  thinking?: Thinking
  responseFormat?: ResponseFormat
  stream: boolean
  /** Opaque end-user id (Anthropic metadata.user_id, OpenAI user / safety_identifier). */
  user?: string
  /** Groups a session's requests for an upstream's prompt cache (OpenAI's prompt_cache_key). */
  promptCacheKey?: string
}

export type StopReason =
  | 'end_turn'
  | 'max_tokens'
  | 'tool_use'
  | 'stop_sequence'
  | 'refusal'
  | 'pause_turn'
  | 'context_exceeded'
  | 'error'

/** Token counts in Anthropic semantics: `input` excludes cache reads and cache writes. */
export interface Usage {
  input: number
  cacheRead: number
  cacheWrite: number
  /**
   * Part of `cacheWrite` written for an hour (Anthropic's `ttl: "1h"`), priced apart from the
   * 5-minute writes, where the upstream says. Absent: none reported.
   */
  cacheWrite1h?: number
  output: number
  /** Part of `output` spent on reasoning, where the upstream says. */
  reasoning: number
  /**
   * Searches the upstream's own web search tool ran (Anthropic's `web_search` server tool, OpenAI's
   * hosted `web_search`), billed per search on top of tokens. Absent: none reported.
   */
  webSearches?: number
}

export const emptyUsage = (): Usage => ({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 })

/** Cumulative usage semantics: each count present in `update` replaces the old one, none is added. */
export function overwriteUsage(target: Usage, update: Partial<Usage> | undefined): void {
  if (!update) return
  for (const key of [
    'input',
    'cacheRead',
    'cacheWrite',
    'cacheWrite1h',
    'output',
    'reasoning',
    'webSearches',
  ] as const) {
    const value = update[key]
    if (value !== undefined) target[key] = value
  }
}

/** The total prompt size as OpenAI counts it (cache reads and writes included). */
export const totalInput = (u: Usage): number => u.input + u.cacheRead + u.cacheWrite

export interface WebSearchResult {
  url: string
  /** The page's title; OpenAI names only the URL of a source, so there it is the URL again. */
  title: string
  /** How old the page is, as Anthropic reports it ("2 days ago"), where known. */
  pageAge?: string
}

/**
 * A search the upstream ran with its own web search tool, and what it found: Anthropic's
 * `server_tool_use` and `web_search_tool_result` blocks, OpenAI's `web_search_call` item. Output
 * only: a client's history carries them in a form only their own provider reads back (Anthropic's
 * encrypted page contents), so decoders leave them out of a conversation, as before.
 */
export interface WebSearchBlock {
  type: 'web_search'
  /** The upstream's id for the search (Anthropic `srvtoolu_…`, OpenAI `ws_…`). */
  id: string
  query: string
  /** What it found, or the error code it failed with (Anthropic's `web_search_tool_result_error`). */
  outcome: { results: WebSearchResult[] } | { errorCode: string }
}

export type OutputBlock = TextBlock | ThinkingBlock | RedactedThinkingBlock | ToolUseBlock | WebSearchBlock

export interface ExchangeResponse {
  /** The upstream's own id; the gateway replaces it with its own at the edge. */
  id: string
  model: string
  content: OutputBlock[]
  stopReason: StopReason
  stopSequence: string | null
  usage: Usage
}

export type BlockStart =
  /** `refusal`: the block is the model's words declining (TextBlock.refusal). */
  | { kind: 'text'; refusal?: true }
  | { kind: 'thinking' }
  | { kind: 'redacted_thinking'; data: string }
  | { kind: 'tool_use'; id: string; name: string }
  /** A search opens complete, once its results are in, and closes with no deltas between. */
  | { kind: 'web_search'; search: Omit<WebSearchBlock, 'type'> }

export interface UpstreamErrorInfo {
  status: number
  /** Anthropic error type vocabulary: overloaded_error, api_error, rate_limit_error, … */
  type: string
  message: string
  /** The request field the upstream blames (OpenAI's `param`), in the upstream's dialect. */
  param?: string
  /** OpenAI's `code` (model_not_found, insufficient_quota…), where the upstream sent one. */
  code?: string
}

/**
 * The neutral event stream. Block indices are dense and start at 0, in the order blocks open.
 * `usage` events are cumulative: the latest value overwrites earlier ones, never adds.
 * A well-formed stream is: start, (block_start, deltas…, block_stop)*, usage*, finish.
 * `finish` may come before the final `usage` (Chat sends usage after finish_reason); encoders that
 * need both hold the finish until the stream ends.
 */
export type ExchangeEvent =
  | { type: 'start'; id: string; model: string; usage?: Partial<Usage> }
  | { type: 'block_start'; index: number; block: BlockStart }
  | { type: 'text_delta'; index: number; text: string }
  /** A citation of an open text block: before its text (Anthropic) or after the words it marks (OpenAI). */
  | { type: 'citation'; index: number; citation: Citation }
  | { type: 'thinking_delta'; index: number; thinking: string }
  | { type: 'signature_delta'; index: number; signature: string }
  | { type: 'tool_args_delta'; index: number; partialJson: string }
  | { type: 'block_stop'; index: number }
  | { type: 'usage'; usage: Partial<Usage> }
  | { type: 'finish'; reason: StopReason; stopSequence?: string | null }
  | { type: 'error'; error: UpstreamErrorInfo }
