// The issue's targets, judged on one run's results. Ratios pair the targets of the same repeat
// (run back to back) and take the median over repeats, so slow drift on a shared machine cancels.
import type { BenchResults, ScenarioResult, TargetRun } from './results'
import { type Spread, spread } from './stats'
import { describeBatched } from './sse-probe'

export type Verdict = 'pass' | 'MISS' | 'n/a'

export interface TargetCheck {
  id: string
  target: string
  measured: string
  verdict: Verdict
  value?: number
}

export const scenarioOf = (r: BenchResults, id: string): ScenarioResult | undefined =>
  r.scenarios.find((s) => s.id === id)

/** metric(a) ⊕ metric(b) per repeat, where both ran; median and range over repeats. */
export function paired(
  s: ScenarioResult | undefined,
  a: string,
  b: string,
  metric: (run: TargetRun) => number,
  combine: (x: number, y: number) => number,
): Spread | undefined {
  const ra = s?.runs[a]
  const rb = s?.runs[b]
  if (!ra?.length || !rb?.length) return undefined
  const values: number[] = []
  for (const run of ra) {
    const other = rb.find((o) => o.repeat === run.repeat)
    if (other) values.push(combine(metric(run), metric(other)))
  }
  return values.length ? spread(values) : undefined
}

export const rpsOf = (run: TargetRun) => run.measured.rps
export const p50Of = (run: TargetRun) => run.measured.latencyMs.p50
export const p99Of = (run: TargetRun) => run.measured.latencyMs.p99
export const divide = (x: number, y: number) => (y === 0 ? Number.NaN : x / y)
export const subtract = (x: number, y: number) => x - y

const mb = (bytes: number) => bytes / 2 ** 20
const fixed = (n: number, d: number) => (Number.isFinite(n) ? n.toFixed(d) : '—')
const range = (s: Spread, d: number) =>
  fixed(s.min, d) === fixed(s.max, d)
    ? fixed(s.median, d)
    : `${fixed(s.median, d)} (${fixed(s.min, d)}–${fixed(s.max, d)})`
const verdictOf = (ok: boolean | undefined): Verdict => (ok === undefined ? 'n/a' : ok ? 'pass' : 'MISS')

export function checkTargets(r: BenchResults): TargetCheck[] {
  const checks: TargetCheck[] = []
  const c1 = scenarioOf(r, 'nonstream-c1')
  const c64 = scenarioOf(r, 'nonstream-c64')
  const s20 = scenarioOf(r, 'stream20-c64')

  const added = paired(c1, 'svc', 'direct', p50Of, subtract)
  checks.push({
    id: 'added-p50-c1',
    target: 'added p50 ≤ 0.3 ms at concurrency 1',
    measured: added ? `+${range(added, 3)} ms` : 'not measured',
    verdict: verdictOf(added && added.median <= 0.3),
    value: added?.median,
  })

  const vsDirect = paired(c64, 'svc', 'direct', rpsOf, divide)
  checks.push({
    id: 'rps-c64-vs-direct',
    target: "at 64 connections ≥ 0.5 of the direct upstream's requests/s",
    measured: vsDirect ? `${range(vsDirect, 3)} × direct` : 'not measured',
    verdict: verdictOf(vsDirect && vsDirect.median >= 0.5),
    value: vsDirect?.median,
  })

  const vsPortkey = paired(c64, 'svc', 'portkey', rpsOf, divide)
  checks.push({
    id: 'rps-c64-vs-portkey',
    target: "at 64 connections ≥ 20× Portkey's requests/s",
    measured: vsPortkey
      ? `${range(vsPortkey, 1)} × Portkey`
      : `unavailable: ${r.portkey.reason ?? 'Portkey not measured'}`,
    verdict: verdictOf(vsPortkey && vsPortkey.median >= 20),
    value: vsPortkey?.median,
  })

  const cpu = c64?.summary['svc']?.cpuUsPerRequest
  checks.push({
    id: 'cpu-per-1000',
    target: 'gateway CPU ≤ 80 ms per 1,000 requests (64 connections, non-streaming)',
    measured: cpu ? `${range(cpu, 1)} ms per 1,000` : 'not measured',
    verdict: verdictOf(cpu && Number.isFinite(cpu.median) ? cpu.median <= 80 : undefined),
    value: cpu?.median,
  })

  const streamAdded = paired(s20, 'svc', 'direct', p50Of, subtract)
  // Judged against direct, as the target says; the bare relay's figure says what the machine allowed.
  const floorStreamAdded = paired(s20, 'floor', 'direct', p50Of, subtract)
  checks.push({
    id: 'stream20-added-p50',
    target: 'streams add ≤ 1 ms to the p50 of a 20-chunk stream (64 connections)',
    measured: streamAdded
      ? `+${range(streamAdded, 2)} ms${floorStreamAdded ? ` (the bare relay: ${floorStreamAdded.median >= 0 ? '+' : ''}${range(floorStreamAdded, 2)} ms)` : ''}`
      : 'not measured',
    verdict: verdictOf(streamAdded && streamAdded.median <= 1),
    value: streamAdded?.median,
  })

  const probe = (key: string) => r.probes.find((p) => p.endpoint.key === key)?.summary
  const pd = probe('direct')
  const ps = probe('svc')
  const psr = probe('svc-responses')
  const pf = probe('floor')
  const batchedOk =
    pd && ps ? ps.batched <= pd.batched && (!psr || psr.batched <= pd.batched) && ps.failures === 0 : undefined
  checks.push({
    id: 'no-batching',
    target: 'streams never batch chunks (gaps < 1 ms between paced deltas, svc vs direct)',
    measured:
      pd && ps
        ? `svc ${describeBatched(ps, '/')}${psr ? `, svc Responses ${describeBatched(psr, '/')}` : ''}, direct ${describeBatched(pd, '/')}${pf ? `, bare relay ${describeBatched(pf, '/')}` : ''}; gap p50 svc ${fixed(ps.gapP50Ms, 2)} ms vs direct ${fixed(pd.gapP50Ms, 2)} ms`
        : 'not measured',
    verdict: verdictOf(batchedOk),
  })

  const c64Scenarios = r.scenarios.filter((s) => s.connections === 64 && s.summary['svc'])
  const peak64 = Math.max(0, ...c64Scenarios.map((s) => s.summary['svc']!.peakRssBytes))
  const peakAt = c64Scenarios.find((s) => s.summary['svc']!.peakRssBytes === peak64)?.id
  checks.push({
    id: 'rss-c64',
    target: '≤ 100 MB RSS at 64 connections',
    measured: c64Scenarios.length ? `peak ${fixed(mb(peak64), 0)} MB (${peakAt})` : 'not measured',
    verdict: verdictOf(c64Scenarios.length ? mb(peak64) <= 100 : undefined),
    value: mb(peak64),
  })

  const open = r.openStreams.find((o) => o.endpoint.target === 'svc')
  const openOk = open?.result ? open.result.completed === open.result.count && mb(open.peakRssBytes) <= 150 : undefined
  checks.push({
    id: 'rss-open-streams',
    target: `≤ 150 MB RSS with ${r.plan.openStreams.toLocaleString('en')} open streams, all complete`,
    measured: open?.result
      ? `peak ${fixed(mb(open.peakRssBytes), 0)} MB, ${open.result.completed}/${open.result.count} complete`
      : (open?.error ?? 'not measured'),
    verdict: verdictOf(openOk),
    value: open ? mb(open.peakRssBytes) : undefined,
  })

  const missing = r.ledger.reduce((n, l) => n + l.missing, 0)
  const answered = r.ledger.reduce((n, l) => n + l.answeredOk, 0)
  checks.push({
    id: 'ledger-complete',
    target: 'every request present in the ledger afterwards',
    measured: r.ledger.length
      ? `${answered.toLocaleString('en')} answered 2xx, ${missing} without a completed row`
      : 'not measured',
    verdict: verdictOf(r.ledger.length ? missing === 0 : undefined),
    value: missing,
  })
  return checks
}
