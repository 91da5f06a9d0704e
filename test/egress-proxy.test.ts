// svc behind a company's egress proxy (HTTPS_PROXY / HTTP_PROXY): upstream calls then go through
// fetch, which tunnels (CONNECT) for https and forwards in absolute form for http. A proxy's refusal
// of the gateway's credentials is the operator's to fix: it says nothing of the provider's health.
// In process, fetch is given the proxy per call (as the environment would give it) for one model;
// a real `svc serve` with HTTP_PROXY in its environment shows the forwarded request's 407.
import { afterAll, expect, test } from 'bun:test'
import { createServer, type Server } from 'node:net'
import type { Harness } from './support/harness'
import { gatewayDir, startGateway } from './support/processes'
import { loopbackPair, twoModelGateway } from './support/scripted-upstream'
import { startSimulator } from './support/simulator'

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

/** `first` is reached only through the proxy, in a CONNECT tunnel (https); `second` directly. */
async function gateway(): Promise<Harness> {
  const h = await twoModelGateway({ kind: 'anthropic', baseUrl: upstream.baseUrl })
  h.deps.fetch = (async (url: string, init: RequestInit) => {
    const { model } = JSON.parse(String(init.body)) as { model: string }
    if (model !== 'first-up') return fetch(url, init)
    return fetch(String(url).replace(/^http:/, 'https:'), { ...init, proxy: proxy.url })
  }) as typeof fetch
  return h
}

const ask = (h: Harness) =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 20, messages: [{ role: 'user', content: 'hello' }] },
  })

const legsOf = async (h: Harness, res: Response) => {
  const row = (await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()) as {
    selected_model_id: string
    usage_events: { model_id: string; error: string | null }[]
  }
  return { served: row.selected_model_id, legs: row.usage_events.map((leg) => [leg.model_id, leg.error]) }
}

const refused =
  "the gateway's egress proxy refused its credentials (HTTP 407): for the gateway's operator to fix (HTTPS_PROXY, HTTP_PROXY)"

test('a proxy refusing the tunnel (407): the next model serves, the leg names the proxy, never its password, and the proxied model stays healthy', async () => {
  const h = await gateway()
  for (let i = 0; i < 4; i++) {
    const res = await ask(h)
    expect(res.status).toBe(200)
    expect(await legsOf(h, res)).toEqual({
      served: 'second',
      legs: [
        ['first', refused],
        ['second', null],
      ],
    })
  }
  // Four refusals in a row would have opened the provider's circuit for 30 s to 5 min, past the
  // moment the operator fixes the proxy.
  expect(h.deps.health.view('p', 'first').state).toBe('closed')
  expect(await (await h.call('/metrics', { key: null })).text()).toContain('svc_open_circuits 0')
})

test('a 407 an upstream answers itself, with no proxy on its way, is the upstream’s failure and counts against it', async () => {
  const answering407 = loopbackPair(
    () => new Response('{"error":"proxy auth"}', { status: 407, headers: { 'proxy-authenticate': 'Basic' } }),
  )
  try {
    const h = await twoModelGateway({ kind: 'anthropic', baseUrl: answering407.baseUrl })
    for (let i = 0; i < 3; i++) {
      const res = await ask(h)
      expect(res.status).toBe(200)
      const { served, legs } = await legsOf(h, res)
      expect({ served, legs }).toEqual({
        served: 'second',
        legs: [
          ['first', 'upstream answered HTTP 407: a proxy on the way to it asks for credentials svc was not given'],
          ['second', null],
        ],
      })
    }
    expect(h.deps.health.view('p', 'first').state).toBe('open')
  } finally {
    answering407.stop()
  }
})

test('with every upstream answering 407, a Responses client hears an outage, not a mistake of its own', async () => {
  const everywhere407 = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => new Response('proxy auth', { status: 407, headers: { 'proxy-authenticate': 'Basic' } }),
  })
  try {
    const h = await twoModelGateway({ kind: 'anthropic', baseUrl: everywhere407.url.href.replace(/\/$/, '') })
    const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { model: 'svc-pro', input: 'hello' } })
    expect(res.status).toBeGreaterThanOrEqual(500)
    expect(res.headers.get('x-should-retry')).not.toBe('false')
  } finally {
    everywhere407.stop(true)
  }
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

test('a real svc serve with HTTP_PROXY set: the proxy’s 407 to a forwarded request is the proxy’s, and the model exempted by NO_PROXY serves', async () => {
  const sim = startSimulator({ apiKey: 'sim-key' })
  const port = new URL(sim.url).port
  const dir = gatewayDir(`
[catalog]
builtin = false

[billing.starter_grant]
usd = 5

[providers.corp]
kind = "anthropic"
base_url = "http://127.0.0.1:${port}"
api_key_env = "SIM_KEY"

[providers.direct]
kind = "anthropic"
base_url = "http://localhost:${port}"
api_key_env = "SIM_KEY"

[[models]]
id = "proxied"
provider = "corp"
upstream_model = "sim-up"
profiles = ["pro"]
quality = 90
input_usd_per_mtok = 3
output_usd_per_mtok = 15

[[models]]
id = "exempt"
provider = "direct"
upstream_model = "sim-up"
profiles = ["pro"]
quality = 80
input_usd_per_mtok = 3
output_usd_per_mtok = 15
`)
  const svc = await startGateway(dir, { env: { SIM_KEY: 'sim-key', HTTP_PROXY: proxy.url, NO_PROXY: 'localhost' } })
  try {
    const res = await fetch(`${svc.url}/compat-a/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': dir.firstKey(), 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'svc-pro', max_tokens: 20, messages: [{ role: 'user', content: 'hello' }] }),
    })
    expect(res.status).toBe(200)
    const row = (await (
      await fetch(`${svc.url}/v1/usage/requests/${res.headers.get('x-request-id')}`, {
        headers: { authorization: `Bearer ${dir.firstKey()}` },
      })
    ).json()) as { selected_model_id: string; usage_events: { model_id: string; error: string | null }[] }
    expect(row.selected_model_id).toBe('exempt')
    expect(row.usage_events.map((leg) => [leg.model_id, leg.error])).toEqual([
      ['proxied', refused],
      ['exempt', null],
    ])
    expect(svc.stderr()).not.toContain('wrong')
  } finally {
    await svc.kill()
    dir.remove()
    await sim.stop()
  }
}, 30_000)
