// The shape of one bench run's results (the .json file), and how repeats fold into medians.
import type { OpenStreamsResult } from './open-streams'
import type { Endpoint } from './scenarios'
import type { ProbeSummary } from './sse-probe'
import { type Spread, spread } from './stats'
import type { TargetCheck } from './targets'
import { errorCount, type WrkResult } from './wrk'

export interface LedgerDelta {
  /** Answers wrk counted in warm-up and measurement, and how many of them were 2xx. */
  answered: number
  answeredOk: number
  rowsAdded: number
  completedRowsAdded: number
  /** 2xx answers with no completed row (should be 0). */
  missing: number
  /** Rows written during the measured part, per second. */
  rowsPerSec: number
}

export interface TargetRun {
  repeat: number
  /** Position of this target in the repeat's rotated order. */
  order: number
  warmup?: WrkResult
  measured: WrkResult
  /** Which process the CPU and RSS figures belong to. */
  process: 'svc' | 'portkey' | 'bare relay' | 'upstream simulator'
  cpuUsPerRequest: number
  peakRssBytes: number
  ledger?: LedgerDelta
}

export interface EndpointSummary {
  rps: Spread
  p50Ms: Spread
  p99Ms: Spread
  cpuUsPerRequest: Spread
  peakRssBytes: number
  errors: number
  requests: number
  capped: boolean
  ledgerMissing?: number
  rowsPerSec?: Spread
}

export interface ScenarioResult {
  id: string
  phase: string
  title: string
  connections: number
  durationSec: number
  stream: boolean
  endpoints: Endpoint[]
  portkeyNote?: string
  smoke: Record<string, { ok: boolean; detail: string }>
  runs: Record<string, TargetRun[]>
  summary: Record<string, EndpointSummary>
}

export interface ProbeEntry {
  endpoint: Endpoint
  summary: ProbeSummary
}

export interface OpenStreamsEntry {
  endpoint: Endpoint
  process: TargetRun['process']
  result?: OpenStreamsResult
  error?: string
  peakRssBytes: number
  rssBeforeBytes: number
  ledger?: { completedRowsAdded: number; missing: number }
}

export interface PhaseLedger {
  phase: string
  answered: number
  answeredOk: number
  rows: number
  completedRows: number
  missing: number
}

export interface BenchResults {
  date: string
  quick: boolean
  plan: {
    durationSec: number
    warmupSec: number
    /** Per phase: svc's own warm-up before the phase's first scenario. */
    svcWarmupSec: Record<string, number>
    /** Per phase: svc's warm-up before each later scenario (its own path, not yet compiled). */
    svcScenarioWarmupSec?: Record<string, number>
    repeats: number
    probeStreams: number
    openStreams: number
    slowStream: string
  }
  environment: {
    cores: number
    kernel: string
    bun: string
    node?: string
    wrk: string
    svcCommit: string
    pinned: boolean
    network: string
    svcBinary: string
  }
  portkey: { available: boolean; version?: string; reason?: string }
  svcIdleRssBytes: Record<string, number>
  scenarios: ScenarioResult[]
  probes: ProbeEntry[]
  openStreams: OpenStreamsEntry[]
  ledger: PhaseLedger[]
  targets?: TargetCheck[]
  wallSec: number
}

export function summarizeRuns(runs: TargetRun[]): EndpointSummary {
  const pick = (f: (r: TargetRun) => number) => spread(runs.map(f))
  const ledgered = runs.filter((r) => r.ledger)
  return {
    rps: pick((r) => r.measured.rps),
    p50Ms: pick((r) => r.measured.latencyMs.p50),
    p99Ms: pick((r) => r.measured.latencyMs.p99),
    cpuUsPerRequest: pick((r) => r.cpuUsPerRequest),
    peakRssBytes: Math.max(0, ...runs.map((r) => r.peakRssBytes)),
    errors: runs.reduce((n, r) => n + errorCount(r.measured), 0),
    requests: runs.reduce((n, r) => n + r.measured.requests, 0),
    capped: runs.some((r) => r.measured.capped),
    ledgerMissing: ledgered.length ? ledgered.reduce((n, r) => n + (r.ledger?.missing ?? 0), 0) : undefined,
    rowsPerSec: ledgered.length ? spread(ledgered.map((r) => r.ledger!.rowsPerSec)) : undefined,
  }
}
