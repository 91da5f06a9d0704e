// The usage API while a request is still being served: its id (from the response headers) is
// found at once, as in_progress with uncommitted legs, and only the ledger's record after it ends.
import { afterAll, expect, test } from 'bun:test'
import type { Harness } from './support/harness'
import { startSimulator } from './support/simulator'
import { oneModelGateway } from './support/translation-gateway'

const sim = startSimulator({ apiKey: 'k' })
afterAll(() => sim.stop())

const harness = () => oneModelGateway(sim, { upstreamModel: 'slow-up', key: 'k' })

/** Starts a stream of four deltas 150 ms apart and reads it up to its first delta. */
async function streamUntilFirstDelta(h: Harness) {
  sim.setScenario('slow-up', { text: 'one two three four', chunks: 4, chunkDelayMs: 150 })
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'count to four' }] },
  })
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes('event: content_block_delta')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`stream ended before its first delta: ${text}`)
    text += decoder.decode(value, { stream: true })
  }
  const rest = async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return text
      text += decoder.decode(value, { stream: true })
    }
  }
  return { id: res.headers.get('x-request-id')!, rest }
}

test('a streaming request is found while it runs: in_progress, its leg uncommitted, nothing charged yet', async () => {
  const h = await harness()
  const { id, rest } = await streamUntilFirstDelta(h)

  const running = await h.call(`/v1/usage/requests/${id}`)
  expect(running.status).toBe(200)
  const shown = await running.json()
  expect(shown).toMatchObject({
    request_id: id,
    status: 'in_progress',
    http_status: 200,
    stream: true,
    selected_model_id: 'm',
    attempts: 1,
    charged_nanos: 0,
    ended_at: null,
    duration_ms: null,
    grant_charges: [],
    feedback: [],
  })
  expect(shown.usage_events).toHaveLength(1)
  const leg = shown.usage_events[0]
  expect(leg).toMatchObject({
    request_id: id,
    outcome: 'in_progress',
    committed: false,
    estimated: true,
    ended_at: null,
  })
  expect(leg.charged_nanos).toBe(0)
  expect(leg.input_tokens).toBeGreaterThan(0)
  expect(leg.output_tokens).toBeGreaterThan(0)
  expect(shown.provider_ranks[0]).toMatchObject({ model_id: 'm', status: 'chosen' })

  // The summary lists the running leg among the recent events, uncommitted.
  const summary = await (await h.call('/v1/usage')).json()
  expect(summary.recent_events[0]).toMatchObject({ request_id: id, committed: false, outcome: 'in_progress' })

  // Feedback waits for the end: a conflict, not a 404 that says the id does not exist.
  const early = await h.call(`/v1/usage/requests/${id}/feedback`, { method: 'POST', json: { rating: 'up' } })
  expect(early.status).toBe(409)
  expect((await early.json()).error).toMatchObject({ type: 'invalid_request_error' })

  expect(await rest()).toContain('event: message_stop')
  const ended = await (await h.call(`/v1/usage/requests/${id}`)).json()
  expect(ended).toMatchObject({ status: 'completed', http_status: 200 })
  expect(ended.usage_events[0]).toMatchObject({ outcome: 'ok', committed: true, estimated: false })
  expect(ended.usage_events[0].input_tokens).toBe(leg.input_tokens)
  expect(ended.usage_events[0].charged_nanos).toBeGreaterThan(0)
  expect(ended.charged_nanos).toBe(ended.usage_events[0].charged_nanos)
  const after = await (await h.call('/v1/usage')).json()
  expect(after.recent_events).toHaveLength(1)
  expect(after.recent_events[0]).toMatchObject({ request_id: id, committed: true })
  expect((await h.call(`/v1/usage/requests/${id}/feedback`, { method: 'POST', json: { rating: 'up' } })).status).toBe(
    201,
  )
})

test("another account's running request does not exist for it", async () => {
  const h = await harness()
  await h.deps.admin.createAccount('other')
  const { key } = await h.deps.admin.createKey({ account: 'other' })
  const { id, rest } = await streamUntilFirstDelta(h)

  const res = await h.call(`/v1/usage/requests/${id}`, { key })
  expect(res.status).toBe(404)
  expect(
    (await h.call(`/v1/usage/requests/${id}/feedback`, { method: 'POST', json: { rating: 'up' }, key })).status,
  ).toBe(404)
  expect((await (await h.call('/v1/usage', { key })).json()).recent_events).toEqual([])
  await rest()
})

test('/v1/usage lists at most `limit` recent legs, the running ones among them, newest first', async () => {
  const h = await harness()
  const streams = []
  for (let i = 0; i < 3; i++) {
    streams.push(await streamUntilFirstDelta(h))
    h.clock.advance(1)
  }
  const usage = (await (await h.call('/v1/usage?limit=2')).json()) as {
    recent_events: { request_id: string; outcome: string }[]
  }
  expect(usage.recent_events.map((e) => [e.request_id, e.outcome])).toEqual([
    [streams[2]!.id, 'in_progress'],
    [streams[1]!.id, 'in_progress'],
  ])
  for (const stream of streams) await stream.rest()
})
