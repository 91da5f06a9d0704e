import { afterAll, expect, test } from 'bun:test'
import { createHarness } from './support/harness'
import { startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'k' })
afterAll(() => sim.stop())

test('a stream may outlive the connect and first-byte timeouts: they bound the start, not the whole stream', async () => {
  const h = await createHarness({
    grantUsd: 5,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      routing: { connect_timeout_ms: 150, first_byte_timeout_ms: 250 },
      providers: { a: { kind: 'anthropic', base_url: sim.url, api_key_env: 'K' } },
      models: [
        {
          id: 'm',
          provider: 'a',
          upstream_model: 'long-up',
          profiles: ['pro'],
          quality: 90,
          input_usd_per_mtok: 1,
          output_usd_per_mtok: 1,
        },
      ],
    },
  })
  // Ten deltas 80 ms apart: the stream lasts ~0.7 s, several times both timeouts.
  sim.setScenario('long-up', { text: 'one two three four five six seven eight nine ten', chunks: 10, chunkDelayMs: 80 })
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'count' }] },
  })
  const body = await res.text()
  expect(body).toContain('event: message_stop')
  expect(body).not.toContain('event: error')
  const record = await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()
  expect(record.status).toBe('completed')
})
