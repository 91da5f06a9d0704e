// `make bench-path`: the CPU svc's own request path costs, and the JS heap cells it allocates, in
// process, per `make bench` scenario, with and without the ledger write. Requests go through app.handle() against canned upstream
// answers — the simulator's real bytes, captured once per upstream request and replayed (a stream
// one network read per captured read) — so the figure leaves out what svc shares with any relay:
// sockets, Bun's HTTP server and the upstream client. On this shared, noisy machine `make bench`'s
// wrk runs of one build vary by 2× from minute to minute; the minimum of these rounds moves by
// ~10 %, which is what a change to routing, relaying or the ledger needs to be judged by.
// Not a target: the targets are `make bench`'s, measured on the binary as deployed.
import { heapStats } from 'bun:jsc'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app'
import { resolveConfig } from '../src/config/load'
import { parse as parseToml } from 'smol-toml'
import { createDeps } from '../src/deps'
import { createLogger } from '../src/lib/log'
import { startSimulator } from '../test/support/simulator'
import { classifyFrame, type Dialect, readJsonAnswer, readSseFrames } from './lib/answers'
import { canPin, pinSelf } from './lib/proc'
import { buildRequest, expectedText, type Phase, phases, simKeyEnv, svcConfigToml } from './lib/scenarios'
import { median } from './lib/stats'

const quick = process.env.BENCH_QUICK === '1'
const rounds = quick ? 2 : 5
/** Requests (or streams) a measurement counts. */
const perRound = quick ? 2_000 : 8_000
const streamsPerRound = quick ? 300 : 1_500
/** Rounds' worth of requests each measuring process sends before it measures. */
const warmUpRounds = quick ? 1 : 4
/** BENCH_PATH_ONLY=nonstream-c64,body32k-c64: only these scenarios. */
const only = process.env.BENCH_PATH_ONLY?.split(',').filter(Boolean)

interface Captured {
  status: number
  headers: [string, string][]
  /** The body as the upstream client read it: one entry per network read. */
  reads: Uint8Array[]
}

/**
 * deps.fetch for the gateway: the first call for an upstream request goes to the simulator and its
 * answer is kept; every later call replays it without a socket (no pacing: CPU is measured, not time).
 */
const utf8 = new TextEncoder()

function replayingFetch(): typeof fetch {
  /** One or two upstream requests a scenario: many more means svc's bodies vary and replay is wrong. */
  const maxAnswers = 40
  const answers = new Map<string, Captured>()
  const replay = ({ status, headers, reads }: Captured) => {
    let next = 0
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (next < reads.length) controller.enqueue(reads[next++]!.slice())
        else controller.close()
      },
    })
    return new Response(reads.length === 1 ? reads[0]!.slice() : body, { status, headers })
  }
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    // Keyed without parsing the body (a 32 KB one would cost more than svc's own work): a
    // scenario's upstream body is the same every time, and differs from the others' in its start,
    // its end (the stream flag) or its length.
    const sent = String(init.body)
    // As fetch would, the body goes out as UTF-8: a body that costs less to build but more to
    // encode (a rope of slices, say) must not read cheaper here than it is.
    utf8.encode(sent)
    const key = `${String(input)} ${sent.length} ${sent.slice(0, 200)} ${sent.slice(-60)}`
    const known = answers.get(key)
    if (known) return replay(known)
    if (answers.size >= maxAnswers) throw new Error('upstream bodies differ from request to request: nothing to replay')
    const res = await fetch(input, init)
    const reads: Uint8Array[] = []
    for await (const chunk of res.body ?? []) reads.push(chunk)
    const captured = { status: res.status, headers: [...res.headers], reads }
    if (res.status === 200) answers.set(key, captured)
    return replay(captured)
  }) as typeof fetch
}

interface Gateway {
  app: ReturnType<typeof createApp>
  key: string
  close(): void
}

async function startGateway(
  phase: Phase,
  simUrl: string,
  upstreamFetch: typeof fetch,
  withLedger: boolean,
): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), 'svc-bench-path-'))
  const config = resolveConfig(parseToml(svcConfigToml(phase, simUrl)), {
    env: simKeyEnv,
    overrides: { database: join(dir, 'svc.db') },
  })
  // As `svc serve` runs: a WAL database on disk, checkpoints in their worker thread.
  const deps = createDeps(config, { log: createLogger('warn'), fetch: upstreamFetch, serving: true })
  const first = await deps.admin.bootstrap()
  if (!first) throw new Error('bootstrap did not run on an empty database')
  if (!withLedger) {
    // Everything up to the write stays (the trace, metering, the metrics); the write itself is
    // skipped and the grants the quota gate reads stay as they were.
    deps.ledger.queueRequest = () => {}
  }
  return {
    app: createApp(deps),
    key: first.key,
    close() {
      deps.ledger.close()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

type Send = () => Promise<Response>

/** A timed request: the client only reads the bytes, so that its own parsing stays out of the figure. */
async function exchange(send: Send) {
  const res = await send()
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`)
  await res.arrayBuffer()
}

/** Before any timing: throws unless the client gets a complete, correct answer. */
async function checkExchange(send: Send, check: { dialect: Dialect; stream: boolean; text: string }) {
  const res = await send()
  if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`)
  let text = ''
  let complete = false
  if (check.stream) {
    for await (const frame of readSseFrames(res.body!)) {
      const kind = classifyFrame(check.dialect, frame)
      if (kind.kind === 'delta') text += kind.text
      else if (kind.kind === 'final') complete = true
      else if (kind.kind === 'error') throw new Error(kind.message)
    }
  } else {
    ;({ text, complete } = readJsonAnswer(check.dialect, await res.json()))
  }
  if (!complete || !text.startsWith(check.text)) throw new Error(`incomplete or wrong answer: ${text.slice(0, 80)}`)
}

/** CPU µs a request over `count` requests, `connections` in flight at a time. */
async function measure(count: number, connections: number, one: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage()
  let started = 0
  const worker = async () => {
    while (started < count) {
      started++
      await one()
    }
  }
  await Promise.all(Array.from({ length: connections }, worker))
  // The last requests' ledger writes (the commit window) belong to this round.
  await Bun.sleep(20)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / count
}

/**
 * JS heap cells (objects, strings, closures, promises…) a request allocates, its ledger write
 * included, counted in a window without a collection: bun:jsc's heapStats counts every cell not
 * yet collected, so the difference is what the window allocated, less what counting and waiting
 * make (a window of no requests). Unlike CPU time it does not depend on the machine (processes
 * agree to a few cells), and what is allocated is what the collector later stops the event loop
 * for. The first window after the timed round is thrown away: it also pays for one-off work (the
 * caches reloaded after the checkpointer restarted the WAL). A window in which a collection ran (a weakly held
 * object is gone, or fewer Request objects than requests are counted) is tried again with fewer
 * requests; undefined when none stays clear.
 */
async function newCellsPerRequest(count: number, connections: number, one: () => Promise<void>) {
  const cellsNow = () => {
    const counts = heapStats().objectTypeCounts
    let cells = 0
    for (const n of Object.values(counts)) cells += n
    return { cells, requests: counts.Request ?? 0 }
  }
  const windowCells = async (requests: number) => {
    Bun.gc(true)
    const canary = new WeakRef({})
    // A weak reference's target is kept until the current task ends: start the window after it.
    await Bun.sleep(0)
    const before = cellsNow()
    let started = 0
    const worker = async () => {
      while (started < requests) {
        started++
        await one()
      }
    }
    await Promise.all(Array.from({ length: Math.min(connections, requests) }, worker))
    // The requests' ledger writes (the commit window) belong to them, as in measure().
    await Bun.sleep(20)
    const after = cellsNow()
    // Each request makes one Request object: fewer counted means some were collected.
    const clear = canary.deref() !== undefined && after.requests - before.requests >= requests
    return clear ? after.cells - before.cells : undefined
  }
  const overhead = await windowCells(0)
  await windowCells(count)
  for (let requests = count; requests >= 4 && overhead !== undefined; requests = Math.floor(requests / 2)) {
    const cells = await windowCells(requests)
    if (cells !== undefined) return (cells - overhead) / requests
  }
  return undefined
}

/** What a measuring process reports. */
interface Result {
  cpuMicros: number
  cells: number | undefined
}

interface Row {
  scenario: string
  label: string
  withLedger: Result[]
  withoutLedger: Result[]
}

/** What one measuring process does: a scenario, with or without the ledger write. */
interface Measurement {
  scenario: string
  withLedger: boolean
  simUrl: string
}

const plan = () => phases({ slowStream: 'sim-stream-10x200ms', slowStreamChunks: 10 })

/** The scenarios measured here, with svc's endpoint and the phase they belong to. */
function scenariosToMeasure() {
  return plan().flatMap((phase) =>
    phase.scenarios.flatMap((scenario) => {
      const endpoint = scenario.endpoints.find((e) => e.target === 'svc')
      const upstream = phase.models.find((m) => m.profile === endpoint?.model)?.upstream ?? ''
      // A paced upstream is only time, and time is not measured here.
      if (!endpoint || upstream.startsWith('sim-wait')) return []
      if (only && !only.includes(scenario.id)) return []
      return [{ phase, scenario, endpoint }]
    }),
  )
}

/** In a process of its own: one gateway on a fresh database, checked, warmed up, then measured. */
async function measureOne(m: Measurement): Promise<Result> {
  const found = scenariosToMeasure().find((s) => s.scenario.id === m.scenario)
  if (!found) throw new Error(`no scenario ${m.scenario}`)
  const { phase, scenario, endpoint } = found
  const gateway = await startGateway(phase, m.simUrl, replayingFetch(), m.withLedger)
  try {
    const req = buildRequest(endpoint, scenario, { sim: m.simUrl, svc: 'http://svc.bench', svcKey: gateway.key })
    const send = () =>
      gateway.app.handle(new Request(req.url, { method: 'POST', headers: req.headers, body: req.body }))
    await checkExchange(send, {
      dialect: endpoint.dialect,
      stream: scenario.stream,
      text: expectedText(endpoint, phase),
    })
    const count = scenario.stream ? streamsPerRound : perRound
    const one = () => exchange(send)
    // Four times the measured count first. The JIT's tiers settle within one; the ledger takes
    // ~40,000 requests: until the first wrap the WAL file grows, and growing it costs the kernel
    // (in a fresh process, 66 → 49 → 35 µs a request over the first 32,000, sys time 11 → 2 µs).
    await measure(warmUpRounds * count, scenario.connections, one)
    const cpuMicros = await measure(count, scenario.connections, one)
    // After the timed round: a forced collection must not land in it.
    const cells = await newCellsPerRequest(scenario.stream ? 40 : 200, scenario.connections, one)
    return { cpuMicros, cells }
  } finally {
    gateway.close()
  }
}

const resultMarker = 'BENCH_PATH_RESULT '

/**
 * Each measurement runs in a fresh process (pinned like its parent): run in one process, one
 * variant's garbage was collected during the other's rounds, and the ledger write read as half
 * of what it costs.
 */
async function spawnMeasurement(m: Measurement): Promise<Result> {
  const child = Bun.spawn([process.execPath, import.meta.path], {
    env: { ...process.env, BENCH_PATH_CHILD: JSON.stringify(m) },
    stdout: 'pipe',
    stderr: 'inherit',
  })
  const out = await new Response(child.stdout).text()
  if ((await child.exited) !== 0) throw new Error(`measuring ${m.scenario} failed: ${out.slice(-500)}`)
  const line = out.split('\n').find((l) => l.startsWith(resultMarker))
  if (!line) throw new Error(`measuring ${m.scenario} printed no result: ${out.slice(-500)}`)
  return JSON.parse(line.slice(resultMarker.length)) as Result
}

async function main() {
  if (canPin()) pinSelf(0)
  const sim = startSimulator({ apiKey: simKeyEnv.SVC_BENCH_SIM_KEY })
  const rows: Row[] = []
  try {
    for (const { scenario, endpoint } of scenariosToMeasure()) {
      const row: Row = { scenario: scenario.id, label: endpoint.label, withLedger: [], withoutLedger: [] }
      for (let round = 0; round < rounds; round++) {
        // Alternating, so that neither variant gets the warmer machine.
        for (const withLedger of round % 2 === 0 ? [true, false] : [false, true]) {
          const result = await spawnMeasurement({ scenario: scenario.id, withLedger, simUrl: sim.url })
          ;(withLedger ? row.withLedger : row.withoutLedger).push(result)
        }
      }
      rows.push(row)
      console.log(describe(row))
    }
  } finally {
    await sim.stop()
  }
  console.log(`\n${table(rows)}`)
}

const fmt = (values: number[], pick: (v: number[]) => number) => pick(values).toFixed(1)
const min = (values: number[]) => Math.min(...values)
const cpuOf = (results: Result[]) => results.map((r) => r.cpuMicros)
/** The processes' counts agree to within a few cells; the median, or "—" if no window stayed clear. */
const cellsOf = (results: Result[]) => {
  const counts = results.flatMap((r) => (r.cells === undefined ? [] : [r.cells]))
  return counts.length === 0 ? '—' : median(counts).toFixed(0)
}

function describe(row: Row): string {
  const [withLedger, without] = [cpuOf(row.withLedger), cpuOf(row.withoutLedger)]
  return `${row.scenario}: ${fmt(withLedger, min)} µs a request (median ${fmt(withLedger, median)}), without the ledger write ${fmt(without, min)} (${fmt(without, median)}); JS heap cells a request ${cellsOf(row.withLedger)} (${cellsOf(row.withoutLedger)})`
}

function table(rows: Row[]): string {
  const lines = [
    `CPU µs a request in process (min of ${rounds} rounds, a process each; median), canned upstream answers, pinned: ${canPin()}`,
    '',
    '| scenario | svc | without the ledger write | the ledger write | JS heap cells a request (without the ledger write) |',
    '| --- | --- | --- | --- | --- |',
  ]
  for (const row of rows) {
    const [withLedger, without] = [cpuOf(row.withLedger), cpuOf(row.withoutLedger)]
    const ledger = min(withLedger) - min(without)
    const share = (100 * ledger) / min(withLedger)
    lines.push(
      `| ${row.scenario} (${row.label}) | ${fmt(withLedger, min)} (${fmt(withLedger, median)}) | ${fmt(without, min)} (${fmt(without, median)}) | ${ledger.toFixed(1)} (${share.toFixed(0)} %) | ${cellsOf(row.withLedger)} (${cellsOf(row.withoutLedger)}) |`,
    )
  }
  return lines.join('\n')
}

const child = process.env.BENCH_PATH_CHILD
if (child) console.log(`${resultMarker}${JSON.stringify(await measureOne(JSON.parse(child) as Measurement))}`)
else await main()
process.exit(0)
