// A reference for the usage routes (README, "Usage routes", "Money and credit", "Sessions"),
// computed from what a test sent and what the simulator answered, never from svc's database: each
// function says what one route must answer for one account, in the route's own JSON.
import { allocate, type GrantState, type ModelPrice, sum } from './ledger-invariants'

export interface RefLeg {
  attempt: number
  modelId: string
  providerId: string
  upstreamModel: string
  outcome: 'ok' | 'failed'
  input: number
  cached: number
  cacheWrite: number
  /** Of cacheWrite, the part written for an hour. */
  cacheWrite1h: number
  output: number
  webSearches: number
  costNanos: number
  chargedNanos: number
  createdAt: number
  endedAt: number
  /** The grants that paid for it, in charging order. */
  charges: { grant_id: string; amount_nanos: number }[]
}

export interface RefFeedback {
  id: string
  rating: string | null
  reason: string | null
  comment: string | null
  createdAt: number
}

export interface RefRequest {
  id: string
  account: number
  surface: 'messages' | 'responses'
  routingMode: string
  stream: boolean
  httpStatus: number
  sessionId: string | null
  agentId: string | null
  sessionSource: string | null
  createdAt: number
  endedAt: number
  legs: RefLeg[]
  feedback: RefFeedback[]
}

export interface RefGrant extends GrantState {
  source: string
}

const iso = (ms: number) => new Date(ms).toISOString()

/** Newest first; a millisecond's requests by id, newest (largest ULID) first: the keyset's order. */
export const newestFirst = (a: { createdAt: number; id: string }, b: { createdAt: number; id: string }) =>
  b.createdAt - a.createdAt || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0)

const served = (r: RefRequest) => r.legs.find((l) => l.outcome === 'ok')

/** One row of GET /v1/usage/requests. */
export function requestSummary(r: RefRequest) {
  const ok = served(r)
  const firstByteAt = ok ? r.endedAt : null
  return {
    request_id: r.id,
    status: ok ? 'completed' : 'failed',
    http_status: r.httpStatus,
    surface: r.surface,
    routing_mode: r.routingMode,
    stream: r.stream,
    selected_model_id: ok?.modelId ?? null,
    selected_provider_id: ok?.providerId ?? null,
    attempts: r.legs.length,
    total_cost_nanos: sum(r.legs, (l) => l.costNanos),
    charged_nanos: sum(r.legs, (l) => l.chargedNanos),
    total_input_tokens: sum(r.legs, (l) => l.input),
    total_cached_input_tokens: sum(r.legs, (l) => l.cached),
    total_cache_creation_input_tokens: sum(r.legs, (l) => l.cacheWrite),
    total_output_tokens: sum(r.legs, (l) => l.output),
    byok: false,
    ...(r.sessionId !== null ? { session_id: r.sessionId } : {}),
    ...(r.agentId !== null ? { agent_id: r.agentId } : {}),
    ...(r.sessionSource !== null ? { session_source: r.sessionSource } : {}),
    // The message is the upstream's or svc's words: only its presence is the reference's to say.
    error: ok ? null : 'present',
    created_at: iso(r.createdAt),
    first_byte_at: firstByteAt === null ? null : iso(firstByteAt),
    ended_at: iso(r.endedAt),
    time_to_first_byte_ms: firstByteAt === null ? null : firstByteAt - r.createdAt,
    duration_ms: r.endedAt - r.createdAt,
  }
}

/** A leg as GET /v1/usage and GET /v1/usage/requests/{id} show it (its error message only as present or not). */
export function legView(r: RefRequest, l: RefLeg) {
  return {
    id: `leg_${r.id}_${l.attempt}`,
    request_id: r.id,
    attempt: l.attempt,
    model_id: l.modelId,
    provider_id: l.providerId,
    upstream_model: l.upstreamModel,
    committed: true,
    estimated: false,
    outcome: l.outcome,
    error: l.outcome === 'ok' ? null : 'present',
    input_tokens: l.input,
    cached_input_tokens: l.cached,
    cache_creation_input_tokens: l.cacheWrite,
    cache_creation_1h_input_tokens: l.cacheWrite1h,
    output_tokens: l.output,
    web_search_requests: l.webSearches,
    cost_nanos: l.costNanos,
    charged_nanos: l.chargedNanos,
    byok: false,
    created_at: iso(l.createdAt),
    ended_at: iso(l.endedAt),
  }
}

/** GET /v1/usage/requests/{id}, less `provider_ranks` (the router's, not the ledger's to say). */
export function requestDetail(r: RefRequest) {
  return {
    ...requestSummary(r),
    usage_events: r.legs.map((l) => legView(r, l)),
    grant_charges: r.legs.flatMap((l) =>
      l.charges.map((c) => ({ ...c, usage_event_id: `leg_${r.id}_${l.attempt}`, cost_type: 'model_usage' })),
    ),
    feedback: r.feedback.map((f) => ({
      id: f.id,
      request_id: r.id,
      rating: f.rating,
      reason: f.reason,
      comment: f.comment,
      created_at: iso(f.createdAt),
    })),
  }
}

/** Charges each leg to the account's grants as "Money and credit" orders them (grants updated). */
export function chargeLegs(grants: RefGrant[], routingMode: string, legs: RefLeg[]) {
  for (const leg of legs) {
    const scope = {
      mode: routingMode,
      model: leg.modelId,
      provider: leg.providerId,
      costType: 'model_usage' as const,
      at: leg.createdAt,
    }
    leg.charges = allocate(grants, scope, leg.costNanos)
    for (const part of leg.charges) grants.find((g) => g.id === part.grant_id)!.remaining -= part.amount_nanos
    leg.chargedNanos = sum(leg.charges, (c) => c.amount_nanos)
  }
}

// ---- paging -------------------------------------------------------------------------------------

export interface Cursor {
  at: number
  id: string
}

/** A keyset page: the rows strictly after the cursor in `newestFirst` order, and whether more follow. */
export function pageAfter<T extends { createdAt: number; id: string }>(
  rows: readonly T[],
  cursor: Cursor | undefined,
  limit: number,
) {
  const after = cursor
    ? rows.filter((r) => r.createdAt < cursor.at || (r.createdAt === cursor.at && r.id < cursor.id))
    : rows
  return { items: after.slice(0, limit), hasMore: after.length > limit }
}

// ---- sessions -----------------------------------------------------------------------------------

export interface RefSession {
  id: string
  createdAt: number
  view: {
    session_id: string
    session_source: string
    agent_id: string | null
    request_count: number
    total_cost_nanos: number
    first_at: string
    latest_at: string
  }
}

/** Each session of the account's requests with its totals; keyed for paging by its latest activity. */
export function sessionsOf(requests: readonly RefRequest[]): RefSession[] {
  const bySession = Map.groupBy(
    requests.filter((r) => r.sessionId !== null),
    (r) => r.sessionId!,
  )
  return [...bySession]
    .map(([id, of]) => {
      const times = of.map((r) => r.createdAt)
      const latest = Math.max(...times)
      return {
        id,
        createdAt: latest,
        view: {
          session_id: id,
          // One source and agent a session in these tests: the README says nothing of mixing them.
          session_source: of[0]!.sessionSource ?? 'api',
          agent_id: of[0]!.agentId,
          request_count: of.length,
          total_cost_nanos: sum(of, (r) => sum(r.legs, (l) => l.costNanos)),
          first_at: iso(Math.min(...times)),
          latest_at: iso(latest),
        },
      }
    })
    .sort(newestFirst)
}

// ---- spend --------------------------------------------------------------------------------------

const hourMs = 3_600_000
const dayMs = 24 * hourMs

/** README: hour buckets over at most 7 days (default 24 whole hours), day buckets over 90 (default 7 days). */
export const spendBounds = {
  hour: { width: hourMs, max: 7 * dayMs, fallback: dayMs, label: '7 days' },
  day: { width: dayMs, max: 90 * dayMs, fallback: 7 * dayMs, label: '90 days' },
} as const

export type SpendWindow =
  | { ok: true; bucket: 'hour' | 'day'; groupBy: string; since: number; until: number }
  | { ok: false; param: string; mentions: string }

/**
 * The window a spend query names, or the 400 it must get. Defaults end with the current bucket,
 * so that it is whole and included ("the last 24 whole hours / 7 whole UTC days").
 */
export function spendWindow(
  q: { bucket?: string; group_by?: string; since?: string; until?: string },
  now: number,
  parse: (raw: string) => number | undefined,
): SpendWindow {
  const bucket = q.bucket ?? 'day'
  if (bucket !== 'hour' && bucket !== 'day') return { ok: false, param: 'bucket', mentions: 'bucket' }
  const groupBy = q.group_by ?? 'model'
  if (!['model', 'provider', 'routing_mode'].includes(groupBy))
    return { ok: false, param: 'group_by', mentions: 'group_by' }
  const b = spendBounds[bucket]
  const until = q.until === undefined ? now - (now % b.width) + b.width : parse(q.until)
  if (until === undefined) return { ok: false, param: 'until', mentions: 'until' }
  const since = q.since === undefined ? until - b.fallback : parse(q.since)
  if (since === undefined) return { ok: false, param: 'since', mentions: 'since' }
  if (since >= until) return { ok: false, param: 'since', mentions: 'since' }
  if (until - since > b.max) return { ok: false, param: 'since', mentions: b.label }
  return { ok: true, bucket, groupBy, since, until }
}

/** The figures of a spend point and of the totals, in the order the API gives them. */
export const spendFields = [
  'cost_nanos',
  'requests',
  'input_tokens',
  'cached_input_tokens',
  'cache_creation_input_tokens',
  'output_tokens',
  'web_search_requests',
] as const

interface LegOf {
  request: RefRequest
  leg: RefLeg
}

/** README: sums over legs; `requests` counts distinct requests, so a fallback counts once. */
function totalsOf(legs: readonly LegOf[]): Record<(typeof spendFields)[number], number> {
  return {
    cost_nanos: sum(legs, (x) => x.leg.costNanos),
    requests: new Set(legs.map((x) => x.request.id)).size,
    input_tokens: sum(legs, (x) => x.leg.input),
    cached_input_tokens: sum(legs, (x) => x.leg.cached),
    cache_creation_input_tokens: sum(legs, (x) => x.leg.cacheWrite),
    output_tokens: sum(legs, (x) => x.leg.output),
    web_search_requests: sum(legs, (x) => x.leg.webSearches),
  }
}

/**
 * GET /v1/usage/spend for a valid window: legs created in [since, until), by UTC bucket start and
 * key (a leg under its own model and provider, under its request's routing mode), series as a map
 * from key to points in time order; cache savings at the catalog's prices.
 */
export function spendOf(
  requests: readonly RefRequest[],
  w: Extract<SpendWindow, { ok: true }>,
  prices: Record<string, ModelPrice>,
) {
  const width = spendBounds[w.bucket].width
  const legs = requests.flatMap((request) =>
    request.legs.filter((l) => l.createdAt >= w.since && l.createdAt < w.until).map((leg) => ({ request, leg })),
  )
  const keyOf = (x: LegOf) =>
    w.groupBy === 'model' ? x.leg.modelId : w.groupBy === 'provider' ? x.leg.providerId : x.request.routingMode
  const series = Object.fromEntries(
    [...Map.groupBy(legs, keyOf)].map(([key, of]) => [
      key,
      [...Map.groupBy(of, (x) => x.leg.createdAt - (x.leg.createdAt % width))]
        .sort(([a], [b]) => a - b)
        .map(([t, at]) => ({ t: iso(t), ...totalsOf(at) })),
    ]),
  )
  const price = (x: LegOf) => prices[x.leg.modelId]!
  return {
    bucket: w.bucket,
    group_by: w.groupBy,
    since: iso(w.since),
    until: iso(w.until),
    series,
    totals: totalsOf(legs),
    cache_savings_nanos: sum(legs, (x) => x.leg.cached * (price(x).input - price(x).cacheRead)),
    // The 1-hour writes at the 1-hour price, where the model has one.
    cache_write_premium_nanos: sum(
      legs,
      (x) =>
        (x.leg.cacheWrite - x.leg.cacheWrite1h) * (price(x).cacheWrite - price(x).input) +
        x.leg.cacheWrite1h * ((price(x).cacheWrite1h ?? price(x).cacheWrite) - price(x).input),
    ),
    cache_unpriced_tokens: 0,
  }
}

// ---- credit -------------------------------------------------------------------------------------

/** GET /v1/usage: the unexpired grants and what was charged to them, and the newest legs first. */
export function usageOf(grants: readonly RefGrant[], requests: readonly RefRequest[], now: number, limit: number) {
  const active = grants.filter((g) => g.expiresAt === null || g.expiresAt > now)
  const limitNanos = sum(active, (g) => g.amount)
  const used = sum(active, (g) => g.amount - g.remaining)
  const legs = requests
    .flatMap((r) => r.legs.map((l) => ({ r, l, createdAt: l.createdAt, id: `leg_${r.id}_${l.attempt}` })))
    .sort(newestFirst)
  return {
    limit_nanos: limitNanos,
    used_nanos: used,
    remaining_nanos: limitNanos - used,
    grants: active
      .map((g) => ({
        id: g.id,
        amount_nanos: g.amount,
        remaining_nanos: g.remaining,
        scope_cost_type: 'all',
        source: g.source,
        created_at: iso(g.createdAt),
        ...(g.expiresAt !== null ? { expires_at: iso(g.expiresAt) } : {}),
      }))
      .sort((a, b) => (a.id < b.id ? -1 : 1)),
    recent_events: legs.slice(0, limit).map(({ r, l }) => legView(r, l)),
  }
}
