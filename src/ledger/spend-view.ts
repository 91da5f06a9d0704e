// GET /v1/usage/spend as the API shows it: series of bucketed points per group, totals, and what
// prompt caching saved. Savings are priced from today's catalog, because a leg stores its cost but
// not the prices that made it (README, "Spend and cache savings").
import { hourCacheWriteNanos, type Price } from './pricing'
import type { CacheTokens, SpendGroup, SpendSeries, SpendTotals } from './ledger'

export interface CacheSavings {
  /** Cache reads × (input price − cache-read price): what reading from cache saved. */
  savedNanos: number
  /**
   * Cache writes × (cache-write price − input price): what writing the cache cost on top; the
   * 1-hour ones at the 1-hour price where the model has one.
   */
  writePremiumNanos: number
  /** Cache tokens of models the catalog no longer prices: left out of both sums. */
  unpricedTokens: number
}

export function priceCacheSavings(
  rows: readonly CacheTokens[],
  priceOf: (modelId: string, providerId: string) => Price | null | undefined,
): CacheSavings {
  const out: CacheSavings = { savedNanos: 0, writePremiumNanos: 0, unpricedTokens: 0 }
  for (const row of rows) {
    const price = priceOf(row.modelId, row.providerId)
    if (!price) {
      out.unpricedTokens += row.cachedInputTokens + row.cacheCreationInputTokens
      continue
    }
    out.savedNanos += row.cachedInputTokens * (price.inputNanosPerToken - price.cacheReadNanosPerToken)
    const hourWrites = row.cacheCreation1hInputTokens
    const hourPrice = hourCacheWriteNanos(price, price)
    out.writePremiumNanos +=
      (row.cacheCreationInputTokens - hourWrites) * (price.cacheWriteNanosPerToken - price.inputNanosPerToken) +
      hourWrites * (hourPrice - price.inputNanosPerToken)
  }
  return out
}

const totalsView = (p: SpendTotals) => ({
  cost_nanos: p.costNanos,
  requests: p.requests,
  input_tokens: p.inputTokens,
  cached_input_tokens: p.cachedInputTokens,
  cache_creation_input_tokens: p.cacheCreationInputTokens,
  output_tokens: p.outputTokens,
  web_search_requests: p.webSearchRequests,
})

export function spendView(
  result: SpendSeries,
  opts: { bucket: 'hour' | 'day'; groupBy: SpendGroup; since: number; until: number; savings: CacheSavings },
) {
  // The ledger returns points ordered by key; fold them into one series per key.
  const byKey = new Map<string, { key: string; cost: number; points: ReturnType<typeof pointView>[] }>()
  for (const p of result.points) {
    let series = byKey.get(p.key)
    if (!series) {
      series = { key: p.key, cost: 0, points: [] }
      byKey.set(p.key, series)
    }
    series.cost += p.costNanos
    series.points.push(pointView(p))
  }
  // Biggest spender first, so a chart's legend reads in order of what matters.
  const series = [...byKey.values()].sort((a, b) => b.cost - a.cost || (a.key < b.key ? -1 : 1))
  return {
    bucket: opts.bucket,
    group_by: opts.groupBy,
    since: new Date(opts.since).toISOString(),
    until: new Date(opts.until).toISOString(),
    series: series.map((s) => ({ key: s.key, points: s.points })),
    totals: totalsView(result.totals),
    cache_savings_nanos: opts.savings.savedNanos,
    cache_write_premium_nanos: opts.savings.writePremiumNanos,
    cache_unpriced_tokens: opts.savings.unpricedTokens,
  }
}

const pointView = (p: SpendTotals & { t: number }) => ({ t: new Date(p.t).toISOString(), ...totalsView(p) })
