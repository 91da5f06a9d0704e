// What a stream tells a model's circuit breaker at its end: a probe a client left is free for the
// next request, and a stream ended by the request's own refusal counts nothing against the model.
import { afterAll, expect, test } from 'bun:test'
import { GatewayError } from '../src/lib/errors'
import { judgeStream } from '../src/relay/outcome'
import type { LegDraft, RequestTrace } from '../src/relay/trace'
import { createHarness } from './support/harness'
import { startSimulator } from './support/simulator'
import type { Deps } from '../src/deps'
import { createHealth } from '../src/router/health'

const SIM_KEY = 'sim-key-verdicts'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())

test("a half-open circuit's probe stream the client leaves frees the probe: the next request probes the model", async () => {
  const model = (id: string, quality: number) => ({
    id,
    provider: 'live',
    upstream_model: `${id}-up`,
    profiles: ['max' as const],
    quality,
    input_usd_per_mtok: 1,
    output_usd_per_mtok: 2,
  })
  const h = await createHarness({
    grantUsd: 5,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: { live: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
      models: [model('primary', 95), model('backup', 80)],
    },
  })
  sim.setScenario('primary-up', { text: 'aaaa bbbb cccc dddd eeee ffff', chunks: 6, chunkDelayMs: 60 })
  for (let i = 0; i < 3; i++) h.deps.health.recordFailure('live', 'primary')
  h.clock.advance(30_000)
  expect(h.deps.health.view('live', 'primary').state).toBe('half_open')
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-max', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hello' }] },
  })
  const reader = res.body!.getReader()
  await reader.read()
  expect(h.deps.health.view('live', 'primary')).toMatchObject({ state: 'open', until: 'after the probe in flight' })
  await reader.cancel()
  await Bun.sleep(200)
  expect(h.deps.health.view('live', 'primary').state).toBe('half_open')
})

test("a stream that ends in the request's own refusal (a 400 in-band) counts nothing against the model", () => {
  const health = createHealth({ elapsed: () => 0, wall: () => 0 })
  const leg = { candidate: { provider: { id: 'p' }, model: { id: 'm' }, byok: false } } as unknown as LegDraft
  const trace = { legs: [leg], ctx: { accountId: 'acct' } } as unknown as RequestTrace
  const refused = new GatewayError('invalid_request', 'a field this model does not take', { status: 400 })
  for (let i = 0; i < 3; i++) judgeStream({ health } as unknown as Deps, trace, leg, 0, 'failed', refused)
  expect(health.view('p', 'm')).toMatchObject({ state: 'closed', error_rate: 0 })
})
