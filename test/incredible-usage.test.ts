// An upstream that reports token counts no real count can be: negative, fractional, absurdly
// large. Before svc checked, input_tokens −1,000,000 charged nothing and recorded a negative cost,
// a fraction put a float into the ledger of integer nanos, and 1e300 spent a whole grant on one
// answer. Such counts are estimated instead, the leg says so, and the operator gets a warning.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { ModelSection } from '../src/config/schema'
import { createLogger } from '../src/lib/log'
import {
  createHarness,
  endedRequestDetail,
  type Harness,
  remainingNanos,
  requestDetail,
  sdkClients,
} from './support/harness'
import { anthropicEvent, scriptedUpstream, twoModelGateway } from './support/scripted-upstream'
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

describe('what the client is told of counts no count can be', () => {
  const streamed = (start: Record<string, unknown>, delta: Record<string, unknown>) => [
    anthropicEvent('message_start', {
      message: { id: 'msg_up', type: 'message', role: 'assistant', model: 'first-up', content: [], usage: start },
    }),
    anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: text.repeat(8) } }),
    anthropicEvent('content_block_stop', { index: 0 }),
    anthropicEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: delta }),
    anthropicEvent('message_stop'),
  ]
  const question = { model: 'svc-pro', max_tokens: 500, messages: [{ role: 'user' as const, content: 'Count me.' }] }

  // The Anthropic relay forwarded message_delta as it came: the SDK's final message said -5 or 5e12
  // output tokens (or a negative prompt, which Claude Code tracks its context by) while the ledger
  // billed an estimate.
  for (const [name, start, delta] of [
    ['output 5e12', { input_tokens: 10, output_tokens: 1 }, { output_tokens: 5e12 }],
    ['output -5', { input_tokens: 10, output_tokens: 1 }, { output_tokens: -5 }],
    ['prompt -1,000,000', { input_tokens: -1_000_000, output_tokens: 1 }, { output_tokens: 30 }],
  ] as const) {
    test(`an Anthropic pass-through stream's final usage is what the ledger bills: ${name}`, async () => {
      const gateway = await twoModelGateway({ kind: 'anthropic' })
      scriptedUpstream(gateway, () => ({ sse: streamed(start, delta) }))
      const message = await sdkClients(gateway).anthropic.messages.stream(question).finalMessage()
      const leg = (await endedRequestDetail(gateway, message.id.slice(4))).usage_events[0]
      expect(leg.estimated).toBe(true)
      expect(leg.input_tokens).toBeGreaterThan(0)
      expect(leg.output_tokens).toBeGreaterThan(0)
      expect(message.usage).toMatchObject({ input_tokens: leg.input_tokens, output_tokens: leg.output_tokens })
    })
  }

  test('a credible final usage goes to the client byte for byte', async () => {
    const gateway = await twoModelGateway({ kind: 'anthropic' })
    const frames = streamed({ input_tokens: 10, output_tokens: 1 }, { output_tokens: 42, custom_field: 'kept' })
    scriptedUpstream(gateway, () => ({ sse: frames }))
    const res = await gateway.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { ...question, stream: true },
    })
    expect(await res.text()).toContain(frames[4]!)
  })

  // A search costs a cent where a token costs a millionth of a dollar: the token bound let one
  // reported count of 10⁹ searches take a whole grant at a cost past 2^53 nanos.
  test('a billion web searches reported on one answer are not billed as reported', async () => {
    const gateway = await twoModelGateway({ kind: 'anthropic' })
    scriptedUpstream(gateway, () => ({
      json: {
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        model: 'first-up',
        content: [{ type: 'text', text: 'hi' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 1_000_000_000 } },
      },
    }))
    const before = await remainingNanos(gateway)
    const message = await sdkClients(gateway).anthropic.messages.create(question)
    const leg = (await endedRequestDetail(gateway, message.id.slice(4))).usage_events[0]
    expect(leg).toMatchObject({ estimated: true, web_search_requests: 0, input_tokens: 10, output_tokens: 5 })
    expect(leg.cost_nanos).toBe(15 * 1_000)
    expect(before - (await remainingNanos(gateway))).toBe(15 * 1_000)
    expect(message.usage.server_tool_use?.web_search_requests).toBe(0)
  })
})
