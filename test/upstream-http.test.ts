// What a client of svc sees when its upstream answers in ways the HTTP layer must handle: an
// error whose body never comes, a redirect. Through the whole gateway and its own HTTP/1.1
// client, against servers on loopback.
import { afterAll, expect, test } from 'bun:test'
import { requestDetail } from './support/harness'
import { loopbackPair, twoModelGateway } from './support/scripted-upstream'

/** `first-up`'s answer, as each test sets it; `second-up` answers. */
let firstAnswers: () => Response = () => new Response(null, { status: 500 })
const upstream = loopbackPair(() => firstAnswers())
afterAll(() => upstream.stop())

const gateway = () =>
  twoModelGateway({
    kind: 'anthropic',
    routing: { first_byte_timeout_ms: 300 },
    baseUrl: upstream.baseUrl,
  })

const ask = (h: Awaited<ReturnType<typeof gateway>>) =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user', content: 'hello' }] },
  })

test('a 503 whose body never comes falls back within first_byte_timeout_ms', async () => {
  // The head, then a byte of the body, then nothing: the error's words never arrive.
  firstAnswers = () =>
    new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{')) }), {
      status: 503,
      headers: { 'content-type': 'application/json' },
    })
  const h = await gateway()
  const started = performance.now()
  const res = await ask(h)
  expect([res.status, (await res.json()).model]).toEqual([200, 'second-up'])
  expect(performance.now() - started).toBeLessThan(1500)
  const detail = await requestDetail(h, res.headers.get('x-request-id')!)
  expect(detail.provider_ranks.map((r: { model_id: string; status: string }) => [r.model_id, r.status])).toEqual([
    ['first', 'failed'],
    ['second', 'chosen'],
  ])
  expect(h.deps.health.view('p', 'first').error_rate).toBeGreaterThan(0)
}, 5_000)

test('an upstream redirect is the provider’s fault: the next candidate serves', async () => {
  firstAnswers = () =>
    new Response('moved', { status: 301, headers: { location: 'https://elsewhere.example/v1/messages' } })
  const h = await gateway()
  const res = await ask(h)
  expect([res.status, (await res.json()).model]).toEqual([200, 'second-up'])
  expect(h.deps.health.view('p', 'first').error_rate).toBeGreaterThan(0)
})

test('when every candidate redirects, the client gets a 502 that says so, not to retry, and no Location path', async () => {
  const moved = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      new Response('moved', { status: 308, headers: { location: 'https://elsewhere.example/v1/messages?sig=sekrit' } }),
  })
  const h = await twoModelGateway({ kind: 'anthropic', baseUrl: moved.url.href.replace(/\/$/, '') })
  const res = await ask(h)
  const body = await res.json()
  moved.stop(true)
  expect({ status: res.status, shouldRetry: res.headers.get('x-should-retry'), error: body.error }).toEqual({
    status: 502,
    shouldRetry: 'false',
    error: {
      type: 'api_error',
      message:
        "upstream redirected (HTTP 308 to an https:// URL), and svc does not follow redirects: check the provider's base_url",
    },
  })
})
