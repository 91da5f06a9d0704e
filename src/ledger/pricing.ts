// Prices are configured in USD per million tokens and held as integer nanos per token:
// 1 USD/Mtok = 1e9 nanos / 1e6 tokens = 1000 nanos per token; web searches in USD per 1,000 and
// held as nanos per search (10 USD/1k = 10,000,000). A leg's cost is a sum of integer products,
// so the ledger never sees a float.
import type { Usage } from '../exchange/types'

export interface TokenPrices {
  inputNanosPerToken: number
  outputNanosPerToken: number
  cacheReadNanosPerToken: number
  /** A cache write kept 5 minutes (Anthropic's default TTL), or the provider's only kind. */
  cacheWriteNanosPerToken: number
  /** A cache write kept an hour (Anthropic's `ttl: "1h"`, 2 × input); absent: svc does not price one. */
  cacheWrite1hNanosPerToken?: number
}

export interface Price extends TokenPrices {
  webSearchNanos: number
  /**
   * Dearer prices for every token of a request whose prompt (input, cache reads and cache writes)
   * is longer than `aboveTokens`, output included: Claude Haiku 5.5's tier above 100,000 tokens.
   */
  longPrompt?: TokenPrices & { aboveTokens: number }
  /** Dearer prices during the provider's peak hours: DeepSeek's, 01:00–04:00 and 06:00–10:00 UTC on weekdays. */
  peak?: TokenPrices & PeakHours
}

export interface PeakHours {
  /** [start, end) in minutes after UTC midnight. */
  minutesUtc: readonly (readonly [number, number])[]
  /** Peak only Monday to Friday (UTC); weekends are off-peak all day. */
  weekdaysOnly: boolean
}

const minutesPerDay = 24 * 60
const msPerDay = 86_400_000

/** Whether `at` (epoch ms) falls in the peak hours. Checked per candidate and leg: no Date made. */
export function isPeak(hours: PeakHours, at: number): boolean {
  // 1970-01-01 was a Thursday: day 4, counting Sunday as 0.
  const weekday = (Math.floor(at / msPerDay) + 4) % 7
  if (hours.weekdaysOnly && (weekday === 0 || weekday === 6)) return false
  const minute = Math.floor(at / 60_000) % minutesPerDay
  return hours.minutesUtc.some(([start, end]) => minute >= start && minute < end)
}

/**
 * The token prices a request pays: by when it was made (peak hours) and by the length of its
 * prompt (a long-prompt tier). A model has one or the other; peak hours win should both be set.
 */
export function tokenPricesFor(price: Price, promptTokens: number, at: number): TokenPrices {
  if (price.peak && isPeak(price.peak, at)) return price.peak
  return price.longPrompt && promptTokens > price.longPrompt.aboveTokens ? price.longPrompt : price
}

/**
 * `usd` × `nanosPerUsd` exactly, or an error: a price finer than one nano per unit cannot be
 * charged in whole nanos, and rounding it silently would misstate every bill.
 */
function exactNanos(usd: number, nanosPerUsd: number, describe: string): number {
  const nanos = Math.round(usd * nanosPerUsd)
  if (!Number.isFinite(usd) || usd < 0 || Math.abs(usd * nanosPerUsd - nanos) > 1e-6) {
    throw new RangeError(`price ${usd} ${describe}`)
  }
  return nanos
}

/** USD per million tokens → nanos per token (step 0.001 USD/Mtok). */
export const usdPerMtokToNanosPerToken = (usd: number): number =>
  exactNanos(usd, 1e9 / 1e6, 'USD/Mtok is not a whole number of nanos per token (step 0.001)')

/** USD per 1,000 searches → nanos per search (step 0.000001 USD per 1,000). */
export const usdPer1kToNanosPerSearch = (usd: number): number =>
  exactNanos(usd, 1e9 / 1e3, 'USD per 1,000 searches is not a whole number of nanos per search')

/**
 * Whether every price the model may charge at (its base, long-prompt and peak tiers) has one for
 * a 1-hour cache write: only then may a request ask Anthropic for one (list-price.ts).
 */
export const pricesHourCacheWrites = (price: Price | null): boolean =>
  price !== null &&
  price.cacheWrite1hNanosPerToken !== undefined &&
  (price.longPrompt === undefined || price.longPrompt.cacheWrite1hNanosPerToken !== undefined) &&
  (price.peak === undefined || price.peak.cacheWrite1hNanosPerToken !== undefined)

/**
 * What a 1-hour cache write costs at `tokens`, one of `price`'s tiers: its 1-hour price where the
 * model has one in every tier, else what the other cache writes cost. The requests of a model
 * without one in every tier ask for none (list-price.ts); one tier's own 1-hour price charged the
 * writes an upstream reported anyway at a price the model's requests never asked for.
 */
export const hourCacheWriteNanos = (price: Price, tokens: TokenPrices): number =>
  pricesHourCacheWrites(price) ? tokens.cacheWrite1hNanosPerToken! : tokens.cacheWriteNanosPerToken

/**
 * A leg's cost at the prices of `at`, when it started (peak hours are judged by it). The 1-hour
 * cache writes are a part of the cache writes (hourCacheWriteNanos).
 */
export function costNanos(usage: Usage, price: Price, at: number): number {
  const tokens = tokenPricesFor(price, usage.input + usage.cacheRead + usage.cacheWrite, at)
  const hourWrites = usage.cacheWrite1h ?? 0
  return (
    usage.input * tokens.inputNanosPerToken +
    usage.cacheRead * tokens.cacheReadNanosPerToken +
    (usage.cacheWrite - hourWrites) * tokens.cacheWriteNanosPerToken +
    hourWrites * hourCacheWriteNanos(price, tokens) +
    usage.output * tokens.outputNanosPerToken +
    (usage.webSearches ?? 0) * price.webSearchNanos
  )
}

/** Decimal USD for display, from integer nanos, without float drift. */
export function formatUsd(nanos: number): string {
  const sign = nanos < 0 ? '-' : ''
  const abs = Math.abs(nanos)
  const whole = Math.floor(abs / 1e9)
  const frac = String(abs % 1e9)
    .padStart(9, '0')
    .replace(/0+$/, '')
  return `${sign}${whole}${frac ? `.${frac}` : ''}`
}
