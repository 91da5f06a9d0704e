// svc behind a company's egress proxy (HTTPS_PROXY / HTTP_PROXY): upstream calls then go through
// fetch, which tunnels (CONNECT) for https and forwards in absolute form for http. A proxy's refusal
// of the gateway's credentials is the operator's to fix: it says nothing of the provider's health.
// Here fetch is given the proxy per call (as the environment would give it), for one model only.
import { afterAll, describe, expect, test } from 'bun:test'
import { createServer, type Server } from 'node:net'
import type { Harness } from './support/harness'
import { loopbackPair, twoModelGateway } from './support/scripted-upstream'

/** A proxy that answers every request, CONNECT or forwarded, 407. */
async function refusingProxy(): Promise<{ url: string; server: Server }> {
  const server = createServer((socket) => {
    socket.once('data', () =>
      socket.end(
        'HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic\r\nContent-Length: 0\r\n\r\n',
      ),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  return { url: `http://corp:wrong@127.0.0.1:${port}`, server }
}

const proxy = await refusingProxy()
const upstream = loopbackPair(() => new Response('unreachable: first-up goes through the proxy', { status: 500 }))
afterAll(() => {
  proxy.server.close()
  upstream.stop()
})

/** `first` is reached only through the proxy (its scheme picks CONNECT or absolute form); `second` directly. */
async function gateway(scheme: 'https' | 'http'): Promise<Harness> {
  const h = await twoModelGateway({ kind: 'anthropic', baseUrl: upstream.baseUrl })
  h.deps.fetch = (async (url: string, init: RequestInit) => {
    const { model } = JSON.parse(String(init.body)) as { model: string }
    if (model !== 'first-up') return fetch(url, init)
    return fetch(String(url).replace(/^http:/, `${scheme}:`), { ...init, proxy: proxy.url })
  }) as typeof fetch
  return h
}

const ask = (h: Harness) =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 20, messages: [{ role: 'user', content: 'hello' }] },
  })

describe.each(['https', 'http'] as const)('an egress proxy refusing the gateway’s credentials (%s)', (scheme) => {
  test('the next model serves; the leg names the proxy, never its password; the proxied model stays healthy', async () => {
    const h = await gateway(scheme)
    for (let i = 0; i < 4; i++) {
      const res = await ask(h)
      expect(res.status).toBe(200)
      const row = (await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()) as {
        selected_model_id: string
        usage_events: { model_id: string; error: string | null }[]
      }
      expect(row.selected_model_id).toBe('second')
      expect(row.usage_events.map((leg) => [leg.model_id, leg.error])).toEqual([
        [
          'first',
          "the gateway's egress proxy refused its credentials (HTTP 407): for the gateway's operator to fix (HTTPS_PROXY, HTTP_PROXY)",
        ],
        ['second', null],
      ])
    }
    // Four refusals in a row would have opened the provider's circuit for 30 s to 5 min, past the
    // moment the operator fixes the proxy.
    expect(h.deps.health.view('p', 'first').state).toBe('closed')
    expect(await (await h.call('/metrics', { key: null })).text()).toContain('svc_open_circuits 0')
  })
})

test('count_tokens does not follow a redirect through fetch: the key and prompt stay, the count is local', async () => {
  const elsewhere: string[] = []
  const thief = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      elsewhere.push(request.headers.get('x-api-key') ?? '')
      return Response.json({ input_tokens: 7 })
    },
  })
  const redirecting = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      new Response(null, { status: 307, headers: { location: `${thief.url.href}v1/messages/count_tokens` } }),
  })
  try {
    const h = await twoModelGateway({ kind: 'anthropic', baseUrl: redirecting.url.href.replace(/\/$/, '') })
    h.deps.fetch = fetch
    const res = await h.call('/compat-a/v1/messages/count_tokens', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', messages: [{ role: 'user', content: 'hello there, how many tokens is this?' }] },
    })
    expect(res.status).toBe(200)
    const { input_tokens } = (await res.json()) as { input_tokens: number }
    expect(input_tokens).toBeGreaterThan(7)
    expect(elsewhere).toEqual([])
  } finally {
    thief.stop(true)
    redirecting.stop(true)
  }
})
