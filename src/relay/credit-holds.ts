// What the requests in flight are expected to cost, held against the grants that will pay it.
//
// A request is charged when it ends; until then the quota gate saw only what earlier requests had
// already been charged. So an account with a few nanos left could start any number of requests at
// once, each admitted, each charged what was left (one audit: 50 parallel streams on a 0.004 USD
// grant, 0.17 USD served). Each admitted request now holds its ranking's estimate on the grants
// that would pay it, and the gate sees what they have left less what is held: a request is still
// admitted while any credit is left after the holds (so one request may cost more than remains, as
// the README says), but requests started together share what is left rather than each seeing all
// of it. The hold is released when the request is recorded; its real charge commits within
// milliseconds after (the writer's window).
import { type ChargeScope, allocateCharge } from '../ledger/credit'
import type { GrantRecord } from '../ledger/ledger'

/** One request's hold: nanos per grant, released once. */
export interface CreditHold {
  parts: { grantId: string; amountNanos: number }[]
  released: boolean
}

export class CreditHolds {
  /** grant id → nanos held on it by requests in flight (every account's: grant ids are unique). */
  private readonly held = new Map<string, number>()

  /**
   * The grants as the quota gate should see them: each one's remaining less what requests in
   * flight hold on it. The grants themselves, untouched, when nothing is held on them (the usual
   * case at one request at a time: no copy).
   */
  available(grants: readonly GrantRecord[]): GrantRecord[] {
    if (this.held.size === 0) return grants as GrantRecord[]
    let seen: GrantRecord[] | undefined
    for (let i = 0; i < grants.length; i++) {
      const held = this.held.get(grants[i]!.id)
      if (held === undefined) continue
      seen ??= grants.slice()
      seen[i] = { ...grants[i]!, remainingNanos: Math.max(0, grants[i]!.remainingNanos - held) }
    }
    return seen ?? (grants as GrantRecord[])
  }

  /** Holds `amountNanos` on the grants (as `available` saw them) that would pay it, in charging order. */
  hold(available: readonly GrantRecord[], scope: ChargeScope, amountNanos: number): CreditHold {
    const { parts } = allocateCharge(available, scope, amountNanos)
    for (const part of parts) this.held.set(part.grantId, (this.held.get(part.grantId) ?? 0) + part.amountNanos)
    return { parts, released: false }
  }

  release(hold: CreditHold | undefined): void {
    if (!hold || hold.released) return
    hold.released = true
    for (const { grantId, amountNanos } of hold.parts) {
      const left = (this.held.get(grantId) ?? 0) - amountNanos
      if (left > 0) this.held.set(grantId, left)
      else this.held.delete(grantId)
    }
  }
}
