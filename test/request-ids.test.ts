// Which answers carry `X-Request-Id`: exactly those the ledger records, so that every id a client
// logs is one the usage API finds (README "HTTP API").
import { afterAll, describe, expect, test } from 'bun:test'
import { createHarness } from './support/harness'
import { startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'sim-key-ids' })
afterAll(() => sim.stop())

const h = await createHarness({
  grantUsd: 5,
  env: { SIM_KEY: 'sim-key-ids' },
  config: {
    catalog: { builtin: false },
    providers: { live: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
    models: [
      {
        id: 'primary',
        provider: 'live',
        upstream_model: 'primary-up',
        profiles: ['max'],
        quality: 90,
        input_usd_per_mtok: 3,
        output_usd_per_mtok: 15,
      },
    ],
  },
})

const messages = (json: unknown) =>
  h.call('/compat-a/v1/messages', { method: 'POST', headers: { 'anthropic-version': '2023-06-01' }, json })
const responses = (json: unknown) => h.call('/compat-b/v1/responses', { method: 'POST', json })

describe('X-Request-Id', () => {
  test('a routed answer, served or failed, carries an id the usage API finds', async () => {
    sim.setScenario('primary-up', { text: 'Hi.', usage: { input: 5, output: 2 } })
    const served = await messages({ model: 'svc-max', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
    sim.setScenario('primary-up', { fault: { kind: 'status', status: 500 } })
    const failed = await responses({ model: 'svc-max', input: 'hi' })
    expect([served.status, failed.status]).toEqual([200, 500])
    for (const res of [served, failed]) {
      const id = res.headers.get('x-request-id')
      expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/)
      expect((await h.call(`/v1/usage/requests/${id}`)).status).toBe(200)
    }
  })

  test.each([
    ['messages: not the route’s shape', () => messages({ model: 'svc-max', messages: 'hi' })],
    [
      'messages: a model that is no profile',
      () => messages({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
    ],
    ['responses: not the route’s shape', () => responses({ model: 'svc-max', input: 42 })],
    ['responses: a model that is no profile', () => responses({ model: 'gpt-4o', input: 'hi' })],
    [
      'responses: a field the decoder refuses',
      () => responses({ model: 'svc-max', input: 'hi', previous_response_id: 'resp_1' }),
    ],
  ])('%s: a 400 that records nothing carries no id', async (_name, send) => {
    const res = await send()
    expect(res.status).toBe(400)
    expect(res.headers.get('x-request-id')).toBeNull()
    expect(res.headers.get('request-id')).toBeNull()
  })
})
