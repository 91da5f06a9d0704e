import { describe, expect, test } from 'bun:test'
import { incredibleCounts } from '../../relay/credible-usage'
import { anthropicUsage, anthropicUsagePartial, encodeAnthropicUsage } from './usage'

/** A usage object as Anthropic sends it, its cache writes split by TTL. */
const split = {
  input_tokens: 12,
  cache_creation_input_tokens: 1000,
  cache_read_input_tokens: 3000,
  cache_creation: { ephemeral_5m_input_tokens: 300, ephemeral_1h_input_tokens: 700 },
  output_tokens: 40,
}

describe('anthropicUsage: 1-hour cache writes', () => {
  test('the split gives the 1-hour part of the cache writes', () => {
    expect(anthropicUsage(split)).toEqual({
      input: 12,
      cacheRead: 3000,
      cacheWrite: 1000,
      cacheWrite1h: 700,
      output: 40,
      reasoning: 0,
    })
    expect(anthropicUsagePartial({ cache_creation: { ephemeral_1h_input_tokens: 5 } })).toEqual({ cacheWrite1h: 5 })
  })

  test('without a split (or its 1-hour count) none is reported: every write costs the 5-minute price', () => {
    const { cache_creation: _, ...unsplit } = split
    expect(anthropicUsage(unsplit)).toEqual({ input: 12, cacheRead: 3000, cacheWrite: 1000, output: 40, reasoning: 0 })
    expect(anthropicUsage({ ...split, cache_creation: { ephemeral_5m_input_tokens: 1000 } })).not.toHaveProperty(
      'cacheWrite1h',
    )
    expect(anthropicUsage({ ...split, cache_creation: null })).not.toHaveProperty('cacheWrite1h')
  })

  test('a split that is no part of the writes is read as sent, and no count the leg may be billed by', () => {
    const over = anthropicUsage({ ...split, cache_creation: { ephemeral_1h_input_tokens: 1001 } })
    expect(over.cacheWrite1h).toBe(1001)
    expect(incredibleCounts(over)).toEqual(['cacheWrite1h', 'input', 'cacheRead', 'cacheWrite'])
    const negative = anthropicUsage({ ...split, cache_creation: { ephemeral_1h_input_tokens: -700 } })
    expect(incredibleCounts(negative)).toEqual(['cacheWrite1h', 'input', 'cacheRead', 'cacheWrite'])
    // All of the writes for an hour is a split, and a credible one.
    expect(incredibleCounts(anthropicUsage({ ...split, cache_creation: { ephemeral_1h_input_tokens: 1000 } }))).toEqual(
      [],
    )
  })
})

describe('encodeAnthropicUsage: 1-hour cache writes', () => {
  test('the split goes out where the usage has a 1-hour part, as Anthropic sends it', () => {
    expect(encodeAnthropicUsage(anthropicUsage(split))).toEqual(split)
  })

  test('without one the usage is encoded as before: no cache_creation', () => {
    const usage = { input: 12, cacheRead: 3000, cacheWrite: 1000, output: 40, reasoning: 0 }
    expect(encodeAnthropicUsage(usage)).not.toHaveProperty('cache_creation')
    expect(encodeAnthropicUsage({ ...usage, cacheWrite1h: 0 })).not.toHaveProperty('cache_creation')
  })
})
