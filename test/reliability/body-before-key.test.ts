// A large body is read only from a known account: no key, no parse. Before, svc parsed (and
// validated, and walked for depth) up to 32 MB for anyone, key or not: an audit took it from 78 MB
// to 1.2 GB of memory with one such request and no credentials.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHarness, type TestResponse } from '../support/harness'
import { simClaude, simProviders } from '../support/sim-models'
import { startSimulator } from '../support/simulator'

const sim = startSimulator({ apiKey: 'sim' })
afterAll(() => sim.stop())

/** Over a socket: a body's Content-Length is what a client sends (app.handle's Requests have none). */
async function gateway() {
  const h = await createHarness({
    grantUsd: 5,
    env: { SIM_KEY: 'sim' },
    config: { catalog: { builtin: false }, providers: simProviders(sim.url), models: [simClaude()] },
  })
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => h.app.handle(r) })
  const post = (path: string, body: string | ReadableStream, headers: Record<string, string>): Promise<TestResponse> =>
    fetch(`${server.url}${path.slice(1)}`, { method: 'POST', headers, body })
  return { h, post, [Symbol.asyncDispose]: () => server.stop(true) }
}

/** Not JSON at all: a route that parsed it would answer 400, one that checks the key first 401. */
const notJson = `{"model":"svc-max","messages":[${'x'.repeat(1024 * 1024)}`

describe('a large body before its key', () => {
  test('no key or a wrong one: 401 in the surface’s shape, the body never parsed', async () => {
    await using g = await gateway()
    for (const [path, key, type] of [
      ['/compat-a/v1/messages', undefined, 'authentication_error'],
      ['/anthropic/v1/messages/count_tokens', 'svc-notakeynotakeynotakey', 'authentication_error'],
      ['/compat-b/v1/responses', undefined, 'invalid_request_error'],
    ] as const) {
      const res = await g.post(path, notJson, {
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
      })
      expect(res.status).toBe(401)
      const { error } = await res.json()
      expect(error.type).toBe(type)
      // OpenAI's shape carries a code; Anthropic's does not.
      expect(error.code).toBe(path.startsWith('/compat-b') ? 'invalid_api_key' : undefined)
    }
    expect(sim.requests).toEqual([])
  })

  test('a known key: the large body is read and served, its key checked once', async () => {
    await using g = await gateway()
    sim.setScenario('claude-c-up', { text: 'Read it all.', usage: { input: 30_000, output: 4 } })
    let lookups = 0
    const authenticate = g.h.deps.auth.authenticate.bind(g.h.deps.auth)
    g.h.deps.auth.authenticate = (key) => {
      lookups++
      return authenticate(key)
    }
    const body = { model: 'svc-max', max_tokens: 10, messages: [{ role: 'user', content: 'word '.repeat(30_000) }] }
    const res = await g.post('/compat-a/v1/messages', JSON.stringify(body), {
      'content-type': 'application/json',
      'anthropic-version': '2023-06-01',
      'x-api-key': g.h.key,
    })
    expect(res.status).toBe(200)
    expect((await res.json()).content[0].text).toBe('Read it all.')
    expect(lookups).toBe(1)
  })

  test('the other routes take no large body at all, sized or not', async () => {
    await using g = await gateway()
    const admin = await g.post('/v1/admin/accounts', JSON.stringify({ name: 'x'.repeat(100_000) }), {
      authorization: 'Bearer admin-secret',
      'content-type': 'application/json',
    })
    expect(admin.status).toBe(413)
    expect((await admin.json()).error.message).toBe('request body is 100011 bytes; this route takes at most 65536')
    // A chunked body (no Content-Length) to the sign-in page.
    const chunks = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('user_code=ABCD-EFGH&decision=deny'))
        controller.close()
      },
    })
    const login = await g.post('/login', chunks, { 'content-type': 'application/x-www-form-urlencoded' })
    expect(login.status).toBe(413)
    expect((await login.json()).error.message).toContain('of unknown size (no Content-Length)')
  })
})
