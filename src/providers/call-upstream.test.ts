import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../lib/errors'
import { withIdleTimeout } from './call-upstream'

/** Yields each value after its delay; ignores aborts, like a body that never notices. */
async function* paced(delaysMs: number[]) {
  for (const [i, ms] of delaysMs.entries()) {
    await Bun.sleep(ms)
    yield i
  }
}

const drain = async (source: AsyncIterable<number>, perItemMs = 0) => {
  const got: number[] = []
  for await (const v of source) {
    got.push(v)
    if (perItemMs) await Bun.sleep(perItemMs)
  }
  return got
}

describe('withIdleTimeout', () => {
  test('passes a steady stream through, however long it lasts in all', async () => {
    let timedOut = false
    const got = await drain(withIdleTimeout(paced([20, 20, 20, 20, 20, 20]), 60, () => (timedOut = true)))
    expect(got).toEqual([0, 1, 2, 3, 4, 5])
    expect(timedOut).toBe(false)
  })

  test('ends a stream silent past the limit with a retryable timeout, and calls onTimeout', async () => {
    let timedOut = false
    const started = performance.now()
    const error = await drain(withIdleTimeout(paced([10, 10, 500]), 80, () => (timedOut = true))).catch((e) => e)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ kind: 'timeout', retryable: true })
    expect(timedOut).toBe(true)
    // Silent from ~20 ms: ends at ~100 ms, not when the source would have gone on.
    expect(performance.now() - started).toBeLessThan(400)
  })

  test('a consumer slow to take each item is not upstream silence', async () => {
    let timedOut = false
    const got = await drain(
      withIdleTimeout(paced([5, 5, 5, 5]), 60, () => (timedOut = true)),
      100,
    )
    expect(got).toEqual([0, 1, 2, 3])
    expect(timedOut).toBe(false)
  })
})
