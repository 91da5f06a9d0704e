// Display formats. Money arrives as integer USD nanos and is rounded with integer arithmetic, so
// what the page shows is what the ledger holds (no 0.1 + 0.2 drift). Times are shown in UTC, the
// same clock the spend buckets use.

const NANOS_PER_USD = 1_000_000_000

/** Integer nanos → "1,234.57": half-up to `decimals` places (0–9), exact for any safe integer. */
export function formatUsd(nanos, decimals = 2) {
  const sign = nanos < 0 ? '-' : ''
  const abs = Math.abs(nanos)
  const unit = 10 ** (9 - decimals)
  const rest = abs % unit
  const units = (abs - rest) / unit + (2 * rest >= unit ? 1 : 0)
  const scale = 10 ** decimals
  const frac = units % scale
  const whole = (units - frac) / scale
  const wholeText = whole.toLocaleString('en-US')
  return decimals === 0 ? `${sign}${wholeText}` : `${sign}${wholeText}.${String(frac).padStart(decimals, '0')}`
}

/** The exact amount, trailing zeros dropped: "0.000001234". */
export function formatUsdExact(nanos) {
  const text = formatUsd(nanos, 9)
  return text.replace(/\.?0+$/, '') || '0'
}

/** Enough places to see the amount: cents from a dollar up, exact below a cent. */
export function usd(nanos) {
  const abs = Math.abs(nanos)
  if (abs >= NANOS_PER_USD) return `$${formatUsd(nanos, 2)}`
  if (abs >= NANOS_PER_USD / 100) return `$${formatUsd(nanos, 4)}`
  if (abs === 0) return '$0.00'
  return `$${formatUsdExact(nanos)}`
}

export const tokens = (n) => (n ?? 0).toLocaleString('en-US')

/** 1234 → "1.2k", for axes and tight cells. */
export function compact(n) {
  const abs = Math.abs(n)
  if (abs >= 1e9) return `${(n / 1e9).toFixed(1)}B`
  if (abs >= 1e6) return `${(n / 1e6).toFixed(1)}M`
  if (abs >= 1e3) return `${(n / 1e3).toFixed(1)}k`
  return String(n)
}

/** part of total as "12.3%"; "–" when there is no total. */
export const percent = (part, total) => (total > 0 ? `${((100 * part) / total).toFixed(1)}%` : '–')

/** RFC 3339 → "2026-11-22 10:00:05" (UTC). */
export const time = (iso) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : '–')

export function duration(ms) {
  if (ms === null || ms === undefined) return '–'
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(2)} s`
}
