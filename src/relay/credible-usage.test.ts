import { describe, expect, test } from 'bun:test'
import { emptyUsage } from '../exchange/types'
import { answerBytes, incredibleCounts, maxCredibleSearches, maxCredibleTokens } from './credible-usage'

describe('incredibleCounts', () => {
  test('whole counts from zero to the bound are credible, web searches absent or counted', () => {
    expect(incredibleCounts(emptyUsage())).toEqual([])
    expect(
      incredibleCounts({
        input: maxCredibleTokens,
        cacheRead: 1,
        cacheWrite: 2,
        output: 3,
        reasoning: 0,
        webSearches: 4,
      }),
    ).toEqual([])
  })

  test('names each count that cannot be one: negative, fractional, past the bound, not a number', () => {
    expect(
      incredibleCounts({ input: -1, cacheRead: 0.5, cacheWrite: maxCredibleTokens + 1, output: 1e300, reasoning: 0 }),
    ).toEqual(['input', 'cacheRead', 'cacheWrite', 'output'])
    expect(incredibleCounts({ ...emptyUsage(), reasoning: Number.NaN, webSearches: -2 })).toEqual([
      'reasoning',
      'webSearches',
    ])
  })

  test('web searches have a bound of their own, far below the tokens', () => {
    expect(incredibleCounts({ ...emptyUsage(), webSearches: maxCredibleSearches })).toEqual([])
    expect(incredibleCounts({ ...emptyUsage(), webSearches: maxCredibleSearches + 1 })).toEqual(['webSearches'])
  })
})

describe('incredibleCounts: the prompt stands or falls whole', () => {
  test("one prompt count that cannot be a count names the others too: the prompt's split is unknown", () => {
    // OpenAI's prompt 10 with 1,000,000 cached tokens: the uncached input comes out negative.
    expect(
      incredibleCounts({ input: 10 - 1_000_000, cacheRead: 1_000_000, cacheWrite: 0, output: 5, reasoning: 0 }),
    ).toEqual(['input', 'cacheRead'])
    expect(incredibleCounts({ input: 10, cacheRead: 0, cacheWrite: -1, output: 5, reasoning: 0 })).toEqual([
      'cacheWrite',
      'input',
    ])
  })

  test('1-hour cache writes are a part of the cache writes: more of them than that, or fewer than none, is no split', () => {
    const usage = { input: 10, cacheRead: 20, cacheWrite: 30, output: 5, reasoning: 0 }
    expect(incredibleCounts({ ...usage, cacheWrite1h: 30 })).toEqual([])
    expect(incredibleCounts({ ...usage, cacheWrite1h: 31 })).toEqual([
      'cacheWrite1h',
      'input',
      'cacheRead',
      'cacheWrite',
    ])
    expect(incredibleCounts({ ...usage, cacheWrite1h: -1 })).toEqual([
      'cacheWrite1h',
      'input',
      'cacheRead',
      'cacheWrite',
    ])
    expect(incredibleCounts({ ...usage, cacheWrite1h: 1.5 })).toEqual([
      'cacheWrite1h',
      'input',
      'cacheRead',
      'cacheWrite',
    ])
    // The writes themselves no count: the split goes with them, named once.
    expect(incredibleCounts({ ...usage, cacheWrite: -30, cacheWrite1h: 5 })).toEqual([
      'cacheWrite',
      'input',
      'cacheRead',
      'cacheWrite1h',
    ])
  })

  test('an output count that cannot be one leaves the prompt alone', () => {
    expect(incredibleCounts({ input: 10, cacheRead: 20, cacheWrite: 0, output: -5, reasoning: 0 })).toEqual(['output'])
  })
})

describe('answerBytes', () => {
  test('counts text, thinking and tool input; not signatures, ids or searches', () => {
    expect(
      answerBytes([
        { type: 'thinking', thinking: 'hmm', signature: 'sig-not-counted' },
        { type: 'text', text: 'hello' },
        { type: 'tool_use', id: 'toolu_1', name: 'get', input: { a: 1 } },
        { type: 'web_search', id: 'srvtoolu_1', query: 'q', outcome: { results: [] } },
      ]),
    ).toBe(3 + 5 + '{"a":1}'.length)
  })

  test('in UTF-8 bytes: a CJK character is three, in text, thinking and tool input alike', () => {
    expect(
      answerBytes([
        { type: 'thinking', thinking: '想', signature: '' },
        { type: 'text', text: '中文' },
        { type: 'tool_use', id: 'toolu_1', name: 'write', input: { t: '字' } },
      ]),
    ).toBe(3 + 6 + '{"t":""}'.length + 3)
  })
})
