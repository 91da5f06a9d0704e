// Some Anthropic-compatible servers and proxies end a stream right after message_delta (its stop
// reason and final usage) and never send message_stop, which carries nothing. Such an answer is
// whole: streamed as it came (svc writes the missing message_stop), translated, or gathered into
// JSON, it reaches the client and the ledger as finished. A stream cut before its stop reason is
// still a cut stream.
import { describe, expect, test } from 'bun:test'
import { endedRequestDetail, type Harness, sdkClients, teedSdkClients } from './support/harness'
import {
  anthropicEvent as anthropic,
  anthropicMessageStart,
  scriptedPair,
  scriptedUpstream,
} from './support/scripted-upstream'

const messageStart = (model: string) => anthropicMessageStart(model)
const text = (words: string) => [
  anthropic('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text: words } }),
]
const blockStop = anthropic('content_block_stop', { index: 0 })
const messageDelta = (stopReason: string | null, output: number) =>
  anthropic('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: output },
  })
const messageStop = anthropic('message_stop')

/** The first model's answer, without message_stop: the body ends after its message_delta. */
const withoutStop = (model: string, words: string) => [
  messageStart(model),
  ...text(words),
  blockStop,
  messageDelta('end_turn', 7),
]
const whole = (model: string, words: string) => [...withoutStop(model, words), messageStop]

/** Every upstream call answered by its model's frames, streamed. */
const byModel = (h: Harness, scripts: Record<string, string[]>) =>
  scriptedUpstream(h, (body) => ({ sse: scripts[String(body.model)] ?? [] }))

async function lastRecord(h: Harness) {
  const [row] = (await (await h.call('/v1/usage/requests')).json()).items
  return endedRequestDetail(h, row.request_id)
}

/** The first model's leg as the message_delta told it: 20 tokens in, 7 out, at 1 USD/Mtok each. */
const toldLeg = {
  model_id: 'first',
  outcome: 'ok',
  estimated: false,
  input_tokens: 20,
  output_tokens: 7,
  cost_nanos: 27_000,
  charged_nanos: 27_000,
}

const params = { model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] }

describe('an upstream that ends after message_delta, without message_stop', () => {
  test("pass-through, streamed: the SDK's message is whole, svc writes the one message_stop, the leg is ok", async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': withoutStop('first-up', 'Whole answer.') })
    const { clients, lastRaw } = teedSdkClients(h)
    const message = await clients.anthropic.messages.stream(params).finalMessage()
    expect(message).toMatchObject({
      content: [{ type: 'text', text: 'Whole answer.' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 20, output_tokens: 7 },
    })
    const raw = await lastRaw()
    expect(raw.split('event: message_stop').length - 1).toBe(1)
    expect(raw.endsWith('event: message_stop\ndata: {"type":"message_stop"}\n\n')).toBe(true)
    const record = await lastRecord(h)
    expect(record).toMatchObject({ status: 'completed', selected_model_id: 'first' })
    expect(record.usage_events).toEqual([expect.objectContaining(toldLeg)])
  })

  test('pass-through, streamed, with its message_stop: still exactly one', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': whole('first-up', 'Whole answer.') })
    const { clients, lastRaw } = teedSdkClients(h)
    await clients.anthropic.messages.stream(params).finalMessage()
    expect((await lastRaw()).split('event: message_stop').length - 1).toBe(1)
    expect((await lastRecord(h)).usage_events).toEqual([expect.objectContaining(toldLeg)])
  })

  test('a Responses client, streamed: response.completed with the text and the usage', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': withoutStop('first-up', 'Whole answer.') })
    const response = await sdkClients(h).openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
    expect(response).toMatchObject({
      status: 'completed',
      output_text: 'Whole answer.',
      usage: { input_tokens: 20, output_tokens: 7 },
    })
    const record = await lastRecord(h)
    expect(record).toMatchObject({ status: 'completed' })
    expect(record.usage_events).toEqual([expect.objectContaining(toldLeg)])
  })

  test.each(['messages', 'responses'] as const)(
    '%s, not streamed, gathered from the upstream: the whole answer',
    async (route) => {
      const h = await scriptedPair('anthropic', { stream_upstream_above_max_tokens: 10 })
      const sent = byModel(h, { 'first-up': withoutStop('first-up', 'Whole answer.') })
      const { anthropic: a, openai } = sdkClients(h)
      if (route === 'messages') {
        expect(await a.messages.create(params)).toMatchObject({
          content: [{ type: 'text', text: 'Whole answer.' }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 20, output_tokens: 7 },
        })
      } else {
        expect(await openai.responses.create({ model: 'svc-pro', input: 'hi', max_output_tokens: 100 })).toMatchObject({
          status: 'completed',
          output_text: 'Whole answer.',
        })
      }
      expect(sent).toEqual([expect.objectContaining({ stream: true })])
      const record = await lastRecord(h)
      expect(record).toMatchObject({ status: 'completed' })
      expect(record.usage_events).toEqual([expect.objectContaining(toldLeg)])
    },
  )
})

/** Cut streams, each still cut: no message_delta, or one that names no stop reason. */
const cuts = {
  'after a text delta': [messageStart('first-up'), ...text('Half an ans')],
  'after a message_delta whose stop_reason is null': [
    messageStart('first-up'),
    ...text('Half an ans'),
    blockStop,
    messageDelta(null, 3),
  ],
}

describe.each(Object.entries(cuts))('a stream cut %s', (_, cut) => {
  test('pass-through, streamed: the client hears an error after the text, the request failed', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': cut })
    const { clients, lastRaw } = teedSdkClients(h)
    await expect(clients.anthropic.messages.stream(params).finalMessage()).rejects.toThrow(
      /ended before the message was complete/,
    )
    const raw = await lastRaw()
    expect(raw).toContain('Half an ans')
    expect(raw).not.toContain('message_stop')
    const record = await lastRecord(h)
    expect(record).toMatchObject({ status: 'failed' })
    expect(record.usage_events).toEqual([expect.objectContaining({ model_id: 'first', outcome: 'failed' })])
  })

  test('a Responses client, streamed: response.failed', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': cut })
    const response = await sdkClients(h).openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
    expect(response.status).toBe('failed')
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ model_id: 'first', outcome: 'failed' }),
    ])
  })

  test.each(['messages', 'responses'] as const)(
    '%s, gathered: falls back to the next model, the cut leg free',
    async (route) => {
      const h = await scriptedPair('anthropic', { stream_upstream_above_max_tokens: 10 })
      byModel(h, { 'first-up': cut, 'second-up': whole('second-up', 'From the second.') })
      const { anthropic: a, openai } = sdkClients(h)
      const answer =
        route === 'messages'
          ? (await a.messages.create(params)).content
          : (await openai.responses.create({ model: 'svc-pro', input: 'hi', max_output_tokens: 100 })).output_text
      expect(JSON.stringify(answer)).toContain('From the second.')
      expect((await lastRecord(h)).usage_events).toEqual([
        expect.objectContaining({ model_id: 'first', outcome: 'failed', charged_nanos: 0 }),
        expect.objectContaining({ model_id: 'second', outcome: 'ok' }),
      ])
    },
  )
})

test('pass-through, streamed: a reset after message_delta is still a failed stream', async () => {
  const h = await scriptedPair('anthropic')
  h.deps.fetch = (async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const frame of withoutStop('first-up', 'Whole answer.'))
          controller.enqueue(new TextEncoder().encode(frame))
        controller.error(new Error('connection reset'))
      },
    })
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
  }) as unknown as typeof fetch
  const { clients, lastRaw } = teedSdkClients(h)
  await expect(clients.anthropic.messages.stream(params).finalMessage()).rejects.toThrow(/connection reset/)
  expect(await lastRaw()).not.toContain('message_stop')
  expect(await lastRecord(h)).toMatchObject({ status: 'failed' })
})

// Some proxies in front of Claude (LiteLLM's) write `data:` lines only, each naming its `type`.
// Relayed as they came, the SDK's stream drops every event, and svc took the stream for an answer
// that never began (a 502, the model's health charged). Each frame goes out named by its type.
describe('an Anthropic stream of data lines only', () => {
  const dataOnly = (frame: string) => frame.replace(/^event: [^\n]*\n/, '')
  const answer = [
    messageStart('first-up'),
    ...text('Hello there.'),
    blockStop,
    messageDelta('end_turn', 3),
    messageStop,
  ].map(dataOnly)

  test('streamed: the client gets every event named, its SDK the whole message; the leg is ok', async () => {
    const h = await scriptedPair('anthropic')
    scriptedUpstream(h, () => ({ sse: answer }))
    const { clients, lastRaw } = teedSdkClients(h)
    const message = await clients.anthropic.messages
      .stream({ model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
    expect(message.content).toMatchObject([{ type: 'text', text: 'Hello there.' }])
    expect(message.usage.output_tokens).toBe(3)
    const raw = await lastRaw()
    for (const type of ['message_start', 'content_block_start', 'content_block_delta', 'message_delta', 'message_stop'])
      expect(raw).toContain(`event: ${type}\ndata: {"type":"${type}"`)
    const [row] = (await (await h.call('/v1/usage/requests')).json()).items
    const detail = await endedRequestDetail(h, row.request_id)
    expect(detail.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['ok'])
  })

  test('a Responses client, streamed: each frame is read by its type, the answer and its usage come through', async () => {
    const h = await scriptedPair('anthropic')
    scriptedUpstream(h, () => ({ sse: answer }))
    const response = await sdkClients(h).openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
    expect(response).toMatchObject({
      status: 'completed',
      output_text: 'Hello there.',
      usage: { input_tokens: 20, output_tokens: 3 },
    })
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ model_id: 'first', outcome: 'ok', estimated: false, output_tokens: 3 }),
    ])
  })

  test('a proxy that splits its JSON over data lines: each frame goes out named, every line of it a data line', async () => {
    const h = await scriptedPair('anthropic')
    // A line end between two members: the frame's data is still one JSON value, over two lines.
    scriptedUpstream(h, () => ({ sse: answer.map((frame) => frame.replace(',', ',\ndata: ')) }))
    const { clients, lastRaw } = teedSdkClients(h)
    const message = await clients.anthropic.messages
      .stream({ model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
    expect(message.content).toMatchObject([{ type: 'text', text: 'Hello there.' }])
    const raw = await lastRaw()
    expect(raw).toContain('event: message_start\ndata: {"type":"message_start",\ndata: "message":')
    expect((await lastRecord(h)).usage_events).toEqual([expect.objectContaining({ outcome: 'ok' })])
  })
})
