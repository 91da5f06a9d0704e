// An upstream that reports token counts no real count can be: negative, fractional, absurdly
// large. Before svc checked, input_tokens −1,000,000 charged nothing and recorded a negative cost,
// a fraction put a float into the ledger of integer nanos, and 1e300 spent a whole grant on one
// answer. Such counts are estimated instead, the leg says so, and the operator gets a warning.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { ModelSection } from '../src/config/schema'
import { createLogger } from '../src/lib/log'
import { createHarness, type Harness, remainingNanos, requestDetail } from './support/harness'
import { type SimUsage, startSimulator } from './support/simulator'
import { simProviders } from './support/sim-models'

const sim = startSimulator({ apiKey: 'sim' })
afterAll(() => sim.stop())

const GRANT = 5_000_000_000
const text = 'Counted by characters when the count is nonsense.'

/** One model per upstream dialect, each alone in a profile: Anthropic (max), Chat (pro), Responses (ultra-saver). */
const h: Harness = await createHarness({
  grantUsd: 5,
  env: { SIM_KEY: 'sim' },
  config: {
    catalog: { builtin: false },
    providers: simProviders(sim.url),
    models: (
      [
        { id: 'claude-u', provider: 'anth', upstream_model: 'claude-u-up', profiles: ['max'], quality: 90 },
        { id: 'chat-u', provider: 'chat', upstream_model: 'chat-u-up', profiles: ['pro'], quality: 90 },
        { id: 'gpt-u', provider: 'resp', upstream_model: 'gpt-u-up', profiles: ['ultra_saver'], quality: 90 },
      ] satisfies ModelSection[]
    ).map((m) => ({ ...m, input_usd_per_mtok: 3, output_usd_per_mtok: 15 })),
  },
})
const warnings: string[] = []
h.deps.log = createLogger('warn', (line) => warnings.push(line))
beforeEach(() => {
  sim.reset()
  warnings.length = 0
})

const routes = [
  {
    name: 'Anthropic in, Anthropic upstream (pass-through)',
    surface: 'messages',
    profile: 'svc-max',
    upstream: 'claude-u-up',
  },
  { name: 'Anthropic in, Chat upstream', surface: 'messages', profile: 'svc-pro', upstream: 'chat-u-up' },
  {
    name: 'Responses in, Responses upstream (pass-through)',
    surface: 'responses',
    profile: 'svc-ultra-saver',
    upstream: 'gpt-u-up',
  },
  { name: 'Responses in, Anthropic upstream', surface: 'responses', profile: 'svc-max', upstream: 'claude-u-up' },
] as const

async function ask(route: (typeof routes)[number], stream: boolean): Promise<string> {
  const res =
    route.surface === 'messages'
      ? await h.call('/compat-a/v1/messages', {
          method: 'POST',
          headers: { 'anthropic-version': '2023-06-01' },
          json: { model: route.profile, max_tokens: 200, stream, messages: [{ role: 'user', content: 'Count me.' }] },
        })
      : await h.call('/compat-b/v1/responses', {
          method: 'POST',
          json: { model: route.profile, input: 'Count me.', stream },
        })
  expect(res.status).toBe(200)
  const body = await res.text()
  expect(body).toContain('Counted by characters')
  const id = res.headers.get('x-request-id')!
  // The ledger write follows the answer within its commit window.
  for (let i = 0; i < 50; i++) {
    if ((await h.call(`/v1/usage/requests/${id}`)).status === 200) break
    await Bun.sleep(5)
  }
  return id
}

const nonsense: { name: string; usage: SimUsage }[] = [
  { name: 'negative', usage: { input: -1_000_000, output: -5 } },
  { name: 'fractional', usage: { input: 10.5, output: 2.25 } },
  { name: 'absurd', usage: { input: 1e300, output: 2e9 } },
]

describe('token counts no count can be are estimated, never billed as reported', () => {
  for (const route of routes) {
    for (const stream of [false, true]) {
      for (const { name, usage } of nonsense) {
        test(`${route.name}, ${stream ? 'streamed' : 'JSON'}: ${name}`, async () => {
          sim.setScenario(route.upstream, { text, usage })
          const before = await remainingNanos(h)
          const detail = await requestDetail(h, await ask(route, stream))
          const leg = detail.usage_events[0]
          expect(leg.outcome).toBe('ok')
          expect(leg.estimated).toBe(true)
          // The prompt from the tokenizer; the output from the answer's characters (≈ 4 a token).
          expect(leg.input_tokens).toBeGreaterThan(0)
          expect(leg.input_tokens).toBeLessThan(50)
          expect(leg.output_tokens).toBeGreaterThanOrEqual(Math.ceil(text.length / 4))
          expect(leg.output_tokens).toBeLessThan(40)
          const cost = leg.input_tokens * 3000 + leg.output_tokens * 15000
          expect(leg.cost_nanos).toBe(cost)
          expect(detail).toMatchObject({ total_cost_nanos: cost, charged_nanos: cost })
          expect(before - (await remainingNanos(h))).toBe(cost)
          expect(warnings).toHaveLength(1)
          expect(JSON.parse(warnings[0]!)).toMatchObject({
            level: 'warn',
            msg: 'upstream reported token counts that cannot be billed; estimated instead',
            model: route.upstream === 'claude-u-up' ? 'claude-u' : route.upstream === 'chat-u-up' ? 'chat-u' : 'gpt-u',
          })
        })
      }
    }
  }

  test('a prompt reported as 0 tokens beside the output (a count left out) is estimated; the output stays as reported', async () => {
    for (const route of routes) {
      for (const stream of [false, true]) {
        sim.setScenario(route.upstream, { text, usage: { input: 0, output: 30 } })
        const detail = await requestDetail(h, await ask(route, stream))
        const leg = detail.usage_events[0]
        expect(leg).toMatchObject({ outcome: 'ok', estimated: true, output_tokens: 30 })
        expect(leg.input_tokens).toBeGreaterThan(0)
        expect(leg.input_tokens).toBeLessThan(50)
        expect(leg.cost_nanos).toBe(leg.input_tokens * 3000 + 30 * 15000)
      }
    }
  })

  test('credible counts are billed exactly as reported, and nothing is logged', async () => {
    for (const route of routes) {
      sim.setScenario(route.upstream, { text, usage: { input: 120, output: 30 } })
      const detail = await requestDetail(h, await ask(route, true))
      expect(detail.usage_events[0]).toMatchObject({
        estimated: false,
        input_tokens: 120,
        output_tokens: 30,
        cost_nanos: 120 * 3000 + 30 * 15000,
      })
    }
    expect(warnings).toEqual([])
    expect(await remainingNanos(h)).toBeLessThan(GRANT)
  })
})
