// The record of one routed request while it runs: its legs, their usage and cost, and the
// ranking as dispatch updated it. finish() turns it into the one ledger write.
import { type Config, isRoutedClaude } from '../config/load'
import { beginsWith } from '../exchange/prompt-prefix'
import { emptyUsage, type ExchangeRequest, type Usage } from '../exchange/types'
import { byokFeeNanos } from '../ledger/credit'
import type {
  FinishedRequest,
  LegOutcome,
  LegRecord,
  RequestRecord,
  RequestStatus,
  SessionServed,
} from '../ledger/ledger'
import { costNanos } from '../ledger/pricing'
import type { GatewayError } from '../lib/errors'
import type { Logger } from '../lib/log'
import { estimateRequestTokens } from '../router/count-tokens'
import type { Candidate, RankEntry } from '../router/rank'
import type { Admission } from './admission'
import type { CreditHold } from './credit-holds'
import { billedAsReported, incredibleCounts } from './credible-usage'
import { reportedOrEstimatedOutput } from '../exchange/token-estimate'
import type { SessionAttributes } from './session'

export interface LegDraft {
  id: string
  attempt: number
  candidate: Candidate
  startedAt: number
  endedAt?: number
  outcome?: LegOutcome
  error?: string
  usage: Usage
  /** Counts estimated by the gateway (the upstream never reported them). */
  estimated: boolean
  /** While a streamed leg runs: what it has received so far, for a look at the running request. */
  progress?: () => Received
}

type LegTotals = Pick<
  LegRecord,
  'inputTokens' | 'cachedInputTokens' | 'cacheCreationInputTokens' | 'outputTokens' | 'costNanos'
>

/** A running request as the usage API shows it: nothing committed yet, its legs as they stand. */
export interface RunningRequestSnapshot {
  request: Omit<RequestRecord, 'status'> & { status: 'in_progress' }
  legs: (Omit<LegRecord, 'outcome'> & { outcome: LegOutcome | 'in_progress' })[]
}

/** What the client received of a leg: the usage reported (or counted so far), and the output's UTF-8 bytes for estimates. */
export interface Received {
  usage: Usage
  reported: boolean
  /** Needed where output is estimated: a leg cut short, or one whose reported output count cannot be billed. */
  outputBytes: number
}

/** How long an upstream's automatic prompt cache is taken to keep a prompt (OpenAI: 5 to 10 minutes unused). */
const cacheKeptMs = 5 * 60_000

/**
 * An upstream that caches a prompt's prefix by itself (OpenAI and the servers of its dialects that
 * say so): not Anthropic, nor Claude behind a router, which cache only what a request marks, and
 * from 1,024 to 4,096 tokens on, at 1.25 × the input price for a write.
 */
export const cachesAutomatically = (candidate: Candidate): boolean =>
  candidate.model.capabilities.promptCaching &&
  candidate.provider.kind !== 'anthropic' &&
  !isRoutedClaude(candidate.model)

export class RequestTrace {
  readonly legs: LegDraft[] = []
  firstByteAt: number | null = null
  /** What the request holds of its account's credit while it runs; released when it is recorded. */
  creditHold?: CreditHold
  /** Its place among the requests in flight (admission.ts), given back when it is recorded. */
  admission?: Admission
  /** A running stream's end, before its upstream's: the stream tells its client why, and is recorded. */
  cut?: (why: GatewayError) => void
  private promptTokens?: number

  constructor(
    readonly ctx: {
      id: string
      accountId: string
      apiKeyId: string
      surface: 'messages' | 'responses'
      routingMode: string
      stream: boolean
      session: SessionAttributes
      /** The model the session's last request went to, and the prompts its answers reported (likelyCachedTokens). */
      sessionServed?: SessionServed
      ranks: RankEntry[]
      exchange: ExchangeRequest
      createdAt: number
      config: Config
      clock: () => number
      log: Logger
    },
  ) {}

  startLeg(candidate: Candidate): LegDraft {
    const leg: LegDraft = {
      // Derived from the request id: unique without minting another ULID on the hot path.
      id: `leg_${this.ctx.id}_${this.legs.length + 1}`,
      attempt: this.legs.length + 1,
      candidate,
      startedAt: this.since(this.ctx.createdAt),
      usage: emptyUsage(),
      estimated: false,
    }
    this.legs.push(leg)
    return leg
  }

  /**
   * A leg that failed before anything was generated: no tokens, no cost (its usage stays the empty
   * one it began with). `served`: its stream had begun for the client (the opening went out), so it
   * stays the leg that answered the request; otherwise the ranking says it failed.
   */
  failLeg(leg: LegDraft, error: GatewayError, outcome: LegOutcome = 'failed', served = false) {
    leg.outcome = outcome
    leg.error = error.message
    leg.endedAt = this.since(leg.startedAt)
    leg.progress = undefined
    if (served) return
    // A client that left says nothing of the candidate: not the candidate's failure.
    leg.candidate.rank.status = outcome === 'aborted' ? 'aborted' : 'failed'
    leg.candidate.rank.reason = `${error.kind}: ${error.message}`
  }

  /**
   * A leg the client left before any of it reached the client. Where the upstream's opening had come
   * (the relay holds it until the answer begins), the upstream has taken the prompt: billed as a
   * stream the client cut just after is, the prompt as the opening counted it or, where it counted
   * none (a Chat role chunk, response.created), as estimated (a security audit: a 150,000-token
   * prompt left at message_start, again and again, cost the account nothing).
   */
  abandonLeg(leg: LegDraft, error: GatewayError) {
    const flowed = leg.progress?.()
    this.failLeg(leg, error, 'aborted')
    if (flowed === undefined) return
    const counted = this.countReceived(flowed, leg)
    leg.usage = counted.usage
    leg.estimated = counted.estimated
  }

  /**
   * A leg that produced output. Reported usage is taken as is; what the upstream never reported,
   * or reported as no count can be (credible-usage.ts), is estimated from the prompt (tokenizer)
   * and the output that flowed (≈ 4 bytes of UTF-8 a token: token-estimate.ts).
   */
  settleLeg(leg: LegDraft, outcome: LegOutcome, received: Received, error?: GatewayError) {
    leg.outcome = outcome
    leg.endedAt = this.since(leg.startedAt)
    if (error) leg.error = error.message
    const incredible = incredibleCounts(received.usage)
    if (incredible.length > 0) {
      this.ctx.log.warn('upstream reported token counts that cannot be billed; estimated instead', {
        request_id: this.ctx.id,
        provider: leg.candidate.provider.id,
        model: leg.candidate.model.id,
        counts: Object.fromEntries(incredible.map((name) => [name, String(received.usage[name])])),
      })
    }
    const counted = this.countReceived(received, leg, incredible)
    leg.usage = counted.usage
    leg.estimated = counted.estimated
    leg.progress = undefined
  }

  /**
   * What the leg is billed for, as the client should be told it: the reported usage, or where the
   * upstream never reported it or reported counts no usage can have, the estimate the ledger
   * records (not zeros, not the incredible counts).
   */
  billedUsage(received: Received, leg: LegDraft): Usage {
    return this.countReceived(received, leg).usage
  }

  private countReceived(
    received: Received,
    leg: LegDraft,
    incredible = incredibleCounts(received.usage),
  ): { usage: Usage; estimated: boolean } {
    const usage = { ...received.usage }
    if (billedAsReported(usage, received.reported)) return { usage, estimated: false }
    for (const name of incredible) usage[name] = 0
    const prompt = usage.input + usage.cacheRead + usage.cacheWrite
    if (prompt === 0) {
      const estimated = this.estimatedPromptTokens()
      usage.cacheRead = this.likelyCachedTokens(leg, estimated)
      usage.input = estimated - usage.cacheRead
    }
    const outputReported = received.reported && !incredible.includes('output')
    usage.output = reportedOrEstimatedOutput(usage.output, outputReported, received.outputBytes)
    return { usage, estimated: true }
  }

  /**
   * Of a prompt the upstream never counted (an OpenAI stream cut before its usage, which comes only
   * at the end), what its automatic prompt cache likely read, billed at the cache price: OpenAI keeps
   * a prompt's prefix 5 to 10 minutes and reads it for the next prompt that begins with it, and an
   * agent's next request is its last one's prompt and more. So where the session's last request went
   * to this model with the same key, reported a prompt of N tokens within the last 5 minutes, and
   * this prompt begins with that one (the same system, tools and first messages: prompt-prefix.ts;
   * one of its last few, the longest: a side request such as Codex's compaction comes between),
   * its first N tokens count as cached, in OpenAI's steps (nothing under 1,024, then 128 at a time);
   * else none, the whole prompt at the input price, as before (a cut stream of a 100,000-token Codex
   * conversation was billed ~8 × what OpenAI bills for it).
   */
  private likelyCachedTokens(leg: LegDraft, promptTokens: number): number {
    const { model, provider, byok } = leg.candidate
    const prompts = this.ctx.sessionServed?.prompts
    if (!prompts || !cachesAutomatically(leg.candidate)) return 0
    let cached = 0
    for (const last of prompts) {
      if (last.modelId !== model.id || last.providerId !== provider.id || last.byok !== byok) continue
      const age = leg.startedAt - last.at
      if (age < 0 || age > cacheKeptMs || last.tokens <= cached) continue
      if (beginsWith(this.ctx.exchange, last.prefix)) cached = last.tokens
    }
    cached = Math.min(cached, promptTokens)
    return cached < 1024 ? 0 : cached - (cached % 128)
  }

  /**
   * The wall clock, never before `from`: NTP may step it back while a request runs, and a request
   * that ended before it began (durations of -600,000 ms in the ledger and a negative sum in
   * /metrics, an audit) is worse than one whose times stand still for the step.
   */
  since(from: number): number {
    return Math.max(this.ctx.clock(), from)
  }

  /** The latest time the request has recorded so far: a leg's start or end, or its first byte. */
  private latestTime(): number {
    let latest = this.firstByteAt ?? this.ctx.createdAt
    for (const leg of this.legs) latest = Math.max(latest, leg.endedAt ?? leg.startedAt)
    return latest
  }

  /** What these legs, as they stand, charge the account's credit (a paused turn's, before it goes on). */
  chargeOf(legs: LegDraft[]): number {
    const now = this.since(this.latestTime())
    return legs.reduce((sum, leg) => sum + this.legRecord(leg, now).charge.amountNanos, 0)
  }

  markChosen(leg: LegDraft) {
    leg.candidate.rank.status = 'chosen'
  }

  /**
   * Bounded as the routing's count is (slices past 64,000 characters): a whole count of a 2.4 MB
   * prompt, when its stream was interrupted or the usage API read it running, froze every stream
   * for 300 ms (an audit).
   */
  private estimatedPromptTokens(): number {
    this.promptTokens ??= estimateRequestTokens(this.ctx.exchange)
    return this.promptTokens
  }

  finish(result: { status: RequestStatus; httpStatus: number; error?: GatewayError }): FinishedRequest {
    for (const rank of this.ctx.ranks) if (rank.status === 'candidate') rank.status = 'not_tried'
    const now = this.since(this.latestTime())
    const legs = this.legs.map((leg) => this.legRecord(leg, now))
    return { request: this.requestRecord(legs, now, result), legs }
  }

  /**
   * The request as it stands, for the usage API while it runs: legs uncommitted, a streaming
   * leg's counts so far (estimated until the upstream reports them), nothing charged yet.
   */
  snapshot(): RunningRequestSnapshot {
    const now = this.since(this.latestTime())
    const legs = this.legs.map((leg) => ({
      ...this.legRecord(leg, now),
      outcome: leg.outcome ?? ('in_progress' as const),
      committed: false,
      chargedNanos: 0,
      endedAt: leg.endedAt ?? null,
    }))
    return {
      request: {
        ...this.requestRecord(legs, now, { status: 'completed', httpStatus: 0 }),
        status: 'in_progress',
        // A stream's 200 went out with its first byte; before that the answer is undecided.
        httpStatus: this.firstByteAt === null ? null : 200,
        chargedNanos: 0,
        endedAt: null,
      },
      legs,
    }
  }

  // Built in one object each (no spreads): finish() runs for every request.
  private legRecord(leg: LegDraft, now: number): FinishedRequest['legs'][number] {
    const { usage, estimated } =
      leg.outcome === undefined && leg.progress ? this.countReceived(leg.progress(), leg) : leg
    const cost = costNanos(usage, leg.candidate.model.price!, leg.startedAt)
    const byok = leg.candidate.byok
    return {
      id: leg.id,
      requestId: this.ctx.id,
      accountId: this.ctx.accountId,
      attempt: leg.attempt,
      modelId: leg.candidate.model.id,
      providerId: leg.candidate.provider.id,
      upstreamModel: leg.candidate.model.upstreamModel,
      committed: true,
      estimated,
      outcome: leg.outcome ?? 'aborted',
      error: leg.error ?? null,
      inputTokens: usage.input,
      cachedInputTokens: usage.cacheRead,
      cacheCreationInputTokens: usage.cacheWrite,
      outputTokens: usage.output,
      webSearchRequests: usage.webSearches ?? 0,
      cacheCreation1hInputTokens: usage.cacheWrite1h ?? 0,
      costNanos: cost,
      byok,
      createdAt: leg.startedAt,
      endedAt: leg.endedAt ?? now,
      charge: byok
        ? { costType: 'byok_fee' as const, amountNanos: byokFeeNanos(cost, this.ctx.config.billing.byokFeePercent) }
        : { costType: 'model_usage' as const, amountNanos: cost },
    }
  }

  private requestRecord(
    legs: LegTotals[],
    now: number,
    result: { status: RequestStatus; httpStatus: number; error?: GatewayError },
  ): FinishedRequest['request'] {
    const served = [...this.legs].reverse().find((l) => l.outcome === 'ok' || l.candidate.rank.status === 'chosen')
    const sum = (pick: (l: LegTotals) => number) => legs.reduce((n, l) => n + pick(l), 0)
    return {
      id: this.ctx.id,
      accountId: this.ctx.accountId,
      apiKeyId: this.ctx.apiKeyId,
      surface: this.ctx.surface,
      routingMode: this.ctx.routingMode,
      status: result.status,
      httpStatus: result.httpStatus,
      errorType: result.error?.kind ?? null,
      errorMessage: result.error?.message ?? null,
      stream: this.ctx.stream,
      selectedModelId: served?.candidate.model.id ?? null,
      selectedProviderId: served?.candidate.provider.id ?? null,
      providerRanks: this.ctx.ranks,
      attempts: this.legs.length,
      totalCostNanos: sum((l) => l.costNanos),
      totalInputTokens: sum((l) => l.inputTokens),
      totalCachedInputTokens: sum((l) => l.cachedInputTokens),
      totalCacheCreationInputTokens: sum((l) => l.cacheCreationInputTokens),
      totalOutputTokens: sum((l) => l.outputTokens),
      sessionId: this.ctx.session.sessionId,
      agentId: this.ctx.session.agentId,
      sessionSource: this.ctx.session.sessionSource,
      // The spec's "a tenant provider key was used": the served leg's key, or where none served,
      // the last attempt's (a request failed on the account's own key used it).
      byok: (served ?? this.legs.at(-1))?.candidate.byok ?? false,
      createdAt: this.ctx.createdAt,
      firstByteAt: this.firstByteAt,
      endedAt: now,
    }
  }
}
