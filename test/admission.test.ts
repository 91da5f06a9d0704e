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

/** A gateway whose requests in flight may hold 1 MiB: one ~300 KB request fills it. */
async function gateway() {
  const h = await createHarness({
    grantUsd: 50,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      server: { request_memory_mb: 1 },
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

test('the default budget: the memory limit less 128 MiB, and never under a quarter of it', () => {
  const mib = 1024 ** 2
  expect(defaultRequestBudget(256 * mib)).toBe(128 * mib)
  expect(defaultRequestBudget(4096 * mib)).toBe(3968 * mib)
  expect(defaultRequestBudget(128 * mib)).toBe(32 * mib)
})
