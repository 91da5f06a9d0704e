// The open-streams client: opens N SSE streams at once against a slow upstream stream, reads
// each to its end and says how many completed whole, when their first deltas came, and how many
// were streaming at the same moment. Run as its own process (bench/run.ts does, with
// BUN_CONFIG_MAX_HTTP_REQUESTS raised: Bun's fetch keeps at most 256 requests open by default):
//   bun bench/lib/open-streams.ts '<json of OpenStreamsInput>'
import { classifyFrame, type Dialect, type HttpRequest, readSseFrames } from './answers'
import { percentile } from './stats'

export interface OpenStreamsInput {
  request: HttpRequest
  dialect: Dialect
  count: number
  expectDeltas: number
  timeoutMs: number
}

export interface OpenStreamsResult {
  count: number
  completed: number
  failed: number
  errors: string[]
  firstDeltaMs: { p50: number; p99: number; max: number }
  totalMs: { p50: number; max: number }
  wallMs: number
  /** Most streams between their first delta and their end at one time. */
  maxConcurrentStreaming: number
}

export const resultMarker = 'OPEN_STREAMS_JSON '

export async function openStreams(input: OpenStreamsInput): Promise<OpenStreamsResult> {
  const t0 = performance.now()
  let streaming = 0
  let maxStreaming = 0
  const errors: string[] = []
  const firstDelta: number[] = []
  const total: number[] = []
  let completed = 0

  async function one(): Promise<void> {
    let started = false
    let deltas = 0
    let final = false
    try {
      const res = await fetch(input.request.url, {
        method: 'POST',
        headers: input.request.headers,
        body: input.request.body,
        signal: AbortSignal.timeout(input.timeoutMs),
      })
      if (res.status !== 200 || !res.body) throw new Error(`HTTP ${res.status}: ${(await res.text()).slice(0, 200)}`)
      for await (const frame of readSseFrames(res.body)) {
        const k = classifyFrame(input.dialect, frame)
        if (k.kind === 'delta') {
          if (!started) {
            started = true
            streaming++
            maxStreaming = Math.max(maxStreaming, streaming)
            firstDelta.push(frame.at - t0)
          }
          deltas++
        } else if (k.kind === 'final') final = true
        else if (k.kind === 'error') throw new Error(k.message)
      }
      if (!final || deltas !== input.expectDeltas) throw new Error(`incomplete: ${deltas} deltas, final ${final}`)
      completed++
      total.push(performance.now() - t0)
    } catch (err) {
      if (errors.length < 5) errors.push(String(err))
    } finally {
      if (started) streaming--
    }
  }

  await Promise.all(Array.from({ length: input.count }, one))
  return {
    count: input.count,
    completed,
    failed: input.count - completed,
    errors,
    firstDeltaMs: { p50: percentile(firstDelta, 50), p99: percentile(firstDelta, 99), max: Math.max(0, ...firstDelta) },
    totalMs: { p50: percentile(total, 50), max: Math.max(0, ...total) },
    wallMs: performance.now() - t0,
    maxConcurrentStreaming: maxStreaming,
  }
}

if (import.meta.main) {
  const input = JSON.parse(process.argv[2] ?? '{}') as OpenStreamsInput
  const result = await openStreams(input)
  console.log(resultMarker + JSON.stringify(result))
}
