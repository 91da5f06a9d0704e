// A turn Anthropic paused in its server tools' loop (`stop_reason: "pause_turn"`), sent back by svc
// for the model to go on, where the client cannot: a Responses client (Codex with live web search)
// routed to Claude has no such stop, and took the searches so far, without an answer, for the turn's
// end. An Anthropic client gets the pause as Anthropic sends it, and sends the turn back itself.
//
// Each message of the turn is a leg of the request, billed as the upstream reports it; the client
// gets one answer (exchange/joined-legs.ts joins them). Up to `mostResumes` times (Anthropic pauses
// after ten searches by default, so that is sixty in all); past that, or when the account's credit
// would not cover another message, or when sending the turn back fails, the answer ends at the pause
// as before: the searches made, no text. The client's output limit is the whole answer's: each
// message gets what the ones before left of it, and the answer ends `max_tokens` when none is left.
import type { Deps } from '../deps'
import { addedUsage } from '../exchange/joined-legs'
import { estimateTokensFromBytes } from '../exchange/token-estimate'
import { emptyUsage, type ExchangeRequest, type Usage } from '../exchange/types'
import { GatewayError } from '../lib/errors'
import { jsonLength } from '../router/features'
import { type Candidate, mostLegCostNanos, outputTokensAtMost } from '../router/rank'
import { keyOwnerOf, type ProbeClaim } from '../router/health'
import { holdForContinuation } from './credit-hold-policy'
import { countsAgainstProvider } from './outcome'
import { expectContentType } from './send'
import { type InboundSurface, passesThrough } from './surface'
import type { LegDraft, Received, RequestTrace } from './trace'

/** Times one answer's turn is sent back. */
export const mostResumes = 5

/** The next message of a paused turn, under way. */
export interface ResumedLeg {
  leg: LegDraft
  upstream: Response
  sentAt: number
  /** The turn as sent back: its searches name what the next message's results answer. */
  turn: unknown[]
  /**
   * Aborts this message's call (its timeouts), and is aborted with the attempt's (the client's
   * leaving, the drain): a timeout of the message sent back is not the client's leaving.
   */
  controller: AbortController
}

/**
 * How an answer whose turn is not sent back ends: at the pause, or at the output limit, which the
 * messages so far have spent (the client's `max_output_tokens` bounds the whole answer).
 */
export type PausedEnd = 'pause_turn' | 'max_tokens'

/**
 * Sends the turn back with `content`, the paused message's blocks as Anthropic sent them (its
 * searches' sealed results and its thinking's signatures are what the model goes on from) after
 * those of the messages paused before it, once the legs so far are settled; or how the answer ends
 * instead.
 */
export type ResumePausedTurn = (content: unknown[]) => Promise<ResumedLeg | PausedEnd>

/**
 * Whether svc goes on with a turn this attempt's answer pauses: Anthropic's server tools (web search,
 * the one a Responses client's request brings) translated for a client of another dialect.
 */
export const resumesPausedTurns = (surface: InboundSurface, candidate: Candidate, exchange: ExchangeRequest): boolean =>
  candidate.provider.kind === 'anthropic' &&
  exchange.webSearch !== undefined &&
  !passesThrough(candidate.provider, surface)

export function pausedTurnResumer(
  deps: Deps,
  r: {
    trace: RequestTrace
    /** The leg whose answer may pause. */
    first: LegDraft
    mode: string
    /** The same request to the same model, as a stream, with the paused turn at its end and this output limit. */
    sendBack: (content: unknown[], maxTokens: number, controller: AbortController) => Promise<Response>
    /** The attempt's: aborted when the client leaves or the drain cuts the request. */
    attempt: AbortSignal
    /** The half-open circuit's probe the attempt took, if any: a failed message is its verdict. */
    probe: ProbeClaim
  },
): { resume: ResumePausedTurn; billedBefore: (leg: LegDraft) => Usage } {
  const legs = [r.first]
  /** The turn so far: every paused message's blocks, sent back whole each time, as a conversation holds them. */
  const turn: unknown[] = []
  const candidate = r.first.candidate
  const billedBefore = (leg: LegDraft) =>
    legs.slice(0, legs.indexOf(leg)).reduce((sum, before) => addedUsage(sum, before.usage), emptyUsage())
  const resume: ResumePausedTurn = async (content) => {
    if (legs.length > mostResumes) return 'pause_turn'
    const outputLeft = candidate.maxTokens - legs.reduce((sum, leg) => sum + leg.usage.output, 0)
    if (outputLeft < 1) return 'max_tokens'
    const grants = await deps.credit.get(r.trace.ctx.accountId)
    const now = deps.clock()
    const { hold, enough } = holdForContinuation(deps, {
      grants,
      previous: r.trace.creditHold,
      candidate,
      spentNanos: r.trace.chargeOf(legs),
      nextNanos: mostLegCostNanos(
        candidate.model,
        { tokens: candidate.promptTokens + turnTokens(turn, content), hourWrites: candidate.hourCacheWrites },
        outputTokensAtMost(candidate.model, candidate.thinkingBudgetAbove, outputLeft),
        candidate.searchesAtMost,
        now,
      ),
      mode: r.mode,
      now,
    })
    r.trace.creditHold = hold
    if (!enough) {
      deps.log.info('paused turn not resumed: the credit would not cover another message', {
        request_id: r.trace.ctx.id,
      })
      return 'pause_turn'
    }
    for (const block of content) turn.push(block)
    const leg = r.trace.startLeg(candidate)
    const controller = new AbortController()
    if (r.attempt.aborted) controller.abort(r.attempt.reason)
    else r.attempt.addEventListener('abort', () => controller.abort(r.attempt.reason), { once: true })
    const sentAt = performance.now()
    try {
      const upstream = await r.sendBack(turn, outputLeft, controller)
      expectContentType(upstream, 'text/event-stream')
      legs.push(leg)
      return { leg, upstream, sentAt, turn, controller }
    } catch (err) {
      // The client's leaving or the drain: the caller books the leg aborted, no upstream's failure.
      if (r.attempt.aborted) return 'pause_turn'
      const error =
        err instanceof GatewayError
          ? err
          : new GatewayError('api_error', 'internal error in the gateway', { status: 500, cause: err })
      resumedLegFailed(deps, r.trace, leg, error, r.probe)
      return 'pause_turn'
    }
  }
  return { resume, billedBefore }
}

/**
 * What the turn sent back adds to the request's prompt, by its JSON's length: its searches' sealed
 * results are most of it (a page's text, encrypted), which the model reads as input again.
 */
const turnTokens = (turn: unknown[], content: unknown[]): number =>
  estimateTokensFromBytes(jsonLength(turn) + jsonLength(content))

/**
 * A message sent back that failed before its content (refused, an error right after its opening, a
 * body that ended empty): its leg failed and free, and the answer ends at the pause before it. The
 * provider is told of it as of any failed leg (its metrics and its health).
 */
export function resumedLegFailed(
  deps: Deps,
  trace: RequestTrace,
  leg: LegDraft,
  error: GatewayError,
  probe: ProbeClaim,
  /** What a message gathered for a JSON answer had sent before it broke, once its content began. */
  flowed?: Received,
) {
  // Served: the answer stays the one its first leg began. A gathered message that broke after its
  // content began is billed what it sent, its searches included, as a broken stream is: the client
  // gets the answer at the pause, but the provider bills what it wrote.
  if (flowed) trace.settleLeg(leg, 'failed', flowed, error)
  else trace.failLeg(leg, error, 'failed', true)
  const { provider, model, byok } = leg.candidate
  if (!error.gatewayFault) deps.metrics.upstreamError(provider.id, model.id, error.kind)
  if (countsAgainstProvider(error)) {
    const keyOwner = keyOwnerOf(byok, trace.ctx.accountId)
    deps.health.recordFailure(provider.id, model.id, { retryAfterSeconds: error.retryAfterSeconds }, keyOwner, probe)
  }
  deps.log.warn('paused turn not resumed: the message sent back failed', {
    request_id: trace.ctx.id,
    model: model.id,
    status: error.upstreamStatus ?? error.status,
    kind: error.kind,
  })
}
