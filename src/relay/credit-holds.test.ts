import { describe, expect, test } from 'bun:test'
import type { GrantRecord } from '../ledger/ledger'
import { CreditHolds } from './credit-holds'

const grant = (id: string, remainingNanos: number, over: Partial<GrantRecord> = {}): GrantRecord => ({
  id,
  accountId: 'acct_1',
  source: 'test',
  amountNanos: remainingNanos,
  remainingNanos,
  scopeCostType: 'all',
  scopeRoutingModes: null,
  scopeModels: null,
  scopeProviders: null,
  expiresAt: null,
  createdAt: 0,
  ...over,
})
const scope = { routingMode: 'pro', modelId: 'm', providerId: 'p', costType: 'model_usage' as const, now: 1 }

describe('CreditHolds', () => {
  test('a hold takes from the grants in charging order; the gate sees what is left; release gives it back once', () => {
    const holds = new CreditHolds()
    const grants = [grant('general', 1_000), grant('scoped', 300, { scopeModels: ['m'] })]
    expect(holds.available(grants)).toBe(grants)
    // Scoped credit first, then general: 300 + 200.
    const first = holds.hold(holds.available(grants), scope, 500)
    expect(first.parts).toEqual([
      { grantId: 'scoped', amountNanos: 300 },
      { grantId: 'general', amountNanos: 200 },
    ])
    expect(holds.available(grants).map((g) => g.remainingNanos)).toEqual([800, 0])
    // A second takes what is left, never more.
    const second = holds.hold(holds.available(grants), scope, 5_000)
    expect(second.parts).toEqual([{ grantId: 'general', amountNanos: 800 }])
    expect(holds.available(grants).map((g) => g.remainingNanos)).toEqual([0, 0])
    holds.release(first)
    holds.release(first)
    expect(holds.available(grants).map((g) => g.remainingNanos)).toEqual([200, 300])
    holds.release(second)
    holds.release(undefined)
    expect(holds.available(grants)).toBe(grants)
    // The grants themselves were never changed.
    expect(grants.map((g) => g.remainingNanos)).toEqual([1_000, 300])
  })
})
