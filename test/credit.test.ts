import { describe, expect, test } from 'bun:test'
import {
  applicableCreditNanos,
  byokFeeNanos,
  type ChargeScope,
  grantCovers,
  type GrantState,
} from '../src/ledger/credit'
import { costNanos, pricesHourCacheWrites, usdPerMtokToNanosPerToken } from '../src/ledger/pricing'
import { createHarness } from './support/harness'
import { seedRequest } from './support/ledger-fixtures'

const T0 = Date.parse('2026-11-22T10:00:00.000Z')
const DAY = 86_400_000

const grant = (over: Partial<GrantState>): GrantState => ({
  id: 'g',
  amountNanos: 100,
  remainingNanos: 100,
  scopeCostType: 'all',
  scopeRoutingModes: null,
  scopeModels: null,
  scopeProviders: null,
  expiresAt: null,
  createdAt: T0,
  ...over,
})
const scope: ChargeScope = {
  routingMode: 'pro',
  modelId: 'claude-sonnet-4-5',
  providerId: 'anthropic',
  costType: 'model_usage',
  now: T0,
}

describe('scope rules', () => {
  test.each([
    ['unscoped grant pays anything', {}, scope, true],
    ['routing mode in scope', { scopeRoutingModes: ['pro', 'max'] }, scope, true],
    ['routing mode out of scope', { scopeRoutingModes: ['ultra_saver'] }, scope, false],
    ['model in scope', { scopeModels: ['claude-sonnet-4-5'] }, scope, true],
    ['model out of scope', { scopeModels: ['gpt-5.1'] }, scope, false],
    ['provider out of scope', { scopeProviders: ['openrouter'] }, scope, false],
    [
      'all scopes must match',
      { scopeRoutingModes: ['pro'], scopeModels: ['claude-sonnet-4-5'], scopeProviders: ['openrouter'] },
      scope,
      false,
    ],
    ['expired grant pays nothing', { expiresAt: T0 }, scope, false],
    ['not yet expired', { expiresAt: T0 + 1 }, scope, true],
    ['model_usage grant pays model usage', { scopeCostType: 'model_usage' }, scope, true],
    [
      'model_usage grant does not pay BYOK fees',
      { scopeCostType: 'model_usage' },
      { ...scope, costType: 'byok_fee' },
      false,
    ],
    ['byok_fee grant pays BYOK fees', { scopeCostType: 'byok_fee' }, { ...scope, costType: 'byok_fee' }, true],
    ['byok_fee grant does not pay model usage', { scopeCostType: 'byok_fee' }, scope, false],
  ] as [string, Partial<GrantState>, ChargeScope, boolean][])('%s', (_name, over, s, expected) => {
    expect(grantCovers(grant(over), s)).toBe(expected)
  })

  test('applicable credit sums only covering grants with something left', () => {
    const grants = [
      grant({ id: 'a', remainingNanos: 10 }),
      grant({ id: 'b', remainingNanos: 20, scopeModels: ['gpt-5.1'] }),
      grant({ id: 'c', remainingNanos: 0 }),
      grant({ id: 'd', remainingNanos: 5, scopeRoutingModes: ['pro'] }),
    ]
    expect(applicableCreditNanos(grants, scope)).toBe(15)
  })
})

describe('pricing', () => {
  test('USD per Mtok → nanos per token, exactly', () => {
    expect(usdPerMtokToNanosPerToken(3)).toBe(3000)
    expect(usdPerMtokToNanosPerToken(0.3)).toBe(300)
    expect(usdPerMtokToNanosPerToken(3.75)).toBe(3750)
    expect(usdPerMtokToNanosPerToken(0.028)).toBe(28)
    expect(usdPerMtokToNanosPerToken(0.005)).toBe(5)
    expect(() => usdPerMtokToNanosPerToken(0.0375)).toThrow('step 0.001')
  })

  test('cost is the integer sum over input, cache read, cache write, output and web searches', () => {
    const price = {
      inputNanosPerToken: 3000,
      cacheReadNanosPerToken: 300,
      cacheWriteNanosPerToken: 3750,
      outputNanosPerToken: 15000,
      webSearchNanos: 10_000_000,
    }
    expect(costNanos({ input: 86, cacheRead: 1920, cacheWrite: 10, output: 300, reasoning: 0 }, price, T0)).toBe(
      86 * 3000 + 1920 * 300 + 10 * 3750 + 300 * 15000,
    )
    expect(
      costNanos({ input: 86, cacheRead: 1920, cacheWrite: 10, output: 300, reasoning: 0, webSearches: 3 }, price, T0),
    ).toBe(86 * 3000 + 1920 * 300 + 10 * 3750 + 300 * 15000 + 3 * 10_000_000)
  })

  test('1-hour cache writes: their part at the 1-hour price, the rest at the 5-minute one', () => {
    // Claude Sonnet 5.5: 2 USD/Mtok in, 10 out, 0.1 cache read, 2.5 a 5-minute write, 4 a 1-hour one.
    const price = {
      inputNanosPerToken: 2000,
      cacheReadNanosPerToken: 100,
      cacheWriteNanosPerToken: 2500,
      cacheWrite1hNanosPerToken: 4000,
      outputNanosPerToken: 10_000,
      webSearchNanos: 10_000_000,
    }
    const usage = { input: 50, cacheRead: 3000, cacheWrite: 1000, cacheWrite1h: 700, output: 20, reasoning: 0 }
    expect(costNanos(usage, price, T0)).toBe(50 * 2000 + 3000 * 100 + 300 * 2500 + 700 * 4000 + 20 * 10_000)
    // All of the writes for an hour; none of them (absent, as where the upstream reports no split).
    expect(costNanos({ ...usage, cacheWrite1h: 1000 }, price, T0)).toBe(
      50 * 2000 + 3000 * 100 + 1000 * 4000 + 20 * 10_000,
    )
    const { cacheWrite1h: _, ...unsplit } = usage
    expect(costNanos(unsplit, price, T0)).toBe(50 * 2000 + 3000 * 100 + 1000 * 2500 + 20 * 10_000)
    // A model without a 1-hour price: every write at its one cache-write price, as before.
    const { cacheWrite1hNanosPerToken: __, ...fiveMinutesOnly } = price
    expect(costNanos(usage, fiveMinutesOnly, T0)).toBe(50 * 2000 + 3000 * 100 + 1000 * 2500 + 20 * 10_000)
  })

  test('1-hour cache writes in a long-prompt tier: counted toward its threshold, at the tier’s 1-hour price', () => {
    // Claude Haiku 5.5: 0.1 / 0.5 / 0.01 / 0.125 / 0.2, and 0.5 / 2.5 / 0.05 / 0.625 / 1 above 100,000.
    const price = {
      inputNanosPerToken: 100,
      outputNanosPerToken: 500,
      cacheReadNanosPerToken: 10,
      cacheWriteNanosPerToken: 125,
      cacheWrite1hNanosPerToken: 200,
      webSearchNanos: 10_000_000,
      longPrompt: {
        aboveTokens: 100_000,
        inputNanosPerToken: 500,
        outputNanosPerToken: 2500,
        cacheReadNanosPerToken: 50,
        cacheWriteNanosPerToken: 625,
        cacheWrite1hNanosPerToken: 1000,
      },
    }
    // 100,000 prompt tokens exactly, 60,000 of them 1-hour writes: the base tier.
    const atThreshold = {
      input: 30_000,
      cacheRead: 0,
      cacheWrite: 70_000,
      cacheWrite1h: 60_000,
      output: 1000,
      reasoning: 0,
    }
    expect(costNanos(atThreshold, price, T0)).toBe(30_000 * 100 + 10_000 * 125 + 60_000 * 200 + 1000 * 500)
    // One 1-hour write more: every token at the long-prompt tier.
    const over = { ...atThreshold, cacheWrite: 70_001, cacheWrite1h: 60_001 }
    expect(costNanos(over, price, T0)).toBe(30_000 * 500 + 10_000 * 625 + 60_001 * 1000 + 1000 * 2500)
  })

  test('a model prices 1-hour cache writes only where every tier it has does', () => {
    const base = {
      inputNanosPerToken: 100,
      outputNanosPerToken: 500,
      cacheReadNanosPerToken: 10,
      cacheWriteNanosPerToken: 125,
      webSearchNanos: 0,
    }
    const tier = { ...base, aboveTokens: 1000 }
    expect(pricesHourCacheWrites(null)).toBe(false)
    expect(pricesHourCacheWrites(base)).toBe(false)
    expect(pricesHourCacheWrites({ ...base, cacheWrite1hNanosPerToken: 200 })).toBe(true)
    expect(pricesHourCacheWrites({ ...base, cacheWrite1hNanosPerToken: 200, longPrompt: tier })).toBe(false)
    expect(
      pricesHourCacheWrites({
        ...base,
        cacheWrite1hNanosPerToken: 200,
        longPrompt: { ...tier, cacheWrite1hNanosPerToken: 1000 },
      }),
    ).toBe(true)
    const peak = { ...base, minutesUtc: [[60, 240]] as const, weekdaysOnly: true }
    expect(pricesHourCacheWrites({ ...base, cacheWrite1hNanosPerToken: 200, peak })).toBe(false)
  })

  test('peak hours: DeepSeek-shaped prices by the hour and the weekday (UTC), ends excluded', () => {
    const offPeak = {
      inputNanosPerToken: 150,
      cacheReadNanosPerToken: 3,
      cacheWriteNanosPerToken: 150,
      outputNanosPerToken: 600,
    }
    const price = {
      ...offPeak,
      webSearchNanos: 0,
      peak: {
        inputNanosPerToken: 300,
        cacheReadNanosPerToken: 6,
        cacheWriteNanosPerToken: 300,
        outputNanosPerToken: 1200,
        minutesUtc: [
          [60, 240],
          [360, 600],
        ] as const,
        weekdaysOnly: true,
      },
    }
    const usage = { input: 1000, cacheRead: 10_000, cacheWrite: 0, output: 100, reasoning: 0 }
    const at = (iso: string) => costNanos(usage, price, Date.parse(iso))
    const off = 1000 * 150 + 10_000 * 3 + 100 * 600
    const peak = 1000 * 300 + 10_000 * 6 + 100 * 1200
    // Wednesday 2026-11-25.
    expect(at('2026-11-25T00:59:59Z')).toBe(off)
    expect(at('2026-11-25T01:00:00Z')).toBe(peak)
    expect(at('2026-11-25T03:59:59Z')).toBe(peak)
    expect(at('2026-11-25T04:00:00Z')).toBe(off)
    expect(at('2026-11-25T09:30:00Z')).toBe(peak)
    expect(at('2026-11-25T10:00:00Z')).toBe(off)
    // Saturday and Sunday are off-peak all day.
    expect(at('2026-11-28T02:00:00Z')).toBe(off)
    expect(at('2026-11-29T07:00:00Z')).toBe(off)
    expect(at('2026-11-30T07:00:00Z')).toBe(peak)
  })

  test('BYOK fee rounds up to the nano', () => {
    expect(byokFeeNanos(1000, 5)).toBe(50)
    expect(byokFeeNanos(1001, 5)).toBe(51)
    expect(byokFeeNanos(1000, 0)).toBe(0)
    expect(byokFeeNanos(333, 2.5)).toBe(9)
  })
})

describe('charging order, with ledger rows', () => {
  test('scoped grants first, then soonest expiry, then oldest; split across grants; remaining never negative', async () => {
    const h = await createHarness({ now: T0 })
    const add = (over: Parameters<typeof h.deps.admin.addGrant>[0]) => h.deps.admin.addGrant(over)
    const general = await add({ account: 'default', amountNanos: 1000, source: 'general-old' })
    h.clock.advance(1)
    const generalNewer = await add({ account: 'default', amountNanos: 1000, source: 'general-new' })
    h.clock.advance(1)
    const expiringLater = await add({
      account: 'default',
      amountNanos: 300,
      routingModes: ['pro'],
      expiresAt: new Date(T0 + 10 * DAY).toISOString(),
    })
    h.clock.advance(1)
    const expiringSoon = await add({
      account: 'default',
      amountNanos: 200,
      models: ['claude-sonnet-4-5'],
      expiresAt: new Date(T0 + DAY).toISOString(),
    })
    h.clock.advance(1)
    const otherScope = await add({ account: 'default', amountNanos: 500, routingModes: ['max'] })
    // Expires before the request below comes (a grant cannot be added already expired).
    const expired = await add({ account: 'default', amountNanos: 500, expiresAt: new Date(T0 + 5).toISOString() })

    // A 1,700-nano leg: expiringSoon (scoped, soonest) 200, expiringLater (scoped) 300,
    // then general credit oldest first: general 1000, generalNewer 200.
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 10, id: 'r1', legs: [{ costNanos: 1700 }] })
    const rows = Object.fromEntries((await h.deps.ledger.listGrants(h.accountId)).map((g) => [g.id, g.remainingNanos]))
    expect(rows).toEqual({
      [general.id]: 0,
      [generalNewer.id]: 800,
      [expiringLater.id]: 0,
      [expiringSoon.id]: 0,
      [otherScope.id]: 500,
      [expired.id]: 500,
    })
    const detail = await h.deps.ledger.getRequest(h.accountId, 'r1')
    expect(detail?.charges.map((c) => [c.grantId, c.amountNanos])).toEqual([
      [expiringSoon.id, 200],
      [expiringLater.id, 300],
      [general.id, 1000],
      [generalNewer.id, 200],
    ])
    expect(detail?.request.chargedNanos).toBe(1700)

    // More than is left: charge what exists, never below zero; the leg shows what was unpaid.
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 20, id: 'r2', legs: [{ costNanos: 5000 }] })
    const after = await h.deps.ledger.listGrants(h.accountId)
    expect(after.every((g) => g.remainingNanos >= 0)).toBe(true)
    const r2 = await h.deps.ledger.getRequest(h.accountId, 'r2')
    expect(r2?.request.totalCostNanos).toBe(5000)
    expect(r2?.request.chargedNanos).toBe(800)
    expect(r2?.legs[0]?.chargedNanos).toBe(800)
  })

  test('cost types: BYOK fees come only from all/byok_fee grants; model usage never from byok_fee grants', async () => {
    const h = await createHarness({ now: T0 })
    const feeOnly = await h.deps.admin.addGrant({ account: 'default', amountNanos: 100, costType: 'byok_fee' })
    const usageOnly = await h.deps.admin.addGrant({ account: 'default', amountNanos: 1000, costType: 'model_usage' })
    await seedRequest(h.deps.ledger, {
      accountId: h.accountId,
      at: T0 + 1,
      id: 'byok',
      legs: [{ costNanos: 2000, byok: true, charge: { costType: 'byok_fee', amountNanos: 100 } }],
    })
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 2, id: 'plat', legs: [{ costNanos: 300 }] })
    const remaining = Object.fromEntries(
      (await h.deps.ledger.listGrants(h.accountId)).map((g) => [g.id, g.remainingNanos]),
    )
    expect(remaining).toEqual({ [feeOnly.id]: 0, [usageOnly.id]: 700 })
    const byok = await h.deps.ledger.getRequest(h.accountId, 'byok')
    expect(byok?.request).toMatchObject({ byok: true, totalCostNanos: 2000, chargedNanos: 100 })
    expect(byok?.charges).toEqual([
      { grantId: feeOnly.id, usageEventId: 'leg_byok_1', costType: 'byok_fee', amountNanos: 100 },
    ])
  })

  test('usage totals: limit and used over unexpired grants only', async () => {
    const h = await createHarness({ now: T0 })
    await h.deps.admin.addGrant({ account: 'default', amountNanos: 1000 })
    await h.deps.admin.addGrant({ account: 'default', amountNanos: 500, expiresAt: new Date(T0 + 100).toISOString() })
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 1, legs: [{ costNanos: 1200 }] })
    // The expiring grant is spent first (soonest expiry): 500 from it, 700 from the other.
    expect(await (await h.call('/v1/usage')).json()).toMatchObject({ limit_nanos: 1500, used_nanos: 1200 })
    h.clock.advance(200)
    expect(await (await h.call('/v1/usage')).json()).toMatchObject({
      limit_nanos: 1000,
      used_nanos: 700,
      remaining_nanos: 300,
    })
  })
})

describe('expiry, as the usage routes and the charging see it', () => {
  const T0 = Date.parse('2026-11-22T10:00:00.000Z')
  /** A lasting grant of 1,000 nanos and one of 500 that expires at T0 + 100 ms, seen `later` ms after T0. */
  async function grantsSeenAt(later: number) {
    const h = await createHarness({ now: T0 })
    await h.deps.admin.addGrant({ account: 'default', amountNanos: 1000 })
    await h.deps.admin.addGrant({ account: 'default', amountNanos: 500, expiresAt: new Date(T0 + 100).toISOString() })
    h.clock.advance(later)
    return h
  }
  test('whoami’s credit, as /v1/usage’s, is the sum of the unexpired grants', async () => {
    const h = await grantsSeenAt(200)
    const who = await (await h.call('/v1/auth/whoami')).json()
    const usage = await (await h.call('/v1/usage')).json()
    expect(usage.limit_nanos).toBe(1000)
    expect(who.credit).toEqual({ limit_nanos: 1000, used_nanos: 0, remaining_nanos: 1000, scoped: [] })
  })
  test('a leg that outlasts its grant’s expiry is charged to it: expiry is judged when the leg started', async () => {
    const h = await createHarness({ now: T0 })
    const g = await h.deps.admin.addGrant({
      account: 'default',
      amountNanos: 1000,
      expiresAt: new Date(T0 + 3).toISOString(),
    })
    // The leg starts at T0+1 (grant live) and ends at T0+6 (grant expired).
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 1, id: 'r1', legs: [{ costNanos: 400 }] })
    const detail = await (await h.call('/v1/usage/requests/r1')).json()
    expect(detail.charged_nanos).toBe(400)
    expect(detail.grant_charges).toEqual([
      { grant_id: g.id, usage_event_id: 'leg_r1_1', cost_type: 'model_usage', amount_nanos: 400 },
    ])
  })
  test('a grant that expires at this very millisecond is gone from /v1/usage (expired: expires_at ≤ now)', async () => {
    const h = await grantsSeenAt(100)
    const usage = await (await h.call('/v1/usage')).json()
    expect(usage.limit_nanos).toBe(1000)
    expect(usage.grants.map((g: { amount_nanos: number }) => g.amount_nanos)).toEqual([1000])
  })
})
