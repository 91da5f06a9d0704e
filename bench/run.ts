// `make bench`: the upstream simulator, svc (dist/svc) and Portkey on loopback, each driven by wrk
// with the gateway pinned to core 0 and everything else to core 1; results as ratios against the
// direct upstream and Portkey from the same run, in bench/results/<date>.md and .json.
// BENCH_QUICK=1: a smoke run (short scenarios, one repeat), written under bench/results/tmp/.
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, release, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { checkAnswer } from './lib/answers'
import { countRequests, countSettled } from './lib/ledger'
import { type OpenStreamsInput, type OpenStreamsResult, resultMarker } from './lib/open-streams'
import { installPortkey, type Peer, portkeyCommand } from './lib/portkey'
import { canPin, pinned, pinSelf, readCpuMs, readRssBytes, sampleRss } from './lib/proc'
import { freePort, killAllStarted, type Service, startService, stopService } from './lib/processes'
import { renderMarkdown } from './lib/report'
import {
  type BenchResults,
  type OpenStreamsEntry,
  type PhaseLedger,
  type ProbeEntry,
  type ScenarioResult,
  summarizeRuns,
  type TargetRun,
} from './lib/results'
import {
  buildRequest,
  type Endpoint,
  expectedText,
  openStreamEndpoints,
  type Phase,
  phases,
  probeEndpoints,
  type Scenario,
  type Urls,
} from './lib/scenarios'
import { probeStreams, summarizeProbes } from './lib/sse-probe'
import { checkTargets } from './lib/targets'
import { type RunningSvc, startSvc } from './lib/svc'
import { ensureWrk, runWrk, writeWrkScript } from './lib/wrk'

const root = resolve(import.meta.dir, '..')
const benchDir = join(root, 'bench')
const quick = process.env.BENCH_QUICK === '1'

const plan = quick
  ? {
      durationSec: 1,
      warmupSec: 1,
      svcWarmupSec: { instant: 1, streams: 2 },
      svcScenarioWarmupSec: { instant: 1, streams: 1 },
      repeats: 1,
      probeStreams: 5,
      openStreams: 1000,
      slowStream: 'sim-stream-10x200ms',
      slowStreamChunks: 10,
      watchdogSec: 240,
    }
  : {
      durationSec: 5,
      warmupSec: 1,
      svcWarmupSec: { instant: 10, streams: 20 },
      // Each later scenario takes a path of its own (translation, another surface) that the JIT
      // has not compiled yet: after 20 s of pass-through streams, a fresh svc's first 5 s of
      // Responses-in streams cost 1,213 µs a stream, the next four runs 1,077–1,126.
      svcScenarioWarmupSec: { instant: 3, streams: 5 },
      repeats: 3,
      probeStreams: 20,
      openStreams: 1000,
      slowStream: 'sim-stream-20x250ms',
      slowStreamChunks: 20,
      watchdogSec: 960,
    }
/** Answers per wrk run beyond which the thread stops: far above what this machine can do. */
const requestCapPerSec = 100_000

const started = performance.now()
const log = (line: string) => {
  const t = ((performance.now() - started) / 1000).toFixed(1).padStart(6)
  console.log(`[bench ${t}s] ${line}`)
}

// --- Before the private network: what needs the registries -------------------------------------

const svcBinary = join(root, 'dist', 'svc')
if (!existsSync(svcBinary)) throw new Error(`${svcBinary} is missing: run \`make build\` (make bench does)`)
const wrkVersion = ensureWrk(log)
const peer: Peer = installPortkey(join(benchDir, '.peers'), log)
if (!peer.available) log(`Portkey unavailable: ${peer.reason}`)

// Inside a network namespace of its own with only `lo` up, nothing the bench starts can reach
// anything but loopback. Where unshare is not allowed, the run stays on 127.0.0.1 all the same.
let network = 'loopback (127.0.0.1) in the host namespace'
if (process.env.SVC_BENCH_NETNS === '1') {
  network = 'loopback only: a private network namespace (unshare --net) with just lo up'
} else if (process.env.SVC_BENCH_NETNS !== 'off' && canUnshare()) {
  const child = Bun.spawn(
    [
      'unshare',
      '--net',
      '--',
      'sh',
      '-c',
      'ip link set lo up && exec "$0" "$@"',
      process.execPath,
      ...process.argv.slice(1),
    ],
    { env: { ...process.env, SVC_BENCH_NETNS: '1' }, stdio: ['inherit', 'inherit', 'inherit'] },
  )
  const forward = (sig: NodeJS.Signals) => process.on(sig, () => child.kill(sig))
  forward('SIGINT')
  forward('SIGTERM')
  process.exit(await child.exited)
}

function canUnshare(): boolean {
  return Bun.spawnSync(['sh', '-c', 'command -v ip >/dev/null && unshare --net -- ip link set lo up']).exitCode === 0
}

// --- The run --------------------------------------------------------------------------------------

const pinning = canPin()
const gatewayCore = pinning ? 0 : undefined
const loadCore = pinning ? 1 : undefined
if (pinning) pinSelf(1)
else log('fewer than two cores or no taskset: nothing is pinned, figures are noisier')

const watchdog = setTimeout(() => {
  console.error(`[bench] watchdog: still running after ${plan.watchdogSec} s, stopping everything`)
  killAllStarted()
  process.exit(3)
}, plan.watchdogSec * 1000)
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.on(sig, () => {
    killAllStarted()
    process.exit(130)
  })
}

const work = mkdtempSync(join(tmpdir(), 'svc-bench-'))
log(`work dir ${work}; plan ${JSON.stringify(plan)}`)

const results: BenchResults = {
  date: new Date().toISOString(),
  quick,
  plan: {
    durationSec: plan.durationSec,
    warmupSec: plan.warmupSec,
    svcWarmupSec: plan.svcWarmupSec,
    svcScenarioWarmupSec: plan.svcScenarioWarmupSec,
    repeats: plan.repeats,
    probeStreams: plan.probeStreams,
    openStreams: plan.openStreams,
    slowStream: plan.slowStream,
  },
  environment: {
    cores: availableParallelism(),
    kernel: release(),
    bun: Bun.version,
    node: peer.available ? Bun.spawnSync([peer.node, '--version']).stdout.toString().trim() : undefined,
    wrk: wrkVersion,
    svcCommit: gitDescribe(),
    pinned: pinning,
    network,
    svcBinary: 'dist/svc',
  },
  portkey: peer.available ? { available: true, version: peer.version } : { available: false, reason: peer.reason },
  svcIdleRssBytes: {},
  scenarios: [],
  probes: [],
  openStreams: [],
  ledger: [],
  wallSec: 0,
}

function gitDescribe(): string {
  const git = (...args: string[]) =>
    Bun.spawnSync(['git', '-C', root, ...args])
      .stdout.toString()
      .trim()
  const head = git('rev-parse', '--short', 'HEAD') || 'unknown'
  return git('status', '--porcelain', '--', 'src') ? `${head} + uncommitted changes in src/` : head
}

async function startUpstream(): Promise<Service> {
  const port = await freePort()
  return startService({
    name: 'upstream simulator',
    cmd: pinned(loadCore, [process.execPath, join(benchDir, 'lib', 'upstream.ts'), '--port', String(port)]),
    port,
    logFile: join(work, 'upstream.log'),
  })
}

/** The floor: pinned to the gateway's core like svc and Portkey, and with fetch's limit raised as for svc. */
async function startFloorRelay(simUrl: string): Promise<Service> {
  const port = await freePort()
  return startService({
    name: 'bare relay',
    cmd: pinned(gatewayCore, [
      process.execPath,
      join(benchDir, 'lib', 'floor-relay.ts'),
      '--port',
      String(port),
      '--upstream',
      simUrl,
    ]),
    port,
    logFile: join(work, 'floor-relay.log'),
    env: { BUN_CONFIG_MAX_HTTP_REQUESTS: '4096' },
  })
}

async function startPortkey(): Promise<Service | undefined> {
  if (!peer.available) return undefined
  const port = await freePort()
  try {
    return await startService({
      name: 'Portkey',
      cmd: pinned(gatewayCore, portkeyCommand(peer, port)),
      port,
      logFile: join(work, 'portkey.log'),
      cwd: join(benchDir, '.peers'),
    })
  } catch (err) {
    results.portkey = { available: false, reason: `installed but did not start: ${String(err).slice(0, 300)}` }
    log(`Portkey did not start: ${err}`)
    return undefined
  }
}

interface Running {
  upstream: Service
  floor?: Service
  portkey?: Service
  svc?: RunningSvc
  /** What svc answered this phase (for the ledger check at its end). */
  svcAnswered: { all: number; ok: number }
}

const urlsOf = (r: Running): Urls => ({
  sim: r.upstream.url,
  floor: r.floor?.url,
  svc: r.svc?.service.url,
  svcKey: r.svc?.key,
  portkey: r.portkey?.url,
})

function processOf(r: Running, endpoint: Endpoint): { pid: number; name: TargetRun['process'] } {
  if (endpoint.target === 'svc') return { pid: r.svc!.service.pid, name: 'svc' }
  if (endpoint.target === 'portkey') return { pid: r.portkey!.pid, name: 'portkey' }
  if (endpoint.target === 'floor') return { pid: r.floor!.pid, name: 'bare relay' }
  return { pid: r.upstream.pid, name: 'upstream simulator' }
}

const rotate = <T>(items: T[], by: number): T[] => items.map((_, i) => items[(i + by) % items.length]!)

const available = (r: Running, endpoints: Endpoint[]) =>
  endpoints.filter((e) => (e.target !== 'portkey' || r.portkey) && (e.target !== 'floor' || r.floor))

/**
 * Every other target runs for the whole bench, but each phase starts a fresh svc (its own config),
 * whose JIT then compiles for its first ~20,000 streams (300–400 ms of a 6-s run's CPU on svc's
 * core, against ~40–180 ms after), so the phase's first repeat measured a process still compiling
 * (1,478 µs a stream, then 1,066–1,085). svc runs the phase's first scenario this long first.
 */
async function warmUpSvc(r: Running, phase: Phase, scenario: Scenario, run: { url: string; script: string }) {
  const phaseId = phase.id as keyof typeof plan.svcWarmupSec
  const durationSec =
    (scenario === phase.scenarios[0] ? plan.svcWarmupSec[phaseId] : plan.svcScenarioWarmupSec[phaseId]) ?? 0
  if (durationSec <= 0) return
  const cap = requestCapPerSec * durationSec
  const warm = await runWrk({ ...run, connections: scenario.connections, durationSec, cap })
  countSvc(r, warm.requests, warm.requests - warm.errors.status)
  log(`  svc warmed up: ${durationSec} s of ${scenario.id}, ${warm.requests} answers`)
}

async function runScenario(r: Running, phase: Phase, scenario: Scenario): Promise<ScenarioResult> {
  const durationSec = Math.max(1, Math.round(plan.durationSec * (scenario.durationScale ?? 1)))
  const cap = requestCapPerSec * Math.ceil(durationSec + plan.warmupSec)
  const out: ScenarioResult = {
    id: scenario.id,
    phase: phase.id,
    title: scenario.title,
    connections: scenario.connections,
    durationSec,
    stream: scenario.stream,
    endpoints: scenario.endpoints,
    portkeyNote: r.portkey ? scenario.portkeyNote : (scenario.portkeyNote ?? 'Portkey unavailable in this run'),
    smoke: {},
    runs: {},
    summary: {},
  }
  const endpoints: Endpoint[] = []
  const scripts = new Map<string, { url: string; script: string }>()
  for (const endpoint of available(r, scenario.endpoints)) {
    const req = buildRequest(endpoint, scenario, urlsOf(r))
    const smoke = await checkAnswer(req, {
      dialect: endpoint.dialect,
      stream: scenario.stream,
      expectText: expectedText(endpoint, phase),
      expectDeltas: scenario.chunks,
    })
    if (endpoint.target === 'svc') countSvc(r, 1, smoke.ok ? 1 : 0)
    out.smoke[endpoint.key] = smoke
    if (!smoke.ok) {
      log(`  smoke FAILED for ${endpoint.label}: ${smoke.detail} — not timed`)
      continue
    }
    endpoints.push(endpoint)
    const script = await writeWrkScript(work, `${scenario.id}-${endpoint.key}`, { method: 'POST', ...req }, cap)
    scripts.set(endpoint.key, { url: req.url, script })
  }
  const svcRun = scripts.get('svc')
  if (svcRun) await warmUpSvc(r, phase, scenario, svcRun)

  for (let repeat = 0; repeat < plan.repeats; repeat++) {
    const order = rotate(endpoints, repeat)
    for (const [i, endpoint] of order.entries()) {
      const { url, script } = scripts.get(endpoint.key)!
      const proc = processOf(r, endpoint)
      const db = endpoint.target === 'svc' ? r.svc!.db : undefined
      const rows0 = db ? countRequests(db) : undefined
      const rss = sampleRss(proc.pid)
      const warmup =
        plan.warmupSec > 0
          ? await runWrk({ url, script, connections: scenario.connections, durationSec: plan.warmupSec, cap })
          : undefined
      const rows1 = db ? await countSettled(db) : undefined
      const cpu0 = readCpuMs(proc.pid)
      const measured = await runWrk({ url, script, connections: scenario.connections, durationSec, cap })
      const cpu1 = readCpuMs(proc.pid)
      const peakRssBytes = rss.stop()
      const run: TargetRun = {
        repeat,
        order: i,
        warmup,
        measured,
        process: proc.name,
        cpuUsPerRequest: measured.requests > 0 ? ((cpu1 - cpu0) * 1000) / measured.requests : Number.NaN,
        peakRssBytes,
      }
      if (db && rows0 && rows1) {
        const rows2 = await countSettled(db)
        const answered = (warmup?.requests ?? 0) + measured.requests
        const answeredOk = answered - (warmup?.errors.status ?? 0) - measured.errors.status
        const completedRowsAdded = rows2.completed - rows0.completed
        run.ledger = {
          answered,
          answeredOk,
          rowsAdded: rows2.total - rows0.total,
          completedRowsAdded,
          missing: Math.max(0, answeredOk - completedRowsAdded),
          rowsPerSec: (rows2.total - rows1.total) / measured.durationSec,
        }
        countSvc(r, answered, answeredOk)
      }
      out.runs[endpoint.key] = [...(out.runs[endpoint.key] ?? []), run]
      log(
        `  ${scenario.id} #${repeat + 1} ${endpoint.label}: ${measured.rps.toFixed(0)} req/s, p50 ${measured.latencyMs.p50.toFixed(2)} ms, p99 ${measured.latencyMs.p99.toFixed(2)} ms, ` +
          `errors ${measured.errors.status + measured.errors.timeout + measured.errors.read + measured.errors.connect}, ` +
          `CPU ${run.cpuUsPerRequest.toFixed(0)} µs/req (${proc.name}), peak RSS ${(peakRssBytes / 2 ** 20).toFixed(0)} MB` +
          (run.ledger ? `, ledger missing ${run.ledger.missing}` : ''),
      )
    }
  }
  for (const [key, runs] of Object.entries(out.runs)) out.summary[key] = summarizeRuns(runs)
  return out
}

function countSvc(r: Running, all: number, ok: number) {
  r.svcAnswered.all += all
  r.svcAnswered.ok += ok
}

async function runProbes(r: Running): Promise<ProbeEntry[]> {
  const endpoints = available(r, probeEndpoints)
  const byKey = new Map<string, Awaited<ReturnType<typeof probeStreams>>[]>()
  for (let repeat = 0; repeat < plan.repeats; repeat++) {
    for (const endpoint of rotate(endpoints, repeat)) {
      const req = buildRequest(endpoint, { stream: true }, urlsOf(r))
      const result = await probeStreams(req, endpoint.dialect, plan.probeStreams)
      if (endpoint.target === 'svc') countSvc(r, result.streams, result.streams - result.failures)
      const list = byKey.get(endpoint.key) ?? []
      list.push(result)
      byKey.set(endpoint.key, list)
    }
  }
  return endpoints.map((endpoint) => {
    const summary = summarizeProbes(byKey.get(endpoint.key) ?? [])
    log(
      `  probe ${endpoint.label}: first delta p50 ${summary.firstDeltaP50Ms.toFixed(2)} ms, stream p50 ${summary.totalP50Ms.toFixed(1)} ms (last delta → end ${summary.tailP50Ms.toFixed(2)} ms), ` +
        `gap p10/p50 ${summary.gapP10Ms.toFixed(2)}/${summary.gapP50Ms.toFixed(2)} ms, batched ${summary.batched}/${summary.gaps}, failures ${summary.failures}`,
    )
    return { endpoint, summary }
  })
}

async function runOpenStreams(r: Running): Promise<OpenStreamsEntry[]> {
  const entries: OpenStreamsEntry[] = []
  for (const endpoint of available(r, openStreamEndpoints(plan))) {
    const proc = processOf(r, endpoint)
    const input: OpenStreamsInput = {
      request: buildRequest(endpoint, { stream: true }, urlsOf(r)),
      dialect: endpoint.dialect,
      count: plan.openStreams,
      expectDeltas: plan.slowStreamChunks,
      timeoutMs: 90_000,
    }
    const db = endpoint.target === 'svc' ? r.svc!.db : undefined
    const rows0 = db ? countRequests(db) : undefined
    const rssBeforeBytes = readRssBytes(proc.pid) ?? 0
    const rss = sampleRss(proc.pid)
    const child = Bun.spawn(
      ['timeout', '-k', '5', '120', process.execPath, join(benchDir, 'lib', 'open-streams.ts'), JSON.stringify(input)],
      {
        env: { ...process.env, BUN_CONFIG_MAX_HTTP_REQUESTS: String(plan.openStreams * 2) },
        stdout: 'pipe',
        stderr: 'pipe',
      },
    )
    const [stdout, stderr, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ])
    const peakRssBytes = rss.stop()
    const line = stdout.split('\n').find((l) => l.startsWith(resultMarker))
    const entry: OpenStreamsEntry = { endpoint, process: proc.name, peakRssBytes, rssBeforeBytes }
    if (line) entry.result = JSON.parse(line.slice(resultMarker.length)) as OpenStreamsResult
    else entry.error = `client exited ${code}: ${stderr.slice(-400)}`
    if (db && rows0 && entry.result) {
      const rows1 = await countSettled(db, 10_000)
      const completedRowsAdded = rows1.completed - rows0.completed
      entry.ledger = { completedRowsAdded, missing: Math.max(0, entry.result.completed - completedRowsAdded) }
      countSvc(r, entry.result.count, entry.result.completed)
    }
    const res = entry.result
    log(
      `  ${plan.openStreams} open streams via ${endpoint.label}: ` +
        (res
          ? `${res.completed} complete, first delta p50/max ${res.firstDeltaMs.p50.toFixed(0)}/${res.firstDeltaMs.max.toFixed(0)} ms, wall ${(res.wallMs / 1000).toFixed(1)} s, ` +
            `at most ${res.maxConcurrentStreaming} streaming at once, peak RSS ${(peakRssBytes / 2 ** 20).toFixed(0)} MB${res.errors.length ? `, errors: ${res.errors[0]}` : ''}`
          : entry.error),
    )
    entries.push(entry)
  }
  return entries
}

async function runPhase(r: Running, phase: Phase): Promise<void> {
  log(`phase ${phase.id}: ${phase.title}`)
  r.svc = await startSvc({
    name: `svc (${phase.id})`,
    binary: svcBinary,
    dir: join(work, `svc-${phase.id}`),
    phase,
    simUrl: r.upstream.url,
    core: gatewayCore,
  })
  r.svcAnswered = { all: 0, ok: 0 }
  try {
    await Bun.sleep(500)
    results.svcIdleRssBytes[phase.id] = readRssBytes(r.svc.service.pid) ?? 0
    for (const scenario of phase.scenarios) {
      log(`scenario ${scenario.id}: ${scenario.title}`)
      results.scenarios.push(await runScenario(r, phase, scenario))
    }
    if (phase.id === 'streams') {
      log(`probe: ${plan.probeStreams} streams one at a time per target and repeat, first delta and gaps`)
      results.probes = await runProbes(r)
      log(`open streams: ${plan.openStreams} at once on ${plan.slowStream}`)
      results.openStreams = await runOpenStreams(r)
    }
    const rows = await countSettled(r.svc.db, 10_000)
    const entry: PhaseLedger = {
      phase: phase.id,
      answered: r.svcAnswered.all,
      answeredOk: r.svcAnswered.ok,
      rows: rows.total,
      completedRows: rows.completed,
      missing: Math.max(0, r.svcAnswered.ok - rows.completed),
    }
    results.ledger.push(entry)
    log(
      `ledger (${phase.id}): ${entry.answeredOk} answered 2xx, ${entry.completedRows} completed rows (${entry.rows} in all), missing ${entry.missing}`,
    )
  } finally {
    // svc waits up to its grace period for idle keep-alive connections (the smoke checks leave some).
    await stopService(r.svc.service.proc, 3000)
    r.svc = undefined
  }
}

function resultPaths(): { md: string; json: string } {
  const now = new Date()
  const day = now.toISOString().slice(0, 10)
  const time = now.toISOString().slice(11, 19).replaceAll(':', '')
  const dir = quick ? join(benchDir, 'results', 'tmp') : join(benchDir, 'results')
  mkdirSync(dir, { recursive: true })
  let base = quick ? `${day}-${time}-quick` : day
  if (!quick && existsSync(join(dir, `${base}.md`))) base = `${day}-${time}`
  return { md: join(dir, `${base}.md`), json: join(dir, `${base}.json`) }
}

let exitCode = 0
const running: Running = { upstream: await startUpstream(), svcAnswered: { all: 0, ok: 0 } }
try {
  log(`upstream simulator on ${running.upstream.url} (pid ${running.upstream.pid})`)
  running.floor = await startFloorRelay(running.upstream.url)
  log(`bare relay (the floor) on ${running.floor.url} (pid ${running.floor.pid})`)
  running.portkey = await startPortkey()
  if (running.portkey) log(`Portkey ${results.portkey.version} on ${running.portkey.url} (pid ${running.portkey.pid})`)
  for (const phase of phases(plan)) await runPhase(running, phase)
} catch (err) {
  exitCode = 1
  console.error(`[bench] failed: ${err instanceof Error ? err.stack : err}`)
} finally {
  if (running.portkey) await stopService(running.portkey.proc)
  if (running.floor) await stopService(running.floor.proc)
  await stopService(running.upstream.proc)
  clearTimeout(watchdog)
}

results.wallSec = (performance.now() - started) / 1000
results.targets = checkTargets(results)
const paths = resultPaths()
writeFileSync(paths.json, `${JSON.stringify(results, null, 2)}\n`)
const markdown = renderMarkdown(results)
writeFileSync(paths.md, markdown)
log(`results: ${paths.md} and ${paths.json} (${results.wallSec.toFixed(0)} s)`)
console.log(`\n${markdown.slice(0, markdown.indexOf('\n## Scenarios'))}`)
if (exitCode === 0 && process.env.BENCH_KEEP !== '1') rmSync(work, { recursive: true, force: true })
else log(`work dir kept: ${work}`)
process.exit(exitCode)
