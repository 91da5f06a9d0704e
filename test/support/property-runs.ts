// The property tests' one convention: a fixed seed, so that CI's run is the same every time, and
// a longer hunt for new failures from the environment:
//   SVC_FUZZ_SEED=<any integer> SVC_FUZZ_SCALE=20 bun test <file>
import { setDefaultTimeout } from 'bun:test'

/**
 * The seed and scale for a file whose own seed is `defaultSeed`, and fast-check's options for a
 * property of `numRuns` runs at scale 1. Each test's time limit grows with the scale.
 */
export function propertyRuns(defaultSeed: number) {
  const seed = Number(process.env.SVC_FUZZ_SEED ?? defaultSeed)
  const scale = Number(process.env.SVC_FUZZ_SCALE ?? 1)
  setDefaultTimeout(60_000 * scale)
  const options = (numRuns: number) => ({ seed, numRuns: Math.max(1, Math.round(numRuns * scale)) })
  return { seed, scale, options }
}
