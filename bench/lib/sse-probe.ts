// The streaming probe: one stream at a time (no queueing), timing the first text delta and the
// gap between every two deltas. The upstream paces deltas a few ms apart, so a relay that
// batches shows up as gaps near zero followed by a long one.
import { type Dialect, type HttpRequest, timeStream } from './answers'
import { percentile } from './stats'

/** A gap shorter than this between two paced deltas means they travelled together. */
export const batchedGapMs = 1

export interface ProbeResult {
  streams: number
  failures: number
  firstError?: string
  firstDeltaMs: number[]
  totalMs: number[]
  /** From the last text delta to the end of the stream (the closing events and the body's end). */
  tailMs: number[]
  gapsMs: number[]
  /** Gaps under batchedGapMs. */
  batched: number
  /**
   * Of those, the gaps between a stream's first and second delta. The first delta takes a relay's
   * longest path (routing, the upstream's head, the response's start), so a hiccup there shortens
   * this gap most: telling it apart says whether a short gap came from a stall at the start.
   */
  batchedFirst: number
}

export async function probeStreams(req: HttpRequest, dialect: Dialect, count: number): Promise<ProbeResult> {
  const result: ProbeResult = {
    streams: 0,
    failures: 0,
    firstDeltaMs: [],
    totalMs: [],
    tailMs: [],
    gapsMs: [],
    batched: 0,
    batchedFirst: 0,
  }
  for (let i = 0; i < count; i++) {
    const t = await timeStream(req, dialect, 30_000)
    result.streams++
    if (!t.ok) {
      result.failures++
      result.firstError ??= t.error ?? `no final event (HTTP ${t.status})`
      continue
    }
    result.firstDeltaMs.push(t.firstDeltaMs)
    result.totalMs.push(t.totalMs)
    result.tailMs.push(t.totalMs - (t.deltaMs.at(-1) ?? t.totalMs))
    for (let j = 1; j < t.deltaMs.length; j++) {
      const gap = t.deltaMs[j]! - t.deltaMs[j - 1]!
      result.gapsMs.push(gap)
      if (gap < batchedGapMs) {
        result.batched++
        if (j === 1) result.batchedFirst++
      }
    }
  }
  return result
}

export interface ProbeSummary {
  streams: number
  failures: number
  firstError?: string
  firstDeltaP50Ms: number
  totalP50Ms: number
  tailP50Ms: number
  gapP10Ms: number
  gapP50Ms: number
  gapP90Ms: number
  gaps: number
  batched: number
  batchedFirst: number
}

/** The count of short gaps, saying how many were between the first two deltas. */
export const describeBatched = (s: ProbeSummary, separator = ' of ') =>
  `${s.batched}${separator}${s.gaps}${s.batched > 0 ? ` (${s.batchedFirst} between the first two deltas)` : ''}`

/** Folds the repeats of one target's probe into one summary. */
export function summarizeProbes(results: ProbeResult[]): ProbeSummary {
  const all = (pick: (r: ProbeResult) => number[]) => results.flatMap(pick)
  const gaps = all((r) => r.gapsMs)
  return {
    streams: results.reduce((n, r) => n + r.streams, 0),
    failures: results.reduce((n, r) => n + r.failures, 0),
    firstError: results.find((r) => r.firstError)?.firstError,
    firstDeltaP50Ms: percentile(
      all((r) => r.firstDeltaMs),
      50,
    ),
    totalP50Ms: percentile(
      all((r) => r.totalMs),
      50,
    ),
    tailP50Ms: percentile(
      all((r) => r.tailMs),
      50,
    ),
    gapP10Ms: percentile(gaps, 10),
    gapP50Ms: percentile(gaps, 50),
    gapP90Ms: percentile(gaps, 90),
    gaps: gaps.length,
    batched: results.reduce((n, r) => n + r.batched, 0),
    batchedFirst: results.reduce((n, r) => n + r.batchedFirst, 0),
  }
}
