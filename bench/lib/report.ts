// The Markdown report: key figures as ratios first, then the targets, then every scenario's
// medians and ranges, the streaming probe, the open streams and the ledger check.
import type { BenchResults, ScenarioResult } from './results'
import { type Spread, spread } from './stats'
import { describeBatched } from './sse-probe'
import { checkTargets, divide, p50Of, p99Of, paired, rpsOf, scenarioOf, subtract } from './targets'

const fixed = (n: number | undefined, d: number) => (n !== undefined && Number.isFinite(n) ? n.toFixed(d) : '—')
const int = (n: number | undefined) =>
  n !== undefined && Number.isFinite(n) ? Math.round(n).toLocaleString('en') : '—'
const mb = (bytes: number | undefined) => (bytes ? (bytes / 2 ** 20).toFixed(0) : '—')
/** `median (min–max)`, or just the value when the repeats agree (or there was one). */
const range = (s: Spread | undefined, d: number) => {
  if (!s || !Number.isFinite(s.median)) return '—'
  const span = fixed(s.min, d) === fixed(s.max, d) ? '' : ` (${fixed(s.min, d)}–${fixed(s.max, d)})`
  return `${fixed(s.median, d)}${span}`
}
const signed = (s: Spread | undefined, d: number) =>
  s && Number.isFinite(s.median) ? `${s.median >= 0 ? '+' : ''}${range(s, d)}` : '—'
const row = (cells: (string | number)[]) => `| ${cells.join(' | ')} |`
const perPhase = (seconds: Record<string, number>) =>
  Object.entries(seconds)
    .map(([phase, sec]) => `${sec} s (${phase})`)
    .join(', ')
const describeSvcWarmUp = (r: BenchResults) =>
  `each phase's fresh svc first ran the phase's first scenario for ${perPhase(r.plan.svcWarmupSec)}` +
  (r.plan.svcScenarioWarmupSec ? `, and each later scenario for ${perPhase(r.plan.svcScenarioWarmupSec)}` : '')

export function renderMarkdown(r: BenchResults): string {
  const lines: string[] = []
  const push = (...l: string[]) => lines.push(...l)
  const pk = r.portkey.available
  push(
    `# svc benchmark — ${r.date.slice(0, 10)}${r.quick ? ' (BENCH_QUICK smoke run: figures are indicative only)' : ''}`,
    '',
    `svc ${r.environment.svcCommit} (\`${r.environment.svcBinary}\`) against the upstream simulator directly and against ` +
      (pk ? `Portkey ${r.portkey.version}` : `Portkey — **unavailable in this run: ${r.portkey.reason}**`) +
      `, on ${r.environment.cores} cores (${r.environment.pinned ? 'gateway pinned to core 0; wrk, simulator and probes to core 1' : 'not pinned'}), ` +
      `${r.environment.network}. wrk ${r.environment.wrk}, Bun ${r.environment.bun}${r.environment.node ? `, Node ${r.environment.node}` : ''}, kernel ${r.environment.kernel}. ` +
      `${r.plan.repeats} repeat(s) of ${r.plan.durationSec} s per target (after ${r.plan.warmupSec} s of warm-up; ${describeSvcWarmUp(r)}), target order rotated; ` +
      `figures are medians with the min–max over repeats; a ratio pairs the targets of the same repeat. Whole run ${fixed(r.wallSec, 0)} s.`,
    '',
    '## Key figures',
    '',
    row(['figure', 'svc', '÷ direct', '÷ Portkey']),
    row(['---', '---', '---', '---']),
  )
  const c1 = scenarioOf(r, 'nonstream-c1')
  const c64 = scenarioOf(r, 'nonstream-c64')
  const w50 = scenarioOf(r, 'wait50-c64')
  const s20 = scenarioOf(r, 'stream20-c64')
  const b32 = scenarioOf(r, 'body32k-c64')
  const ratioRow = (label: string, s: ScenarioResult | undefined, metric: typeof rpsOf, unit: string, d: number) => {
    const value = s?.summary['svc']
    const pick = metric === rpsOf ? value?.rps : metric === p50Of ? value?.p50Ms : value?.p99Ms
    push(
      row([
        label,
        pick ? `${range(pick, d)}${unit}` : '—',
        range(paired(s, 'svc', 'direct', metric, divide), 3),
        range(paired(s, 'svc', 'portkey', metric, divide), 3),
      ]),
    )
  }
  ratioRow('capacity, req/s (instant upstream, 64 connections)', c64, rpsOf, '', 0)
  push(
    row([
      'one connection, added p50',
      `${signed(paired(c1, 'svc', 'direct', p50Of, subtract), 3)} ms`,
      range(paired(c1, 'svc', 'direct', p50Of, divide), 2),
      `Portkey adds ${signed(paired(c1, 'portkey', 'direct', p50Of, subtract), 3)} ms`,
    ]),
  )
  const cpu = (s: ScenarioResult | undefined, key: string) => s?.summary[key]?.cpuUsPerRequest
  push(
    row([
      'CPU per request (64 connections), µs',
      range(cpu(c64, 'svc'), 1),
      `${range(
        paired(c64, 'svc', 'direct', (x) => x.cpuUsPerRequest, divide),
        2,
      )} × the simulator's own`,
      range(
        paired(c64, 'svc', 'portkey', (x) => x.cpuUsPerRequest, divide),
        3,
      ),
    ]),
  )
  ratioRow('50 ms upstream, p50 ms', w50, p50Of, ' ms', 2)
  ratioRow('50 ms upstream, p99 ms', w50, p99Of, ' ms', 2)
  ratioRow('streaming 20 chunks, req/s', s20, rpsOf, '', 0)
  ratioRow('streaming 20 chunks, p50 ms', s20, p50Of, ' ms', 2)
  const probe = (key: string) => r.probes.find((p) => p.endpoint.key === key)?.summary
  const ttft = (key: string) => {
    const a = probe(key)
    const d = probe('direct')
    return a && d ? a.firstDeltaP50Ms - d.firstDeltaP50Ms : undefined
  }
  push(
    row([
      'time to first token, added (one stream at a time)',
      `+${fixed(ttft('svc'), 2)} ms (Responses → Anthropic +${fixed(ttft('svc-responses'), 2)} ms)`,
      `${fixed(divide(probe('svc')?.firstDeltaP50Ms ?? Number.NaN, probe('direct')?.firstDeltaP50Ms ?? Number.NaN), 2)}`,
      pk ? `Portkey adds +${fixed(ttft('portkey'), 2)} ms` : '—',
    ]),
  )
  ratioRow('32 KB requests, req/s', b32, rpsOf, '', 0)
  const peakC64 = c64?.summary['svc']?.peakRssBytes
  push(
    row([
      'RSS idle / peak at 64 connections, MB',
      `${mb(r.svcIdleRssBytes['instant'])} / ${mb(peakC64)}`,
      `simulator peak ${mb(c64?.summary['direct']?.peakRssBytes)}`,
      pk
        ? `${fixed(divide(peakC64 ?? Number.NaN, c64?.summary['portkey']?.peakRssBytes ?? Number.NaN), 2)} (Portkey peak ${mb(c64?.summary['portkey']?.peakRssBytes)})`
        : '—',
    ]),
  )
  const rows = c64?.summary['svc']?.rowsPerSec
  push(
    row([
      'ledger rows written per second (64 connections)',
      range(rows, 0),
      range(
        paired(c64, 'svc', 'direct', (x) => x.ledger?.rowsPerSec ?? x.measured.rps, divide),
        3,
      ),
      range(
        paired(c64, 'svc', 'portkey', (x) => x.ledger?.rowsPerSec ?? x.measured.rps, divide),
        2,
      ),
    ]),
  )
  push(
    '',
    "(÷ direct of a ledger rate is rows/s over the direct upstream's requests/s; Portkey keeps no ledger, so ÷ Portkey is over its requests/s.)",
    '',
  )

  push('## Targets', '', row(['target', 'measured', 'verdict']), row(['---', '---', '---']))
  for (const t of r.targets ?? checkTargets(r))
    push(row([t.target, t.measured, t.verdict === 'MISS' ? '**MISS**' : t.verdict]))
  const checks = checkTargets(r)
  const missed = checks.filter((t) => t.verdict === 'MISS')
  const unmeasured = checks.filter((t) => t.verdict === 'n/a')
  push(
    '',
    missed.length ? `Missed: ${missed.map((t) => t.target).join('; ')}.` : 'No measured target is missed.',
    unmeasured.length ? `Not measured in this run: ${unmeasured.map((t) => t.target).join('; ')}.` : '',
    '',
  )
  pushFloor(push, c1, c64)

  push('## Scenarios', '')
  for (const s of r.scenarios) pushScenario(push, s, pk)

  push(
    '## Streaming probe',
    '',
    `${r.plan.probeStreams} streams one at a time per target and repeat (20 text deltas 5 ms apart upstream). ` +
      'First delta: from sending the request to the first text delta. A gap under 1 ms between two paced deltas means they travelled together (batching).',
    '',
    row([
      'target',
      'first delta p50, ms',
      'added',
      'stream p50, ms',
      'last delta → end p50, ms',
      'gap p10 / p50 / p90, ms',
      'gaps < 1 ms',
      'failures',
    ]),
    row(['---', '---', '---', '---', '---', '---', '---', '---']),
  )
  const direct = probe('direct')
  for (const p of r.probes) {
    const s = p.summary
    push(
      row([
        p.endpoint.label,
        fixed(s.firstDeltaP50Ms, 2),
        p.endpoint.key === 'direct' ? '—' : `+${fixed(s.firstDeltaP50Ms - (direct?.firstDeltaP50Ms ?? Number.NaN), 2)}`,
        fixed(s.totalP50Ms, 1),
        fixed(s.tailP50Ms, 2),
        `${fixed(s.gapP10Ms, 2)} / ${fixed(s.gapP50Ms, 2)} / ${fixed(s.gapP90Ms, 2)}`,
        describeBatched(s),
        s.failures ? `${s.failures}: ${s.firstError}` : '0',
      ]),
    )
  }

  push(
    '',
    '## Open streams',
    '',
    `${r.plan.openStreams.toLocaleString('en')} streams opened at once by one Bun client against \`${r.plan.slowStream}\`; RSS of the process named.`,
    '',
    row([
      'target',
      'complete',
      'first delta p50 / p99 / max, ms',
      'last stream done, s',
      'most streaming at once',
      'RSS before → peak, MB',
      'ledger',
    ]),
    row(['---', '---', '---', '---', '---', '---', '---']),
  )
  for (const o of r.openStreams) {
    const x = o.result
    push(
      row([
        `${o.endpoint.label} (${o.process})`,
        x
          ? `${x.completed} / ${x.count}${x.errors.length ? ` — ${x.errors[0]!.slice(0, 120)}` : ''}`
          : (o.error ?? '—'),
        x ? `${fixed(x.firstDeltaMs.p50, 0)} / ${fixed(x.firstDeltaMs.p99, 0)} / ${fixed(x.firstDeltaMs.max, 0)}` : '—',
        x ? fixed(x.totalMs.max / 1000, 1) : '—',
        x ? int(x.maxConcurrentStreaming) : '—',
        `${mb(o.rssBeforeBytes)} → ${mb(o.peakRssBytes)}`,
        o.ledger ? `${o.ledger.completedRowsAdded} completed rows, missing ${o.ledger.missing}` : '—',
      ]),
    )
  }

  push(
    '',
    '## Ledger',
    '',
    "Rows of `requests` in svc's SQLite file at the end of each phase against every answer svc gave the bench (smoke checks, warm-ups, wrk, probes, open streams). " +
      'A 2xx answer must have a completed row; requests cut off when wrk stops add aborted rows on top.',
    '',
    row(['phase', 'answers (complete, 2xx)', 'rows (completed)', 'missing']),
    row(['---', '---', '---', '---']),
  )
  for (const l of r.ledger)
    push(
      row([
        l.phase,
        `${int(l.answered)} (${int(l.answeredOk)})`,
        `${int(l.rows)} (${int(l.completedRows)})`,
        String(l.missing),
      ]),
    )
  push('')
  return `${lines.join('\n')}\n`
}

/**
 * What a bare relay (floor-relay.ts) did in the same run. The absolute targets were set on a
 * machine where it reached ~0.65 of the direct upstream at 64 connections, added ~0.17 ms at one
 * connection and cost 37–43 µs a request: on a slower or busier machine all three move, svc's too.
 */
function pushFloor(push: (...l: string[]) => number, c1: ScenarioResult | undefined, c64: ScenarioResult | undefined) {
  const capacity = paired(c64, 'floor', 'direct', rpsOf, divide)
  if (!capacity) return
  const added = paired(c1, 'floor', 'direct', p50Of, subtract)
  const cpu = c64?.summary['floor']?.cpuUsPerRequest
  const svcOverFloor = paired(c64, 'svc', 'floor', rpsOf, divide)
  const svcCpuOverFloor = paired(c64, 'svc', 'floor', (x) => x.cpuUsPerRequest, divide)
  const svcAddedOverFloor = paired(c1, 'svc', 'floor', p50Of, subtract)
  push(
    `The floor in this run — a bare Bun relay (Bun.serve + fetch, no auth, routing or ledger) pinned like svc: ` +
      `${range(capacity, 3)} × direct at 64 connections, ${signed(added, 3)} ms at one connection, ` +
      `${range(cpu, 0)} µs CPU a request (where the targets were set: ~0.65 ×, +0.17 ms, 37–43 µs). ` +
      `svc against it: ${range(svcOverFloor, 3)} × its requests/s, ${range(svcCpuOverFloor, 2)} × its CPU, ` +
      `${signed(svcAddedOverFloor, 3)} ms at one connection.`,
    '',
  )
}

function pushScenario(push: (...l: string[]) => number, s: ScenarioResult, portkeyAvailable: boolean) {
  push(
    `### ${s.id}: ${s.title}`,
    '',
    `${s.connections} connection(s), ${s.durationSec} s per run.` +
      (s.portkeyNote && portkeyAvailable ? ` Portkey: ${s.portkeyNote}.` : s.portkeyNote ? ` ${s.portkeyNote}.` : ''),
    '',
    row([
      'target',
      'req/s',
      '÷ direct',
      'p50, ms',
      'p99, ms',
      'added p50, ms',
      'errors',
      'CPU µs/req',
      'peak RSS, MB',
      'smoke',
    ]),
    row(['---', '---', '---', '---', '---', '---', '---', '---', '---', '---']),
  )
  for (const e of s.endpoints) {
    const sum = s.summary[e.key]
    const smoke = s.smoke[e.key]
    if (!sum) {
      push(
        row([
          e.label,
          '—',
          '—',
          '—',
          '—',
          '—',
          '—',
          '—',
          '—',
          smoke ? `${smoke.ok ? 'ok' : 'FAILED'}: ${smoke.detail.slice(0, 100)}` : 'not run',
        ]),
      )
      continue
    }
    const isDirect = e.key === 'direct'
    push(
      row([
        `${e.label}${isDirect ? '' : ''}`,
        range(sum.rps, 0),
        isDirect ? '1' : range(paired(s, e.key, 'direct', rpsOf, divide), 3),
        range(sum.p50Ms, 2),
        range(sum.p99Ms, 2),
        isDirect ? '—' : signed(paired(s, e.key, 'direct', p50Of, subtract), 2),
        `${sum.errors}${sum.capped ? ' (request cap hit)' : ''}`,
        `${range(sum.cpuUsPerRequest, 0)}${isDirect ? ' (simulator)' : ''}`,
        mb(sum.peakRssBytes),
        smoke?.ok ? 'ok' : 'FAILED',
      ]),
    )
  }
  const ledger = s.runs['svc']?.map((x) => x.ledger).filter((x) => x !== undefined) ?? []
  if (ledger.length) {
    const missing = ledger.reduce((n, l) => n + l.missing, 0)
    push(
      '',
      `svc ledger: ${range(spread(ledger.map((l) => l.rowsPerSec)), 0)} rows/s; ${missing} answered requests without a completed row.`,
    )
  }
  push('')
}
