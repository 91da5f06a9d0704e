// Conversations the router moves between models, as fast-check generates them: svc-pro holding
// two or three models of different dialects, the client's surface and session, and turn by turn
// how far the clock moved, what other clients' requests met just before, which models fail before
// answering and how, and what the model that serves answers (conversation-plans.ts's turns,
// played on whichever dialect serves). test/fallback-conversations.test.ts plays them.
import fc from 'fast-check'
import type { ProviderKind } from '../../src/config/schema'
import {
  type ClientTool,
  type GeneratedTurn,
  generatedTurn,
  prose,
  type Surface,
  type Turn,
  toolsOf,
  turnOf,
  upstreamKinds,
} from './conversation-plans'
import type { Fault, RankedModel } from './fallback-router'

/** The session header each client sends its conversation id in (src/relay/session.ts reads all three). */
export type SessionHeader = 'x-claude-code-session-id' | 'session_id' | 'session-id'

export interface FallbackTurn {
  /** How far the clock moves before the turn: mostly not at all, sometimes past a cool-down. */
  advanceMs: number
  /**
   * Requests other clients send (with no session) just before the turn, each with the faults it
   * meets: they move the models' health as the conversation does, without its stickiness.
   */
  others: Partial<Record<ProviderKind, Fault>>[]
  /** The models (by dialect) that fail this turn if tried, and how; the rest answer. */
  faults: Partial<Record<ProviderKind, Fault>>
  /** The answer, whichever model gives it. */
  answer: Omit<GeneratedTurn, 'upstream'>
}

export interface FallbackPlan {
  surface: Surface
  sessionHeader: SessionHeader
  models: RankedModel[]
  tools: ClientTool[]
  first: string
  turns: FallbackTurn[]
}

/** The catalog id of the plan's model of each dialect. */
export const modelIdOf: Record<ProviderKind, string> = {
  anthropic: 'claude-f',
  'openai-chat': 'gpt-chat-f',
  'openai-responses': 'gpt-resp-f',
}

const kindOfModel = new Map(upstreamKinds.map((kind) => [modelIdOf[kind], kind]))
export const kindOf = (modelId: string): ProviderKind => kindOfModel.get(modelId)!

/**
 * Distinct qualities, so that no two scores tie (a tie is broken by rules the README leaves to the
 * code); prices that move a score by up to 10 points, so that price can reorder them.
 */
const models: fc.Arbitrary<RankedModel[]> = fc
  .record({
    kinds: fc.shuffledSubarray(upstreamKinds, { minLength: 2, maxLength: 3 }),
    qualities: fc.shuffledSubarray([70, 75, 80, 85, 90, 95], { minLength: 3, maxLength: 3 }),
    prices: fc.array(fc.record({ input: fc.constantFrom(1, 2, 3), output: fc.constantFrom(2, 5, 8) }), {
      minLength: 3,
      maxLength: 3,
    }),
  })
  .map(({ kinds, qualities, prices }) =>
    kinds.map((kind, i) => ({ id: modelIdOf[kind], kind, quality: qualities[i]!, prices: prices[i]! })),
  )

/**
 * Retry-after in seconds: shorter and longer than the breaker's 30 s, and over the hour svc caps
 * it at (README, Routing).
 */
const retryAfter = fc.constantFrom(1, 20, 45, 600, 7200)

const failure: fc.Arbitrary<Fault> = fc.oneof(
  { weight: 2, arbitrary: fc.constant<Fault>({ kind: 'status', status: 429 }) },
  { weight: 2, arbitrary: retryAfter.map((s): Fault => ({ kind: 'status', status: 429, retryAfter: s })) },
  { weight: 2, arbitrary: fc.constant<Fault>({ kind: 'status', status: 500 }) },
  { weight: 2, arbitrary: fc.constant<Fault>({ kind: 'status', status: 529 }) },
  { weight: 2, arbitrary: retryAfter.map((s): Fault => ({ kind: 'status', status: 529, retryAfter: s })) },
  // svc's HTTP client sends a request again on a kept-alive connection closed within 50 ms of it
  // (src/providers/http1/connection.ts): a reset comes after that window.
  { weight: 1, arbitrary: fc.constant<Fault>({ kind: 'reset', afterMs: 60 }) },
)

/** Most of the time a model answers; seldom it resets at once (a known bug the suite leaves out). */
const fault = fc.oneof(
  { weight: 36, arbitrary: fc.constant(undefined) },
  { weight: 10, arbitrary: failure },
  { weight: 1, arbitrary: fc.constant<Fault>({ kind: 'reset', afterMs: 0 }) },
)

const faultsByKind = <T>(arb: fc.Arbitrary<T>) =>
  fc.record({ anthropic: arb, 'openai-chat': arb, 'openai-responses': arb })

/**
 * Past a short retry-after, the breaker's first cool-down (often: its probe is where the rules
 * meet), the doubled one, its 5 min cap, the hour.
 */
const advanceMs = fc.oneof(
  { weight: 4, arbitrary: fc.constant(0) },
  { weight: 3, arbitrary: fc.constant(31_000) },
  { weight: 4, arbitrary: fc.constantFrom(2_000, 61_000, 301_000, 3_601_000) },
)

/** In a storm, most models fail. */
const stormFault = fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 3, arbitrary: failure })

/**
 * A turn's faults: a few, or (in a storm) most models', so that models fail often enough in a row
 * to open their breakers, and not all at the same turn. Both are drawn; `storm` below the plan's
 * storminess picks the storm's. Other clients meet storms, so that a model the session left is
 * tried again.
 */
const turn = fc.record({
  advanceMs,
  faults: faultsByKind(fault),
  stormFaults: faultsByKind(stormFault),
  storm: fc.nat({ max: 9 }),
  others: fc.array(faultsByKind(stormFault), { maxLength: 2 }),
  answer: generatedTurn,
})

/** Only the plan's own models' faults, and none that is undefined: what a failure report prints. */
function faultsOf(plan: RankedModel[], faults: Partial<Record<ProviderKind, Fault>>) {
  const kinds = new Set(plan.map((m) => m.kind))
  return Object.fromEntries(
    Object.entries(faults).filter(([kind, f]) => f !== undefined && kinds.has(kind as ProviderKind)),
  ) as FallbackTurn['faults']
}

type DrawnTurn = typeof turn extends fc.Arbitrary<infer T> ? T : never

/** The faults the turn plays: the few, or the storm's. */
const faultsPlayed = (t: DrawnTurn, storminess: number): Partial<Record<ProviderKind, Fault>> =>
  t.storm < storminess ? t.stormFaults : t.faults

/** A conversation of 2–6 turns under svc-pro, its session carried in the header its agent uses. */
export const fallbackPlans = (surface: Surface): fc.Arbitrary<FallbackPlan> =>
  fc
    .record({
      sessionHeader:
        surface === 'messages'
          ? fc.constant<SessionHeader>('x-claude-code-session-id')
          : fc.constantFrom<SessionHeader>('session_id', 'session-id'),
      models,
      tools: toolsOf(surface),
      first: prose,
      turns: fc.array(turn, { minLength: 2, maxLength: 6 }),
      storminess: fc.constantFrom(0, 5, 8),
    })
    .map(({ turns, storminess, ...plan }) => ({
      surface,
      ...plan,
      turns: turns.map((t) => {
        const { upstream: _chosenLater, ...answer } = t.answer
        return {
          advanceMs: t.advanceMs,
          others: t.others.map((faults) => faultsOf(plan.models, faults)),
          faults: faultsOf(plan.models, faultsPlayed(t, storminess)),
          answer,
        }
      }),
    }))

/**
 * The turn as the model of `kind` gives it. Thinking stays as it was through a tool loop (Anthropic
 * refuses a loop whose thinking was turned on halfway), so it is the caller's to carry on.
 */
export const turnOn = (kind: ProviderKind, plan: FallbackPlan, t: FallbackTurn, thinking: boolean): Turn =>
  turnOf(plan.tools, { ...t.answer, upstream: kind }, thinking)
