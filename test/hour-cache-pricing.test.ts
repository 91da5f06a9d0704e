// A cache write kept an hour costs Anthropic 2 × input, a 5-minute one 1.25 ×. svc priced every
// write at the 5-minute price, so it shortened Claude Code's `ttl: "1h"` marks to 5 minutes: the
// agent lost its cache after every 5-minute pause and paid to write its whole context again. Now a
// model with a 1-hour price (every built-in Claude row) gets the marks as sent, and the leg is
// charged the 1-hour writes at that price; a model without one still gets 5-minute marks.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { createHarness, type Harness, remainingNanos, requestDetail, sdkClients } from './support/harness'
import { simClaude } from './support/sim-models'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-hour-cache'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

/**
 * svc-max: the built-in Claude Opus 4.5 row served by the simulator, its list prices lent by the
 * catalog (USD/Mtok 5 in, 25 out, 6.25 a 5-minute cache write, 10 a 1-hour one). svc-pro: a Claude
 * model configured without a 1-hour price (Claude Sonnet's other prices: 3 in, 15 out, 3.75 a write).
 */
const gateway = (): Promise<Harness> =>
  createHarness({
    grantUsd: 5,
    env: { SIM_KEY },
    config: {
      providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
      models: [
        { id: 'claude-opus-4-5', provider: 'anth', upstream_model: 'claude-hour-up' },
        simClaude({ id: 'claude-short', upstream_model: 'claude-short-up', profiles: ['pro'] }),
      ],
    },
  })

const hour = { type: 'ephemeral' as const, ttl: '1h' as const }

/** Claude Code's shape: its system prompt and the conversation so far marked for an hour. */
const ask = (model: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model,
  max_tokens: 256,
  system: [{ type: 'text', text: 'You are a coding agent.', cache_control: hour }],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Read the repository.', cache_control: hour }] }],
})

async function send(h: Harness, model: string, stream: boolean): Promise<Anthropic.Message> {
  const { anthropic } = sdkClients(h)
  return stream ? anthropic.messages.stream(ask(model)).finalMessage() : anthropic.messages.create(ask(model))
}

/** The cache marks of the one body the simulator received, system's and the user turn's. */
function upstreamMarks(): unknown[] {
  expect(sim.requests).toHaveLength(1)
  const body = sim.requests[0]!.body as {
    system: { cache_control?: unknown }[]
    messages: { content: { cache_control?: unknown }[] }[]
  }
  return [body.system[0]!.cache_control, body.messages[0]!.content[0]!.cache_control]
}

const requestIdOf = (message: Anthropic.Message) => message.id.replace(/^msg_/, '')

describe('1-hour cache writes to a model that prices them', () => {
  const usage = { input: 120, cacheWrite: 5000, cacheWrite1h: 3000, output: 40 }
  /** input × 5,000 + 5-minute writes × 6,250 (1.25 ×) + 1-hour writes × 10,000 (2 ×) + output × 25,000. */
  const cost = 120 * 5000 + 2000 * 6250 + 3000 * 10_000 + 40 * 25_000

  test.each([false, true])('the marks go as sent and the leg pays the hour (stream %p)', async (stream) => {
    const h = await gateway()
    const before = await remainingNanos(h)
    sim.setScenario('claude-hour-up', { text: 'Read.', usage })
    const message = await send(h, 'svc-max', stream)
    expect(upstreamMarks()).toEqual([hour, hour])
    // The client reads the split as the upstream sent it.
    expect(message.usage).toMatchObject({
      cache_creation_input_tokens: 5000,
      cache_creation: { ephemeral_5m_input_tokens: 2000, ephemeral_1h_input_tokens: 3000 },
    })
    const detail = await requestDetail(h, requestIdOf(message))
    expect(detail.usage_events).toHaveLength(1)
    expect(detail.usage_events[0]).toMatchObject({
      model_id: 'claude-opus-4-5',
      estimated: false,
      input_tokens: 120,
      cache_creation_input_tokens: 5000,
      cache_creation_1h_input_tokens: 3000,
      output_tokens: 40,
      cost_nanos: cost,
      charged_nanos: cost,
    })
    expect(detail.total_cost_nanos).toBe(cost)
    expect(await remainingNanos(h)).toBe(before - cost)
    const recent = (await (await h.call('/v1/usage')).json()).recent_events
    expect(recent[0]).toMatchObject({ cache_creation_1h_input_tokens: 3000, cost_nanos: cost })
    // What writing the cache cost above input, the hour's at its own price.
    const spend = await (await h.call('/v1/usage/spend?bucket=day')).json()
    expect(spend.cache_write_premium_nanos).toBe(2000 * (6250 - 5000) + 3000 * (10_000 - 5000))
  })

  test('a split that is no part of the writes is estimated with the prompt, never billed as sent', async () => {
    const h = await gateway()
    const before = await remainingNanos(h)
    sim.setScenario('claude-hour-up', { text: 'Read.', usage: { ...usage, cacheWrite1h: 6000 } })
    const message = await send(h, 'svc-max', false)
    const leg = (await requestDetail(h, requestIdOf(message))).usage_events[0]
    expect(leg).toMatchObject({
      estimated: true,
      cache_creation_input_tokens: 0,
      cache_creation_1h_input_tokens: 0,
      output_tokens: 40,
    })
    // The prompt from the tokenizer, at the input price.
    expect(leg.input_tokens).toBeGreaterThan(0)
    expect(leg.cost_nanos).toBe(leg.input_tokens * 5000 + 40 * 25_000)
    expect(await remainingNanos(h)).toBe(before - leg.cost_nanos)
  })
})

describe('1-hour cache marks to a model without a 1-hour price', () => {
  test.each([false, true])(
    'go as 5-minute marks, and the writes cost the 5-minute price (stream %p)',
    async (stream) => {
      const h = await gateway()
      const before = await remainingNanos(h)
      sim.setScenario('claude-short-up', { text: 'Read.', usage: { input: 120, cacheWrite: 5000, output: 40 } })
      const message = await send(h, 'svc-pro', stream)
      expect(upstreamMarks()).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }])
      const cost = 120 * 3000 + 5000 * 3750 + 40 * 15_000
      const detail = await requestDetail(h, requestIdOf(message))
      expect(detail.usage_events[0]).toMatchObject({
        model_id: 'claude-short',
        cache_creation_input_tokens: 5000,
        cache_creation_1h_input_tokens: 0,
        cost_nanos: cost,
        charged_nanos: cost,
      })
      expect(await remainingNanos(h)).toBe(before - cost)
    },
  )
})

// A 1-hour price on one tier only (a long-prompt tier without one) is no 1-hour price: the marks go
// as 5-minute ones, and 1-hour writes an upstream reports anyway cost what the other writes cost,
// in the leg and in the spend view's write premium. The base tier's own 1-hour price was charged.
test('a 1-hour price on the base tier but not the long-prompt one: marks and writes at the 5-minute price', async () => {
  const h = await createHarness({
    grantUsd: 5,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
      models: [
        simClaude({
          id: 'tiered',
          upstream_model: 'tiered-up',
          profiles: ['max'],
          cache_write_1h_usd_per_mtok: 6,
          long_prompt: { above_tokens: 100_000, input_usd_per_mtok: 6, output_usd_per_mtok: 22.5 },
        }),
      ],
    },
  })
  sim.setScenario('tiered-up', { text: 'Read.', usage: { input: 100, cacheWrite: 200, cacheWrite1h: 50, output: 10 } })
  const message = await send(h, 'svc-max', false)
  expect(upstreamMarks()).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }])
  const detail = await requestDetail(h, requestIdOf(message))
  expect(detail.usage_events[0]).toMatchObject({
    cache_creation_1h_input_tokens: 50,
    cost_nanos: 100 * 3000 + 200 * 3750 + 10 * 15_000,
  })
  const spend = await (await h.call('/v1/usage/spend')).json()
  expect(spend.cache_write_premium_nanos).toBe(200 * (3750 - 3000))
})
