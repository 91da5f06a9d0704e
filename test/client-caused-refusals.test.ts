// End to end: an upstream's 403 or 404 about something the request itself referenced (a reasoning
// item replayed by id, a file_id Anthropic's store does not hold) is the request's refusal, not the
// gateway's account failure: another candidate is still tried, the model's health is untouched,
// and with no other candidate the client hears it with the upstream's status and words, never as
// the operator's problem. A 403 or 404 about the model or the key stays the gateway's account
// failure (call-upstream.ts).
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { ModelSection } from '../src/config/schema'
import { createHarness, type Harness, requestDetail } from './support/harness'
import { fixedUpstream } from './support/fixed-upstream'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key'
const sim = startSimulator({ apiKey: SIM_KEY })

/** What the fake upstream answers every request with, and the bodies it was sent. */
const fake = fixedUpstream()
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const model = (id: string, provider: string, quality: number): ModelSection => ({
  id,
  provider,
  upstream_model: `${id}-up`,
  profiles: ['pro'],
  quality,
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 2,
  vision: true,
})

/** svc-pro: the first model on the fake upstream (of `kind`), a Claude model on the simulator below it unless `alone`. */
const gateway = (kind: 'anthropic' | 'openai-responses', opts: { alone?: boolean } = {}): Promise<Harness> =>
  createHarness({
    grantUsd: 5,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: {
        fake: {
          kind,
          base_url: kind === 'anthropic' ? fake.origin : `${fake.origin}/v1`,
          api_key_env: 'SIM_KEY',
        },
        anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
      },
      models: [model('first', 'fake', 95), ...(opts.alone ? [] : [model('claude', 'anth', 80)])],
    },
  })

const itemGone =
  "Item with id 'rs_0496282' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
const replay = {
  model: 'svc-pro',
  store: true,
  input: [
    { role: 'user', content: 'hi' },
    { type: 'reasoning', id: 'rs_0496282', summary: [] },
    { role: 'assistant', content: 'hello' },
    { role: 'user', content: 'and?' },
  ],
}
const responses = (h: Harness, json: unknown) => h.call('/compat-b/v1/responses', { method: 'POST', json })

const fileGone = 'File not found: file_gone'
const aboutFile = {
  model: 'svc-pro',
  max_tokens: 100,
  messages: [
    {
      role: 'user',
      content: [
        { type: 'document', source: { type: 'file', file_id: 'file_gone' } },
        { type: 'text', text: 'Summarise it.' },
      ],
    },
  ],
}
const messages = (h: Harness, json: unknown) =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    json,
    headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'files-api-2025-04-14' },
  })

describe('an upstream 404 about what the request referenced is the request’s', () => {
  const itemGoneAnswer = {
    status: 404,
    body: { error: { message: itemGone, type: 'invalid_request_error', param: 'input', code: null } },
  }

  test('OpenAI’s 404 for a replayed reasoning item: Claude serves the turn, the model’s health untouched', async () => {
    const h = await gateway('openai-responses')
    fake.answer = itemGoneAnswer
    // Three clients replaying such items would once have opened the circuit for everyone.
    for (let i = 0; i < 3; i++) {
      sim.queue('claude-up', { text: 'Here.' })
      const res = await responses(h, replay)
      expect(res.status).toBe(200)
      const record = await requestDetail(h, res.headers.get('x-request-id')!)
      expect(record.provider_ranks.map((r: { model_id: string; status: string }) => [r.model_id, r.status])).toEqual([
        ['first', 'failed'],
        ['claude', 'chosen'],
      ])
      expect(record.usage_events[0]).toMatchObject({ model_id: 'first', error: itemGone, cost_nanos: 0 })
    }
    expect(fake.received).toHaveLength(3)
    expect(h.deps.health.view('fake', 'first')).toMatchObject({ state: 'closed', error_rate: 0 })
  })

  test('the same with no other candidate: a 404 in OpenAI’s shape, in the provider’s words', async () => {
    const h = await gateway('openai-responses', { alone: true })
    fake.answer = itemGoneAnswer
    const res = await responses(h, replay)
    expect(res.status).toBe(404)
    expect(res.headers.get('x-should-retry')).toBeNull()
    expect(await res.json()).toEqual({
      error: { message: itemGone, type: 'invalid_request_error', param: null, code: null },
    })
    const record = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(record).toMatchObject({ status: 'failed', http_status: 404, charged_nanos: 0 })
    expect(h.deps.health.view('fake', 'first')).toMatchObject({ state: 'closed', error_rate: 0 })
  })

  test('Anthropic’s 404 for a file_id its store does not hold: alone, a 404 not_found_error; health untouched', async () => {
    const h = await gateway('anthropic', { alone: true })
    // A file id is read with the account's own key only (its workspace holds the account's files).
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'fake', key: 'sk-ant-own-0123456789' })
    fake.answer = { status: 404, body: { type: 'error', error: { type: 'not_found_error', message: fileGone } } }
    const res = await messages(h, aboutFile)
    expect(res.status).toBe(404)
    expect(await res.json()).toEqual({ type: 'error', error: { type: 'not_found_error', message: fileGone } })
    expect(fake.received).toHaveLength(1)
    expect(h.deps.health.view('fake', 'first', h.accountId)).toMatchObject({ state: 'closed', error_rate: 0 })
  })
})

// A 501: the server does not do what the request asks (logprobs, a tool type). One client's odd
// request answered so three times had opened the model's circuit for every account.
test('an upstream 501: the next model serves, the model’s health untouched; alone, a 400 in the provider’s words', async () => {
  const notImplemented = {
    status: 501,
    body: { error: { message: 'logprobs is not implemented', type: 'server_error', param: null, code: null } },
  }
  const h = await gateway('openai-responses')
  fake.answer = notImplemented
  for (let i = 0; i < 3; i++) {
    sim.queue('claude-up', { text: 'Here.' })
    expect((await responses(h, { model: 'svc-pro', input: 'hi' })).status).toBe(200)
  }
  expect(h.deps.health.view('fake', 'first')).toMatchObject({ state: 'closed', error_rate: 0 })
  const alone = await gateway('openai-responses', { alone: true })
  const res = await responses(alone, { model: 'svc-pro', input: 'hi' })
  expect(res.status).toBe(400)
  expect((await res.json()).error).toMatchObject({
    message: 'logprobs is not implemented',
    type: 'invalid_request_error',
  })

  // A 501 whose Anthropic body says the key is refused is the account's failure, and counts like any.
  const refusedKey = await gateway('anthropic')
  fake.answer = { status: 501, body: { type: 'error', error: { type: 'authentication_error', message: 'bad key' } } }
  sim.queue('claude-up', { text: 'Here.' })
  expect(
    (await messages(refusedKey, { model: 'svc-pro', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }))
      .status,
  ).toBe(200)
  expect(refusedKey.deps.health.view('fake', 'first').error_rate).toBeGreaterThan(0)

  // A 409 (an invalid_request too) is the provider's: it counts, as it did.
  const conflicted = await gateway('openai-responses')
  fake.answer = {
    status: 409,
    body: { error: { message: 'conflict', type: 'invalid_request_error', param: null, code: null } },
  }
  sim.queue('claude-up', { text: 'Here.' })
  expect((await responses(conflicted, { model: 'svc-pro', input: 'hi' })).status).toBe(200)
  expect(conflicted.deps.health.view('fake', 'first').error_rate).toBeGreaterThan(0)
})

describe('an upstream 403 or 404 about the model or the key is still the gateway’s account failure', () => {
  test('Anthropic’s 404 naming the model falls back to the next candidate and counts against the model', async () => {
    const h = await gateway('anthropic')
    fake.answer = {
      status: 404,
      body: { type: 'error', error: { type: 'not_found_error', message: 'model: first-up' } },
    }
    sim.queue('claude-up', { text: 'Here.' })
    const res = await messages(h, { ...aboutFile, messages: [{ role: 'user', content: 'hi' }] })
    expect(res.status).toBe(200)
    const record = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(record.provider_ranks.map((r: { model_id: string; status: string }) => [r.model_id, r.status])).toEqual([
      ['first', 'failed'],
      ['claude', 'chosen'],
    ])
    expect(h.deps.health.view('fake', 'first').error_rate).toBeGreaterThan(0)
  })

  test('OpenAI’s model_not_found falls back too, the leg saying whose account was refused', async () => {
    const h = await gateway('openai-responses')
    fake.answer = {
      status: 404,
      body: {
        error: {
          message: 'The model `first-up` does not exist or you do not have access to it.',
          type: 'invalid_request_error',
          param: null,
          code: 'model_not_found',
        },
      },
    }
    sim.queue('claude-up', { text: 'Here.' })
    const res = await responses(h, { model: 'svc-pro', input: 'hi' })
    expect(res.status).toBe(200)
    const record = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(record.usage_events[0]).toMatchObject({
      model_id: 'first',
      error: expect.stringContaining("fake refused the gateway's own account there"),
    })
    expect(record.selected_model_id).toBe('claude')
  })
})

// The last model's refusal is not the request's answer where an earlier one failed for the moment:
// answered 400, an SDK never sent it again (a README check: a 529, then a 501, answered 400).
test('a 529, then the next model refuses the request (501): the client hears the 529, which it retries', async () => {
  const h = await gateway('anthropic')
  fake.answer = { status: 529, body: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } }
  sim.queue('claude-up', { fault: { kind: 'status', status: 501 } })
  const res = await messages(h, { model: 'svc-pro', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
  expect(res.status).toBe(529)
  expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } })
  const detail = await requestDetail(h, res.headers.get('x-request-id')!)
  expect(detail.usage_events.map((leg: { model_id: string }) => leg.model_id)).toEqual(['first', 'claude'])

  // An earlier model that failed for good (the gateway's own key refused there) does not speak
  // for it either: the refusal stands, which a client may act on (Claude Code compacts a prompt too long).
  fake.answer = { status: 401, body: { type: 'error', error: { type: 'authentication_error', message: 'bad key' } } }
  sim.queue('claude-up', { fault: { kind: 'status', status: 501 } })
  const afterKeyRefused = await messages(h, {
    model: 'svc-pro',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'hi' }],
  })
  expect(afterKeyRefused.status).toBe(400)

  // Refused by every model, the refusal stands.
  const alone = await gateway('anthropic', { alone: true })
  fake.answer = { status: 501, body: { type: 'error', error: { type: 'api_error', message: 'not implemented' } } }
  const refused = await messages(alone, {
    model: 'svc-pro',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'hi' }],
  })
  expect(refused.status).toBe(400)
})
