// Requests in flight within svc's memory budget (src/relay/admission.ts): past it a model request
// is answered 529 overloaded_error (503 on the responses route) with a retry-after, in the
// surface's own shape, before anything is routed, held or recorded; every request, however it
// ends, gives its place back. Served by a real Bun server, so bodies carry their Content-Length.
import Anthropic from '@anthropic-ai/sdk'
import { afterAll, expect, test } from 'bun:test'
import OpenAI from 'openai'
import type { ModelSection } from '../src/config/schema'
import { defaultRequestBudget, expectedBytes } from '../src/relay/admission'
import { createHarness } from './support/harness'
import { startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'k' })
afterAll(() => sim.stop())

const models: ModelSection[] = [
  {
    id: 'claude',
    provider: 'a',
    upstream_model: 'claude-up',
    profiles: ['pro'],
    quality: 90,
    context_window: 2_000_000,
    input_usd_per_mtok: 1,
    output_usd_per_mtok: 1,
  },
]

/**
 * A gateway whose requests in flight may hold 1 MiB: one ~300 KB request fills it. One past it waits
 * `waitSeconds` for room (none: refused at once).
 */
async function gateway(waitSeconds = 0) {
  const h = await createHarness({
    grantUsd: 50,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      server: { request_memory_mb: 1, request_wait_seconds: waitSeconds },
      providers: { a: { kind: 'anthropic', base_url: sim.url, api_key_env: 'K' } },
      models,
    },
  })
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => h.app.handle(request) })
  const url = `http://127.0.0.1:${server.port}`
  const anthropic = new Anthropic({ apiKey: h.key, baseURL: `${url}/compat-a`, maxRetries: 0 })
  const openai = new OpenAI({ apiKey: h.key, baseURL: `${url}/compat-b/v1`, maxRetries: 0 })
  /** The account's requests as the usage API lists them (written first, as every ledger read). */
  const recorded = async () => (await (await h.call('/v1/usage/requests?limit=100')).json()).items.length
  return { h, server, url, anthropic, openai, recorded }
}

/** A prompt of about `bytes`: ~300 KB takes 64 KiB + 3 × 300 KB of the 1 MiB budget, and two do not fit. */
const prompt = (bytes: number) => 'lorem ipsum '.repeat(Math.ceil(bytes / 12)).slice(0, bytes)
const big = prompt(300_000)

/** A stream of 20 deltas 100 ms apart, open until it is read to its end. */
async function openStream(anthropic: Anthropic) {
  sim.setScenario('claude-up', { text: 'word '.repeat(20).trim(), chunks: 20, chunkDelayMs: 100 })
  const stream = anthropic.messages.stream({
    model: 'svc-pro',
    max_tokens: 100,
    messages: [{ role: 'user', content: big }],
  })
  const events = stream[Symbol.asyncIterator]()
  await events.next()
  return { stream, rest: () => stream.finalMessage() }
}

test('past the budget a request is answered 529 overloaded_error with a retry-after, recorded nowhere', async () => {
  const g = await gateway()
  await using _ = g.server
  const open = await openStream(g.anthropic)

  const refused = await fetch(`${g.url}/compat-a/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': g.h.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'svc-pro', max_tokens: 10, messages: [{ role: 'user', content: big }] }),
  })
  expect(refused.status).toBe(529)
  expect(refused.headers.get('retry-after')).toBe('1')
  expect(refused.headers.get('request-id')).toBeNull()
  const body = (await refused.json()) as { error: { message: string } }
  expect(body).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } })
  expect(body.error.message).toMatch(
    /^svc is serving as many requests as its memory allows \(1 in flight, about 1 of 1 MB\): retry shortly$/,
  )

  // The OpenAI SDK hears OpenAI's status for an overload, and its error's shape.
  const viaResponses = await g.openai.responses
    .create({ model: 'svc-pro', input: big, max_output_tokens: 10 })
    .catch((err: unknown) => err)
  expect(viaResponses).toBeInstanceOf(OpenAI.APIError)
  expect(viaResponses).toMatchObject({ status: 503, type: 'server_error' })
  expect((viaResponses as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('1')

  // A small request still fits beside the big one: the budget is by size, not by count.
  sim.setScenario('claude-up', { text: 'small' })
  const small = await g.anthropic.messages.create({
    model: 'svc-pro',
    max_tokens: 10,
    messages: [{ role: 'user', content: 'hi' }],
  })
  expect(small.content).toMatchObject([{ type: 'text', text: 'small' }])

  expect((await open.rest()).content).toMatchObject([{ type: 'text', text: 'word '.repeat(20).trim() }])
  // Once the stream has ended, its place is free: the same big request is served.
  const served = await g.anthropic.messages.create({
    model: 'svc-pro',
    max_tokens: 10,
    messages: [{ role: 'user', content: big }],
  })
  expect(served.type).toBe('message')
  expect(await g.recorded()).toBe(3)
  const metrics = await (await fetch(`${g.url}/metrics`)).text()
  expect(metrics).toContain('svc_refused_requests_total{kind="overloaded"} 2')
})

/** The first line of what svc answers a request whose headers and first `sent` bytes alone are written. */
async function answerToHeadersAlone(url: string, path: string, key: string, declared: number, sent: number) {
  const { hostname, port } = new URL(url)
  let answer = ''
  const socket = await Bun.connect({
    hostname,
    port: Number(port),
    socket: {
      data(_, chunk) {
        answer += new TextDecoder().decode(chunk)
      },
    },
  })
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: ${hostname}\r\nx-api-key: ${key}\r\nanthropic-version: 2023-06-01\r\n` +
      `content-type: application/json\r\ncontent-length: ${declared}\r\n\r\n${'{'.padEnd(sent, ' ')}`,
  )
  for (let waited = 0; !answer.includes('\r\n\r\n') && waited < 3000; waited += 20) await Bun.sleep(20)
  socket.end()
  return answer.split('\r\n')[0]
}

// A burst of 1,000 bodies of 1 MB killed svc in 256 MiB with the budget checked only once each body
// was read and parsed (an audit): the place is taken by the declared size, before any is read.
test.each([
  ['a small body', '/compat-a/v1/messages', 30_000],
  ['a large body, whose key is checked first', '/compat-a/v1/messages', 2_000_000],
  // Elysia routes these to the same handler.
  ['a path with a trailing slash', '/compat-a/v1/messages/', 2_000_000],
  ['a path with its slash doubled', '//compat-a/v1/messages', 30_000],
])('past the budget, %s is refused by its Content-Length before the body is sent', async (_, path, declared) => {
  const g = await gateway()
  await using _server = g.server
  const open = await openStream(g.anthropic)
  expect(await answerToHeadersAlone(g.url, path, g.h.key, declared, 10)).toStartWith('HTTP/1.1 529')
  await open.rest()
})

/** A request that waits: its body within the quarter of the budget that waiting bodies may take. */
const waiting = prompt(200_000)

// The SDKs retry a 529 twice, a second apart, and gave up on most of a burst whose streams last
// longer (an audit: 470 of 1,000 failed): a request past the budget waits for room, its body unread.
test('past the budget a request waits for room and is served when a stream ends', async () => {
  const g = await gateway(10)
  await using _ = g.server
  const open = await openStream(g.anthropic)
  // The open stream's answer is planned already; set after it ends, the waiter's raced its start.
  sim.setScenario('claude-up', { text: 'after the wait' })
  const started = performance.now()
  const waited = g.anthropic.messages.create({
    model: 'svc-pro',
    max_tokens: 10,
    messages: [{ role: 'user', content: waiting }],
  })
  expect((await open.rest()).content).toMatchObject([{ type: 'text', text: 'word '.repeat(20).trim() }])
  expect((await waited).content).toMatchObject([{ type: 'text', text: 'after the wait' }])
  expect(performance.now() - started).toBeGreaterThan(1_000)
})

test('a request that waits past request_wait_seconds gets its 529', async () => {
  const g = await gateway(0.3)
  await using _ = g.server
  const open = await openStream(g.anthropic)
  const started = performance.now()
  const refused = await g.anthropic.messages
    .create({ model: 'svc-pro', max_tokens: 10, messages: [{ role: 'user', content: waiting }] })
    .catch((err: unknown) => err)
  expect(refused).toMatchObject({ status: 529, error: { error: { type: 'overloaded_error' } } })
  expect(performance.now() - started).toBeGreaterThanOrEqual(290)
  expect(performance.now() - started).toBeLessThan(1_500)
  await open.rest()
})

test('a request alone is served whatever its size', async () => {
  const g = await gateway()
  await using _ = g.server
  sim.setScenario('claude-up', { text: 'read it all' })
  expect(expectedBytes(1_200_000)).toBeGreaterThan(1024 ** 2)
  const message = await g.anthropic.messages.create({
    model: 'svc-pro',
    max_tokens: 10,
    messages: [{ role: 'user', content: prompt(1_200_000) }],
  })
  expect(message.content).toMatchObject([{ type: 'text', text: 'read it all' }])
})

test('every way a request ends gives its place back: failed, refused, aborted, gathered', async () => {
  const g = await gateway()
  await using _ = g.server
  const bigRequest = { model: 'svc-pro', max_tokens: 10, messages: [{ role: 'user' as const, content: big }] }
  // Held places would show as a refusal of the next big request, each being alone in flight.
  const next = async () => {
    sim.setScenario('claude-up', { text: 'ok' })
    expect((await g.anthropic.messages.create(bigRequest)).content).toMatchObject([{ type: 'text', text: 'ok' }])
  }

  sim.setScenario('claude-up', { fault: { kind: 'status', status: 500 } })
  expect(await g.anthropic.messages.create(bigRequest).catch((err) => err.status)).toBe(500)
  await next()

  // Refused before routing: a model that is no profile, a body the decoder refuses.
  expect(await g.anthropic.messages.create({ ...bigRequest, model: 'gpt-4' }).catch((err) => err.status)).toBe(400)
  const noMessages = { ...bigRequest, messages: [], system: big }
  expect(await g.anthropic.messages.create(noMessages).catch((err) => err.status)).toBe(400)
  await next()

  // Refused before the relay: a wrong key, a body that is no JSON or not a request, no version header.
  const post = (headers: Record<string, string>, body: string) =>
    fetch(`${g.url}/compat-a/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': g.h.key,
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
        ...headers,
      },
      body,
    })
  const bigBody = JSON.stringify(bigRequest)
  expect((await post({ 'x-api-key': 'sk-svc-wrong' }, bigBody)).status).toBe(401)
  expect((await post({}, `${bigBody.slice(0, -1)},`)).status).toBe(400)
  expect((await post({}, JSON.stringify({ ...bigRequest, max_tokens: 'many' }))).status).toBe(400)
  expect((await post({ 'anthropic-version': '' }, bigBody)).status).toBe(400)
  await next()

  // Refused while the database refuses writes (a full disk): every such request held its place,
  // and once 15 had, every request was refused until a restart (a review).
  const refusesWrites = g.h.deps.ledger.refusesWrites
  g.h.deps.ledger.refusesWrites = () => true
  for (let i = 0; i < 3; i++) expect((await post({}, bigBody)).status).toBe(503)
  g.h.deps.ledger.refusesWrites = refusesWrites
  await next()

  // A client that leaves while sending its body.
  const { hostname, port } = new URL(g.url)
  const leaving = await Bun.connect({ hostname, port: Number(port), socket: { data() {} } })
  leaving.write(
    `POST /compat-a/v1/messages HTTP/1.1\r\nhost: ${hostname}\r\nx-api-key: ${g.h.key}\r\n` +
      'anthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: 30000\r\n\r\n{"model"',
  )
  await Bun.sleep(50)
  leaving.end()
  await Bun.sleep(100)
  await next()

  // The Anthropic SDK's beta calls carry a query: admitted and given back all the same.
  sim.setScenario('claude-up', { text: 'beta' })
  const beta = await fetch(`${g.url}/compat-a/v1/messages?beta=true`, {
    method: 'POST',
    headers: { 'x-api-key': g.h.key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: bigBody,
  })
  expect(beta.status).toBe(200)
  await next()

  // A stream its client leaves halfway.
  const open = await openStream(g.anthropic)
  open.stream.abort()
  expect(await sim.waitForAbort(sim.requests.length - 1)).toBe(true)
  await Bun.sleep(50)
  await next()

  // A stream that breaks after its first byte, and one its upstream resets.
  sim.setScenario('claude-up', { text: 'a b c d', chunks: 4, fault: { kind: 'reset', afterFrames: 3 } })
  await g.anthropic.messages
    .stream(bigRequest)
    .finalMessage()
    .catch(() => undefined)
  await next()
})

test('the default budget: the memory limit less 160 MiB, and never under a quarter of it', () => {
  const mib = 1024 ** 2
  expect(defaultRequestBudget(256 * mib)).toBe(96 * mib)
  expect(defaultRequestBudget(512 * mib)).toBe(352 * mib)
  expect(defaultRequestBudget(4096 * mib)).toBe(3936 * mib)
  expect(defaultRequestBudget(128 * mib)).toBe(32 * mib)
})
