// Whether a paused turn may be sent back on the account's credit, and what the request holds then.
import { describe, expect, test } from 'bun:test'
import type { Deps } from '../deps'
import type { GrantRecord } from '../ledger/ledger'
import type { Candidate } from '../router/rank'
import { holdForContinuation } from './credit-hold-policy'
import { CreditHolds } from './credit-holds'

const scope = { routingMode: 'max', modelId: 'm', providerId: 'p', costType: 'model_usage' as const, now: 0 }

function account(grantNanos: number) {
  const holds = new CreditHolds()
  const grants: GrantRecord[] = [
    {
      id: 'g',
      accountId: 'acct',
      source: 'test',
      amountNanos: grantNanos,
      remainingNanos: grantNanos,
      scopeCostType: 'all',
      scopeRoutingModes: null,
      scopeModels: null,
      scopeProviders: null,
      expiresAt: null,
      createdAt: 0,
    },
  ]
  const deps = { holds, config: { billing: { byokFeePercent: 5 } } } as unknown as Deps
  const candidate = { model: { id: 'm' }, provider: { id: 'p' }, byok: false } as unknown as Candidate
  const held = () => grantNanos - holds.available(grants)[0]!.remainingNanos
  const continuation = (previous: ReturnType<CreditHolds['hold']> | undefined, spentNanos: number, nextNanos: number) =>
    holdForContinuation(deps, { grants, previous, candidate, spentNanos, nextNanos, mode: 'max', now: 0 })
  return { holds, grants, held, continuation }
}

describe('holdForContinuation', () => {
  test('credit exactly covering what was spent and the most the next message costs: the turn goes on, all of it held', () => {
    const a = account(1_000)
    expect(a.continuation(undefined, 400, 600).enough).toBe(true)
    expect(a.held()).toBe(1_000)
  })

  test('credit short of it: the answer ends at the pause, and the request keeps what it held until it is recorded', () => {
    const a = account(1_000)
    const first = a.holds.hold(a.grants, scope, 800)
    expect(a.continuation(first, 600, 900).enough).toBe(false)
    // Dropped, others would be admitted on credit this request has spent.
    expect(a.held()).toBe(800)
  })
})
