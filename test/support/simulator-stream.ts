// Sends a list of SSE frames as a truly streamed body: one enqueue per network piece, optional
// pacing between content deltas, stream faults applied at frame boundaries, and network pieces cut
// mid-line, mid-UTF-8 or per byte so the gateway's SSE parser meets awkward boundaries.

import type { Frame, Scenario, SimSplit } from './simulator-plan'

const encoder = new TextEncoder()

/** Resolves after `ms`, or at once when `signal` aborts; never rejects. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}

const NEWLINE = 0x0a

/** A cut point inside a line: near the middle, never right before or after a newline. */
function midLine(bytes: Uint8Array): number {
  let at = Math.floor(bytes.length / 2)
  while (at > 1 && (bytes[at] === NEWLINE || bytes[at - 1] === NEWLINE)) at--
  return at
}

/** Cuts inside the first multi-byte character (after its lead byte); mid-line when there is none. */
function midUtf8(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length; i++) if ((bytes[i] ?? 0) >= 0xc0) return i + 1
  return midLine(bytes)
}

export function splitBytes(bytes: Uint8Array, split: SimSplit | undefined): Uint8Array[] {
  if (!split || bytes.length < 2) return [bytes]
  if (split === 'per-byte') return Array.from(bytes, (_, i) => bytes.subarray(i, i + 1))
  const at = split === 'mid-utf8' ? midUtf8(bytes) : midLine(bytes)
  return [bytes.subarray(0, at), bytes.subarray(at)]
}

/**
 * Lets the server flush the previous piece as its own write before the next one is queued. A zero
 * timer reliably separates writes but costs ~1 ms, too slow per byte; setImmediate separates most.
 */
const flushTimer = () => new Promise<void>((resolve) => setTimeout(resolve, 0))
const flushImmediate = () => new Promise<void>((resolve) => setImmediate(resolve))

/**
 * How long to wait before the next paced delta. Deltas are paced against the clock — the k-th
 * after the first is due k × delay after it — as a model's tokens come at its own pace whoever
 * reads them. A sleep of `delay` from the previous send instead gathered this process's event-loop
 * lag at every gap: 0.4–0.9 ms per 5 ms gap under `make bench` load, so a 20-delta stream took
 * 101–117 ms where 95 were paced, and the drift (larger when the reader sat on the other core)
 * was charged to whatever stood in front of the simulator. A late delta catches up, but no gap
 * shrinks below half the delay: nothing arrives close enough to the previous one to read as
 * batching.
 */
export function pacedWaitMs(firstPacedAt: number, pacedSince: number, delay: number, now: number): number {
  return Math.max(delay / 2, firstPacedAt + pacedSince * delay - now)
}

const RESET = Symbol('reset')
type Piece = Uint8Array | typeof RESET

export interface StreamHooks {
  errorFrame: (seq: number) => Frame
  malformedFrame: () => Frame
  /** The body ended on the server's terms (completed, cut or reset): later disconnects are not aborts. */
  onFinish: () => void
}

async function* pieces(frames: Frame[], scenario: Scenario, signal: AbortSignal, hooks: StreamHooks) {
  const fault = scenario.fault
  const delay = scenario.chunkDelayMs ?? 0
  let list = frames
  let stopAfter = list.length
  let reset = false
  if (fault?.kind === 'cut' || fault?.kind === 'reset') {
    stopAfter = Math.min(fault.afterFrames, list.length)
    reset = fault.kind === 'reset'
  } else if (fault?.kind === 'error_event') {
    // The provider's in-band error ends the stream: nothing follows it.
    const at = Math.min(fault.afterFrames, list.length)
    list = [...list.slice(0, at), hooks.errorFrame(at)]
    if (fault.oneRead) list = [{ text: list.map((frame) => frame.text).join(''), paced: false }]
    stopAfter = list.length
  } else if (fault?.kind === 'malformed') {
    const at = Math.min(fault.afterFrames, list.length)
    list = [...list.slice(0, at), hooks.malformedFrame(), ...list.slice(at)]
    stopAfter = list.length
  }

  const flush = scenario.split === 'per-byte' ? flushImmediate : flushTimer
  /** When the first paced delta went out, and how many have since. */
  let firstPacedAt: number | undefined
  let pacedSince = 0
  for (let i = 0; i < stopAfter; i++) {
    const frame = list[i]!
    if (frame.paced && delay > 0) {
      // Pace between deltas, not before the first one: N chunks take about (N-1) × delay.
      if (firstPacedAt === undefined) firstPacedAt = performance.now()
      else {
        pacedSince++
        await sleep(pacedWaitMs(firstPacedAt, pacedSince, delay, performance.now()), signal)
      }
    }
    if (signal.aborted) return
    const parts = splitBytes(encoder.encode(frame.text), scenario.split)
    for (let p = 0; p < parts.length; p++) {
      if (p > 0) await flush()
      if (signal.aborted) return
      yield parts[p]! as Piece
    }
  }
  if (reset) yield RESET as Piece
}

export const sseHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  'x-accel-buffering': 'no',
}

/** A ReadableStream over the frames; cancelled by the client's disconnect through `signal`'s owner. */
export function streamFrames(
  frames: Frame[],
  scenario: Scenario,
  signal: AbortSignal,
  hooks: StreamHooks,
  onCancel: () => void,
): ReadableStream<Uint8Array> {
  const it = pieces(frames, scenario, signal, hooks)
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next()
      if (signal.aborted) return
      if (next.done) {
        hooks.onFinish()
        controller.close()
      } else if (next.value === RESET) {
        hooks.onFinish()
        // Erroring the body makes Bun drop the connection mid-chunk: the client sees ECONNRESET.
        // No reason given, so Bun does not log it as an unhandled error.
        controller.error()
      } else {
        controller.enqueue(next.value)
      }
    },
    cancel() {
      onCancel()
      void it.return(undefined)
    },
  })
}

/** The bytes of a stream cut in half mid-frame, for `truncated_json` on a streaming request. */
export function truncatedStream(frames: Frame[]): Uint8Array {
  const all = encoder.encode(frames.map((f) => f.text).join(''))
  return all.subarray(0, Math.floor(all.length / 2))
}
