// The property tests' one convention: a fixed seed, so that CI's run is the same every time, and
// a longer hunt for new failures from the environment:
//   SVC_FUZZ_SEED=<any integer> SVC_FUZZ_SCALE=20 bun test <file>
import { setDefaultTimeout } from 'bun:test'
import fc from 'fast-check'

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

/**
 * Holds when `play` finds no problem in any generated plan. A failure shrinks (no endOnFailure in
 * `options`): its report is the smallest plan that still breaks, with what broke.
 */
export async function assertNoProblems<Plan>(
  plans: fc.Arbitrary<Plan>,
  play: (plan: Plan) => Promise<string[]>,
  options: fc.Parameters<[Plan]>,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(plans, async (plan) => {
      const problems = await play(plan)
      if (problems.length === 0) return
      throw new Error(`${problems.join('\n')}\n  plan: ${JSON.stringify(plan)}`)
    }),
    options,
  )
}
