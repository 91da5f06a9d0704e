// Builders for ledger rows, so usage tests can seed history without running a model request.
import type { FinishedRequest, Ledger, LegCharge } from '../../src/ledger/ledger'
import { newUlid } from '../../src/lib/ids'

export interface SeedLeg {
  modelId?: string
  providerId?: string
  input?: number
  cached?: number
  cacheCreation?: number
  /** Of cacheCreation, the part written for an hour. */
  cacheCreation1h?: number
  output?: number
  costNanos?: number
  charge?: LegCharge
  byok?: boolean
  outcome?: 'ok' | 'failed' | 'aborted'
}

export interface SeedRequest {
  accountId: string
  at: number
  id?: string
  routingMode?: string
  sessionId?: string
  sessionSource?: string
  agentId?: string
  legs?: SeedLeg[]
  providerRanks?: unknown[]
  /** How it ended: completed unless told. */
  status?: 'completed' | 'failed' | 'aborted'
}

/** A request as the ledger records it, committed when the returned promise resolves. */
export async function seedRequest(ledger: Ledger, opts: SeedRequest) {
  return (await ledger.recordRequest(finishedRequest(opts))).request
}

/** A finished request as the relay hands it to the ledger. */
export function finishedRequest(opts: SeedRequest): FinishedRequest {
  const id = opts.id ?? newUlid(opts.at)
  const legs = (opts.legs ?? [{}]).map((leg, i) => {
    const cost = leg.costNanos ?? 1000
    return {
      id: `leg_${id}_${i + 1}`,
      requestId: id,
      accountId: opts.accountId,
      attempt: i + 1,
      modelId: leg.modelId ?? 'claude-sonnet-4-5',
      providerId: leg.providerId ?? 'anthropic',
      upstreamModel: leg.modelId ?? 'claude-sonnet-4-5-20250929',
      committed: true,
      estimated: false,
      outcome: leg.outcome ?? 'ok',
      error: null,
      inputTokens: leg.input ?? 10,
      cachedInputTokens: leg.cached ?? 0,
      cacheCreationInputTokens: leg.cacheCreation ?? 0,
      outputTokens: leg.output ?? 5,
      webSearchRequests: 0,
      cacheCreation1hInputTokens: leg.cacheCreation1h ?? 0,
      costNanos: cost,
      byok: leg.byok ?? false,
      createdAt: opts.at,
      endedAt: opts.at + 5,
      charge: leg.charge ?? { costType: 'model_usage' as const, amountNanos: cost },
    }
  })
  const ok = legs.at(-1)
  return {
    request: {
      id,
      accountId: opts.accountId,
      apiKeyId: null,
      surface: 'messages',
      routingMode: opts.routingMode ?? 'pro',
      status: opts.status ?? 'completed',
      httpStatus: opts.status === 'failed' ? 502 : opts.status === 'aborted' ? 499 : 200,
      errorType: null,
      errorMessage: null,
      stream: false,
      selectedModelId: ok?.modelId ?? null,
      selectedProviderId: ok?.providerId ?? null,
      providerRanks: opts.providerRanks ?? [],
      attempts: legs.length,
      totalCostNanos: legs.reduce((n, l) => n + l.costNanos, 0),
      totalInputTokens: legs.reduce((n, l) => n + l.inputTokens, 0),
      totalCachedInputTokens: legs.reduce((n, l) => n + l.cachedInputTokens, 0),
      totalCacheCreationInputTokens: legs.reduce((n, l) => n + l.cacheCreationInputTokens, 0),
      totalOutputTokens: legs.reduce((n, l) => n + l.outputTokens, 0),
      sessionId: opts.sessionId ?? null,
      agentId: opts.agentId ?? null,
      sessionSource: opts.sessionSource ?? null,
      byok: legs.some((l) => l.byok),
      createdAt: opts.at,
      firstByteAt: opts.at + 1,
      endedAt: opts.at + 5,
    },
    legs,
  }
}
