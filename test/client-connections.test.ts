// A client's connection while svc waits for its answer. `svc serve` closes connections silent for
// 255 s (src/cli/serve.ts), and svc writes nothing to a client before it has an answer: a gathered
// JSON answer, or a stream whose first candidates time out one after another, can keep a client
// waiting longer than that. Bun applies its idle timeout to a GET awaiting its answer, but not to a
// request that came with a body (measured on Bun 1.4: a GET cut at ~4 s under a 1-s limit, a POST
// answered after 13 s). svc's model routes rely on that; this test pins it, under a 1-s limit that
// Bun checks every few seconds.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, expect, test } from 'bun:test'
import type { ModelSection } from '../src/config/schema'
import { createHarness, requestDetail } from './support/harness'
import { startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'k' })
afterAll(() => sim.stop())

const model = (id: string, quality: number): ModelSection => ({
  id,
  provider: 'a',
  upstream_model: `${id}-up`,
  profiles: ['pro'],
  quality,
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 1,
})

/** svc-pro's models on the simulator (best first), behind a real Bun server closing connections silent for 1 s. */
async function servedGateway(models: ModelSection[], routing: Record<string, number>) {
  const h = await createHarness({
    grantUsd: 5,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      routing,
      providers: { a: { kind: 'anthropic', base_url: sim.url, api_key_env: 'K' } },
      models,
    },
  })
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 1,
    fetch: (request) => h.app.handle(request),
  })
  const client = new Anthropic({ apiKey: h.key, baseURL: `http://127.0.0.1:${server.port}/compat-a`, maxRetries: 0 })
  return { h, server, client }
}

test('a long answer gathered into JSON reaches the client whole, past the server idle limit', async () => {
  // Every non-streaming request is gathered from a stream; this one takes ~5 s, 250 ms a delta.
  const { h, server, client } = await servedGateway([model('long', 90)], { stream_upstream_above_max_tokens: 0 })
  await using _ = server
  sim.setScenario('long-up', { text: 'word '.repeat(20).trim(), chunks: 20, chunkDelayMs: 250 })
  const started = performance.now()
  const { data: message, response } = await client.messages
    .create({ model: 'svc-pro', max_tokens: 500, messages: [{ role: 'user', content: 'write at length' }] })
    .withResponse()
  expect(performance.now() - started).toBeGreaterThan(4_500)
  expect(message.content).toMatchObject([{ type: 'text', text: 'word '.repeat(20).trim() }])
  expect(await requestDetail(h, response.headers.get('request-id')!)).toMatchObject({ status: 'completed' })
})
