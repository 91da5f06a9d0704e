// Claude Haiku 5.5 is priced by prompt length: a request whose prompt (input, cache reads and
// cache writes) is over 100,000 tokens pays the dearer tier on every token, output included. The
// leg's cost, the request's total and the grant's remaining amount follow the tier the upstream's
// reported usage reaches, streamed or not.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { createHarness, remainingNanos, requestDetail, sdkClients } from './support/harness'
import { simClaude } from './support/sim-models'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-long-prompt'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

/** Haiku 5.5's list prices: USD/Mtok 0.1 / 0.5 / 0.01 / 0.125, and 0.5 / 2.5 / 0.05 / 0.625 above 100,000. */
const tiered = simClaude({
  id: 'claude-tiered',
  upstream_model: 'claude-tiered-up',
  input_usd_per_mtok: 0.1,
  output_usd_per_mtok: 0.5,
  cache_read_usd_per_mtok: 0.01,
  cache_write_usd_per_mtok: 0.125,
  long_prompt: {
    above_tokens: 100_000,
    input_usd_per_mtok: 0.5,
    output_usd_per_mtok: 2.5,
    cache_read_usd_per_mtok: 0.05,
    cache_write_usd_per_mtok: 0.625,
  },
})

const gateway = () =>
  createHarness({
    grantUsd: 5,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
      models: [tiered],
    },
  })

const ask = { model: 'svc-max', max_tokens: 256, messages: [{ role: 'user' as const, content: 'summarise' }] }

describe('a model priced by prompt length', () => {
  test.each([
    // 100,000 prompt tokens exactly: the base tier.
    ['at the threshold', { input: 40_000, cacheRead: 50_000, cacheWrite: 10_000, output: 1_000 }, [100, 10, 125, 500]],
    // One token more: every token at the long-prompt tier, output included.
    ['one token over', { input: 40_001, cacheRead: 50_000, cacheWrite: 10_000, output: 1_000 }, [500, 50, 625, 2500]],
  ])('%s (stream and not)', async (_name, usage, [input, cacheRead, cacheWrite, output]) => {
    const expected =
      usage.input * input! + usage.cacheRead * cacheRead! + usage.cacheWrite * cacheWrite! + usage.output * output!
    for (const stream of [false, true]) {
      const h = await gateway()
      const before = await remainingNanos(h)
      sim.setScenario('claude-tiered-up', { text: 'A summary.', usage })
      const { anthropic } = sdkClients(h)
      const message = stream
        ? await anthropic.messages.stream(ask).finalMessage()
        : await anthropic.messages.create(ask)
      const detail = await requestDetail(h, message.id.replace(/^msg_/, ''))
      expect(detail.usage_events[0]).toMatchObject({
        input_tokens: usage.input,
        cached_input_tokens: usage.cacheRead,
        cache_creation_input_tokens: usage.cacheWrite,
        output_tokens: usage.output,
        cost_nanos: expected,
        charged_nanos: expected,
      })
      expect(await remainingNanos(h)).toBe(before - expected)
    }
  })
})
