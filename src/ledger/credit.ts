// Credit rules, pure: which grants may pay for what, in which order, and how a charge is split.
// The SQLite ledger (and any future twin) applies these inside its own transaction.

/** What a charge is for. A BYOK request owes the gateway only its fee, never the model's cost. */
export type CostType = 'model_usage' | 'byok_fee'

/**
 * What a grant pays for (`scope_cost_type`):
 * - `all`: any charge;
 * - `model_usage`: upstream model usage served with the platform's provider keys;
 * - `byok_fee`: only the gateway fee on requests served with the account's own provider key.
 */
export type ScopeCostType = 'all' | CostType
export const scopeCostTypes: readonly ScopeCostType[] = ['all', 'model_usage', 'byok_fee']

export interface GrantState {
  id: string
  amountNanos: number
  remainingNanos: number
  scopeCostType: string
  scopeRoutingModes: string[] | null
  scopeModels: string[] | null
  scopeProviders: string[] | null
  expiresAt: number | null
  createdAt: number
}

export interface ChargeScope {
  routingMode: string
  modelId: string
  providerId: string
  costType: CostType
  now: number
}

const within = (list: string[] | null, value: string) => list === null || list.length === 0 || list.includes(value)

export const isExpired = (grant: GrantState, now: number) => grant.expiresAt !== null && grant.expiresAt <= now

/** True when a grant may pay for this charge: cost type, every scope list, and expiry. */
export function grantCovers(grant: GrantState, scope: ChargeScope): boolean {
  return (
    !isExpired(grant, scope.now) &&
    (grant.scopeCostType === 'all' || grant.scopeCostType === scope.costType) &&
    within(grant.scopeRoutingModes, scope.routingMode) &&
    within(grant.scopeModels, scope.modelId) &&
    within(grant.scopeProviders, scope.providerId)
  )
}

/** A grant that pays only some requests: one cost type, or named routing modes, models or providers (an empty list names none). */
export const isScoped = (g: GrantState) =>
  (g.scopeRoutingModes?.length ?? 0) > 0 ||
  (g.scopeModels?.length ?? 0) > 0 ||
  (g.scopeProviders?.length ?? 0) > 0 ||
  g.scopeCostType !== 'all'

/**
 * Charging order: grants whose scope matches first (a grant made for this use is spent before
 * general credit), then the soonest expiry (no expiry last), then the oldest, then by id so the
 * order is total.
 */
export function orderForCharging(grants: readonly GrantState[], scope: ChargeScope): GrantState[] {
  return grants
    .filter((g) => g.remainingNanos > 0 && grantCovers(g, scope))
    .sort(
      (a, b) =>
        Number(isScoped(b)) - Number(isScoped(a)) ||
        (a.expiresAt ?? Number.MAX_SAFE_INTEGER) - (b.expiresAt ?? Number.MAX_SAFE_INTEGER) ||
        a.createdAt - b.createdAt ||
        (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
    )
}

export function applicableCreditNanos(grants: readonly GrantState[], scope: ChargeScope): number {
  let total = 0
  for (const g of grants) if (g.remainingNanos > 0 && grantCovers(g, scope)) total += g.remainingNanos
  return total
}

export interface Allocation {
  parts: { grantId: string; amountNanos: number }[]
  /** What no grant could pay: recorded on the leg, never taken below zero. */
  unpaidNanos: number
}

export function allocateCharge(grants: readonly GrantState[], scope: ChargeScope, amountNanos: number): Allocation {
  const parts: Allocation['parts'] = []
  let owed = amountNanos
  for (const g of orderForCharging(grants, scope)) {
    if (owed <= 0) break
    const take = Math.min(owed, g.remainingNanos)
    parts.push({ grantId: g.id, amountNanos: take })
    owed -= take
  }
  return { parts, unpaidNanos: owed }
}

/** The account's credit position over grants that have not expired. */
export function creditPosition(grants: readonly GrantState[], now: number) {
  let limitNanos = 0
  let usedNanos = 0
  for (const g of grants) {
    if (isExpired(g, now)) continue
    limitNanos += g.amountNanos
    usedNanos += g.amountNanos - g.remainingNanos
  }
  return { limitNanos, usedNanos, remainingNanos: limitNanos - usedNanos }
}

/** The BYOK fee on a leg's full cost, rounded up to the nano so a fee is never lost to rounding. */
export const byokFeeNanos = (costNanos: number, feePercent: number): number =>
  Math.ceil((costNanos * Math.round(feePercent * 1000)) / 100_000)
