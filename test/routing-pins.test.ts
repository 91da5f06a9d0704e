// Routing rules a mutation audit of the router found no test pinned: each test here failed on its
// one-edit mutant (named in its describe), and the last one on the code before its fix.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { ConfigFile, ModelSection } from '../src/config/schema'
import { RequestAdmission, expectedBytes } from '../src/relay/admission'
import { createHealth } from '../src/router/health'
import { createHarness, requestDetail } from './support/harness'
import { fixedUpstream } from './support/fixed-upstream'
import { startSimulator } from './support/simulator'

const KEY = 'sim-key-mutation3'
const sim = startSimulator({ apiKey: KEY })
const fake = fixedUpstream()
afterAll(() => sim.stop())
beforeEach(() => sim.reset())
const model = (
  id: string,
  provider: string,
  quality: number,
  profiles: ModelSection['profiles'] = ['pro'],
): ModelSection => ({
  id,
  provider,
  upstream_model: `${id}-up`,
  profiles,
  quality,
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 2,
})

describe('K15: the quality floor is inclusive ("quality at least the profile floor")', () => {
  test('a model of quality exactly 60 serves svc-ultra-saver', async () => {
    const h = await createHarness({
      grantUsd: 5,
      env: { SIM_KEY: KEY },
      config: {
        catalog: { builtin: false },
        providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
        models: [model('cheap', 'anth', 60, ['ultra_saver'])],
      },
    })
    sim.queue('cheap-up', { text: 'ok' })
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-ultra-saver', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(res.status).toBe(200)
  })
})

describe('RL12: a 403 about what the request referenced says nothing of the model’s health', () => {
  test('three 403s naming a file: the next request still tries the model first, circuit closed', async () => {
    const h = await createHarness({
      grantUsd: 5,
      env: { SIM_KEY: KEY },
      config: {
        catalog: { builtin: false },
        providers: {
          fake: { kind: 'anthropic', base_url: fake.origin, api_key_env: 'SIM_KEY' },
          anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
        },
        models: [model('first', 'fake', 95), model('claude', 'anth', 80)],
      },
    })
    fake.answer = {
      status: 403,
      body: { type: 'error', error: { type: 'permission_error', message: 'The file file_abc123 is not accessible' } },
    }
    const ask = async () => {
      sim.queue('claude-up', { text: 'Here.' })
      const res = await h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: 'svc-pro', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(res.status).toBe(200)
      return requestDetail(h, res.headers.get('x-request-id')!)
    }
    for (let i = 0; i < 3; i++) await ask()
    expect(fake.received.length).toBe(3)
    const fourth = await ask()
    expect(
      fourth.provider_ranks.map((r: { model_id: string; status: string; health: { state: string } }) => [
        r.model_id,
        r.status,
        r.health.state,
      ]),
    ).toEqual([
      ['first', 'failed', 'closed'],
      ['claude', 'chosen', 'closed'],
    ])
    expect(fake.received.length).toBe(4)
  })
})

describe('F1: tool calls in the history need a model that takes tools, even with no tools offered', () => {
  test('a compaction request (tools: [], tool history) passes over a model without tool support', async () => {
    const h = await createHarness({
      grantUsd: 5,
      env: { SIM_KEY: KEY },
      config: {
        catalog: { builtin: false },
        providers: { chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' } },
        models: [{ ...model('notools', 'chat', 95), tools: false }, model('tooled', 'chat', 80)],
      },
    })
    sim.queue('notools-up', { text: 'summary' })
    sim.queue('tooled-up', { text: 'summary' })
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: {
        model: 'svc-pro',
        tools: [],
        input: [
          { role: 'user', content: 'run echo hi' },
          { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"echo hi"}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'hi' },
          { role: 'user', content: 'Summarise the conversation.' },
        ],
      },
    })
    expect(res.status).toBe(200)
    expect(sim.requests.map((r) => (r.body as { model: string }).model)).toEqual(['tooled-up'])
  })
})

describe('AD3: giving a request’s place back twice frees it once', () => {
  test('after a double release the budget still turns a second big request away', async () => {
    const budget = new RequestAdmission(expectedBytes(300_000) + expectedBytes(10))
    const a = budget.admit(10)
    budget.release(a)
    budget.release(a) // record() gives it back, then relay()'s catch again on a booking bug
    budget.admit(300_000)
    expect(() => budget.admit(300_000)).toThrow(/as many requests as its memory allows/)
  })
})

describe('F11/F12: every part of the prompt counts toward the window check', () => {
  const windows = () =>
    createHarness({
      grantUsd: 5,
      env: { SIM_KEY: KEY },
      config: {
        catalog: { builtin: false },
        providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
        models: [
          { ...model('small', 'anth', 95), context_window: 20_000, max_output_tokens: 4096 },
          { ...model('large', 'anth', 80), context_window: 1_000_000, max_output_tokens: 4096 },
        ],
      },
    })
  const big = 'lorem ipsum dolor '.repeat(8000) // 144,000 characters: ~36,000 tokens
  const ask = async (json: Record<string, unknown>) => {
    const h = await windows()
    sim.queue('small-up', { text: 'ok' })
    sim.queue('large-up', { text: 'ok' })
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: 100, ...json },
    })
    expect(res.status).toBe(200)
    return sim.requests.map((r) => (r.body as { model: string }).model)
  }
  test('F12: a long system prompt does not fit the 20K window: the large model serves', async () => {
    expect(await ask({ system: big, messages: [{ role: 'user', content: 'hi' }] })).toEqual(['large-up'])
  })
  test('F11: a long tool call input in the history does not fit the 20K window: the large model serves', async () => {
    const messages = [
      { role: 'user', content: 'write it' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'write', input: { text: big } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'done' }] },
    ]
    const tools = [{ name: 'write', input_schema: { type: 'object' } }]
    expect(await ask({ messages, tools })).toEqual(['large-up'])
  })
})

describe('H12/H13: the breaker as README "Health" says', () => {
  test('H12: after a success closes it, the next opening waits 30 s again, not the doubled cool-down', async () => {
    let t = 0
    const health = createHealth({ elapsed: () => t, wall: () => 1_700_000_000_000 + t })
    const fail = () => health.recordFailure('p', 'm')
    fail()
    fail()
    fail() // open for 30 s
    t += 30_000
    health.recordFailure('p', 'm', {}, undefined, health.claimProbe('p', 'm')) // the probe fails: 60 s
    t += 60_000
    expect(health.claimProbe('p', 'm')).toBeGreaterThan(0)
    health.recordSuccess('p', 'm') // closed
    fail()
    fail()
    fail() // a new outage
    t += 30_000
    expect(health.view('p', 'm').state).toBe('half_open')
  })
  test('H13: one account replacing its own key forgets its circuit only, not another account’s', async () => {
    const t = 0
    const health = createHealth({ elapsed: () => t, wall: () => 1_700_000_000_000 })
    for (const owner of ['acct-a', 'acct-b']) for (let i = 0; i < 3; i++) health.recordFailure('p', 'm', {}, owner)
    health.forgetOwnKey('p', 'acct-a')
    expect(health.view('p', 'm', 'acct-a').state).toBe('closed')
    expect(health.view('p', 'm', 'acct-b').state).toBe('open')
  })
})

type Model = ModelSection
const modelIn = (id: string, provider: string, quality: number): Model => ({
  ...model(id, provider, quality, ['pro', 'max']),
  vision: true,
})
const gateway = (models: Model[], providers: ConfigFile['providers']) =>
  createHarness({ grantUsd: 5, env: { SIM_KEY: KEY }, config: { catalog: { builtin: false }, providers, models } })
const upstreamModels = () => sim.requests.map((r) => (r.body as { model?: string }).model)

describe('K10: an OpenAI-only tool is not sent to a Responses-compatible server', () => {
  test('local_shell offered: the compatible server ranked above is passed over; OpenAI itself serves', async () => {
    const h = await gateway([modelIn('compat', 'compat', 95), modelIn('gpt', 'oai', 80)], {
      compat: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY', openai_itself: false },
      oai: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY', openai_itself: true },
    })
    sim.queue('gpt-up', { text: 'Done.' })
    sim.queue('compat-up', { text: 'Done.' })
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: 'svc-pro', input: 'list files', tools: [{ type: 'local_shell' }] },
    })
    expect(res.status).toBe(200)
    expect(upstreamModels()).toEqual(['gpt-up'])
  })
})

// As without the developer message, Claude is skipped (README, Routing: "A conversation that ends
// on a user message of blank text ... skips the Anthropic models"); before the fix Claude got a
// conversation ending on its own turn ("Blue."), which it continued.
describe('endsOnBlankText: a blank last user turn, read past a developer message after it', () => {
  const conversation = [
    { role: 'user', content: 'Name a colour.' },
    { role: 'assistant', content: 'Blue.' },
    { role: 'user', content: '   ' },
  ]
  test.each([
    ['followed by a developer message', [...conversation, { role: 'developer', content: 'Be brief.' }]],
    ['alone', conversation],
  ])('%s: Claude is passed over, not sent a conversation ending on its own turn', async (_, input) => {
    const h = await gateway([modelIn('claude', 'anth', 95), modelIn('gpt', 'chat', 80)], {
      anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
      chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
    })
    sim.queue('claude-up', { text: 'continued' })
    sim.queue('gpt-up', { text: 'answered' })
    const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { model: 'svc-pro', input } })
    expect(res.status).toBe(200)
    expect(upstreamModels()).toEqual(['gpt-up'])
  })
})
