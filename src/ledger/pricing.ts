// Prices are configured in USD per million tokens and held as integer nanos per token:
// 1 USD/Mtok = 1e9 nanos / 1e6 tokens = 1000 nanos per token; web searches in USD per 1,000 and
// held as nanos per search (10 USD/1k = 10,000,000). A leg's cost is a sum of integer products,
// so the ledger never sees a float.
import type { Usage } from '../exchange/types'

export interface Price {
  inputNanosPerToken: number
  outputNanosPerToken: number
  cacheReadNanosPerToken: number
  cacheWriteNanosPerToken: number
  webSearchNanos: number
}

/**
 * Exact conversion, or an error: a price finer than 0.001 USD/Mtok (one nano per token) cannot be
 * charged in whole nanos per token, and rounding it silently would misstate every bill.
 */
export function usdPerMtokToNanosPerToken(usd: number): number {
  const nanos = Math.round(usd * 1000)
  if (!Number.isFinite(usd) || usd < 0 || Math.abs(usd * 1000 - nanos) > 1e-6) {
    throw new RangeError(`price ${usd} USD/Mtok is not a whole number of nanos per token (step 0.001)`)
  }
  return nanos
}

/** Exact conversion, or an error, of a price per 1,000 searches: its step is 0.000001 USD, a nano a search. */
export function usdPer1kToNanosPerSearch(usd: number): number {
  const nanos = Math.round(usd * 1e6)
  if (!Number.isFinite(usd) || usd < 0 || Math.abs(usd * 1e6 - nanos) > 1e-6) {
    throw new RangeError(`price ${usd} USD per 1,000 searches is not a whole number of nanos per search`)
  }
  return nanos
}

export function costNanos(usage: Usage, price: Price): number {
  return (
    usage.input * price.inputNanosPerToken +
    usage.cacheRead * price.cacheReadNanosPerToken +
    usage.cacheWrite * price.cacheWriteNanosPerToken +
    usage.output * price.outputNanosPerToken +
    (usage.webSearches ?? 0) * price.webSearchNanos
  )
}

export const usdToNanos = (usd: number): number => {
  const nanos = Math.round(usd * 1e9)
  if (!Number.isSafeInteger(nanos) || nanos < 0) throw new RangeError(`amount ${usd} USD is out of range`)
  return nanos
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
