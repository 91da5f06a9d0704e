// GET /v1/usage/spend: spend and tokens over time, by model, provider or routing mode. The
// database aggregates; this file only checks the window and prices the cache savings.
import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import type { SpendGroup } from '../ledger/ledger'
import { priceCacheSavings, spendView } from '../ledger/spend-view'
import { invalidRequest } from '../lib/errors'
import { requirePrincipal } from './auth'
import { oneOf, readTimestamp } from './params'

const hourMs = 3_600_000
const dayMs = 24 * hourMs

/** Documented bounds (README, "Usage routes"): a window wide enough to chart, small enough to stay fast. */
export const spendLimits = {
  hour: { bucketMs: hourMs, maxRangeMs: 7 * dayMs, defaultRangeMs: dayMs, maxLabel: '7 days' },
  day: { bucketMs: dayMs, maxRangeMs: 90 * dayMs, defaultRangeMs: 7 * dayMs, maxLabel: '90 days' },
} as const

export const spendBuckets = Object.keys(spendLimits) as (keyof typeof spendLimits)[]
export const spendGroups: readonly SpendGroup[] = ['model', 'provider', 'routing_mode']

/** A span as days, hours and minutes (rounded up), so that one just over a bound never reads as on it. */
function describeSpan(ms: number): string {
  const minutes = Math.ceil(ms / 60_000)
  const parts: [number, string][] = [
    [Math.floor(minutes / 1440), 'day'],
    [Math.floor((minutes % 1440) / 60), 'hour'],
    [minutes % 60, 'minute'],
  ]
  return parts
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n.toLocaleString('en')} ${unit}${n === 1 ? '' : 's'}`)
    .join(', ')
}

/**
 * The window [since, until). By default it ends where the current bucket ends and spans the
 * bucket's default range, so every bucket is whole and the current one is included.
 */
export function readSpendWindow(query: Record<string, string | undefined>, now: number) {
  const bucket = oneOf(query.bucket, spendBuckets, 'day', 'bucket')
  const groupBy = oneOf(query.group_by, spendGroups, 'model', 'group_by')
  const limits = spendLimits[bucket]
  const until = query.until ? readTimestamp(query.until, 'until') : now - (now % limits.bucketMs) + limits.bucketMs
  const since = query.since ? readTimestamp(query.since, 'since') : until - limits.defaultRangeMs
  if (since >= until) throw invalidRequest('since must be before until', 'since')
  if (until - since > limits.maxRangeMs) {
    throw invalidRequest(
      `since..until spans ${describeSpan(until - since)}; with bucket=${bucket} the range is at most ${limits.maxLabel}`,
      'since',
    )
  }
  return { bucket, groupBy, bucketMs: limits.bucketMs, since, until }
}

export const spendRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.spend' })
    .resolve(async ({ request }) => ({ principal: await requirePrincipal(deps, request, false) }))
    .get('/v1/usage/spend', async ({ principal, query }) => {
      const window = readSpendWindow(query, deps.clock())
      const result = await deps.ledger.spendSeries(principal.accountId, window)
      const savings = priceCacheSavings(
        result.cacheTokens,
        (modelId, providerId) => deps.config.models.find((m) => m.id === modelId && m.provider === providerId)?.price,
      )
      return spendView(result, { ...window, savings })
    })
