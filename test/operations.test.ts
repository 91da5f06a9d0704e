import { afterAll, expect, test } from 'bun:test'
import { createLogger } from '../src/lib/log'
import { createHarness } from './support/harness'
import { startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'k' })
afterAll(() => sim.stop())

const config = {
  catalog: { builtin: false },
  providers: { a: { kind: 'anthropic' as const, base_url: sim.url, api_key_env: 'K' } },
  models: [
    {
      id: 'm',
      provider: 'a',
      upstream_model: 'm-up',
      profiles: ['pro' as const],
      quality: 90,
      input_usd_per_mtok: 1,
      output_usd_per_mtok: 2,
    },
  ],
}

test('healthz is alive; readyz needs a provider', async () => {
  const bare = await createHarness()
  expect(await (await bare.call('/healthz', { key: null })).json()).toEqual({ status: 'ok' })
  const notReady = await bare.call('/readyz', { key: null })
  expect(notReady.status).toBe(503)
  expect(await notReady.json()).toEqual({ status: 'not_ready', database: true, recording: true, providers: [] })
  const h = await createHarness({ env: { K: 'k' }, config })
  expect(await (await h.call('/readyz', { key: null })).json()).toEqual({
    status: 'ready',
    database: true,
    recording: true,
    providers: ['a'],
  })
})

// Probed every few seconds: listing every account took 122 ms at 200,000 of them, on the event loop.
test('readyz reads one row of the database, not every account; a database that cannot answer is not ready', async () => {
  const h = await createHarness({ env: { K: 'k' }, config })
  h.deps.ledger.listAccounts = () => Promise.reject(new Error('readyz must not list every account'))
  expect((await h.call('/readyz', { key: null })).status).toBe(200)
  h.deps.ledger.answersReads = () => Promise.reject(new Error('SQLITE_IOERR'))
  const notReady = await h.call('/readyz', { key: null })
  expect(notReady.status).toBe(503)
  expect(await notReady.json()).toMatchObject({ status: 'not_ready', database: false })
})

test('/metrics counts requests, tokens, cost and upstream errors in Prometheus text', async () => {
  const h = await createHarness({ grantUsd: 1, env: { K: 'k' }, config })
  sim.queue('m-up', { fault: { kind: 'status', status: 500 } })
  sim.setScenario('m-up', { text: 'hi', usage: { input: 10, cacheRead: 4, output: 3 } })
  const ask = (stream: boolean) =>
    h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: 10, stream, messages: [{ role: 'user', content: 'x' }] },
    })
  expect((await ask(false)).status).toBe(500) // one candidate, and it failed
  expect((await ask(false)).status).toBe(200)
  await (await ask(true)).text()
  const res = await h.call('/metrics', { key: null })
  expect(res.headers.get('content-type')).toContain('text/plain')
  const text = await res.text()
  expect(text).toContain('svc_requests_total{surface="messages",profile="pro",status="500"} 1')
  expect(text).toContain('svc_requests_total{surface="messages",profile="pro",status="200"} 2')
  expect(text).toContain('svc_tokens_total{model="m",provider="a",kind="input"} 20')
  expect(text).toContain('svc_tokens_total{model="m",provider="a",kind="cache_read"} 8')
  expect(text).toContain('svc_tokens_total{model="m",provider="a",kind="output"} 6')
  // (10 + 4) × 1000 + 3 × 2000 nanos per answer (the unpriced cache read costs the input price).
  expect(text).toContain('svc_cost_nanos_total{model="m",provider="a"} 40000')
  expect(text).toContain('svc_upstream_errors_total{provider="a",model="m",kind="api_error"} 1')
  expect(text).toContain('svc_streams_in_flight 0')
  expect(text).toMatch(/svc_time_to_first_byte_seconds_count\{surface="messages",profile="pro"\} 2/)
  expect(text).toContain('# TYPE svc_open_circuits gauge')
})

// /metrics shows platform-wide tokens and cost per model: a gateway reachable from outside could
// only keep it from anyone by a proxy in front. A token, where set, closes it.
test('/metrics with a metrics token set: the token or the admin token as a Bearer, else 401', async () => {
  const h = await createHarness({ env: { K: 'k', SVC_METRICS_TOKEN: 'scrape-secret' }, config })
  const scrape = (authorization?: string) =>
    h.call('/metrics', { key: null, headers: authorization ? { authorization } : {} })
  const missing = await scrape()
  expect(missing.status).toBe(401)
  expect(await missing.json()).toEqual({
    type: 'error',
    error: { type: 'authentication_error', message: 'missing metrics token: send `Authorization: Bearer <token>`' },
  })
  expect((await scrape('Bearer wrong')).status).toBe(401)
  // An svc API key is an account's, not the operator's.
  expect((await scrape(`Bearer ${h.key}`)).status).toBe(401)
  const byToken = await scrape('Bearer scrape-secret')
  expect(byToken.status).toBe(200)
  expect(await byToken.text()).toContain('# TYPE svc_open_circuits gauge')
  expect((await scrape('Bearer admin-secret')).status).toBe(200)
  // Health stays open for load balancers; the variable's name is the file's to choose.
  expect((await h.call('/healthz', { key: null })).status).toBe(200)
  const named = await createHarness({
    env: { K: 'k', SCRAPE: 'other-secret' },
    config: { ...config, server: { metrics_token_env: 'SCRAPE' } },
  })
  expect((await named.call('/metrics', { key: null })).status).toBe(401)
  const open = await named.call('/metrics', { key: null, headers: { authorization: 'Bearer other-secret' } })
  expect(open.status).toBe(200)
})

test('what an operator must see: refusals before any upstream counted, streams broken mid-way counted and logged at warn', async () => {
  const h = await createHarness({ grantUsd: 1, env: { K: 'k' }, config })
  const lines: string[] = []
  h.deps.log = createLogger('warn', (line) => lines.push(line))
  const ask = (key?: string | null) =>
    h.call('/compat-a/v1/messages', {
      method: 'POST',
      key,
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'x' }] },
    })
  expect((await ask('sk-svc-not-a-key')).status).toBe(401)
  expect((await ask(null)).status).toBe(401)
  sim.setScenario('m-up', {
    text: 'aaaa bbbb cccc',
    chunks: 3,
    usage: { input: 10, output: 3 },
    fault: { kind: 'cut', afterFrames: 4 },
  })
  const broken = await ask()
  expect(broken.status).toBe(200)
  await broken.text()
  const text = await (await h.call('/metrics', { key: null })).text()
  expect(text).toContain('svc_refused_requests_total{kind="authentication"} 2')
  expect(text).toContain('svc_upstream_errors_total{provider="a",model="m",kind="api_error"} 1')
  const logged = lines.map((line) => JSON.parse(line))
  expect(logged).toContainEqual(
    expect.objectContaining({
      level: 'warn',
      msg: 'request',
      request_id: broken.headers.get('x-request-id'),
      status: 'failed',
    }),
  )
})
