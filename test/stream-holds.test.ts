// What a stream holds back, and for how long: the upstream's opening until its answer begins (so an
// upstream that fails right after it still falls back, its leg uncharged), and a Responses item's
// done frames until the end of the network read that ended its block (so the item the output limit
// cut can say so, yet nothing waits on a server tool's run).
import { describe, expect, test } from 'bun:test'
import { endedRequestDetail, type Harness, sdkClients } from './support/harness'
import {
  anthropicEvent as anthropic,
  anthropicMessageStart,
  scriptedPair as gateway,
  sseFrame,
} from './support/scripted-upstream'

type Json = Record<string, unknown>

/** An upstream answer as timed writes: each string one write, each number a pause (ms). */
type Script = (string | number)[]

/** Every upstream call answered by model with its script, streamed. */
function timedUpstream(h: Harness, scripts: Record<string, Script>) {
  h.deps.fetch = (async (_url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as Json
    const script = scripts[String(body.model)] ?? []
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        for (const step of script) {
          if (typeof step === 'number') await Bun.sleep(step)
          else controller.enqueue(new TextEncoder().encode(step))
        }
        controller.close()
      },
    })
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
  }) as unknown as typeof fetch
}

const messageStart = (model: string) => anthropicMessageStart(model, 5000)
const overloaded = anthropic('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })
const textAnswer = (model: string, text: string): string[] => [
  messageStart(model),
  anthropic('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
  anthropic('content_block_stop', { index: 0 }),
  anthropic('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 3 } }),
  anthropic('message_stop'),
]

const newestRecord = async (h: Harness) => {
  const [row] = (await (await h.call('/v1/usage/requests')).json()).items
  return endedRequestDetail(h, row.request_id)
}

const streamedText = async (h: Harness, route: 'messages' | 'responses') => {
  const { anthropic: a, openai } = sdkClients(h)
  if (route === 'messages') {
    const message = await a.messages
      .stream({ model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
      .finalMessage()
    return message.content.map((block) => (block.type === 'text' ? block.text : block.type)).join('')
  }
  return (await openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()).output_text
}

describe.each(['messages', 'responses'] as const)('%s route, Anthropic upstream', (route) => {
  test('an overloaded_error right after message_start, a write of its own: the next model answers, the broken leg free', async () => {
    const h = await gateway('anthropic')
    timedUpstream(h, {
      'first-up': [messageStart('first-up'), 20, anthropic('ping'), 20, overloaded],
      'second-up': textAnswer('second-up', 'From the second.'),
    })
    expect(await streamedText(h, route)).toBe('From the second.')
    const record = await newestRecord(h)
    expect(record.usage_events).toEqual([
      expect.objectContaining({ model_id: 'first', outcome: 'failed', input_tokens: 0, charged_nanos: 0 }),
      expect.objectContaining({ model_id: 'second', outcome: 'ok' }),
    ])
  })

  test('an opening with no answer past the hold goes out; an error then reaches the client, the leg still free', async () => {
    const h = await gateway('anthropic', { ping_interval_ms: 50 })
    timedUpstream(h, { 'first-up': [messageStart('first-up'), 300, overloaded] })
    // The Anthropic SDK throws on the error event; OpenAI's hands back the failed response.
    if (route === 'messages') await expect(streamedText(h, route)).rejects.toThrow(/Overloaded/)
    else {
      const response = await sdkClients(h).openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
      expect(response.status).toBe('failed')
    }
    const record = await newestRecord(h)
    // Still the model that answered: the client had its opening.
    expect(record).toMatchObject({ status: 'failed', http_status: 200, selected_model_id: 'first' })
    expect(record.usage_events).toEqual([
      expect.objectContaining({ model_id: 'first', outcome: 'failed', input_tokens: 0, charged_nanos: 0 }),
    ])
  })
})

test("a Chat upstream's role chunk at once, its content after first_byte_timeout_ms: answered, not timed out", async () => {
  const h = await gateway('openai-chat', { first_byte_timeout_ms: 300, ping_interval_ms: 100 })
  const chunk = (delta: Json, finish: string | null = null) =>
    sseFrame(undefined, {
      id: 'c',
      object: 'chat.completion.chunk',
      model: 'first-up',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  timedUpstream(h, {
    'first-up': [
      chunk({ role: 'assistant', content: '' }),
      600,
      chunk({ content: 'Thought long.' }),
      chunk({}, 'stop'),
      sseFrame(undefined, '[DONE]'),
    ],
  })
  expect(await streamedText(h, 'messages')).toBe('Thought long.')
  expect((await newestRecord(h)).usage_events).toEqual([expect.objectContaining({ model_id: 'first', outcome: 'ok' })])
})

test("a Responses item's done frames go out with the read that ended its block, not after a server search", async () => {
  const h = await gateway('anthropic')
  const search = [
    anthropic('content_block_start', {
      index: 1,
      content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
    }),
    anthropic('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"query":"x"}' } }),
    anthropic('content_block_stop', { index: 1 }),
  ]
  const [start, textStart, textDelta, textStop] = textAnswer('first-up', 'Let me search.')
  timedUpstream(h, {
    'first-up': [
      [start, textStart, textDelta, textStop, ...search].join(''),
      800,
      [
        anthropic('content_block_start', {
          index: 2,
          content_block: {
            type: 'web_search_tool_result',
            tool_use_id: 'srvtoolu_1',
            content: [{ type: 'web_search_result', url: 'https://a.example', title: 'A', encrypted_content: 'e' }],
          },
        }),
        anthropic('content_block_stop', { index: 2 }),
        anthropic('message_delta', {
          delta: { stop_reason: 'end_turn', stop_sequence: null },
          usage: { output_tokens: 9 },
        }),
        anthropic('message_stop'),
      ].join(''),
    ],
  })
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    json: { model: 'svc-pro', input: 'hi', stream: true },
  })
  const reader = res.body!.getReader()
  const started = performance.now()
  const arrivals: { at: number; type: string }[] = []
  let text = ''
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    text += new TextDecoder().decode(value)
    for (const match of text.matchAll(/"type":"(response\.[a-z_.]+)"/g))
      arrivals.push({ at: performance.now() - started, type: match[1]! })
    text = ''
  }
  const messageDone = arrivals.find((a) => a.type === 'response.output_item.done')!
  const searchAdded = arrivals.find((a) => a.type === 'response.web_search_call.in_progress')!
  expect(searchAdded.at - messageDone.at).toBeGreaterThan(500)
})

test('a compatible Responses server that streams deltas with no item added: cut after the hold, the text that flowed is charged', async () => {
  const h = await gateway('openai-responses', { ping_interval_ms: 50 })
  const event = (type: string, data: Json) => sseFrame(type, { type, ...data })
  const delta = (n: number) =>
    event('response.output_text.delta', {
      item_id: 'msg_1',
      output_index: 0,
      content_index: 0,
      delta: 'x'.repeat(4000),
      sequence_number: n,
    })
  const created = {
    id: 'resp_up',
    object: 'response',
    status: 'in_progress',
    model: 'first-up',
    output: [],
    usage: null,
  }
  timedUpstream(h, {
    'first-up': [event('response.created', { response: created, sequence_number: 0 }), delta(1), 200, delta(2), 200],
  })
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    json: { model: 'svc-pro', input: 'hi', stream: true },
  })
  expect(await res.text()).toContain('response.output_text.delta')
  const [leg] = (await newestRecord(h)).usage_events
  expect(leg).toMatchObject({ model_id: 'first', outcome: 'failed', estimated: true })
  expect(leg.output_tokens).toBeGreaterThanOrEqual(2000)
})

test("an Anthropic answer cut by the output limit, its finish a read after its last block's end: the item says incomplete", async () => {
  const h = await gateway('anthropic')
  const [start, textStart, , textStop] = textAnswer('first-up', '')
  timedUpstream(h, {
    'first-up': [
      [
        start,
        textStart,
        anthropic('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Cut sho' } }),
        textStop,
      ].join(''),
      20,
      anthropic('message_delta', {
        delta: { stop_reason: 'max_tokens', stop_sequence: null },
        usage: { output_tokens: 3 },
      }),
      anthropic('message_stop'),
    ],
  })
  const response = await sdkClients(h)
    .openai.responses.stream({ model: 'svc-pro', input: 'hi', max_output_tokens: 16 })
    .finalResponse()
  expect(response.status).toBe('incomplete')
  expect(response.output.map((item) => (item as { status?: string }).status)).toEqual(['incomplete'])
})
