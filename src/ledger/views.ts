// The ledger as the API shows it: snake_case, money in integer nanos, times in RFC 3339.
// The usage endpoints, the admin API and the CLI's --json output all render through here.
import { creditPosition } from './credit'
import type {
  FeedbackRecord,
  GrantChargeRecord,
  GrantRecord,
  Ledger,
  LegRecord,
  RequestRecord,
  SessionSummary,
} from './ledger'

/** A request as shown: recorded, or still running (in_progress, its legs uncommitted). */
export type ShownRequest = Omit<RequestRecord, 'status'> & { status: RequestRecord['status'] | 'in_progress' }
export type ShownLeg = Omit<LegRecord, 'outcome'> & { outcome: LegRecord['outcome'] | 'in_progress' }

const iso = (ms: number) => new Date(ms).toISOString()
const isoOrNull = (ms: number | null) => (ms === null ? null : iso(ms))

export function grantView(g: GrantRecord) {
  return {
    id: g.id,
    amount_nanos: g.amountNanos,
    remaining_nanos: g.remainingNanos,
    scope_cost_type: g.scopeCostType,
    source: g.source,
    created_at: iso(g.createdAt),
    ...(g.scopeRoutingModes ? { scope_routing_modes: g.scopeRoutingModes } : {}),
    ...(g.scopeModels ? { scope_models: g.scopeModels } : {}),
    ...(g.scopeProviders ? { scope_providers: g.scopeProviders } : {}),
    ...(g.expiresAt !== null ? { expires_at: iso(g.expiresAt) } : {}),
  }
}

export function usageEventView(leg: ShownLeg) {
  return {
    id: leg.id,
    request_id: leg.requestId,
    attempt: leg.attempt,
    model_id: leg.modelId,
    provider_id: leg.providerId,
    upstream_model: leg.upstreamModel,
    committed: leg.committed,
    estimated: leg.estimated,
    outcome: leg.outcome,
    error: leg.error,
    input_tokens: leg.inputTokens,
    cached_input_tokens: leg.cachedInputTokens,
    cache_creation_input_tokens: leg.cacheCreationInputTokens,
    cache_creation_1h_input_tokens: leg.cacheCreation1hInputTokens,
    output_tokens: leg.outputTokens,
    web_search_requests: leg.webSearchRequests,
    cost_nanos: leg.costNanos,
    charged_nanos: leg.chargedNanos,
    byok: leg.byok,
    created_at: iso(leg.createdAt),
    ended_at: isoOrNull(leg.endedAt),
  }
}

/** One row of the request history: everything but the legs. */
export function requestSummaryView(r: ShownRequest) {
  return {
    request_id: r.id,
    status: r.status,
    http_status: r.httpStatus,
    surface: r.surface,
    routing_mode: r.routingMode,
    stream: r.stream,
    selected_model_id: r.selectedModelId,
    selected_provider_id: r.selectedProviderId,
    attempts: r.attempts,
    total_cost_nanos: r.totalCostNanos,
    charged_nanos: r.chargedNanos,
    total_input_tokens: r.totalInputTokens,
    total_cached_input_tokens: r.totalCachedInputTokens,
    total_cache_creation_input_tokens: r.totalCacheCreationInputTokens,
    total_output_tokens: r.totalOutputTokens,
    byok: r.byok,
    ...(r.sessionId !== null ? { session_id: r.sessionId } : {}),
    ...(r.agentId !== null ? { agent_id: r.agentId } : {}),
    ...(r.sessionSource !== null ? { session_source: r.sessionSource } : {}),
    error: r.errorType ? { type: r.errorType, message: r.errorMessage } : null,
    created_at: iso(r.createdAt),
    first_byte_at: isoOrNull(r.firstByteAt),
    ended_at: isoOrNull(r.endedAt),
    time_to_first_byte_ms: r.firstByteAt !== null ? r.firstByteAt - r.createdAt : null,
    duration_ms: r.endedAt !== null ? r.endedAt - r.createdAt : null,
  }
}

export function feedbackView(f: FeedbackRecord) {
  return {
    id: f.id,
    request_id: f.requestId,
    rating: f.rating,
    reason: f.reason,
    comment: f.comment,
    created_at: iso(f.createdAt),
  }
}

export function requestView(detail: {
  request: ShownRequest
  legs: ShownLeg[]
  charges: GrantChargeRecord[]
  feedback: FeedbackRecord[]
}) {
  return {
    ...requestSummaryView(detail.request),
    provider_ranks: detail.request.providerRanks,
    usage_events: detail.legs.map(usageEventView),
    grant_charges: detail.charges.map((c) => ({
      grant_id: c.grantId,
      usage_event_id: c.usageEventId,
      cost_type: c.costType,
      amount_nanos: c.amountNanos,
    })),
    feedback: detail.feedback.map(feedbackView),
  }
}

export function sessionView(s: SessionSummary) {
  return {
    session_id: s.sessionId,
    session_source: s.sessionSource,
    agent_id: s.agentId,
    request_count: s.requestCount,
    total_cost_nanos: s.totalCostNanos,
    first_at: iso(s.firstAt),
    latest_at: iso(s.latestAt),
  }
}

/**
 * GET /v1/usage: the credit position over unexpired grants and the most recent legs, those of
 * requests still running (`running`, uncommitted) among them by when they started.
 */
export async function usageSummaryView(
  ledger: Ledger,
  accountId: string,
  opts: { limit: number; now: number; running?: ShownLeg[] },
) {
  const grants = await ledger.listGrants(accountId)
  const active = grants.filter((g) => g.expiresAt === null || g.expiresAt > opts.now)
  const position = creditPosition(active, opts.now)
  const recorded: ShownLeg[] = await ledger.recentLegs(accountId, opts.limit)
  const events = opts.running?.length
    ? [...opts.running, ...recorded].sort((a, b) => b.createdAt - a.createdAt).slice(0, opts.limit)
    : recorded
  return {
    limit_nanos: position.limitNanos,
    used_nanos: position.usedNanos,
    remaining_nanos: position.remainingNanos,
    grants: active.map(grantView),
    recent_events: events.map(usageEventView),
  }
}
