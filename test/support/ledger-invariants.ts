// A reference ledger, written from the README's rules ("Money and credit", "Usage routes") and
// not from src/ledger: it replays what a property test did to an account and says what every
// leg must have cost and which grants must have paid it, so that svc's books can be held to it.
import { expect } from 'bun:test'

/** Prices in integer nanos: per token, and per web search. */
export interface ModelPrice {
  provider: string
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
  /** A 1-hour cache write; absent where the model has no such price. */
  cacheWrite1h?: number
  webSearch: number
}

export type CostType = 'all' | 'model_usage' | 'byok_fee'

export interface GrantSpec {
  amount: number
  modes?: string[]
  models?: string[]
  providers?: string[]
  costType: CostType
  expiresAt: number | null
}

export interface GrantState extends GrantSpec {
  id: string
  createdAt: number
  /** Creation order: grants made in the same millisecond are still older and younger. */
  order: number
  remaining: number
}

// ---- the usage API's shapes ----------------------------------------------------------------------

export interface LegView {
  id: string
  request_id: string
  attempt: number
  model_id: string
  provider_id: string
  committed: boolean
  estimated: boolean
  outcome: string
  input_tokens: number
  cached_input_tokens: number
  cache_creation_input_tokens: number
  cache_creation_1h_input_tokens: number
  output_tokens: number
  web_search_requests: number
  cost_nanos: number
  charged_nanos: number
  byok: boolean
  created_at: string
}

export interface ChargeView {
  grant_id: string
  usage_event_id: string
  cost_type: string
  amount_nanos: number
}

export interface RequestView {
  request_id: string
  status: string
  http_status: number | null
  routing_mode: string
  attempts: number
  total_cost_nanos: number
  charged_nanos: number
  total_input_tokens: number
  total_cached_input_tokens: number
  total_cache_creation_input_tokens: number
  total_output_tokens: number
  byok: boolean
  session_id?: string
  error: { type: string; message: string } | null
  created_at: string
  usage_events: LegView[]
  grant_charges: ChargeView[]
  provider_ranks: unknown[]
  feedback: unknown[]
}

export interface GrantView {
  id: string
  amount_nanos: number
  remaining_nanos: number
  expires_at?: string
}

// ---- the rules -----------------------------------------------------------------------------------

/**
 * README: input × input price + cache reads × … + web searches × search price, all integers; the
 * 1-hour cache writes at the 1-hour price, the model's cache-write price where it has none.
 */
export function legCostNanos(leg: LegView, price: ModelPrice): number {
  const hourWrites = leg.cache_creation_1h_input_tokens
  return (
    leg.input_tokens * price.input +
    leg.cached_input_tokens * price.cacheRead +
    (leg.cache_creation_input_tokens - hourWrites) * price.cacheWrite +
    hourWrites * (price.cacheWrite1h ?? price.cacheWrite) +
    leg.output_tokens * price.output +
    leg.web_search_requests * price.webSearch
  )
}

/** README: a BYOK request owes `byok_fee_percent` of its cost, rounded up to the nano (integer maths here). */
export const byokFee = (costNanos: number, feePercent: number): number =>
  Math.floor((costNanos * feePercent + 99) / 100)

interface ChargeScope {
  mode: string
  model: string
  provider: string
  costType: 'model_usage' | 'byok_fee'
  at: number
}

const inList = (list: string[] | undefined, value: string) => !list || list.length === 0 || list.includes(value)

/** README: cost type allows it, every scope it has matches, and it has not expired. */
export const covers = (g: GrantSpec, c: ChargeScope): boolean =>
  (g.expiresAt === null || g.expiresAt > c.at) &&
  (g.costType === 'all' || g.costType === c.costType) &&
  inList(g.modes, c.mode) &&
  inList(g.models, c.model) &&
  inList(g.providers, c.provider)

/** Credit given for a purpose: any scope list, or a cost type narrower than `all`. */
const isScoped = (g: GrantSpec) =>
  Boolean(g.modes?.length || g.models?.length || g.providers?.length) || g.costType !== 'all'

/** README's charging order: matching scoped grants first, then the soonest expiry, then the oldest. */
export function chargingOrder(grants: readonly GrantState[], c: ChargeScope): GrantState[] {
  const expiry = (g: GrantState) => g.expiresAt ?? Number.MAX_SAFE_INTEGER
  return grants
    .filter((g) => g.remaining > 0 && covers(g, c))
    .sort(
      (a, b) =>
        Number(isScoped(b)) - Number(isScoped(a)) ||
        expiry(a) - expiry(b) ||
        a.createdAt - b.createdAt ||
        a.order - b.order,
    )
}

/** What a charge takes from each grant, in order; never more than a grant holds. */
export function allocate(grants: readonly GrantState[], c: ChargeScope, amount: number) {
  const parts: { grant_id: string; amount_nanos: number }[] = []
  let owed = amount
  for (const g of chargingOrder(grants, c)) {
    if (owed === 0) break
    const take = Math.min(owed, g.remaining)
    parts.push({ grant_id: g.id, amount_nanos: take })
    owed -= take
  }
  return parts
}

/** The quota gate: some grant with credit left covers this model under this mode. */
export const hasCredit = (grants: readonly GrantState[], c: ChargeScope): boolean =>
  grants.some((g) => g.remaining > 0 && covers(g, c))

// ---- replaying a run -----------------------------------------------------------------------------

export interface Catalog {
  prices: Record<string, ModelPrice>
  /** The models each routing mode may use. */
  modes: Record<string, string[]>
  /** Providers whose models are served with the account's own key. */
  byokProviders: string[]
  feePercent: number
}

/** GET /v1/usage's credit position, with each unexpired grant's id and remaining amount. */
export interface CreditView {
  limit_nanos: number
  used_nanos: number
  remaining_nanos: number
  grants: [id: string, remaining: number][]
}

export type RunEvent =
  | { kind: 'grant'; grant: GrantState }
  /** A look at GET /v1/usage: what every request answered so far must have left. */
  | { kind: 'look'; at: number; usage: CreditView }
  /**
   * Every answered request committed, seen in the tables without a read through svc: the quota
   * gate now sees the grants as that commit left them (README: the 5 ms bound on overspend).
   */
  | { kind: 'settled' }
  /**
   * One request, or several sent at once (their commit order is unknown), and a grant added while
   * they ran (after every one had passed the quota gate).
   */
  | { kind: 'requests'; at: number; ids: string[]; grant?: GrantState }

const costTypeOf = (catalog: Catalog, provider: string) =>
  catalog.byokProviders.includes(provider) ? ('byok_fee' as const) : ('model_usage' as const)

/** What each leg of `detail` must take from `grants` as they stand, leg by leg (grants updated). */
function expectedCharges(catalog: Catalog, grants: GrantState[], detail: RequestView): ChargeView[] {
  const charges: ChargeView[] = []
  for (const leg of detail.usage_events) {
    const costType = costTypeOf(catalog, leg.provider_id)
    const amount = costType === 'byok_fee' ? byokFee(leg.cost_nanos, catalog.feePercent) : leg.cost_nanos
    const scope = {
      mode: detail.routing_mode,
      model: leg.model_id,
      provider: leg.provider_id,
      costType,
      at: Date.parse(leg.created_at),
    }
    for (const part of allocate(grants, scope, amount)) {
      grants.find((g) => g.id === part.grant_id)!.remaining -= part.amount_nanos
      charges.push({ ...part, usage_event_id: leg.id, cost_type: costType })
    }
  }
  return charges
}

const copyGrants = (grants: GrantState[]) => grants.map((g) => ({ ...g }))

/** What a batch commits, in some order: requests' charges, and a grant added while they ran. */
type Commit = { detail: RequestView } | { grant: GrantState }

/**
 * An order in which svc could have committed what ran together that explains what it charged
 * each request: the rules decide each charge, only the commit order is svc's to pick (and a
 * grant added meanwhile lands between the requests that ended before it and those after).
 */
function commitOrder(catalog: Catalog, grants: GrantState[], commits: Commit[]): GrantState[] | undefined {
  if (commits.length === 0) return grants
  for (const [i, commit] of commits.entries()) {
    const trial = copyGrants(grants)
    if ('grant' in commit) trial.push({ ...commit.grant })
    else if (!Bun.deepEquals(expectedCharges(catalog, trial, commit.detail), commit.detail.grant_charges)) continue
    const rest = commitOrder(
      catalog,
      trial,
      commits.filter((_, j) => j !== i),
    )
    if (rest) return rest
  }
  return undefined
}

/** The models of a mode that some grant with credit left covers, as the quota gate sees them. */
function coveredModels(catalog: Catalog, grants: readonly GrantState[], mode: string, at: number): string[] {
  return (catalog.modes[mode] ?? []).filter((model) => {
    const provider = catalog.prices[model]!.provider
    const costType = costTypeOf(catalog, provider)
    const needsCredit = costType === 'model_usage' || catalog.feePercent > 0
    return !needsCredit || hasCredit(grants, { mode, model, provider, costType, at })
  })
}

/**
 * Replays the run: every grant as it was added, every request's charges in an order svc could
 * have committed them, and the quota gate's verdicts. The gate reads grants as the last ledger
 * read left them, less what committed since (README: overspend is bounded by the requests
 * answered in the 5 ms before), so a request may pass on the credit of that read and must be
 * refused only when even the most spent state leaves nothing for it. Returns the grants as the
 * books must show them.
 */
export function replay(catalog: Catalog, events: RunEvent[], details: Map<string, RequestView>): GrantState[] {
  let grants: GrantState[] = []
  /** The grants as of the last ledger read: an admin write reads (and flushes) first. */
  let lastRead: GrantState[] = []
  for (const event of events) {
    if (event.kind === 'grant') {
      grants.push({ ...event.grant })
      lastRead = copyGrants(grants)
      continue
    }
    if (event.kind === 'look') {
      expect(event.usage).toEqual(creditPosition(grants, event.at))
      lastRead = copyGrants(grants)
      continue
    }
    if (event.kind === 'settled') {
      lastRead = copyGrants(grants)
      continue
    }
    const batch = event.ids.map((id) => details.get(id)!)
    // Every request passed the gate before the grant added meanwhile existed.
    for (const detail of batch) {
      const covered = coveredModels(catalog, lastRead, detail.routing_mode, event.at)
      for (const leg of detail.usage_events) {
        if (!covered.includes(leg.model_id)) {
          throw new Error(`request ${detail.request_id}: ${leg.model_id} passed the quota gate with no credit`)
        }
      }
    }
    const commits: Commit[] = batch.map((detail) => ({ detail }))
    if (event.grant) commits.push({ grant: event.grant })
    const ordered = commitOrder(catalog, grants, commits)
    if (!ordered) {
      // No order explains it: show the first difference, in the order the requests were sent.
      const trial = copyGrants(grants)
      if (event.grant) trial.push({ ...event.grant })
      for (const detail of batch) {
        expect({ request: detail.request_id, charges: detail.grant_charges }).toEqual({
          request: detail.request_id,
          charges: expectedCharges(catalog, trial, detail),
        })
      }
      throw new Error(`requests ${event.ids.join(', ')}: no commit order explains their charges`)
    }
    const spent = ordered.filter((g) => g.id !== event.grant?.id)
    for (const detail of batch) {
      if (detail.http_status !== 402) continue
      const covered = coveredModels(catalog, spent, detail.routing_mode, event.at)
      if (covered.length > 0) {
        throw new Error(`request ${detail.request_id} refused with 402 while credit covered ${covered.join(', ')}`)
      }
    }
    grants = ordered
    // The grant's write read the ledger first: at the most, the gate now sees it and no charge of the batch.
    if (event.grant) lastRead = [...lastRead, { ...event.grant }]
  }
  return grants
}

/** The credit position the README defines: over unexpired grants, the sum of amounts and of charges. */
export function creditPosition(grants: readonly GrantState[], now: number): CreditView {
  const active = grants.filter((g) => g.expiresAt === null || g.expiresAt > now)
  const limit = sum(active, (g) => g.amount)
  const used = sum(active, (g) => g.amount - g.remaining)
  return {
    limit_nanos: limit,
    used_nanos: used,
    remaining_nanos: limit - used,
    grants: active.map((g) => [g.id, g.remaining]),
  }
}

/** A request's row in the history: the detail without its legs, charges, ranks and feedback. */
export function summaryOf(detail: RequestView): Record<string, unknown> {
  const { usage_events: _legs, grant_charges: _charges, provider_ranks: _ranks, feedback: _feedback, ...rest } = detail
  return rest
}

export const sum = <T>(items: readonly T[], pick: (item: T) => number): number =>
  items.reduce((n, item) => n + pick(item), 0)
