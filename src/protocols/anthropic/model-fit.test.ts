import { describe, expect, test } from 'bun:test'
import { type AnthropicModelRules, fitToModel } from './model-fit'

const sonnet45: AnthropicModelRules = {}
const sonnet55: AnthropicModelRules = {
  adaptiveThinking: true,
  budgetThinking: false,
  thinkingOff: 'between_tools',
  samplingParameters: false,
}
const opus55: AnthropicModelRules = { ...sonnet55, thinkingOff: 'unsupported' }
const base = { model: 'm', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] }

describe('fitToModel', () => {
  test('a body the model takes is returned as it is, not copied', () => {
    const body = { ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }
    expect(fitToModel(body, sonnet55)).toBe(body)
    const old = { ...base, max_tokens: 4096, temperature: 0.5, thinking: { type: 'enabled', budget_tokens: 2048 } }
    expect(fitToModel(old, sonnet45)).toBe(old)
  })

  test('adaptive for a model without it: the effort as a budget, max_tokens above it, the effort gone', () => {
    const body = {
      ...base,
      thinking: { type: 'adaptive', display: 'summarized' },
      output_config: { effort: 'high', format: { type: 'json_schema', schema: {} } },
    }
    expect(fitToModel(body, sonnet45)).toEqual({
      ...base,
      max_tokens: 5096,
      thinking: { type: 'enabled', display: 'summarized', budget_tokens: 4096 },
      output_config: { format: { type: 'json_schema', schema: {} } },
    })
  })

  describe('a budget stays below max_tokens, which stays within the model’s output', () => {
    /** Fitted to a model whose output stops at 4,000 tokens. */
    const limited = (body: Record<string, unknown>) => fitToModel(body, sonnet45, 4000)
    const budget = (maxTokens: number, budgetTokens: number) => ({
      ...base,
      max_tokens: maxTokens,
      thinking: { type: 'enabled', budget_tokens: budgetTokens },
    })

    test('at or above max_tokens: max_tokens − 1', () => {
      expect(limited(budget(4000, 40_000))).toEqual(budget(4000, 3999))
      expect(limited(budget(2048, 2048))).toEqual(budget(2048, 2047))
    })

    test('where max_tokens − 1 is below the least budget, 1,024: no thinking', () => {
      expect(limited(budget(1024, 1024))).toEqual({ ...base, max_tokens: 1024 })
    })

    test('adaptive as a budget: max_tokens raised over it only as far as the model’s limit', () => {
      const adaptive = { ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } }
      expect(limited(adaptive)).toEqual(budget(4000, 3999))
      expect(fitToModel(adaptive, sonnet45, 64_000)).toEqual(budget(5096, 4096))
    })

    test('a budget under max_tokens, within the limit, is left as it is', () => {
      const body = budget(4000, 2048)
      expect(limited(body)).toBe(body)
    })
  })

  test("a budget for a model that refuses one: adaptive with the budget's effort, or the client's own", () => {
    const budget = (n: number) => ({ ...base, thinking: { type: 'enabled', budget_tokens: n } })
    expect(fitToModel(budget(1024), sonnet55)).toEqual({
      ...base,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'low' },
    })
    expect(fitToModel(budget(31_999), sonnet55)).toMatchObject({ output_config: { effort: 'high' } })
    const named = { ...budget(1024), output_config: { effort: 'max' } }
    expect(fitToModel(named, sonnet55)).toMatchObject({
      thinking: { type: 'adaptive' },
      output_config: { effort: 'max' },
    })
  })

  test('thinking off: between_tools where the model offers it, left out where the model always thinks', () => {
    const off = { ...base, thinking: { type: 'disabled' } }
    expect(fitToModel(off, sonnet55)).toEqual({ ...base, thinking: { type: 'between_tools' } })
    expect(fitToModel(off, opus55)).toEqual(base)
    expect(fitToModel(off, sonnet45)).toBe(off)
    // between_tools is refused above effort high: such a request thinks adaptively.
    const offAtMax = { ...off, output_config: { effort: 'max' } }
    expect(fitToModel(offAtMax, sonnet55)).toEqual({ ...base, output_config: { effort: 'max' } })
  })

  test("an effort outside the model's list goes as the nearest it takes; one svc does not know, as sent", () => {
    const rules: AnthropicModelRules = { ...sonnet55, reasoningEfforts: ['low', 'medium', 'high'] }
    const body = {
      ...base,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'max', format: { type: 'json_schema' } },
    }
    expect(fitToModel(body, rules)).toEqual({
      ...base,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high', format: { type: 'json_schema' } },
    })
    const unknown = { ...base, output_config: { effort: 'ultra' } }
    expect(fitToModel(unknown, rules)).toBe(unknown)
    const within = { ...base, output_config: { effort: 'medium' } }
    expect(fitToModel(within, rules)).toBe(within)
  })

  test('an effort for a model that takes none (the 4.5 generation) is left out, the rest of output_config kept', () => {
    const none: AnthropicModelRules = { reasoningEfforts: [] }
    const body = { ...base, output_config: { effort: 'high', format: { type: 'json_schema' } } }
    expect(fitToModel(body, none)).toEqual({ ...base, output_config: { format: { type: 'json_schema' } } })
    expect(fitToModel({ ...base, output_config: { effort: 'ultra' } }, none)).toEqual(base)
    // With adaptive thinking the effort first sets the budget, as before.
    const adaptive = { ...base, thinking: { type: 'adaptive' }, output_config: { effort: 'low' } }
    expect(fitToModel(adaptive, none)).toEqual({
      ...base,
      max_tokens: 2024,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    })
  })

  test('sampling parameters are left out for a model that refuses them, kept for one that takes them', () => {
    const body = { ...base, temperature: 0.2, top_p: 0.9, top_k: 5, stop_sequences: ['END'] }
    expect(fitToModel(body, sonnet55)).toEqual({ ...base, stop_sequences: ['END'] })
    expect(fitToModel(body, sonnet45)).toBe(body)
  })
})
