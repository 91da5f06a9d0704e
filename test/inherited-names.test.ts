// Names every JavaScript object answers to ("constructor", "toString", "__proto__"…) sent where svc
// looks a name up: a client's `model`, a dashboard file, an upstream's error type. The fuzzer found
// `model: "constructor"` taken for a routing profile; the function it named became a metrics label,
// and from then on /metrics answered 500 to every scrape.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHarness } from './support/harness'

const inherited = ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf']

/**
 * An Anthropic upstream whose errors carry an inherited name as their type: a 503 to JSON
 * requests, and to streams a 200 whose first event is an in-band error.
 */
const upstream = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const body = (await request.json()) as { stream?: boolean }
    if (!body.stream) {
      return Response.json({ type: 'error', error: { type: 'constructor', message: 'odd upstream' } }, { status: 503 })
    }
    const error = JSON.stringify({ type: 'error', error: { type: 'toString', message: 'odd upstream' } })
    return new Response(`event: error\ndata: ${error}\n\n`, { headers: { 'content-type': 'text/event-stream' } })
  },
})
afterAll(() => upstream.stop(true))

const h = await createHarness({
  grantUsd: 5,
  env: { ODD_KEY: 'odd' },
  config: {
    catalog: { builtin: false },
    providers: { odd: { kind: 'anthropic', base_url: `http://127.0.0.1:${upstream.port}`, api_key_env: 'ODD_KEY' } },
    models: [
      {
        id: 'odd-model',
        provider: 'odd',
        upstream_model: 'odd-up',
        profiles: ['max', 'pro', 'ultra_saver'],
        quality: 90,
        input_usd_per_mtok: 1,
        output_usd_per_mtok: 2,
      },
    ],
  },
})

const metricsStillRender = async () => {
  const res = await h.call('/metrics')
  expect(res.status).toBe(200)
  const text = await res.text()
  expect(text).toContain('svc_requests_total')
  expect(text).not.toContain('function')
}

describe('names every object inherits', () => {
  test('as the model: a 400 naming the profiles, on both surfaces, and /metrics still renders', async () => {
    for (const model of inherited) {
      const messages = await h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(messages.status).toBe(400)
      expect((await messages.json()).error).toEqual({
        type: 'invalid_request_error',
        message: `model must be a routing profile, one of svc-pro, svc-max, svc-ultra-saver (got "${model}")`,
      })
      const responses = await h.call('/compat-b/v1/responses', { method: 'POST', json: { model, input: 'hi' } })
      expect(responses.status).toBe(400)
      expect((await responses.json()).error).toMatchObject({ type: 'invalid_request_error', param: 'model' })
    }
    await metricsStillRender()
  })

  test('as a dashboard file: 404', async () => {
    for (const name of inherited) {
      const res = await h.call(`/dashboard/${name}`, { key: null })
      expect(res.status).toBe(404)
      expect((await res.json()).error.type).toBe('not_found_error')
    }
  })

  test("as an upstream's error type: an unknown type, read from its status (503: an overload); /metrics still renders", async () => {
    const json = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-max', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(json.status).toBe(529)
    expect((await json.json()).error).toEqual({ type: 'overloaded_error', message: 'odd upstream' })

    const stream = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-max', max_tokens: 5, stream: true, messages: [{ role: 'user', content: 'hi' }] },
    })
    // The error came before anything reached the client: an error status, not a stream.
    expect(stream.status).toBe(500)
    expect((await stream.json()).error).toEqual({ type: 'api_error', message: 'odd upstream' })
    await metricsStillRender()
  })
})
