// Turns a Scenario plus the upstream request into a Plan: the exact text, deltas, tool call, usage
// and stop reason one simulated answer carries. Each dialect encoder renders the same Plan, so a
// scenario means the same thing whichever protocol the gateway speaks upstream.

import { isObject } from './is-object'

export interface SimUsage {
  input: number
  cacheRead?: number
  cacheWrite?: number
  /** Of `cacheWrite`, the part written for an hour (Anthropic reports the split; default 0). */
  cacheWrite1h?: number
  output: number
  reasoning?: number
  /** Searches the provider's own web search tool ran before the answer (Anthropic, Responses). */
  webSearches?: number
}

export type SimFault =
  | { kind: 'status'; status: number; retryAfter?: number }
  | { kind: 'cut'; afterFrames: number }
  | { kind: 'reset'; afterFrames: number }
  | { kind: 'malformed'; afterFrames: number }
  | { kind: 'truncated_json' }
  | { kind: 'wrong_content_type' }
  /** `oneRead`: the frames before the error and the error go out as one piece, as one read for the gateway. */
  | { kind: 'error_event'; afterFrames: number; oneRead?: boolean }
  | { kind: 'hang' }
  /**
   * The provider account behind the key is out of credit, refused as each provider refuses it: OpenAI
   * (Chat and Responses) a 429 whose type and code are `insufficient_quota` ("You exceeded your
   * current quota…"); Anthropic a 400 `invalid_request_error` "Your credit balance is too low…"
   * (its errors page names no billing status; this is what its API sends).
   */
  | { kind: 'no_credit' }

export type SimSplit = 'mid-line' | 'mid-utf8' | 'per-byte'

/**
 * How an answer reports its usage, where not in full: `omitted`, no usage object anywhere (Chat
 * sends no usage chunk even when asked, Anthropic's message_start has none either); `final-omitted`,
 * an Anthropic stream whose message_delta has no usage (message_start's, output 1, is all there
 * is); `strings`, every count a string (`"10"`), as a compatible server may send them.
 */
export type SimUsageReport = 'omitted' | 'final-omitted' | 'strings'

export interface SimToolCall {
  id?: string
  name: string
  arguments: Record<string, unknown>
  /** How many pieces its arguments' JSON streams in, cut by code point (default 3). */
  fragments?: number
  /** Its arguments' JSON with every non-ASCII character escaped (`\u00e9`, a pair for 😀), as Python's json.dumps writes it. */
  asciiOnly?: boolean
}

export interface PlanTool {
  id: string
  itemId: string
  name: string
  args: string
  fragments: string[]
}

export interface Scenario {
  text?: string
  thinking?: string
  /** Anthropic: the thinking block's signature (default: one made from the thinking's length). */
  signature?: string
  /**
   * Responses: the reasoning item's `encrypted_content`, sent (in its done item and the terminal
   * output) only when the request's `include` asks for `reasoning.encrypted_content`, as OpenAI
   * does. Absent: reasoning items carry none.
   */
  encryptedReasoning?: string
  toolCall?: SimToolCall
  /** Further calls in the same answer, after `toolCall` (parallel calls); ignored without it. */
  moreToolCalls?: SimToolCall[]
  /** Chat and Responses: the calls' argument fragments stream in turns, one of each call at a time, as some providers send them. */
  interleaveToolCalls?: boolean
  /** Chat only: every call's chunks say index 0, the calls told apart by their ids alone (Ollama's parallel calls). */
  toolCallsAtIndexZero?: boolean
  usage?: SimUsage
  /** How the usage is reported, where not in full (SimUsageReport). */
  usageReport?: SimUsageReport
  chunks?: number
  chunkDelayMs?: number
  firstByteDelayMs?: number
  stopReason?: 'end_turn' | 'max_tokens' | 'stop_sequence'
  pings?: boolean
  fault?: SimFault
  split?: SimSplit
  /** The model's context window: a prompt (counted as the simulator counts) over it is refused as the provider refuses it. */
  contextWindow?: number
  /**
   * Responses only: the response fails before any output item, as OpenAI's do on a server error
   * or a rate limit met mid-generation: streamed, `response.created`, `response.in_progress`, then
   * `response.failed` whose response has status `failed`, this `error`, no output and no usage;
   * not streamed, a 200 whose response says the same. The other dialects ignore it.
   */
  failure?: { code: string; message: string }
  /**
   * Anthropic only: a `redacted_thinking` block of this opaque `data`, after the thinking block
   * (if any) and before the text, as Claude sends thinking its safety systems flagged. Streamed, its
   * content_block_start carries the whole block, then content_block_stop: no deltas. The other
   * dialects ignore it.
   */
  redactedThinking?: string
  /**
   * Chat and Responses: the model declines in these words instead of answering (no default text).
   * Chat: `message.refusal` with `content: null`, streamed as `delta.refusal` chunks after a role
   * chunk of `{content: null, refusal: ""}`, finishing `stop`. Responses: a message item whose one
   * content part is `{type: "refusal", refusal}`, streamed as `response.content_part.added`,
   * `response.refusal.delta`s, `response.refusal.done`, `response.content_part.done`. Anthropic
   * ignores it.
   */
  refusal?: string
  /**
   * Anthropic only: its server tools' loop pauses after this many searches (ten iterations by
   * default at Anthropic). An answer of more searches (`usage.webSearches`) stops with `pause_turn`
   * after these, with no text, for the client to send the turn back; a request whose final
   * assistant turn holds searches (the paused turn sent back) goes on with the searches left, and
   * then the answer. Each part reports its own usage.
   */
  searchesPerTurn?: number
  /**
   * Anthropic only: the length of each search result's `encrypted_content` (a page's sealed text,
   * several KB at Anthropic; a short stand-in by default).
   */
  searchResultChars?: number
}

export type DialectName = 'anthropic' | 'chat' | 'responses'

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn'

export interface Plan {
  dialect: DialectName
  model: string
  /** msg_sim… / chatcmpl-sim… / resp_sim…, unique per request. */
  id: string
  /** Unix seconds, shared by every frame of one answer. */
  created: number
  request: Record<string, unknown>
  thinking?: { text: string; deltas: string[]; signature: string; itemId: string; encrypted?: string }
  text?: { text: string; deltas: string[]; itemId: string }
  /** Anthropic: a redacted_thinking block's data (Scenario.redactedThinking). */
  redactedThinking?: string
  /** Chat and Responses: the model's refusal (Scenario.refusal). */
  refusal?: { text: string; deltas: string[]; itemId: string }
  /** Responses: the response's error, when it fails before any output (Scenario.failure). */
  failure?: { code: string; message: string }
  tool?: PlanTool
  /** The calls after `tool`, in order; absent when the scenario has none. */
  moreTools?: PlanTool[]
  interleaveTools?: boolean
  toolsAtIndexZero?: boolean
  usage: Required<SimUsage>
  usageReport?: SimUsageReport
  /** One per web search: the query, and the ids its blocks or item carry. */
  searches: { query: string; id: string; sealedPage: string }[]
  /** Anthropic reports thinking tokens only when the scenario named them. */
  reasoningGiven: boolean
  stop: StopReason
  stopSequence: string | null
  pings: boolean | undefined
  /** Chat: `stream_options.include_usage` was set. */
  includeUsage: boolean
  stream: boolean
}

// A per-process tag keeps ids from two simulators in one test run apart; the counter keeps them
// unique within one.
const idTag = Math.random().toString(36).slice(2, 8)
let idSeq = 0
export const newId = (prefix: string): string => `${prefix}${idTag}${(++idSeq).toString(36).padStart(6, '0')}`

const idPrefix: Record<DialectName, string> = { anthropic: 'msg_sim', chat: 'chatcmpl-sim', responses: 'resp_sim' }
const toolIdPrefix: Record<DialectName, string> = { anthropic: 'toolu_sim', chat: 'call_sim', responses: 'call_sim' }

/** The fields whose text counts toward input tokens, across all three request shapes. */
const countedFields = ['system', 'instructions', 'messages', 'input', 'tools'] as const
/** Structural strings (`"type":"text"`, `"role":"user"`) are not prompt text. */
const skippedKeys = new Set(['type', 'role'])

function countChars(value: unknown): number {
  if (typeof value === 'string') return value.length
  if (Array.isArray(value)) {
    let n = 0
    for (const v of value) n += countChars(v)
    return n
  }
  if (value !== null && typeof value === 'object') {
    let n = 0
    for (const [k, v] of Object.entries(value)) if (!skippedKeys.has(k)) n += countChars(v)
    return n
  }
  return 0
}

/**
 * The simulator's token rule, used by count_tokens and by default usage: ceil(chars / 4), where
 * chars is the total length (UTF-16 code units) of every string under `system`, `instructions`,
 * `messages`, `input` and `tools`, skipping the values of `type` and `role` keys.
 */
export function countRequestTokens(body: Record<string, unknown>): number {
  let chars = 0
  for (const field of countedFields) chars += countChars(body[field])
  return Math.ceil(chars / 4)
}

const tokensOf = (s: string): number => Math.ceil(s.length / 4)

/** Splits into `n` near-equal pieces by code point, so no delta holds half a surrogate pair. */
export function splitEven(text: string, n: number): string[] {
  const points = Array.from(text)
  const parts = Math.max(1, Math.min(n, points.length))
  const out: string[] = []
  for (let i = 0; i < parts; i++) {
    const from = Math.floor((i * points.length) / parts)
    const to = Math.floor(((i + 1) * points.length) / parts)
    out.push(points.slice(from, to).join(''))
  }
  return out
}

/** Default pacing: a few words per delta, like a real model's token stream. */
export function splitWords(text: string, perDelta = 3): string[] {
  const words = text.split(/(?<=\s)(?=\S)/)
  const out: string[] = []
  for (let i = 0; i < words.length; i += perDelta) out.push(words.slice(i, i + perDelta).join(''))
  return out.length > 0 ? out : ['']
}

function defaultText(model: string, scenario: Scenario): string {
  // With a split mode set, include multi-byte characters so 'mid-utf8' has something to cut.
  const base = scenario.split ? `Hello from ${model} — café 👋` : `Hello from ${model}`
  const chunks = scenario.chunks ?? 0
  const baseWords = base.split(' ').length
  if (chunks <= baseWords) return base
  const filler = Array.from({ length: chunks - baseWords }, (_, i) => `word${i + 1}`)
  return `${base} ${filler.join(' ')}`
}

function firstStopSequence(body: Record<string, unknown>): string {
  const seqs = body['stop_sequences'] ?? body['stop']
  if (typeof seqs === 'string') return seqs
  if (Array.isArray(seqs) && typeof seqs[0] === 'string') return seqs[0]
  return '\n\nHuman:'
}

/** JSON text with every UTF-16 unit above U+007F as a \u escape. */
const asciiJson = (json: string): string =>
  json.replace(/[\u0080-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`)

function planTool(dialect: DialectName, call: SimToolCall): PlanTool {
  const json = JSON.stringify(call.arguments)
  const args = call.asciiOnly ? asciiJson(json) : json
  return {
    id: call.id ?? newId(toolIdPrefix[dialect]),
    itemId: newId('fc_sim'),
    name: call.name,
    args,
    fragments: splitEven(args, call.fragments ?? 3),
  }
}

const wantsEncryptedReasoning = (body: Record<string, unknown>): boolean =>
  Array.isArray(body['include']) && body['include'].includes('reasoning.encrypted_content')

/** Every call of the answer, in order. */
export const planTools = (plan: Plan): PlanTool[] => (plan.tool ? [plan.tool, ...(plan.moreTools ?? [])] : [])

/** The searches a paused turn sent back has made: the server tool calls of the request's final assistant turn. */
function searchesSentBack(body: Record<string, unknown>): number {
  const messages = Array.isArray(body['messages']) ? body['messages'] : []
  const last = messages.at(-1)
  if (!isObject(last) || last['role'] !== 'assistant' || !Array.isArray(last['content'])) return 0
  return last['content'].filter((block) => isObject(block) && block['type'] === 'server_tool_use').length
}

/** Of the scenario's searches, those this answer makes, the first one's number, and whether it pauses after them. */
function searchesOfThisPart(dialect: DialectName, scenario: Scenario, body: Record<string, unknown>) {
  const total = scenario.usage?.webSearches ?? 0
  const perTurn = dialect === 'anthropic' ? scenario.searchesPerTurn : undefined
  if (perTurn === undefined) return { first: 0, count: total, pauses: false }
  const done = Math.min(total, searchesSentBack(body))
  const left = total - done
  return { first: done, count: Math.min(left, perTurn), pauses: left > perTurn }
}

export function buildPlan(
  dialect: DialectName,
  model: string,
  scenario: Scenario,
  body: Record<string, unknown>,
): Plan {
  const part = searchesOfThisPart(dialect, scenario, body)
  if (part.pauses) scenario = { ...scenario, text: '', toolCall: undefined, stopReason: undefined }
  const refusal = scenario.refusal !== undefined && dialect !== 'anthropic' ? scenario.refusal : undefined
  const failure = scenario.failure !== undefined && dialect === 'responses' ? scenario.failure : undefined
  const text =
    failure !== undefined
      ? ''
      : (scenario.text ?? (scenario.toolCall || refusal !== undefined ? '' : defaultText(model, scenario)))
  const args = scenario.toolCall && failure === undefined ? JSON.stringify(scenario.toolCall.arguments) : ''
  const thinking = failure === undefined ? (scenario.thinking ?? '') : ''

  const stop: StopReason = part.pauses
    ? 'pause_turn'
    : scenario.toolCall && scenario.stopReason !== 'max_tokens'
      ? 'tool_use'
      : (scenario.stopReason ?? 'end_turn')
  const streamOptions = body['stream_options'] as { include_usage?: unknown } | undefined
  const given = scenario.usage

  return {
    dialect,
    model,
    id: newId(idPrefix[dialect]),
    created: Math.floor(Date.now() / 1000),
    request: body,
    thinking: thinking
      ? {
          text: thinking,
          deltas: splitWords(thinking),
          // Opaque like Anthropic's; deterministic so tests can assert it round-trips.
          signature: scenario.signature ?? Buffer.from(`sim-signature:${tokensOf(thinking)}`).toString('base64'),
          itemId: newId('rs_sim'),
          ...(scenario.encryptedReasoning !== undefined && wantsEncryptedReasoning(body)
            ? { encrypted: scenario.encryptedReasoning }
            : {}),
        }
      : undefined,
    text: text
      ? {
          text,
          deltas: scenario.chunks ? splitEven(text, scenario.chunks) : splitWords(text),
          itemId: newId('msg_sim'),
        }
      : undefined,
    ...(scenario.redactedThinking !== undefined && dialect === 'anthropic'
      ? { redactedThinking: scenario.redactedThinking }
      : {}),
    ...(refusal !== undefined
      ? { refusal: { text: refusal, deltas: splitWords(refusal), itemId: newId('msg_sim') } }
      : {}),
    ...(failure !== undefined ? { failure } : {}),
    tool: scenario.toolCall && failure === undefined ? planTool(dialect, scenario.toolCall) : undefined,
    ...(scenario.toolCall && scenario.moreToolCalls && failure === undefined
      ? {
          moreTools: scenario.moreToolCalls.map((call) => planTool(dialect, call)),
          interleaveTools: scenario.interleaveToolCalls,
          toolsAtIndexZero: scenario.toolCallsAtIndexZero,
        }
      : {}),
    usage: {
      input: given?.input ?? countRequestTokens(body),
      cacheRead: given?.cacheRead ?? 0,
      cacheWrite: given?.cacheWrite ?? 0,
      cacheWrite1h: given?.cacheWrite1h ?? 0,
      output:
        given?.output ??
        (failure !== undefined
          ? 0
          : Math.max(1, tokensOf(text) + tokensOf(thinking) + tokensOf(args) + tokensOf(refusal ?? ''))),
      reasoning: given?.reasoning ?? tokensOf(thinking),
      webSearches: part.count,
    },
    ...(scenario.usageReport ? { usageReport: scenario.usageReport } : {}),
    searches: Array.from({ length: part.count }, (_, i) => ({
      query: `simulated search ${part.first + i + 1}`,
      id: newId(dialect === 'anthropic' ? 'srvtoolu_sim' : 'ws_sim'),
      sealedPage: scenario.searchResultChars ? 'A'.repeat(scenario.searchResultChars) : 'c2ltLXJlc3VsdA==',
    })),
    reasoningGiven: given?.reasoning !== undefined,
    stop,
    stopSequence: stop === 'stop_sequence' ? firstStopSequence(body) : null,
    pings: scenario.pings,
    includeUsage: streamOptions?.include_usage === true,
    stream: body['stream'] === true,
  }
}

/**
 * A usage object as the plan reports it: undefined where it reports none, every count a string
 * where it reports strings, else as it is.
 */
export function reportedUsage<T extends object>(plan: Plan, usage: T): T | undefined {
  if (plan.usageReport === 'omitted') return undefined
  if (plan.usageReport !== 'strings') return usage
  return JSON.parse(JSON.stringify(usage, (_key, value) => (typeof value === 'number' ? String(value) : value)))
}

/** One SSE event as sent. `paced` frames (content deltas) wait `chunkDelayMs` before going out. */
export interface Frame {
  text: string
  paced: boolean
}

export const sseFrame = (event: string | null, data: unknown, paced = false): Frame => ({
  text: `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`,
  paced,
})

/**
 * A request the provider refuses, as it refuses it: status 400 unless given, the message, and (OpenAI)
 * the `param` and `code` its error body names.
 */
export interface Refusal {
  status?: number
  message: string
  param?: string | null
  code?: string | null
}

/** What each protocol module provides to the server. */
export interface DialectCodec {
  name: DialectName
  /** Header names carrying the request id (`request-id` / `x-request-id`). */
  requestIdHeader: string
  authorized(headers: Headers, apiKey: string): boolean
  /** The provider's own error body for an HTTP status (OpenAI's names the `param` and `code` a refusal gives). */
  errorBody(status: number, message: string, requestId: string, refusal?: Refusal): unknown
  /** The provider's own 400 for a prompt of `tokens` over a context window of `window`. */
  contextExceededBody(tokens: number, window: number, requestId: string): unknown
  /** Why the provider would refuse this request (before generating anything), or undefined. */
  validate(body: Record<string, unknown>, headers: Headers): Refusal | undefined
  encodeBody(plan: Plan): unknown
  encodeFrames(plan: Plan): Frame[]
  /** The in-band error a provider sends after the 200 (`seq` = frames already sent). */
  errorFrame(plan: Plan, seq: number): Frame
  /** A frame whose data is not JSON, named like a real delta so parsers try to parse it. */
  malformedFrame(): Frame
  /** Status used when an `error_event` fault hits a non-streaming request. */
  overloadedStatus: number
  /** The provider's refusal of a key whose account is out of credit (SimFault `no_credit`). */
  noCredit(requestId: string): { status: number; body: unknown }
}
