// The usage a property suite's simulated answer reports: mostly small counts, zeros common (but never
// a whole prompt of none), some web searches, and of the cache writes none, some or all for an hour.
import fc from 'fast-check'
import type { SimUsage } from './simulator'

/** `leastOutput`: the fewest output tokens an answer reports (a suite that needs text in every answer says 1). */
export const simUsage = (leastOutput: 0 | 1): fc.Arbitrary<Required<SimUsage>> =>
  fc
    .record({
      input: fc.oneof(fc.constant(0), fc.nat({ max: 2000 })),
      cacheRead: fc.oneof(fc.constant(0), fc.nat({ max: 10_000 })),
      cacheWrite: fc.oneof(fc.constant(0), fc.nat({ max: 3000 })),
      hourShare: fc.constantFrom(0, 0, 0.5, 1),
      output: fc.oneof(fc.constant(leastOutput), fc.nat({ max: 600 })),
      reasoning: fc.constant(0),
      webSearches: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, fc.integer({ min: 1, max: 2 })),
    })
    // A real prompt is a token at least: one reported as none is estimated (credible-usage.ts).
    .map(({ hourShare, ...u }) => ({
      ...u,
      input: u.input + u.cacheRead + u.cacheWrite === 0 ? 1 : u.input,
      cacheWrite1h: Math.floor(u.cacheWrite * hourShare),
    }))
