import { describe, expect, test } from 'bun:test'
import { budgetUnder, effortWithin, effortWithoutThinking, isReasoningEffort } from './thinking-budget'

describe('effortWithin', () => {
  const gpt51 = ['low', 'medium', 'high'] as const
  const gpt6 = ['low', 'medium', 'high', 'xhigh', 'max'] as const

  test('an effort the model takes, or any effort for a model without a list, goes as asked; none to a model that takes none', () => {
    expect(effortWithin('medium', gpt51)).toBe('medium')
    expect(effortWithin('max', undefined)).toBe('max')
    expect(effortWithin('max', [])).toBeUndefined()
  })

  test("above the model's range: its highest; below: its lowest; between: the nearest below", () => {
    expect(effortWithin('xhigh', gpt51)).toBe('high')
    expect(effortWithin('max', gpt51)).toBe('high')
    expect(effortWithin('minimal', gpt6)).toBe('low')
    expect(effortWithin('high', ['low', 'max'])).toBe('low')
    // The list's order does not matter.
    expect(effortWithin('max', ['high', 'minimal', 'medium'])).toBe('high')
  })

  test('none is never the nearest to an effort: a model that takes none and low gets low for minimal', () => {
    expect(effortWithin('minimal', ['none', 'low', 'medium', 'high'])).toBe('low')
    expect(effortWithin('high', ['none', 'low'])).toBe('low')
    expect(effortWithin('high', ['none'])).toBeUndefined()
  })

  test('only the efforts svc knows are raw efforts (a pass-through body may carry anything)', () => {
    expect(isReasoningEffort('xhigh')).toBe(true)
    expect(isReasoningEffort('none')).toBe(false)
    expect(isReasoningEffort('constructor')).toBe(false)
    expect(isReasoningEffort(3)).toBe(false)
  })
})

describe('effortWithoutThinking', () => {
  test('none where the model takes it, else minimal, else nothing (its default, or a list svc does not know)', () => {
    expect(effortWithoutThinking(['none', 'low', 'medium', 'high'])).toBe('none')
    expect(effortWithoutThinking(['minimal', 'low', 'medium', 'high'])).toBe('minimal')
    expect(effortWithoutThinking(['high', 'max'])).toBeUndefined()
    expect(effortWithoutThinking([])).toBeUndefined()
    expect(effortWithoutThinking(undefined)).toBeUndefined()
  })
})

describe('budgetUnder', () => {
  test('a budget under max_tokens as asked; else max_tokens − 1, down to 1,024, the least Anthropic takes; below it, none', () => {
    expect(budgetUnder(2000, 4000)).toBe(2000)
    expect(budgetUnder(4000, 4000)).toBe(3999)
    expect(budgetUnder(2000, 1025)).toBe(1024)
    expect(budgetUnder(2000, 1024)).toBeUndefined()
  })
})
