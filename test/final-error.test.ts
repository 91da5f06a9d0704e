// Which failure a request that no model served answers with, once every model tried has failed:
// the latest that may pass (a later model's refusal of the request does not hide it), never one
// that would tell the client a retry is hopeless while a model went untried, and the gateway's own
// failure as itself.
import { expect, test } from 'bun:test'
import { createHarness, endedRequestDetail, type Harness } from './support/harness'

const anthropic = (base_url: string, api_key_env: string) => ({ kind: 'anthropic' as const, base_url, api_key_env })
const model = (id: string, provider: string, quality: number, profiles: ('max' | 'pro')[] = ['max']) => ({
  id,
  provider,
  upstream_model: `${id}-up`,
  profiles,
  quality,
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
})
const refusal = (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
  Response.json({ type: 'error', error: { type, message } }, { status, headers })
const ask = (h: Harness, profile = 'svc-max') =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: profile, max_tokens: 1_000, messages: [{ role: 'user', content: 'hello' }] },
  })
const ranks = async (h: Harness, res: Response) =>
  (await endedRequestDetail(h, res.headers.get('x-request-id')!)).provider_ranks.map(
    (r: { model_id: string; status: string }) => [r.model_id, r.status],
  )

test('a 429, then a 529, then a refusal (501): the client hears the 529, the latest failure that may pass', async () => {
  const h = await createHarness({
    grantUsd: 5,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      providers: {
        pa: anthropic('http://a.test', 'K'),
        pb: anthropic('http://b.test', 'K'),
        pc: anthropic('http://c.test', 'K'),
      },
      models: [model('ma', 'pa', 95), model('mb', 'pb', 90), model('mc', 'pc', 85)],
    },
  })
  h.deps.fetch = (async (url: string) => {
    if (String(url).includes('a.test')) return refusal(429, 'rate_limit_error', 'slow down', { 'retry-after': '30' })
    if (String(url).includes('b.test')) return refusal(529, 'overloaded_error', 'Overloaded')
    return refusal(501, 'invalid_request_error', 'logprobs are not supported')
  }) as unknown as typeof fetch
  const res = await ask(h)
  expect(await ranks(h, res)).toEqual([
    ['ma', 'failed'],
    ['mb', 'failed'],
    ['mc', 'failed'],
  ])
  expect({ status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({ status: 529, retryAfter: null })
})

test("a 529, then the egress proxy refusing the gateway's credentials: the client hears the gateway's own 502", async () => {
  const h = await createHarness({
    grantUsd: 5,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      providers: { pa: anthropic('http://a.test', 'K'), pb: anthropic('http://b.test', 'K') },
      models: [model('ma', 'pa', 95), model('mb', 'pb', 90)],
    },
  })
  h.deps.fetch = (async (url: string) => {
    if (String(url).includes('a.test')) return refusal(529, 'overloaded_error', 'Overloaded')
    throw Object.assign(new Error('Failed to open tunnel: 407 Proxy Authentication Required'), {
      code: 'ERR_PROXY_TUNNEL',
    })
  }) as unknown as typeof fetch
  const res = await ask(h)
  expect(await ranks(h, res)).toEqual([
    ['ma', 'failed'],
    ['mb', 'failed'],
  ])
  expect(res.status).toBe(502)
  expect((await res.json()).error.message).toContain('egress proxy refused its credentials')
})

test('a refusal for good, the next model skipped for credit spent meanwhile: not said hopeless, for it went untried', async () => {
  const h = await createHarness({
    env: { A_KEY: 'a', B_KEY: 'b' },
    config: {
      catalog: { builtin: false },
      providers: { anth: anthropic('http://anth.test', 'A_KEY'), spare: anthropic('http://spare.test', 'B_KEY') },
      models: [model('alpha', 'anth', 90), model('spare', 'spare', 80, ['max', 'pro'])],
    },
  })
  await h.deps.admin.addGrant({ account: 'default', usd: '1', models: ['alpha'] })
  await h.deps.admin.addGrant({ account: 'default', usd: '0.01', models: ['spare'] })
  h.deps.fetch = (async (url: string, init: RequestInit) => {
    if (String(url).includes('anth.test')) {
      await Bun.sleep(150)
      return refusal(400, 'invalid_request_error', 'prompt is too long: 250000 tokens > 200000 maximum')
    }
    const { model: upstreamModel } = JSON.parse(String(init.body)) as { model: string }
    return Response.json({
      id: 'msg_up',
      type: 'message',
      role: 'assistant',
      model: upstreamModel,
      content: [{ type: 'text', text: 'hi' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 1_000 },
    })
  }) as unknown as typeof fetch
  const first = ask(h)
  await Bun.sleep(30)
  // Another request spends the spare model's grant while the first waits on alpha.
  expect((await ask(h, 'svc-pro')).status).toBe(200)
  const res = await first
  expect(await ranks(h, res)).toEqual([
    ['alpha', 'failed'],
    ['spare', 'skipped'],
  ])
  expect(res.status).toBe(400)
  expect(res.headers.get('x-should-retry')).toBeNull()
})
