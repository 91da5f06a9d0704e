import { afterAll, expect, test } from 'bun:test'
import { createHarness } from './support/harness'
import { startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'k' })
afterAll(() => sim.stop())

/** One Anthropic provider on the simulator behind svc-pro, with these routing timeouts. */
const harnessWith = (routing: Record<string, number>, upstreamModel: string) =>
  createHarness({
    grantUsd: 5,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      routing,
      providers: { a: { kind: 'anthropic', base_url: sim.url, api_key_env: 'K' } },
      models: [
        {
          id: 'm',
          provider: 'a',
          upstream_model: upstreamModel,
          profiles: ['pro'],
          quality: 90,
          input_usd_per_mtok: 1,
          output_usd_per_mtok: 1,
        },
      ],
    },
  })

test('a stream may outlive the connect and first-byte timeouts: they bound the start, not the whole stream', async () => {
  const h = await harnessWith({ connect_timeout_ms: 150, first_byte_timeout_ms: 250 }, 'long-up')
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

test('an upstream that goes silent mid-stream past idle_timeout_ms ends the stream with an error event; the leg is estimated', async () => {
  const h = await harnessWith({ idle_timeout_ms: 150 }, 'stalls-up')
  // The first delta comes at once, the next only after 2 s: far past the idle limit.
  sim.setScenario('stalls-up', { text: 'first second', chunks: 2, chunkDelayMs: 2000 })
  const started = performance.now()
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go' }] },
  })
  expect(res.status).toBe(200)
  const body = await res.text()
  expect(performance.now() - started).toBeLessThan(1500)
  expect(body).toContain('event: content_block_delta')
  expect(body).toContain('event: error')
  expect(body).toContain('silent for 150 ms')
  expect(body).not.toContain('event: message_stop')
  const record = await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()
  expect(record.status).toBe('failed')
  expect(record.usage_events).toEqual([expect.objectContaining({ outcome: 'failed', estimated: true })])
  // Charged for what flowed: the prompt and the one delta, not the whole answer.
  expect(record.usage_events[0].output_tokens).toBeGreaterThan(0)
  expect(record.charged_nanos).toBe(record.total_cost_nanos)
})
