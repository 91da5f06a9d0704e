// Media types are case-insensitive (RFC 9110 §8.3.1). An upstream that spelt its content-type in
// capitals (`Text/Event-Stream`, `Application/JSON`) failed every request it got with a 502 and
// counted against its health; a client body sent as `Application/JSON` was read as no body at all
// and refused as "expected object".
import { expect, test } from 'bun:test'
import { sdkClients } from './support/harness'
import { anthropicEvent, anthropicMessageStart, twoModelGateway } from './support/scripted-upstream'

const answerText = 'Served whatever the case.'
const stream = [
  anthropicMessageStart('first-up'),
  anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: answerText } }),
  anthropicEvent('content_block_stop', { index: 0 }),
  anthropicEvent('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 6 },
  }),
  anthropicEvent('message_stop'),
].join('')
const message = {
  id: 'msg_up',
  type: 'message',
  role: 'assistant',
  model: 'first-up',
  content: [{ type: 'text', text: answerText }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 20, output_tokens: 6 },
}

/** A gateway whose one upstream answers in `contentType`, and the upstream models it was asked for. */
async function answeringAs(contentType: string) {
  const h = await twoModelGateway({ kind: 'anthropic' })
  const asked: string[] = []
  h.deps.fetch = (async (_url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as { model: string; stream?: boolean }
    asked.push(body.model)
    // A JSON answer even to a stream request (svc streams long answers upstream and gathers them).
    const text = contentType.toLowerCase().includes('json') ? JSON.stringify(message) : stream
    return new Response(text, { headers: { 'content-type': contentType } })
  }) as unknown as typeof fetch
  return { h, asked }
}

test('an upstream stream sent as Text/Event-Stream is served, by the first model', async () => {
  const { h, asked } = await answeringAs('Text/Event-Stream; charset=UTF-8')
  const { anthropic, openai } = sdkClients(h)
  const streamed = await anthropic.messages
    .stream({ model: 'svc-pro', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
    .finalMessage()
  expect(streamed.content).toMatchObject([{ type: 'text', text: answerText }])
  const translated = await openai.responses.create({ model: 'svc-pro', input: 'hi', stream: true })
  let text = ''
  for await (const event of translated) if (event.type === 'response.output_text.delta') text += event.delta
  expect(text).toBe(answerText)
  // A long answer is streamed from the upstream and gathered into JSON: the same case-blind reading.
  const gathered = await anthropic.messages.create({
    model: 'svc-pro',
    max_tokens: 8_000,
    messages: [{ role: 'user', content: 'hi' }],
  })
  expect(gathered.content).toMatchObject([{ type: 'text', text: answerText }])
  expect(asked).toEqual(['first-up', 'first-up', 'first-up'])
})

test('an upstream JSON answer sent as Application/JSON is served, by the first model', async () => {
  const { h, asked } = await answeringAs('Application/JSON; charset=UTF-8')
  const { anthropic, openai } = sdkClients(h)
  const answer = await anthropic.messages.create({
    model: 'svc-pro',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'hi' }],
  })
  expect(answer.content).toMatchObject([{ type: 'text', text: answerText }])
  expect((await openai.responses.create({ model: 'svc-pro', input: 'hi' })).output_text).toBe(answerText)
  expect(asked).toEqual(['first-up', 'first-up'])
})

test('a client body sent as Application/JSON is read as JSON on both model routes', async () => {
  const { h } = await answeringAs('application/json')
  const messages = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01', 'content-type': 'Application/JSON; charset=UTF-8' },
    body: JSON.stringify({ model: 'svc-pro', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }),
  })
  expect(messages.status).toBe(200)
  expect((await messages.json()).content).toEqual([{ type: 'text', text: answerText }])
  const responses = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    headers: { 'content-type': 'APPLICATION/JSON' },
    body: JSON.stringify({ model: 'svc-pro', input: 'hi' }),
  })
  expect(responses.status).toBe(200)
  expect((await responses.json()).status).toBe('completed')
})

// A gzipped body was read as JSON and refused as "not valid JSON"; one labelled gzip but plain was
// served. Bodies are read as sent: a 415 naming the encoding, in each route's own error shape.
test('a compressed client body is a 415 naming its encoding, on both model routes; identity is no encoding', async () => {
  const { h, asked } = await answeringAs('application/json')
  const json = JSON.stringify({ model: 'svc-pro', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
  const post = (path: string, encoding: string, body: string | Uint8Array = json) =>
    h.call(path, {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01', 'content-type': 'application/json', 'content-encoding': encoding },
      body,
    })
  const gzipped = await post('/compat-a/v1/messages', 'gzip', Bun.gzipSync(json))
  expect(gzipped.status).toBe(415)
  expect(await gzipped.json()).toEqual({
    type: 'error',
    error: {
      type: 'invalid_request_error',
      message: 'request bodies are read as sent: Content-Encoding "gzip" is not supported; send the body uncompressed',
    },
  })
  const brotli = await post('/compat-b/v1/responses', 'br', JSON.stringify({ model: 'svc-pro', input: 'hi' }))
  expect(brotli.status).toBe(415)
  expect((await brotli.json()).error).toMatchObject({ type: 'invalid_request_error' })
  expect(asked).toEqual([])
  expect((await post('/compat-a/v1/messages', 'identity')).status).toBe(200)
  // A caller without a key hears 401 first, as for any refusal of its body; a request without a
  // body has nothing to decode.
  const unknown = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01', 'content-encoding': 'gzip' },
    body: Bun.gzipSync(json),
    key: null,
  })
  expect(unknown.status).toBe(401)
  expect((await h.call('/healthz', { key: null, headers: { 'content-encoding': 'gzip' } })).status).toBe(200)
  expect((await h.call('/v1/usage', { headers: { 'content-encoding': 'gzip' } })).status).toBe(200)
})
