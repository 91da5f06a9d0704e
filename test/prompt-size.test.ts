// End to end: the prompt size the router weighs against context windows. Characters ÷ 4 is 2–3 ×
// low for JSON and CJK text; where that could change the decision (the rough size, tripled, comes
// near a window) the tokenizer counts the prompt, so a model whose window the prompt overflows is
// passed over rather than tried and refused, and an open output is sized by the count.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { ModelSection } from '../src/config/schema'
import { createHarness, type Harness, requestDetail } from './support/harness'
import { simProviders } from './support/sim-models'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const model = (id: string, provider: string, over: Partial<ModelSection>): ModelSection => ({
  id,
  provider,
  upstream_model: `${id}-up`,
  profiles: ['pro'],
  quality: 80,
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 2,
  ...over,
})

const gateway = (models: ModelSection[]): Promise<Harness> =>
  createHarness({
    grantUsd: 50,
    env: { SIM_KEY },
    config: { catalog: { builtin: false }, providers: simProviders(sim.url), models },
  })

/** 100,000 characters of Chinese: 25,000 tokens by characters ÷ 4, ~76,000 to o200k. */
const chinese = '这是一个很长的中文句子，用来测试令牌估计的准确性。'.repeat(4000)

describe('a prompt the rough estimate puts far below its real size', () => {
  test('a model whose window the counted prompt overflows is passed over; one with room serves', async () => {
    const h = await gateway([
      model('small', 'chat', { quality: 95, context_window: 64_000 }),
      model('large', 'anth', { context_window: 200_000 }),
    ])
    sim.queue('large-up', { text: '总结。' })
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: 1000, messages: [{ role: 'user', content: chinese }] },
    })
    expect(res.status).toBe(200)
    expect(sim.requests.map((r) => (r.body as { model: string }).model)).toEqual(['large-up'])
    const record = await requestDetail(h, res.headers.get('x-request-id')!)
    const small = record.provider_ranks.find((r: { model_id: string }) => r.model_id === 'small')
    expect(small.status).toBe('skipped')
    const [, tokens] = /^~(\d+) input tokens do not fit the 64000-token context window$/.exec(small.reason) ?? []
    expect(Number(tokens)).toBeGreaterThan(70_000)
  })

  test('a Responses request without max_output_tokens is given the room the counted prompt leaves', async () => {
    const h = await gateway([model('gpt', 'resp', { context_window: 200_000, max_output_tokens: 128_000 })])
    sim.queue('gpt-up', { text: '总结。' })
    const twice = chinese.repeat(2)
    const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { model: 'svc-pro', input: twice } })
    expect(res.status).toBe(200)
    const sent = (sim.requests[0]!.body as { max_output_tokens: number }).max_output_tokens
    // Characters ÷ 4 (50,000) would have asked for all 128,000, past the window with a ~152,000-token prompt.
    expect(sent).toBeLessThan(45_000)
    expect(sent).toBeGreaterThan(30_000)
  })
})
