// Whole conversations a coding agent has with svc, as fast-check generates them: the client's
// surface and tools, then turn by turn the upstream that serves it, how it is asked (streamed,
// thinking), what that upstream answers (a simulator scenario) and what the client says next
// (its tools' results, a new message). test/conversation-properties.test.ts plays them.
import fc from 'fast-check'
import type { ProviderKind } from '../../src/config/schema'
import { openAIToolName } from '../../src/protocols/openai-tool-names'
import type { Scenario, SimSplit, SimUsage } from './simulator'

type Json = Record<string, unknown>

/** Anthropic Messages (Claude Code's way) or OpenAI Responses (Codex's way), fixed for a conversation. */
export type Surface = 'messages' | 'responses'

export const upstreamKinds: ProviderKind[] = ['anthropic', 'openai-chat', 'openai-responses']

/** A tool the client offers: a function, or (Responses clients) a `{type: "custom"}` tool of free text. */
export interface ClientTool {
  name: string
  custom: boolean
}

export interface PlannedCall {
  tool: ClientTool
  /** The function's arguments; a custom tool's text is `arguments.input`, as svc offers it elsewhere. */
  arguments: Json
  /** A Chat upstream names the call as Kimi does (`functions.<name>:<n>`), an id Anthropic refuses. */
  kimiId: boolean
  /** What the client's tool answers. */
  result: string
  isError: boolean
}

export interface Turn {
  upstream: ProviderKind
  stream: boolean
  /** The client asks for thinking (Anthropic) or reasoning (Responses) this turn. */
  thinking: boolean
  /** Anthropic clients: adaptive thinking, as Claude Code asks whatever the model, rather than a budget. */
  adaptive: boolean
  /** Responses clients: the reasoning effort asked for. */
  effort: 'low' | 'medium' | 'high'
  /** The answer's text: always there without calls, sometimes beside them. */
  text?: string
  /** The answer's thinking: only where the turn asked for it, and not always then. */
  thought?: string
  calls: PlannedCall[]
  /** The answer stops at max_tokens (only one without calls). */
  truncated: boolean
  usage: Required<Omit<SimUsage, 'webSearches' | 'cacheWrite1h'>>
  delivery: { chunks?: number; split?: SimSplit; pings?: boolean }
  /** What the user says next: a new message, or (after calls) text after the results, if any. */
  next?: string
}

export interface ConversationPlan {
  surface: Surface
  tools: ClientTool[]
  first: string
  turns: Turn[]
}

// ---- what a conversation is made of ---------------------------------------------------------------

const phrases = [
  'Fix the failing test in src/app.ts',
  'What is the weather in Paris?',
  'Thanks, continue.',
  '<system-reminder>The todo list is empty.</system-reminder>',
  'Résumé: ça marche? 日本語で答えて',
  'Deploy 🚀 when green',
  'line one\nline two\n\n  indented',
  'Use "quotes" and \\backslashes\\ and {"json": true}',
  'para\u2029separator and line\u2028separator',
  '\n\ndata: {"not":"a frame"}\n\n',
  'ok',
]

/**
 * Text with something besides whitespace at both ends: svc leaves blank text out (Anthropic
 * refuses it), so a piece compared after the trip must be one it keeps as it is.
 */
export const prose = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...phrases) },
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== '' && s.trim() === s),
)

const toolArguments = fc.dictionary(
  fc.constantFrom('path', 'command', 'city', 'todos', '城市', 'a b'),
  fc.jsonValue({ maxDepth: 2, stringUnit: 'grapheme' }),
  { maxKeys: 3 },
)

/** Claude Code's names, MCP ones longer than OpenAI's 64 characters among them (svc shortens those). */
const messagesToolName = fc.oneof(
  fc.constantFrom(
    'Read',
    'Bash',
    'get_weather',
    'mcp__github__create_pull_request',
    'mcp__claude_ai_Atlassian__searchJiraIssuesUsingJql_with_a_long_descriptive_suffix',
  ),
  fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_-]{0,30}$/),
)
const responsesToolName = fc.oneof(
  fc.constantFrom('shell', 'read_file', 'update_plan', 'get_weather'),
  fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9_-]{0,30}$/),
)

/** Codex's apply_patch is a custom tool; the others are functions. */
export const toolsOf = (surface: Surface): fc.Arbitrary<ClientTool[]> =>
  fc
    .tuple(
      fc.uniqueArray(surface === 'messages' ? messagesToolName : responsesToolName, { maxLength: 3 }),
      surface === 'responses' ? fc.boolean() : fc.constant(false),
    )
    .map(([names, custom]) => [
      ...names.filter((name) => !custom || name !== 'apply_patch').map((name) => ({ name, custom: false })),
      ...(custom ? [{ name: 'apply_patch', custom: true }] : []),
    ])

const usage = fc
  .record({
    input: fc.integer({ min: 1, max: 20_000 }),
    cacheRead: fc.integer({ min: 0, max: 5_000 }),
    cacheWrite: fc.integer({ min: 0, max: 5_000 }),
    output: fc.integer({ min: 1, max: 4_000 }),
    reasoning: fc.nat({ max: 4_000 }),
  })
  .map((u) => ({ ...u, reasoning: Math.min(u.reasoning, u.output) }))

const delivery = fc.record(
  {
    chunks: fc.integer({ min: 1, max: 12 }),
    split: fc.constantFrom<SimSplit>('mid-line', 'mid-utf8'),
    pings: fc.boolean(),
  },
  { requiredKeys: [] },
)

/** A call generated before the tools are known: `tool` picks one of them by index. */
const generatedCall = fc.record({
  tool: fc.nat(),
  arguments: toolArguments,
  input: prose,
  kimiId: fc.boolean(),
  result: prose,
  isError: fc.boolean(),
})

/** One turn before the tools and its upstream are known (fallback-plans.ts plays it on whichever model serves). */
export const generatedTurn = fc.record({
  upstream: fc.constantFrom(...upstreamKinds),
  stream: fc.boolean(),
  thinking: fc.boolean(),
  adaptive: fc.boolean(),
  effort: fc.constantFrom('low' as const, 'medium' as const, 'high' as const),
  text: prose,
  keepText: fc.boolean(),
  thought: prose,
  // Asked to think, a Chat model may still answer without reasoning_content; Claude opens its answer
  // with a thinking block, and OpenAI's has a reasoning item, whenever asked.
  thinks: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, fc.constant(false)),
  calls: fc.oneof(fc.array(generatedCall, { maxLength: 0 }), fc.array(generatedCall, { minLength: 1, maxLength: 3 })),
  truncated: fc.boolean(),
  usage,
  delivery,
  next: prose,
  nextAfterResults: fc.boolean(),
})

export type GeneratedTurn = typeof generatedTurn extends fc.Arbitrary<infer T> ? T : never

/** The turn as played: calls on the client's tools, and nothing a real exchange could not have. */
export function turnOf(tools: ClientTool[], g: GeneratedTurn, thinking: boolean): Turn {
  const calls =
    tools.length === 0
      ? []
      : g.calls.flatMap((c): PlannedCall[] => {
          const tool = tools[c.tool % tools.length]!
          // The simulator's Responses dialect has function calls only: there a custom tool goes uncalled.
          if (tool.custom && g.upstream === 'openai-responses') return []
          return [
            {
              tool,
              arguments: tool.custom ? { input: c.input } : c.arguments,
              kimiId: c.kimiId && g.upstream === 'openai-chat',
              result: c.result,
              isError: c.isError,
            },
          ]
        })
  const withCalls = calls.length > 0
  return {
    upstream: g.upstream,
    stream: g.stream,
    thinking,
    adaptive: g.adaptive,
    effort: g.effort,
    ...(!withCalls || g.keepText ? { text: g.text } : {}),
    ...(thinking && (g.thinks || g.upstream !== 'openai-chat') ? { thought: g.thought } : {}),
    calls,
    truncated: !withCalls && g.truncated,
    usage: g.usage,
    delivery: g.stream ? g.delivery : {},
    ...(!withCalls || g.nextAfterResults ? { next: g.next } : {}),
  }
}

/**
 * A conversation of 2–6 turns. Thinking stays as it was through a tool loop: Anthropic refuses a
 * loop whose thinking was turned on halfway (its last assistant turn must open with thinking), and
 * agents do not switch it there.
 */
export const conversationPlans = (surface: Surface): fc.Arbitrary<ConversationPlan> =>
  fc
    .record({
      tools: toolsOf(surface),
      first: prose,
      turns: fc.array(generatedTurn, { minLength: 2, maxLength: 6 }),
    })
    .map(({ tools, first, turns }) => {
      const played: Turn[] = []
      for (const g of turns) {
        const previous = played.at(-1)
        const thinking = previous && previous.calls.length > 0 ? previous.thinking : g.thinking
        played.push(turnOf(tools, g, thinking))
      }
      return { surface, tools, first, turns: played }
    })

// ---- a turn as the simulator's scenario ------------------------------------------------------------

/** Unique within the process: what each upstream issues is told apart from every other's. */
let issuedSeq = 0

export interface Issued {
  /** The Anthropic upstream's signature for the turn's thinking block. */
  signature: string
  /** The Responses upstream's reasoning blob for the turn. */
  blob: string
}

/** Opaque values shaped like the providers' own: Anthropic's `Eq…` signatures, OpenAI's Fernet `gAAAAAB…` tokens. */
export function issueFor(): Issued {
  const n = (++issuedSeq).toString(36).padStart(6, '0')
  return { signature: `EqSimSig${n}QkZ4`, blob: `gAAAAABsimblob${n}_x9-Q==` }
}

/** The answer the turn's upstream gives: its model calls the tools by the names svc offered it. */
export function scenarioFor(turn: Turn, t: number, issued: Issued): Scenario {
  const calls = turn.calls.map((call, i) => {
    const name = turn.upstream === 'anthropic' ? call.tool.name : openAIToolName(call.tool.name)
    return {
      name,
      arguments: call.arguments,
      ...(call.kimiId ? { id: `functions.${name}:${t * 10 + i}` } : {}),
    }
  })
  const [first, ...more] = calls
  return {
    ...turn.delivery,
    ...(turn.text !== undefined ? { text: turn.text } : {}),
    ...(turn.thought !== undefined
      ? { thinking: turn.thought, signature: issued.signature, encryptedReasoning: issued.blob }
      : {}),
    ...(first ? { toolCall: first } : {}),
    ...(more.length > 0 ? { moreToolCalls: more } : {}),
    usage: turn.usage,
    ...(turn.truncated ? { stopReason: 'max_tokens' as const } : {}),
  }
}
