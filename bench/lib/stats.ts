// Small statistics for repeats and samples: medians, ranges and percentiles, nothing fancier.

export interface Spread {
  median: number
  min: number
  max: number
}

/** Linear-interpolated percentile (0–100) of unsorted values; NaN for none. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = (p / 100) * (sorted.length - 1)
  const lo = Math.floor(rank)
  const hi = Math.ceil(rank)
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (rank - lo)
}

export const median = (values: number[]): number => percentile(values, 50)

export function spread(values: number[]): Spread {
  const finite = values.filter(Number.isFinite)
  if (finite.length === 0) return { median: Number.NaN, min: Number.NaN, max: Number.NaN }
  return { median: median(finite), min: Math.min(...finite), max: Math.max(...finite) }
}

/** a ÷ b, NaN when either is missing or b is 0. */
export function ratio(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return Number.NaN
  return a / b
}
