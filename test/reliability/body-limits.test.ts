// A body past [server] max_body_bytes, through the real server: Bun's own limit sat 1 KB above it
// and answered anything larger with an empty 413 ("413 status code (no body)" in both SDKs), not
// the route's error in its own shape; a chunked body (no Content-Length) met only Bun's limit.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { type GatewayDir, type GatewayProcess, gatewayDir, startGateway } from '../support/processes'
import { startSimulator } from '../support/simulator'

const SIM_KEY = 'sim-body-limits'
const LIMIT = 1_048_576
const sim = startSimulator({ apiKey: SIM_KEY })
let dir: GatewayDir
let gateway: GatewayProcess

beforeAll(async () => {
  dir = gatewayDir(`
[server]
max_body_bytes = ${LIMIT}

[catalog]
builtin = false

[providers.sim]
kind = "anthropic"
base_url = "${sim.url}"
api_key_env = "SIM_KEY"

[[models]]
id = "m"
provider = "sim"
upstream_model = "m-up"
profiles = ["pro", "max", "ultra_saver"]
quality = 80
input_usd_per_mtok = 1
output_usd_per_mtok = 1
`)
  gateway = await startGateway(dir, { env: { SIM_KEY } })
  sim.setScenario('m-up', { text: 'Read it all.', usage: { input: 10, output: 3 } })
})
afterAll(async () => {
  await gateway.kill()
  dir.remove()
  sim.stop()
})

/** A messages body of exactly `bytes` bytes. */
function messagesOf(bytes: number): string {
  const head = '{"model":"svc-pro","max_tokens":5,"messages":[{"role":"user","content":"'
  const tail = '"}]}'
  return head + 'a'.repeat(bytes - head.length - tail.length) + tail
}

/** The same bytes sent chunked: no Content-Length. */
const chunked = (text: string) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      const bytes = new TextEncoder().encode(text)
      for (let at = 0; at < bytes.length; at += 64 * 1024) controller.enqueue(bytes.subarray(at, at + 64 * 1024))
      controller.close()
    },
  })

const ask = (path: string, body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) =>
  fetch(`${gateway.url}${path}`, {
    method: 'POST',
    headers: {
      'x-api-key': dir.firstKey(),
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
      ...headers,
    },
    body,
    duplex: 'half',
  } as RequestInit)

const tooLarge = { type: 'error', error: { type: 'request_too_large', message: expect.stringContaining(`${LIMIT}`) } }

test('a body well past the limit gets the route’s 413 in its own shape, not an empty one', async () => {
  for (const bytes of [LIMIT + 10, LIMIT + 2048, 3 * LIMIT]) {
    const res = await ask('/compat-a/v1/messages', messagesOf(bytes))
    expect({ bytes, status: res.status, body: await res.json() }).toEqual({ bytes, status: 413, body: tooLarge })
  }
  const responses = await ask(
    '/compat-b/v1/responses',
    JSON.stringify({ model: 'svc-pro', input: 'a'.repeat(2 * LIMIT) }),
    {
      authorization: `Bearer ${dir.firstKey()}`,
    },
  )
  expect(responses.status).toBe(413)
  expect(await responses.json()).toEqual({
    error: expect.objectContaining({ type: 'invalid_request_error', message: expect.stringContaining(`${LIMIT}`) }),
  })
})

test('a chunked body is held to the same limit, and one within it is served', async () => {
  const over = await ask('/compat-a/v1/messages', chunked(messagesOf(LIMIT + 2048)))
  expect({ status: over.status, body: await over.json() }).toEqual({ status: 413, body: tooLarge })
  // Past the 64 KB read for free, and a prompt the model's window holds.
  const within = await ask('/compat-a/v1/messages', chunked(messagesOf(200_000)))
  expect(within.status).toBe(200)
  expect(await within.text()).toContain('Read it all.')
})

// The request made again at its size had no signal: a client that left was not seen, the upstream
// ran on, and the request was recorded completed and charged (a review).
test('a chunked request whose client leaves is stopped upstream and recorded as left, as a sized one is', async () => {
  sim.setScenario('m-up', { text: 'Slow answer.', usage: { input: 10, output: 3 }, firstByteDelayMs: 1_500 })
  try {
    for (const sized of [true, false]) {
      const before = sim.requests.length
      const leaving = new AbortController()
      const body = JSON.stringify({ model: 'svc-pro', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] })
      const asked = fetch(`${gateway.url}/compat-a/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': dir.firstKey(), 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: sized ? body : chunked(body),
        duplex: 'half',
        signal: leaving.signal,
      } as RequestInit).catch(() => 'left')
      await Bun.sleep(300)
      leaving.abort()
      expect(await asked).toBe('left')
      expect(await sim.waitForAbort(before, 3_000)).toBe(true)
      let status: string | undefined
      for (let i = 0; i < 50 && status !== 'aborted'; i++) {
        const page = await fetch(`${gateway.url}/v1/usage/requests?limit=1`, {
          headers: { authorization: `Bearer ${dir.firstKey()}` },
        })
        status = ((await page.json()) as { items: { status: string }[] }).items[0]?.status
        if (status !== 'aborted') await Bun.sleep(20)
      }
      expect({ sized, status }).toEqual({ sized, status: 'aborted' })
    }
  } finally {
    sim.setScenario('m-up', { text: 'Read it all.', usage: { input: 10, output: 3 } })
  }
})
