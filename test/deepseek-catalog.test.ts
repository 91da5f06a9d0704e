// The built-in DeepSeek rows end to end, on the simulator standing in for api.deepseek.com: the
// names DeepSeek retired on 2026-07-24 are skipped with the reason, V4.1 Flash serves, a Claude
// Code effort arrives as sent (DeepSeek maps every effort name itself), thinking turned off
// reaches it as its own toggle, and a leg is charged at peak or off-peak prices by the hour it started.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { createHarness, remainingNanos, requestDetail, sdkClients } from './support/harness'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-deepseek-catalog'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

/** The built-in catalog, with the `deepseek` provider as svc configures it from DEEPSEEK_API_KEY, on the simulator. */
const gateway = (now: number) =>
  createHarness({
    grantUsd: 5,
    now,
    env: { SIM_KEY },
    config: {
      providers: {
        deepseek: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY', reasoning_content: true },
      },
    },
  })

// Wednesday 2026-11-25: 02:00 UTC is peak, 12:00 off-peak; Saturday 2026-11-28 02:00 off-peak.
const peak = Date.parse('2026-11-25T02:00:00Z')
const offPeak = Date.parse('2026-11-25T12:00:00Z')
const saturday = Date.parse('2026-11-28T02:00:00Z')

const turn = (effort: string) =>
  ({
    model: 'svc-ultra-saver',
    max_tokens: 4096,
    thinking: { type: 'adaptive' },
    output_config: { effort },
    messages: [{ role: 'user', content: 'summarise the diff' }],
  }) as unknown as Anthropic.MessageCreateParamsNonStreaming

describe('the built-in DeepSeek rows', () => {
  test('V4.1 Flash serves; the retired V3.2 names are skipped; an effort arrives as sent', async () => {
    const h = await gateway(offPeak)
    const message = await sdkClients(h).anthropic.messages.create(turn('xhigh'))
    expect(sim.requests[0]!.path).toBe('/v1/chat/completions')
    expect(sim.requests[0]!.body).toMatchObject({ model: 'deepseek-flash', reasoning_effort: 'xhigh' })
    const ranks: { model_id: string; status: string; reason: string }[] = (
      await requestDetail(h, message.id.replace(/^msg_/, ''))
    ).provider_ranks
    expect(ranks.find((r) => r.model_id === 'deepseek-chat')).toMatchObject({
      status: 'skipped',
      reason: 'retired by its provider on 2026-07-24',
    })
  })

  test('thinking turned off reaches V4 as its thinking toggle, with no effort: it would think otherwise', async () => {
    const h = await gateway(offPeak)
    const off = { ...turn('low'), thinking: { type: 'disabled' as const } }
    delete (off as { output_config?: unknown }).output_config
    await sdkClients(h).anthropic.messages.create(off)
    const body = sim.requests[0]!.body as Record<string, unknown>
    expect(body).toMatchObject({ model: 'deepseek-flash', thinking: { type: 'disabled' } })
    expect(body).not.toHaveProperty('reasoning_effort')
  })

  // USD/Mtok off-peak 0.15 in, 0.003 cache read, 0.6 out (150 / 3 / 600 nanos a token); peak twice that.
  test.each([
    ['at peak (a weekday, 02:00 UTC)', peak, [300, 6, 1200]],
    ['off-peak (a weekday, 12:00 UTC)', offPeak, [150, 3, 600]],
    ['on a Saturday at 02:00 UTC', saturday, [150, 3, 600]],
  ])('a leg is charged %s', async (_name, now, [input, cacheRead, output]) => {
    const h = await gateway(now)
    const before = await remainingNanos(h)
    const usage = { input: 2_000, cacheRead: 50_000, cacheWrite: 0, output: 500 }
    sim.setScenario('deepseek-flash', { text: 'done', usage })
    const message = await sdkClients(h).anthropic.messages.create(turn('high'))
    const expected = usage.input * input! + usage.cacheRead * cacheRead! + usage.output * output!
    const leg = (await requestDetail(h, message.id.replace(/^msg_/, ''))).usage_events[0]
    expect(leg).toMatchObject({ model_id: 'deepseek-flash', cost_nanos: expected, charged_nanos: expected })
    expect(await remainingNanos(h)).toBe(before - expected)
  })
})
