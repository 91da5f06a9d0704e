// How much of the account's credit a request holds while it runs: the most its first candidate can
// charge, held anew before a fallback (credit-holds.ts keeps the books of what is held).
import type { Deps } from '../deps'
import { applicableCreditNanos, byokFeeNanos, type ChargeScope } from '../ledger/credit'
import type { GrantRecord } from '../ledger/ledger'
import { GatewayError } from '../lib/errors'
import { type Candidate, candidateCostAtMost } from '../router/rank'
import type { CreditHold } from './credit-holds'
import { creditHeld } from './refusals'

/**
 * The most a candidate can charge the account's credit, of a leg that may cost `mostCostNanos`
 * (by default its estimated prompt, whole max_tokens and searches: rank.ts), or, served with the
 * account's own key, the fee on that.
 */
export function creditCeiling(deps: Deps, candidate: Candidate, mostCostNanos = candidate.mostCostNanos): number {
  return candidate.byok ? byokFeeNanos(mostCostNanos, deps.config.billing.byokFeePercent) : mostCostNanos
}

/** What a hold holds, over its grants. */
const heldNanos = (hold: CreditHold | undefined) => hold?.parts.reduce((sum, part) => sum + part.amountNanos, 0) ?? 0

const chargeScopeOf = (candidate: Candidate, mode: string, now: number): ChargeScope => ({
  routingMode: mode,
  modelId: candidate.model.id,
  providerId: candidate.provider.id,
  costType: candidate.byok ? 'byok_fee' : 'model_usage',
  now,
})

/**
 * Holds the most the first candidate can charge on the grants that would pay it, or what they have
 * left if less: requests started together cannot each spend the same credit, so overspend stays
 * within one request's cost. Released when the request is recorded; a fallback holds anew
 * (holdForFallback).
 */
export function holdCredit(deps: Deps, available: GrantRecord[], first: Candidate, mode: string, now: number) {
  const amountNanos = creditCeiling(deps, first)
  if (amountNanos <= 0) return undefined
  return deps.holds.hold(available, chargeScopeOf(first, mode, now), amountNanos)
}

/**
 * The request's hold made what the fallback candidate can charge, on the grants that would pay it
 * (as they are now), or, if it cannot be, the error a request gets at the gate: the 429 when others
 * hold the credit, the 402 when none is left (the candidate is then not tried; relay() answers a
 * 402 with the failure before it).
 *
 * A request held only what its first candidate could charge: with the account's own key, the fee.
 * Its fallback to the platform's key then cost the full price, so 30 requests at once on a 0.05 USD
 * grant, each holding a 0.003 USD fee while its own key was refused, were each served at 0.06 USD
 * (an audit: 17 served, 1.02 USD). The hold is topped up before such a leg instead. In full where
 * the credit is there; in part (what is left, as the gate admits a request) only where no other
 * request holds that credit, or where it leaves unheld no more than the request's admission did
 * (its first cost less what it could hold then). Otherwise the credit others hold may be theirs to
 * spend, each a fee-holder that falls back in its turn. Judged on the admission's cost instead,
 * requests held in full on a grant scoped to their first model each took a small general grant
 * whole as they fell back, all served in full beyond it (an audit: 20 requests at once, two
 * requests' cost unpaid, where README promises about one).
 */
export function holdForFallback(
  deps: Deps,
  a: {
    grants: GrantRecord[]
    previous: CreditHold | undefined
    candidate: Candidate
    admission: { ceilingNanos: number; hold: CreditHold | undefined }
    mode: string
    now: number
  },
): CreditHold | undefined | GatewayError {
  deps.holds.release(a.previous)
  // At the prices of when it starts, as its leg is charged (peak hours may have begun).
  const amountNanos = creditCeiling(deps, a.candidate, candidateCostAtMost(a.candidate, a.now))
  if (amountNanos <= 0) return undefined
  const scope = chargeScopeOf(a.candidate, a.mode, a.now)
  const available = deps.holds.available(a.grants)
  const left = applicableCreditNanos(available, scope)
  const total = applicableCreditNanos(a.grants, scope)
  const nobodyElseHolds = left === total
  // What the gate let the request start without holding (its hold's parts outlive its release).
  const admittedShortNanos = a.admission.ceilingNanos - heldNanos(a.admission.hold)
  if (left >= amountNanos || (left > 0 && (nobodyElseHolds || amountNanos - left <= admittedShortNanos))) {
    return deps.holds.hold(available, scope, amountNanos)
  }
  // Spent since the request was admitted (by its own first attempt or the account's others): the
  // gate's answer for no credit. Otherwise others hold what is left, for now.
  if (total === 0) {
    return new GatewayError(
      'billing',
      `no credit is left for ${a.candidate.model.id}, the next model to try: add a grant that covers it`,
    )
  }
  return creditHeld()
}

/**
 * Before svc sends a paused turn back for its model to go on (paused-turn.ts): the request's hold
 * made what its answer's legs so far were billed and the most the next can charge (`nextNanos`),
 * where the account's credit has that beside what others hold. Otherwise it keeps what it held,
 * and the answer ends at the pause (`enough` false): it may not run past the credit as a new
 * request may not.
 */
export function holdForContinuation(
  deps: Deps,
  a: {
    grants: GrantRecord[]
    previous: CreditHold | undefined
    candidate: Candidate
    spentNanos: number
    /** The most the next message can cost: the turn so far as its prompt, the output left, its searches. */
    nextNanos: number
    mode: string
    now: number
  },
): { hold: CreditHold | undefined; enough: boolean } {
  const scope = chargeScopeOf(a.candidate, a.mode, a.now)
  const amountNanos = a.spentNanos + creditCeiling(deps, a.candidate, a.nextNanos)
  deps.holds.release(a.previous)
  const available = deps.holds.available(a.grants)
  const enough = applicableCreditNanos(available, scope) >= amountNanos
  const keep = enough ? amountNanos : heldNanos(a.previous)
  return { hold: keep > 0 ? deps.holds.hold(available, scope, keep) : undefined, enough }
}
