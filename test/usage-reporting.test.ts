// What a leg costs when the upstream's usage is missing, lying or cut short. Missing usage (no usage
// object, an Anthropic stream without message_delta usage, counts sent as strings) was charged as
// zero and recorded `estimated: false` on 9 of 13 paths; OpenAI cached counts larger than the
// prompt were billed as they stood (~89× the honest answer) and a negative prompt went free. Now
// every such leg is estimated as the README says: the prompt from the tokenizer, the output from
// what flowed (≈ 4 characters a token). Translated streams charge the searches that ran before a
// cut, and one whose upstream opened and failed in the same read falls back, the failed leg free.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { ModelSection } from '../src/config/schema'
import { createLogger } from '../src/lib/log'
import { createHarness, endedRequestDetail, type Harness, remainingNanos, sdkClients } from './support/harness'
import { type Scenario, startSimulator } from './support/simulator'
import { simProviders } from './support/sim-models'

const sim = startSimulator({ apiKey: 'sim' })
afterAll(() => sim.stop())

/** Claude Sonnet's list prices: 3,000 nanos a token in, 15,000 out, 300 a cache read, 3,750 a cache write. */
const prices = {
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  cache_read_usd_per_mtok: 0.3,
  cache_write_usd_per_mtok: 3.75,
}
const costOf = (leg: { input_tokens: number; output_tokens: number; web_search_requests: number }) =>
  leg.input_tokens * 3000 + leg.output_tokens * 15000 + leg.web_search_requests * 10_000_000

/** 400 characters: 100 tokens at 4 characters a token. */
const text = 'Estimated from what flowed. '.repeat(14).slice(0, 400)
const outputEstimate = Math.ceil(text.length / 4)

/** One model per upstream dialect, each alone in a profile: Anthropic (max), Chat (pro), Responses (ultra-saver). */
const h: Harness = await createHarness({
  grantUsd: 50,
  env: { SIM_KEY: 'sim' },
  config: {
    catalog: { builtin: false },
    providers: simProviders(sim.url),
    models: (
      [
        { id: 'claude-r', provider: 'anth', upstream_model: 'claude-r-up', profiles: ['max'], quality: 90 },
        { id: 'chat-r', provider: 'chat', upstream_model: 'chat-r-up', profiles: ['pro'], quality: 90 },
        { id: 'gpt-r', provider: 'resp', upstream_model: 'gpt-r-up', profiles: ['ultra_saver'], quality: 90 },
      ] satisfies ModelSection[]
    ).map((m) => ({ ...m, ...prices })),
  },
})
const warnings: string[] = []
h.deps.log = createLogger('warn', (line) => warnings.push(line))
beforeEach(() => {
  sim.reset()
  warnings.length = 0
})

type Surface = 'messages' | 'responses'
const upstreams = {
  anthropic: { profile: 'svc-max', model: 'claude-r-up', nativeSurface: 'messages' },
  chat: { profile: 'svc-pro', model: 'chat-r-up', nativeSurface: undefined },
  responses: { profile: 'svc-ultra-saver', model: 'gpt-r-up', nativeSurface: 'responses' },
} as const
type Upstream = keyof typeof upstreams

const routes = (['anthropic', 'chat', 'responses'] as const).flatMap((upstream) =>
  (['messages', 'responses'] as const).map((surface) => ({
    upstream,
    surface,
    name: `${surface} in, ${upstream} upstream${upstreams[upstream].nativeSurface === surface ? ' (pass-through)' : ''}`,
  })),
)

async function ask(
  route: { upstream: Upstream; surface: Surface },
  stream: boolean,
  extra: Record<string, unknown> = {},
): Promise<{ status: number; body: string; id: string }> {
  const model = upstreams[route.upstream].profile
  const res =
    route.surface === 'messages'
      ? await h.call('/compat-a/v1/messages', {
          method: 'POST',
          headers: { 'anthropic-version': '2023-06-01' },
          json: { model, max_tokens: 500, stream, messages: [{ role: 'user', content: 'Tell me.' }], ...extra },
        })
      : await h.call('/compat-b/v1/responses', { method: 'POST', json: { model, input: 'Tell me.', stream, ...extra } })
  return { status: res.status, body: await res.text(), id: res.headers.get('x-request-id')! }
}

/** Asks, and returns the one leg of the request as the usage API shows it once it has ended. */
async function askForLeg(route: { upstream: Upstream; surface: Surface }, stream: boolean, scenario: Scenario) {
  sim.setScenario(upstreams[route.upstream].model, scenario)
  const before = await remainingNanos(h)
  const answer = await ask(route, stream)
  expect(answer.status).toBe(200)
  const detail = await endedRequestDetail(h, answer.id)
  expect(detail.usage_events).toHaveLength(1)
  const leg = detail.usage_events[0]
  // Charged what the leg records, no more and no less.
  expect(detail).toMatchObject({ total_cost_nanos: leg.cost_nanos, charged_nanos: leg.cost_nanos })
  expect(before - (await remainingNanos(h))).toBe(leg.cost_nanos)
  return leg
}

/** The leg is estimated as the README says: the prompt from the tokenizer, the output from the characters that flowed. */
function expectEstimated(leg: Record<string, number | boolean | string | null>, output = outputEstimate) {
  expect(leg).toMatchObject({
    outcome: 'ok',
    estimated: true,
    cached_input_tokens: 0,
    cache_creation_input_tokens: 0,
    output_tokens: output,
  })
  // "Tell me." and the request's framing, as the tokenizer counts them.
  expect(leg.input_tokens).toBeGreaterThan(0)
  expect(leg.input_tokens).toBeLessThan(50)
  expect(leg.cost_nanos).toBe(costOf(leg as never))
}

describe('an upstream that reports no usage is estimated, never charged as zero', () => {
  for (const route of routes) {
    for (const stream of [false, true]) {
      test(`${route.name}, ${stream ? 'streamed' : 'JSON'}: no usage object`, async () => {
        const leg = await askForLeg(route, stream, { text, usageReport: 'omitted' })
        expectEstimated(leg)
        // Nothing the upstream sent was a count: no warning about counts that cannot be billed.
        expect(warnings).toEqual([])
      })
      test(`${route.name}, ${stream ? 'streamed' : 'JSON'}: counts sent as strings`, async () => {
        const leg = await askForLeg(route, stream, { text, usage: { input: 10, output: 100 }, usageReport: 'strings' })
        expectEstimated(leg)
      })
    }
  }

  for (const surface of ['messages', 'responses'] as const) {
    test(`${surface} in, anthropic upstream, streamed: no message_delta usage (message_start's output 1 is not the count)`, async () => {
      const leg = await askForLeg({ upstream: 'anthropic', surface }, true, {
        text,
        usage: { input: 20, output: 100 },
        usageReport: 'final-omitted',
      })
      // message_start's input is the upstream's own count, kept; the output is estimated.
      expect(leg).toMatchObject({ outcome: 'ok', estimated: true, input_tokens: 20, output_tokens: outputEstimate })
      expect(leg.cost_nanos).toBe(20 * 3000 + outputEstimate * 15000)
    })
  }

  test('an honest report is billed exactly as reported, on every route', async () => {
    for (const route of routes) {
      for (const stream of [false, true]) {
        const leg = await askForLeg(route, stream, { text, usage: { input: 10, output: 225 } })
        expect(leg).toMatchObject({ estimated: false, input_tokens: 10, output_tokens: 225, cost_nanos: 3_405_000 })
      }
    }
    expect(warnings).toEqual([])
  })
})

describe('the client is told the usage svc bills where the upstream reported none, not zeros', () => {
  // Claude Code and Codex track their context from the answer's usage: zeros and they never compact.
  const clients = sdkClients(h)
  /** The usage the client's SDK hands its caller, as input and output tokens. */
  async function told(route: { upstream: Upstream; surface: Surface }, stream: boolean) {
    const model = upstreams[route.upstream].profile
    if (route.surface === 'messages') {
      const ask = { model, max_tokens: 500, messages: [{ role: 'user' as const, content: 'Tell me.' }] }
      const message = stream
        ? await clients.anthropic.messages.stream(ask).finalMessage()
        : await clients.anthropic.messages.create(ask)
      return {
        id: message.id.slice('msg_'.length),
        input: message.usage.input_tokens,
        output: message.usage.output_tokens,
      }
    }
    const ask = { model, input: 'Tell me.' }
    const response = stream
      ? await clients.openai.responses.stream(ask).finalResponse()
      : await clients.openai.responses.create(ask)
    return {
      id: response.id.slice('resp_'.length),
      input: response.usage!.input_tokens,
      output: response.usage!.output_tokens,
    }
  }
  // Translated, or passed through with the upstream's usage replaced by what svc bills (in the
  // JSON, a Responses stream's final response, an Anthropic message_start that had none).
  for (const route of routes) {
    for (const stream of [false, true]) {
      test(`${route.name}, ${stream ? 'streamed' : 'JSON'}`, async () => {
        sim.setScenario(upstreams[route.upstream].model, { text, usageReport: 'omitted' })
        const answer = await told(route, stream)
        const leg = (await endedRequestDetail(h, answer.id)).usage_events[0]
        expectEstimated(leg)
        expect(answer).toMatchObject({ input: leg.input_tokens, output: leg.output_tokens })
      })
    }
  }
  test('messages in, anthropic upstream (pass-through), streamed: a message_delta without usage gets the billed count, and the SDK its message', async () => {
    sim.setScenario(upstreams.anthropic.model, {
      text,
      usage: { input: 20, output: 100 },
      usageReport: 'final-omitted',
    })
    // Without an output count in message_delta the Anthropic SDK's stream threw (usage.output_tokens of undefined).
    const answer = await told({ upstream: 'anthropic', surface: 'messages' }, true)
    expect(answer).toMatchObject({ input: 20, output: outputEstimate })
    expect((await endedRequestDetail(h, answer.id)).usage_events[0]).toMatchObject({ output_tokens: outputEstimate })
  })
})

test('counts no usage can have reach the client as the estimate the ledger bills, not as they came', async () => {
  // 5e12 output tokens for 400 characters: billed as ~100, so told as ~100.
  sim.setScenario(upstreams.chat.model, { text, usage: { input: 10, output: 5_000_000_000_000 } })
  const clients = sdkClients(h)
  const ask = {
    model: upstreams.chat.profile,
    max_tokens: 500,
    messages: [{ role: 'user' as const, content: 'Tell me.' }],
  }
  for (const message of [
    await clients.anthropic.messages.create(ask),
    await clients.anthropic.messages.stream(ask).finalMessage(),
  ]) {
    const leg = (await endedRequestDetail(h, message.id.slice('msg_'.length))).usage_events[0]
    expect(leg).toMatchObject({ estimated: true, output_tokens: outputEstimate })
    expect(message.usage.output_tokens).toBe(outputEstimate)
  }
})

describe('OpenAI cached counts that cannot be part of the prompt are estimated, never billed as they stand', () => {
  // The simulator reports OpenAI's prompt as input + cache reads + cache writes.
  const lies = [
    {
      name: 'cached tokens past the prompt (prompt 10, cached 1,000,000)',
      usage: { input: -999_990, cacheRead: 1_000_000, output: 100 },
    },
    { name: 'cache writes past the prompt', usage: { input: -999_990, cacheWrite: 1_000_000, output: 100 } },
    { name: 'a negative prompt', usage: { input: -1_000_000, output: 100 } },
  ]
  for (const route of routes.filter((r) => r.upstream !== 'anthropic')) {
    for (const stream of [false, true]) {
      for (const { name, usage } of lies) {
        test(`${route.name}, ${stream ? 'streamed' : 'JSON'}: ${name}`, async () => {
          const leg = await askForLeg(route, stream, { text, usage })
          // The output count is credible and billed as reported; the prompt is estimated whole.
          expectEstimated(leg, 100)
          expect(leg.cost_nanos).toBeLessThan(3_405_000)
          expect(warnings).toHaveLength(1)
          expect(JSON.parse(warnings[0]!)).toMatchObject({
            msg: 'upstream reported token counts that cannot be billed; estimated instead',
            counts: { input: String(usage.input) },
          })
        })
      }
    }
  }
})

describe('a translated stream cut short charges the web searches that ran before the cut', () => {
  // Two searches run before the answer: Anthropic's are a call and a result block each (12 frames
  // with message_start and ping), OpenAI's an item of five events each (12 with created and in_progress).
  const translated = [
    { upstream: 'anthropic' as const, surface: 'responses' as const, tools: [{ type: 'web_search' }] },
    {
      upstream: 'responses' as const,
      surface: 'messages' as const,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    },
  ]
  for (const { upstream, surface, tools } of translated) {
    test(`${surface} in, ${upstream} upstream: cut after both searches, before the usage`, async () => {
      sim.setScenario(upstreams[upstream].model, {
        text,
        usage: { input: 1000, output: 225, webSearches: 2 },
        fault: { kind: 'cut', afterFrames: 14 },
      })
      const answer = await ask({ upstream, surface }, true, { tools })
      expect(answer.status).toBe(200)
      const leg = (await endedRequestDetail(h, answer.id)).usage_events[0]
      expect(leg).toMatchObject({ outcome: 'failed', estimated: true, web_search_requests: 2 })
      expect(leg.cost_nanos).toBe(costOf(leg))
    })
  }
})

describe('a translated Responses stream that fails tells the client, in response.failed, the usage it is billed', () => {
  // It said message_start's 1 output token (and a Chat upstream's 0) where the ledger billed what flowed.
  const faults = [
    { name: 'cut (the body ends)', fault: { kind: 'cut', afterFrames: 12 } },
    { name: 'reset', fault: { kind: 'reset', afterFrames: 12 } },
    { name: 'malformed frame', fault: { kind: 'malformed', afterFrames: 12 } },
    { name: 'in-band error', fault: { kind: 'error_event', afterFrames: 12 } },
  ] as const
  for (const upstream of ['anthropic', 'chat'] as const) {
    for (const { name, fault } of faults) {
      test(`responses in, ${upstream} upstream: ${name}`, async () => {
        // Paced, so that what comes before a reset reaches svc before the connection goes.
        sim.setScenario(upstreams[upstream].model, {
          text,
          chunks: 20,
          chunkDelayMs: 1,
          usage: { input: 30, output: 100 },
          fault,
        })
        const answer = await ask({ upstream, surface: 'responses' }, true)
        const failed = answer.body.split('\n\n').find((frame) => frame.startsWith('event: response.failed'))
        expect(failed).toBeDefined()
        const told = JSON.parse(failed!.slice(failed!.indexOf('data: ') + 6)).response.usage
        const leg = (await endedRequestDetail(h, answer.id)).usage_events[0]
        expect(leg).toMatchObject({ outcome: 'failed', estimated: true })
        expect(leg.output_tokens).toBeGreaterThan(1)
        expect(told).toMatchObject({ input_tokens: leg.input_tokens, output_tokens: leg.output_tokens })
      })
    }
  }
})

describe('a translated stream whose upstream opens (or starts its answer) and fails in the same read falls back', () => {
  // `first` (quality 95) on the given dialect, the backup (80) a Responses model: both in `max`.
  const gateway = (first: 'anth' | 'chat' | 'resp') =>
    createHarness({
      grantUsd: 5,
      env: { SIM_KEY: 'sim' },
      config: {
        catalog: { builtin: false },
        providers: simProviders(sim.url),
        models: [
          { id: 'first', provider: first, upstream_model: 'first-up', profiles: ['max'], quality: 95, ...prices },
          { id: 'backup', provider: 'resp', upstream_model: 'backup-up', profiles: ['max'], quality: 80, ...prices },
        ],
      },
    })
  const cases = [
    // Anthropic: message_start (with its input usage), then the error.
    { first: 'anth' as const, surface: 'responses' as const, afterFrames: 1 },
    // Chat: the role chunk, then the error chunk.
    { first: 'chat' as const, surface: 'messages' as const, afterFrames: 1 },
    // Responses: response.created and response.in_progress, then the error.
    { first: 'resp' as const, surface: 'messages' as const, afterFrames: 2 },
    // The same with some of the answer's text before the error, still in the one read: none of it
    // has reached the client, so it falls back all the same.
    { first: 'anth' as const, surface: 'responses' as const, afterFrames: 4 },
    { first: 'chat' as const, surface: 'messages' as const, afterFrames: 3 },
    { first: 'resp' as const, surface: 'messages' as const, afterFrames: 6 },
  ]
  for (const { first, surface, afterFrames } of cases) {
    test(`${surface} in, ${first} upstream first, error after ${afterFrames} frames: the client gets the backup's answer, the failed leg costs nothing`, async () => {
      const g = await gateway(first)
      sim.setScenario('first-up', {
        text,
        usage: { input: 50_000, output: 225 },
        fault: { kind: 'error_event', afterFrames, oneRead: true },
      })
      sim.setScenario('backup-up', { text: 'Backup here.', usage: { input: 10, output: 225 } })
      const res =
        surface === 'messages'
          ? await g.call('/compat-a/v1/messages', {
              method: 'POST',
              headers: { 'anthropic-version': '2023-06-01' },
              json: { model: 'svc-max', max_tokens: 500, stream: true, messages: [{ role: 'user', content: 'Hi.' }] },
            })
          : await g.call('/compat-b/v1/responses', {
              method: 'POST',
              json: { model: 'svc-max', input: 'Hi.', stream: true },
            })
      expect(res.status).toBe(200)
      const body = await res.text()
      expect(body).toContain('Backup here.')
      expect(body).not.toContain('overloaded')
      const detail = await endedRequestDetail(g, res.headers.get('x-request-id')!)
      expect(detail).toMatchObject({ status: 'completed', total_cost_nanos: 3_405_000, charged_nanos: 3_405_000 })
      expect(detail.usage_events).toMatchObject([
        { model_id: 'first', outcome: 'failed', estimated: false, input_tokens: 0, output_tokens: 0, cost_nanos: 0 },
        { model_id: 'backup', outcome: 'ok', estimated: false, input_tokens: 10, output_tokens: 225 },
      ])
    })
  }
})
