// `make bench-ab`: two svc builds (or one build under two environments) measured at the same time,
// both pinned to the gateway's core and each driven by its own wrk from the other core. Whatever
// else the shared machine does in that minute falls on both alike, so their ratio holds still where
// `make bench`'s figures for one build move by 2× from minute to minute: run against itself, the two
// sides read within ~1–2 % of each other. Fresh processes and databases each round.
//
//   bun bench/side-by-side.ts --a /tmp/svc-old --b dist/svc [--scenario body32k-c64] [--rounds 4]
//   bun bench/side-by-side.ts --b-env BUN_JSC_useConcurrentGC=0        (same build, another setting)
//
// Reports CPU µs a request, requests/s, p50/p99 latency and peak RSS for each side per round, and B ÷ A.
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { checkAnswer } from './lib/answers'
import { canPin, pinSelf, readCpuMs, sampleRss } from './lib/proc'
import { freePort, killAllStarted, type Service, startService, stopService } from './lib/processes'
import { buildRequest, expectedText, phases } from './lib/scenarios'
import { median } from './lib/stats'
import { startSvc } from './lib/svc'
import { ensureWrk, runWrk, type WrkResult, writeWrkScript } from './lib/wrk'

const { values: args } = parseArgs({
  options: {
    a: { type: 'string', default: 'dist/svc' },
    b: { type: 'string', default: 'dist/svc' },
    'a-env': { type: 'string', multiple: true, default: [] },
    'b-env': { type: 'string', multiple: true, default: [] },
    scenario: { type: 'string', default: 'nonstream-c64' },
    rounds: { type: 'string', default: '4' },
    seconds: { type: 'string', default: '6' },
    warm: { type: 'string', default: '5' },
  },
})
const rounds = Number(args.rounds)
const seconds = Number(args.seconds)
const warmSeconds = Number(args.warm)
const [gatewayCore, loadCore] = canPin() ? [0, 1] : [undefined, undefined]

// The knobs name the open-streams test's stream, which this tool does not run.
const found = phases({ slowStream: 'sim-stream-20x250ms', slowStreamChunks: 20 }).flatMap((phase) =>
  phase.scenarios.map((scenario) => ({ phase, scenario })),
)
const picked = found.find((f) => f.scenario.id === args.scenario)
if (!picked) {
  console.error(`unknown scenario ${args.scenario}; one of ${found.map((f) => f.scenario.id).join(', ')}`)
  process.exit(2)
}
const { phase, scenario } = picked
const svcEndpoint = scenario.endpoints.find((e) => e.target === 'svc')!

const envOf = (pairs: string[]) =>
  Object.fromEntries(
    pairs.map((pair) => {
      const eq = pair.indexOf('=')
      if (eq <= 0) {
        console.error(`--a-env and --b-env take NAME=value (got ${pair})`)
        process.exit(2)
      }
      return [pair.slice(0, eq), pair.slice(eq + 1)]
    }),
  )
const work = mkdtempSync(join(tmpdir(), 'svc-bench-ab-'))

/**
 * Each side runs a fresh copy of its binary. An executable's resident pages are the ones the
 * kernel maps around each fault, from what the page cache holds of the file: a binary built an
 * hour earlier, partly evicted, read 3.5–4 MB less RSS than one just built, from the same code
 * (a "regression" of 2–5 MB that a fresh copy of the older binary made vanish: 111 / 111 MB).
 */
const freshCopy = (binary: string, name: string) => {
  const copy = join(work, `svc-${name}`)
  copyFileSync(resolve(binary), copy)
  chmodSync(copy, 0o755)
  return copy
}
const sides = [
  { name: 'A', binary: freshCopy(args.a, 'A'), shown: resolve(args.a), env: envOf(args['a-env']) },
  { name: 'B', binary: freshCopy(args.b, 'B'), shown: resolve(args.b), env: envOf(args['b-env']) },
]
// Every process ends with the run, however it ends: each phase is bounded, and so is the whole.
const watchdog = setTimeout(
  () => {
    console.error('side-by-side: out of time; stopping everything it started')
    killAllStarted()
    process.exit(1)
  },
  (rounds * (warmSeconds + seconds + 40) + 60) * 1000,
)
process.on('SIGINT', () => {
  killAllStarted()
  process.exit(130)
})

interface Reading {
  wrk: WrkResult
  cpuUsPerRequest: number
  peakRssMb: number
}

/** One round: both sides fresh, warmed together, then measured together. */
async function round(simUrl: string, n: number): Promise<Reading[]> {
  const started = await Promise.all(
    sides.map((side) =>
      startSvc({
        name: `svc ${side.name}`,
        binary: side.binary,
        dir: join(work, `${side.name}-${n}`),
        phase,
        simUrl,
        core: gatewayCore,
        env: side.env,
      }),
    ),
  )
  try {
    const scripts = await Promise.all(
      started.map(async ({ service, key }, i) => {
        const req = buildRequest(svcEndpoint, scenario, { sim: simUrl, svc: service.url, svcKey: key })
        const check = await checkAnswer(req, {
          dialect: svcEndpoint.dialect,
          stream: scenario.stream,
          expectText: expectedText(svcEndpoint, phase),
        })
        if (!check.ok) throw new Error(`svc ${sides[i]!.name} answered wrongly: ${check.detail}`)
        return {
          url: req.url,
          script: await writeWrkScript(work, `${sides[i]!.name}-${n}`, { method: 'POST', ...req }, 1e9),
        }
      }),
    )
    const rss = started.map(({ service }) => sampleRss(service.pid))
    const load = (durationSec: number) =>
      Promise.all(scripts.map((s) => runWrk({ ...s, connections: scenario.connections, durationSec, cap: 1e9 })))
    await load(warmSeconds)
    const cpuBefore = started.map(({ service }) => readCpuMs(service.pid))
    const measured = await load(seconds)
    return measured.map((wrk, i) => ({
      wrk,
      cpuUsPerRequest: ((readCpuMs(started[i]!.service.pid) - cpuBefore[i]!) * 1000) / Math.max(1, wrk.requests),
      peakRssMb: rss[i]!.stop() / 2 ** 20,
    }))
  } finally {
    await Promise.all(started.map(({ service }) => stopService(service.proc)))
  }
}

async function main() {
  if (loadCore !== undefined) pinSelf(loadCore)
  ensureWrk(console.log)
  const simPort = await freePort()
  const sim: Service = await startService({
    name: 'upstream simulator',
    cmd: [process.execPath, join(import.meta.dir, 'lib', 'upstream.ts'), '--port', String(simPort)],
    port: simPort,
    logFile: join(work, 'upstream.log'),
  })
  console.log(
    `${scenario.id} (${scenario.connections} connections each), ${rounds} rounds of ${seconds} s after ${warmSeconds} s`,
  )
  for (const side of sides)
    console.log(
      `  ${side.name}: ${side.shown} ${Object.entries(side.env)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    )
  const cpuRatios: number[] = []
  const rssBy: number[][] = [[], []]
  for (let n = 1; n <= rounds; n++) {
    const [a, b] = await round(sim.url, n)
    cpuRatios.push(b!.cpuUsPerRequest / a!.cpuUsPerRequest)
    rssBy[0]!.push(a!.peakRssMb)
    rssBy[1]!.push(b!.peakRssMb)
    const show = (r: Reading) =>
      `${r.cpuUsPerRequest.toFixed(1)} µs, ${Math.round(r.wrk.rps)} req/s, p50/p99 ${r.wrk.latencyMs.p50.toFixed(2)}/${r.wrk.latencyMs.p99.toFixed(2)} ms, ${r.peakRssMb.toFixed(0)} MB${r.wrk.errors.status ? `, ${r.wrk.errors.status} non-2xx` : ''}`
    console.log(`round ${n}: A ${show(a!)} | B ${show(b!)} | B ÷ A CPU ${cpuRatios.at(-1)!.toFixed(3)}`)
  }
  const range = (v: number[]) => `${Math.min(...v).toFixed(3)}–${Math.max(...v).toFixed(3)}`
  console.log(`B ÷ A, CPU a request: median ${median(cpuRatios).toFixed(3)} (${range(cpuRatios)})`)
  console.log(`peak RSS, median MB: A ${median(rssBy[0]!).toFixed(0)}, B ${median(rssBy[1]!).toFixed(0)}`)
  await stopService(sim.proc)
}

main()
  .catch((err) => {
    console.error(`side-by-side: ${err instanceof Error ? err.message : err}`)
    killAllStarted()
    process.exitCode = 1
  })
  .finally(() => {
    clearTimeout(watchdog)
    rmSync(work, { recursive: true, force: true })
  })
