import { afterAll, expect, test } from 'bun:test'
import { type Harness, requestDetail, sdkClients } from './support/harness'
import { anthropicTextAnswer, loopbackPair, twoModelGateway } from './support/scripted-upstream'
import { startSimulator } from './support/simulator'
import { oneModelGateway } from './support/translation-gateway'

const sim = startSimulator({ apiKey: 'k' })
afterAll(() => sim.stop())

/** One provider (Anthropic unless told) on the simulator behind svc-pro, with these routing timeouts. */
const harnessWith = (routing: Record<string, number>, upstreamModel: string, kind?: 'anthropic' | 'openai-chat') =>
  oneModelGateway(sim, { upstreamModel, key: 'k', routing, kind })

test('a stream may outlive the connect and first-byte timeouts: they bound the start, not the whole stream', async () => {
  const h = await harnessWith({ connect_timeout_ms: 150, first_byte_timeout_ms: 250 }, 'long-up')
  // Ten deltas 80 ms apart: the stream lasts ~0.7 s, several times both timeouts.
  sim.setScenario('long-up', { text: 'one two three four five six seven eight nine ten', chunks: 10, chunkDelayMs: 80 })
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'count' }] },
  })
  const body = await res.text()
  expect(body).toContain('event: message_stop')
  expect(body).not.toContain('event: error')
  const record = await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()
  expect(record.status).toBe('completed')
})

test('an upstream that goes silent mid-stream past idle_timeout_ms ends the stream with an error event; the leg is estimated', async () => {
  const h = await harnessWith({ idle_timeout_ms: 150 }, 'stalls-up')
  // The first delta comes at once, the next only after 2 s: far past the idle limit.
  sim.setScenario('stalls-up', { text: 'first second', chunks: 2, chunkDelayMs: 2000 })
  const started = performance.now()
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go' }] },
  })
  expect(res.status).toBe(200)
  const body = await res.text()
  expect(performance.now() - started).toBeLessThan(1500)
  expect(body).toContain('event: content_block_delta')
  expect(body).toContain('event: error')
  expect(body).toContain('silent for 150 ms')
  expect(body).not.toContain('event: message_stop')
  const record = await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()
  expect(record.status).toBe('failed')
  expect(record.usage_events).toEqual([expect.objectContaining({ outcome: 'failed', estimated: true })])
  // Charged for what flowed: the prompt and the one delta, not the whole answer.
  expect(record.usage_events[0].output_tokens).toBeGreaterThan(0)
  expect(record.charged_nanos).toBe(record.total_cost_nanos)
})

/** The official SDKs against the in-process app; `raw` keeps every body the app streamed back. */
function sdks(h: Harness) {
  const raw: Promise<string>[] = []
  const handle = async (request: Request) => {
    const res = await h.app.handle(request)
    if (!res.body) return res
    const [forSdk, forTest] = res.body.tee()
    raw.push(new Response(forTest).text())
    return new Response(forSdk, { status: res.status, headers: res.headers })
  }
  return { ...sdkClients(h, { handle }), raw }
}

/** Three deltas 150 ms apart with no pings of the upstream's own: two silences of 150 ms. */
const quietScenario = { text: 'one two three', chunks: 3, chunkDelayMs: 150, pings: false }

test('a silent upstream mid-stream: the Anthropic client gets ping events between the deltas, and its SDK the whole message', async () => {
  const h = await harnessWith({ ping_interval_ms: 40 }, 'thinks-up')
  sim.setScenario('thinks-up', quietScenario)
  const { anthropic, raw } = sdks(h)
  const stream = anthropic.messages.stream({
    model: 'svc-pro',
    max_tokens: 100,
    messages: [{ role: 'user', content: 'go' }],
  })
  const message = await stream.finalMessage()
  expect(message.content.map((block) => (block.type === 'text' ? block.text : block.type))).toEqual(['one two three'])
  const events = [...(await raw[0]!).matchAll(/^event: (\w+)$/gm)].map((m) => m[1])
  // Pings only once the stream has started, and ~3 in each 150 ms silence (late timers on a loaded machine may lose some).
  expect(events[0]).toBe('message_start')
  const between = events.slice(events.indexOf('content_block_start'), events.lastIndexOf('content_block_delta'))
  expect(between.filter((e) => e === 'ping').length).toBeGreaterThanOrEqual(2)
  expect(await raw[0]!).toContain('event: ping\ndata: {"type":"ping"}\n\n')
  const record = await (await h.call(`/v1/usage/requests/${message.id.replace(/^msg_/, '')}`)).json()
  expect(record.status).toBe('completed')
  expect(record.usage_events).toEqual([expect.objectContaining({ outcome: 'ok', estimated: false, output_tokens: 4 })])
})

test('a silent upstream mid-stream: the Responses client gets SSE comments, which its SDK skips', async () => {
  const h = await harnessWith({ ping_interval_ms: 40 }, 'thinks-chat', 'openai-chat')
  sim.setScenario('thinks-chat', quietScenario)
  const { openai, raw } = sdks(h)
  const stream = await openai.responses.create({ model: 'svc-pro', input: 'go', stream: true })
  const types: string[] = []
  let text = ''
  for await (const event of stream) {
    types.push(event.type)
    if (event.type === 'response.output_text.delta') text += event.delta
  }
  expect(text).toBe('one two three')
  expect(types.at(-1)).toBe('response.completed')
  const body = await raw[0]!
  expect(body.split(': keep-alive\n\n').length - 1).toBeGreaterThanOrEqual(2)
  // Never before the stream's first event.
  expect(body.startsWith('event: response.created')).toBe(true)
})

test('a steady stream gets no keep-alives, and pings never hold off the idle timeout', async () => {
  const steady = await harnessWith({ ping_interval_ms: 100 }, 'steady-up')
  sim.setScenario('steady-up', { text: 'a b c d e f', chunks: 6, chunkDelayMs: 20, pings: false })
  const res = await steady.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go' }] },
  })
  expect(await res.text()).not.toContain('event: ping')

  const stalled = await harnessWith({ ping_interval_ms: 30, idle_timeout_ms: 200 }, 'stalls-long')
  sim.setScenario('stalls-long', { text: 'first second', chunks: 2, chunkDelayMs: 2000, pings: false })
  const started = performance.now()
  const cut = await stalled.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'go' }] },
  })
  const body = await cut.text()
  expect(performance.now() - started).toBeLessThan(1500)
  expect(body).toContain('event: ping')
  expect(body).toContain('silent for 200 ms')
})

/** `second-up` answers; `first-up` sends its headers and a byte, then nothing. */
const stalling = loopbackPair(
  () =>
    new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode('{')) }), {
      headers: { 'content-type': 'application/json' },
    }),
)
afterAll(() => stalling.stop())

for (const maxTokens of [100, 8000]) {
  test(`a JSON answer whose body stalls after its headers is bounded by first_byte_timeout_ms and falls back (max_tokens ${maxTokens})`, async () => {
    const h = await twoModelGateway({
      kind: 'anthropic',
      routing: { first_byte_timeout_ms: 300 },
      baseUrl: stalling.baseUrl,
      model: { max_output_tokens: 16_000 },
    })
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: maxTokens, messages: [{ role: 'user', content: 'hello' }] },
    })
    expect([res.status, (await res.json()).model]).toEqual([200, 'second-up'])
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(
      detail.usage_events.map((leg: { model_id: string; outcome: string }) => [leg.model_id, leg.outcome]),
    ).toEqual([
      ['first', 'failed'],
      ['second', 'ok'],
    ])
    // The stalled model counts a failure, as a hung one does.
    expect(h.deps.health.view('p', 'first').error_rate).toBeGreaterThan(0)
  }, 10_000)
}

/**
 * An Anthropic server on a raw socket that sends its headers at once and its first event 400 ms
 * later, as a server reading a long prompt does (OpenAI's, Anthropic's, vLLM's). Bun.serve would
 * hold the headers until the body's first bytes.
 */
function slowToBeginServer() {
  const answer = (model: string) => anthropicTextAnswer(model).join('')
  const received = new Map<unknown, string>()
  const server = Bun.listen<undefined>({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket, data) {
        const text = (received.get(socket) ?? '') + new TextDecoder().decode(data)
        received.set(socket, text)
        const headEnd = text.indexOf('\r\n\r\n')
        const length = Number(/content-length: *(\d+)/i.exec(text.slice(0, headEnd))?.[1] ?? 0)
        if (headEnd < 0 || Buffer.byteLength(text.slice(headEnd + 4)) < length) return
        received.delete(socket)
        const { model } = JSON.parse(text.slice(headEnd + 4)) as { model: string }
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n')
        setTimeout(() => {
          const body = answer(model)
          socket.write(`${Buffer.byteLength(body).toString(16)}\r\n${body}\r\n0\r\n\r\n`)
        }, 400)
      },
    },
  })
  return { baseUrl: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}
const slowToBegin = slowToBeginServer()
afterAll(() => slowToBegin.stop())

// Silence is counted from the first event: until then the wait is first_byte_timeout_ms's, which
// an operator may set above idle_timeout_ms. Counted from the headers, the first model's answer was
// cut at 100 ms, counted against it, and the next model served.
for (const [stream, maxTokens] of [
  [true, 100],
  [false, 8000],
] as const) {
  test(`a first event within first_byte_timeout_ms is waited for, though idle_timeout_ms is shorter (stream ${stream}, max_tokens ${maxTokens})`, async () => {
    const h = await twoModelGateway({
      kind: 'anthropic',
      routing: { first_byte_timeout_ms: 3000, idle_timeout_ms: 100 },
      baseUrl: slowToBegin.baseUrl,
      model: { max_output_tokens: 16_000 },
    })
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: maxTokens, stream, messages: [{ role: 'user', content: 'hello' }] },
    })
    expect(res.status).toBe(200)
    const body = await res.text()
    expect(body).toContain('first-up')
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.status).toBe('completed')
    expect(
      detail.usage_events.map((leg: { model_id: string; outcome: string }) => [leg.model_id, leg.outcome]),
    ).toEqual([['first', 'ok']])
    expect(h.deps.health.view('p', 'first').error_rate).toBe(0)
  }, 10_000)
}
