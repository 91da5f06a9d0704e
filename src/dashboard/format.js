// Display formats. Money arrives as integer USD nanos and is rounded with integer arithmetic, so
// what the page shows is what the ledger holds (no 0.1 + 0.2 drift). Times are shown in UTC, the
// same clock the spend buckets use.

const NANOS_PER_USD = 1_000_000_000
const NANOS_PER_CENT = NANOS_PER_USD / 100

/** Integer nanos rounded half-up (away from zero) to `decimals` places, still in nanos. */
function roundNanos(nanos, decimals) {
  const unit = 10 ** (9 - decimals)
  const abs = Math.abs(nanos)
  const rest = abs % unit
  const rounded = abs - rest + (2 * rest >= unit ? unit : 0)
  return nanos < 0 ? -rounded : rounded
}

/** Integer nanos → "1,234.57": half-up to `decimals` places (0–9), exact for any safe integer. */
export function formatUsd(nanos, decimals = 2) {
  const unit = 10 ** (9 - decimals)
  const units = Math.abs(roundNanos(nanos, decimals)) / unit
  // A minus only on what still shows a digit: -0.001 at two places is "0.00", not "-0.00".
  const sign = nanos < 0 && units > 0 ? '-' : ''
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

/** The places that show every digit of `nanos` (0–9). */
const exactDecimals = (nanos) => {
  let decimals = 9
  for (let n = Math.abs(nanos); decimals > 0 && n % 10 === 0; n /= 10) decimals--
  return decimals
}

/**
 * Enough places to see the amount: cents from a dollar up, four places from a cent, exact below a
 * cent. Decided on the rounded amount, so 0.99995 reads "1.00", not "1.0000".
 */
export function usdDecimals(nanos) {
  const abs = Math.abs(nanos)
  if (abs === 0 || roundNanos(abs, 4) >= NANOS_PER_USD) return 2
  if (abs >= NANOS_PER_CENT) return 4
  return Math.max(2, exactDecimals(abs))
}

/**
 * One precision for a whole column, so its figures line up and read alike: what the smallest
 * non-zero amount needs (usdDecimals), except that below a cent two significant digits are enough;
 * the exact amount stays on hover.
 */
export function columnDecimals(amounts) {
  const nonZero = amounts.map(Math.abs).filter((n) => n > 0)
  if (nonZero.length === 0) return 2
  const least = Math.min(...nonZero)
  if (least >= NANOS_PER_CENT) return usdDecimals(least)
  // 0.000123 has its first significant digit at place 4: two digits need 5 places.
  const first = 9 - Math.floor(Math.log10(least))
  return Math.min(9, first + 1)
}

/** "$1.23", "-$2.50": the sign before the dollar; `decimals` defaults to usdDecimals. */
export function usd(nanos, decimals = usdDecimals(nanos)) {
  const text = formatUsd(nanos, decimals)
  return text.startsWith('-') ? `-$${text.slice(1)}` : `$${text}`
}

export const tokens = (n) => (n ?? 0).toLocaleString('en-US')

const COMPACT_UNITS = [
  [1e3, 'k'],
  [1e6, 'M'],
  [1e9, 'B'],
]

/** 1234 → "1.2k", for axes and tight cells; the unit is chosen after rounding (999,950 → "1.0M"). */
export function compact(n) {
  const abs = Math.abs(n)
  // Axis ticks arrive as floats (0.30000000000000004): two places are plenty below a thousand.
  if (Math.round(abs * 100) / 100 < 1000) return String(Math.round(n * 100) / 100)
  const sign = n < 0 ? '-' : ''
  for (const [size, suffix] of COMPACT_UNITS) {
    const scaled = (abs / size).toFixed(1)
    if (Number(scaled) < 1000 || suffix === 'B') return `${sign}${scaled}${suffix}`
  }
}

/** part of total as "12.3%"; "–" when there is no total. */
export const percent = (part, total) => (total > 0 ? `${((100 * part) / total).toFixed(1)}%` : '–')

/** RFC 3339 → "2026-11-22 10:00:05" (UTC). */
export const time = (iso) => (iso ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : '–')

/** 420 → "420 ms", 1234 → "1.23 s", 95000 → "1 min 35 s", 5 h → "5 h 0 min": units a reader can take in. */
export function duration(ms) {
  if (ms === null || ms === undefined) return '–'
  if (Math.round(ms) < 1000) return `${Math.round(ms)} ms`
  // Below 59.995 s two places cannot round up to "60.00 s".
  if (ms < 59_995) return `${(ms / 1000).toFixed(2)} s`
  const seconds = Math.round(ms / 1000)
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ${seconds % 60} s`
  const minutes = Math.round(seconds / 60)
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}
