import { afterEach, describe, expect, test } from 'bun:test'
import type { ExchangeEvent } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { parseSse, runCodec } from '../fixture-streams'
import { responsesStreamDecoder } from './decode-responses-stream'
import { responsesStreamEncoder } from './encode-responses-stream'
import { readAnthropicReasoning, tagResponsesSignature } from './reasoning-signature'
import { chunkBytes, collect, fromArray, readFixture, serveResponses, sseResponse } from './test-support'

const ids = {
  responseId: 'resp_01JGATEWAY',
  messageId: 'msg_01JGATEWAY',
  model: 'svc-pro',
  createdAt: 1_760_000_000,
  now: () => 1_760_000_005,
}

/** What Codex sends on every turn (stateless: store false). */
const includeEncrypted = { include: ['reasoning.encrypted_content'], store: false }

const encode = (events: ExchangeEvent[] | AsyncIterable<ExchangeEvent>, request?: Record<string, unknown>) =>
  runCodec(responsesStreamEncoder({ ...ids, request }), Array.isArray(events) ? fromArray(events) : events)

const frames = async (events: ExchangeEvent[] | AsyncIterable<ExchangeEvent>, request?: Record<string, unknown>) => {
  const text = (await collect(encode(events, request))).join('')
  const parsed = await collect(parseSse(chunkBytes(text, 11)))
  return parsed.map((frame) => {
    const data = JSON.parse(frame.data) as Record<string, unknown>
    // The `event:` line must equal the payload's type on every frame.
    expect(frame.event).toBe(data['type'] as string)
    return data
  })
}

const expectSequenceFromZero = (data: Record<string, unknown>[]) => {
  expect(data.map((d) => d['sequence_number'])).toEqual(data.map((_, i) => i))
}

const thinkingTextTool: ExchangeEvent[] = [
  { type: 'start', id: 'msg_upstream', model: 'claude-sonnet', usage: { input: 10, cacheRead: 1000 } },
  { type: 'block_start', index: 0, block: { kind: 'thinking' } },
  { type: 'thinking_delta', index: 0, thinking: 'Let me ' },
  { type: 'thinking_delta', index: 0, thinking: 'check.' },
  { type: 'signature_delta', index: 0, signature: tagResponsesSignature('enc_1') },
  { type: 'block_stop', index: 0 },
  { type: 'block_start', index: 1, block: { kind: 'text' } },
  { type: 'text_delta', index: 1, text: 'Checking the ' },
  { type: 'text_delta', index: 1, text: 'weather… ☀️' },
  { type: 'block_stop', index: 1 },
  { type: 'block_start', index: 2, block: { kind: 'tool_use', id: 'toolu_01', name: 'get_weather' } },
  { type: 'tool_args_delta', index: 2, partialJson: '' },
  { type: 'tool_args_delta', index: 2, partialJson: '{"city":' },
  { type: 'tool_args_delta', index: 2, partialJson: '"Paris"}' },
  { type: 'block_stop', index: 2 },
  { type: 'finish', reason: 'tool_use', stopSequence: null },
  // Chat upstreams send usage after the finish; the terminal event must still carry it.
  { type: 'usage', usage: { input: 10, cacheRead: 1000, cacheWrite: 0, output: 50, reasoning: 20 } },
]

describe('responsesStreamEncoder', () => {
  let stop: (() => void) | undefined
  afterEach(() => {
    stop?.()
    stop = undefined
  })

  test('emits the canonical event order with sequence numbers from 0', async () => {
    const data = await frames(thinkingTextTool, includeEncrypted)
    expectSequenceFromZero(data)
    expect(data.map((d) => d['type'])).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(data[0]).toMatchObject({
      response: {
        id: ids.responseId,
        object: 'response',
        status: 'in_progress',
        output: [],
        usage: null,
        model: 'svc-pro',
      },
    })
    expect(data.at(-1)).toEqual({
      type: 'response.completed',
      sequence_number: 21,
      response: expect.objectContaining({
        id: ids.responseId,
        status: 'completed',
        completed_at: 1_760_000_005,
        model: 'svc-pro',
        output: [
          {
            id: 'rs_01JGATEWAY_0',
            type: 'reasoning',
            summary: [{ type: 'summary_text', text: 'Let me check.' }],
            encrypted_content: 'enc_1',
          },
          {
            id: 'msg_01JGATEWAY',
            type: 'message',
            status: 'completed',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'Checking the weather… ☀️', annotations: [], logprobs: [] }],
          },
          {
            id: 'fc_01JGATEWAY_2',
            type: 'function_call',
            status: 'completed',
            arguments: '{"city":"Paris"}',
            call_id: 'toolu_01',
            name: 'get_weather',
          },
        ],
        usage: {
          input_tokens: 1010,
          input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 0 },
          output_tokens: 50,
          output_tokens_details: { reasoning_tokens: 20 },
          total_tokens: 1060,
        },
      }),
    })
  })

  test('the OpenAI SDK accumulates the stream into the final response', async () => {
    const server = serveResponses(() => sseResponse(encode(thinkingTextTool)))
    stop = server.stop
    const stream = server.client.responses.stream({ model: 'svc-pro', input: 'weather?' })
    const seen: number[] = []
    stream.on('event', (event) => seen.push(event.sequence_number))
    const final = await stream.finalResponse()
    expect(seen).toEqual(seen.map((_, i) => i))
    expect(final.id).toBe('resp_01JGATEWAY')
    expect(final.model).toBe('svc-pro')
    expect(final.status).toBe('completed')
    expect(final.output_text).toBe('Checking the weather… ☀️')
    const call = final.output.find((item) => item.type === 'function_call')
    expect(call).toMatchObject({ call_id: 'toolu_01', name: 'get_weather', arguments: '{"city":"Paris"}' })
    expect(final.output.find((item) => item.type === 'message')?.id).toBe('msg_01JGATEWAY')
    expect(final.usage).toMatchObject({
      input_tokens: 1010,
      input_tokens_details: { cached_tokens: 1000 },
      output_tokens: 50,
      output_tokens_details: { reasoning_tokens: 20 },
      total_tokens: 1060,
    })
  })

  test('the SDK iterates create({stream:true}) events in order', async () => {
    const server = serveResponses(() => sseResponse(encode(thinkingTextTool)))
    stop = server.stop
    const stream = await server.client.responses.create({ model: 'svc-pro', input: 'hi', stream: true })
    const types: string[] = []
    let text = ''
    for await (const event of stream) {
      types.push(event.type)
      if (event.type === 'response.output_text.delta') text += event.delta
    }
    expect(types[0]).toBe('response.created')
    expect(types.at(-1)).toBe('response.completed')
    expect(text).toBe('Checking the weather… ☀️')
  })

  test('a Responses upstream decoded and re-encoded reads back the same through the SDK', async () => {
    const upstream = await readFixture('reasoning-text.sse')
    const server = serveResponses(() =>
      sseResponse(encode(runCodec(responsesStreamDecoder(), parseSse(chunkBytes(upstream, 5))), includeEncrypted)),
    )
    stop = server.stop
    const final = await server.client.responses.stream({ model: 'svc-pro', input: 'q' }).finalResponse()
    expect(final.output_text).toBe('Answer.')
    expect(final.output[0]).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Thinking about it\n\nSecond part.' }],
      encrypted_content: 'enc_blob_01',
    })
    expect(final.usage).toMatchObject({
      input_tokens: 2006,
      input_tokens_details: { cached_tokens: 1920 },
      output_tokens: 300,
      output_tokens_details: { reasoning_tokens: 200 },
    })
  })

  test('max_tokens ends in response.incomplete with max_output_tokens', async () => {
    const data = await frames([
      { type: 'start', id: 'x', model: 'm' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'cut' },
      { type: 'block_stop', index: 0 },
      { type: 'finish', reason: 'max_tokens' },
      { type: 'usage', usage: { input: 5, output: 3 } },
    ])
    expectSequenceFromZero(data)
    expect(data.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: {
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        completed_at: null,
        usage: { input_tokens: 5, output_tokens: 3, total_tokens: 8 },
      },
    })
  })

  test('the item the output limit cut is incomplete, done and in the terminal output; those before it completed', async () => {
    const cut = thinkingTextTool.map((event) =>
      event.type === 'finish' ? { ...event, reason: 'max_tokens' as const } : event,
    )
    const data = await frames(cut)
    const doneItems = data.filter((d) => d['type'] === 'response.output_item.done').map((d) => d['item'])
    expect(doneItems.map((item) => (item as { status?: string }).status)).toEqual([
      undefined,
      'completed',
      'incomplete',
    ])
    const terminal = data.at(-1) as { type: string; response: { output: unknown[] } }
    expect(terminal.type).toBe('response.incomplete')
    expect(terminal.response.output).toEqual(doneItems)
    // A block's done frames wait only for what follows it: the next item is added after them.
    const types = data.map((d) => d['type'])
    expect(types.slice(14, 17)).toEqual([
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
    ])
  })

  test("an item a Chat upstream's stream leaves open when the limit cuts it is incomplete", async () => {
    const data = await frames([
      { type: 'start', id: 'x', model: 'm' },
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'call_1', name: 'write_file' } },
      { type: 'tool_args_delta', index: 0, partialJson: '{"path":"a.txt","text":"lo' },
      { type: 'finish', reason: 'max_tokens' },
      { type: 'usage', usage: { input: 5, output: 3 } },
    ])
    const done = data.find((d) => d['type'] === 'response.output_item.done')
    expect(done?.['item']).toMatchObject({ type: 'function_call', status: 'incomplete' })
    expect(data.at(-1)).toMatchObject({
      type: 'response.incomplete',
      response: { output: [{ type: 'function_call', status: 'incomplete' }] },
    })
  })

  test('the golden incomplete stream decoded and re-encoded keeps its items', async () => {
    const upstream = await readFixture('incomplete.sse')
    const data = await frames(runCodec(responsesStreamDecoder(), parseSse(chunkBytes(upstream, 7))))
    const statuses = (type: string) =>
      data.filter((d) => d['type'] === type).map((d) => (d['item'] as { status: string }).status)
    expect(statuses('response.output_item.done')).toEqual(['incomplete'])
    expect(data.at(-1)).toMatchObject({ response: { status: 'incomplete', output: [{ status: 'incomplete' }] } })
  })

  test('a block that ended before an error is done and completed before response.failed', async () => {
    const data = await frames([
      { type: 'start', id: 'x', model: 'm' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'whole' },
      { type: 'block_stop', index: 0 },
      { type: 'error', error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
    ])
    expect(data.map((d) => d['type']).slice(-3)).toEqual([
      'response.content_part.done',
      'response.output_item.done',
      'response.failed',
    ])
    expect(data.at(-1)).toMatchObject({ response: { status: 'failed', output: [{ status: 'completed' }] } })
  })

  test('the SDK reads an incomplete response', async () => {
    const server = serveResponses(() =>
      sseResponse(
        encode([
          { type: 'start', id: 'x', model: 'm' },
          { type: 'block_start', index: 0, block: { kind: 'text' } },
          { type: 'text_delta', index: 0, text: 'flagged' },
          { type: 'block_stop', index: 0 },
          { type: 'finish', reason: 'refusal' },
        ]),
      ),
    )
    stop = server.stop
    const final = await server.client.responses.stream({ model: 'svc-pro', input: 'q' }).finalResponse()
    expect(final.status).toBe('incomplete')
    expect(final.incomplete_details).toEqual({ reason: 'content_filter' })
    expect(final.output_text).toBe('flagged')
  })

  describe("a model's refusal (a declined block: TextBlock.refusal)", () => {
    const declined: ExchangeEvent[] = [
      { type: 'start', id: 'x', model: 'm' },
      { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
      { type: 'text_delta', index: 0, text: "I can't " },
      { type: 'text_delta', index: 0, text: 'help with that.' },
      { type: 'block_stop', index: 0 },
      { type: 'usage', usage: { input: 5, output: 6 } },
      { type: 'finish', reason: 'refusal' },
    ]
    const words = "I can't help with that."

    test("is a message whose one part is a refusal, streamed as OpenAI's, in a completed response", async () => {
      const data = await frames(declined)
      expectSequenceFromZero(data)
      expect(data.map((d) => d['type'])).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.refusal.delta',
        'response.refusal.delta',
        'response.refusal.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ])
      const at = { item_id: 'msg_01JGATEWAY', output_index: 0, content_index: 0 }
      expect(data[2]).toMatchObject({ item: { type: 'message', status: 'in_progress', content: [] } })
      expect(data[3]).toEqual({
        type: 'response.content_part.added',
        sequence_number: 3,
        ...at,
        part: { type: 'refusal', refusal: '' },
      })
      expect(data[4]).toEqual({ type: 'response.refusal.delta', sequence_number: 4, ...at, delta: "I can't " })
      expect(data[6]).toEqual({ type: 'response.refusal.done', sequence_number: 6, ...at, refusal: words })
      expect(data[7]).toMatchObject({ ...at, part: { type: 'refusal', refusal: words } })
      const item = { id: 'msg_01JGATEWAY', type: 'message', status: 'completed', role: 'assistant' }
      expect(data[8]).toMatchObject({ item: { ...item, content: [{ type: 'refusal', refusal: words }] } })
      expect(data.at(-1)).toMatchObject({
        response: {
          status: 'completed',
          completed_at: 1_760_000_005,
          incomplete_details: null,
          output: [{ ...item, content: [{ type: 'refusal', refusal: words }] }],
        },
      })
    })

    test('the SDK reads the refusal part', async () => {
      const server = serveResponses(() => sseResponse(encode(declined)))
      stop = server.stop
      const final = await server.client.responses.stream({ model: 'svc-pro', input: 'q' }).finalResponse()
      expect(final.status).toBe('completed')
      expect(final.output).toMatchObject([{ type: 'message', content: [{ type: 'refusal', refusal: words }] }])
      expect(final.output_text).toBe('')
    })

    test("Anthropic's classifier refusal (no declined block) stays a content filter's cut, its text output_text", async () => {
      const data = await frames([
        { type: 'start', id: 'x', model: 'm' },
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'Here is how' },
        { type: 'block_stop', index: 0 },
        { type: 'finish', reason: 'refusal' },
      ])
      expect(data.map((d) => d['type'])).not.toContain('response.refusal.delta')
      expect(data.at(-1)).toMatchObject({
        type: 'response.incomplete',
        response: {
          status: 'incomplete',
          incomplete_details: { reason: 'content_filter' },
          output: [{ status: 'incomplete', content: [{ type: 'output_text', text: 'Here is how' }] }],
        },
      })
    })
  })

  test('an error event ends the stream with response.failed', async () => {
    const data = await frames([
      { type: 'start', id: 'x', model: 'm' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'part' },
      { type: 'error', error: { status: 429, type: 'rate_limit_error', message: 'slow down' } },
      { type: 'text_delta', index: 0, text: 'never sent' },
    ])
    expectSequenceFromZero(data)
    expect(data.map((d) => d['type'])).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.failed',
    ])
    expect(data.at(-1)).toMatchObject({
      response: {
        status: 'failed',
        error: { code: 'rate_limit_exceeded', message: 'slow down' },
        output: [{ id: 'msg_01JGATEWAY', status: 'in_progress', content: [{ text: 'part' }] }],
      },
    })
  })

  test('a thrown source error becomes response.failed', async () => {
    async function* broken(): AsyncGenerator<ExchangeEvent> {
      yield { type: 'start', id: 'x', model: 'm' }
      throw new GatewayError('api_error', 'upstream reset the connection', { status: 502 })
    }
    const data = await frames(broken())
    expect(data.map((d) => d['type'])).toEqual(['response.created', 'response.in_progress', 'response.failed'])
    expect(data.at(-1)).toMatchObject({
      response: { status: 'failed', error: { code: 'server_error', message: 'upstream reset the connection' } },
    })
  })

  test('a thrown failure is coded by its kind, as an OpenAI error body is', async () => {
    async function* idle(): AsyncGenerator<ExchangeEvent> {
      yield { type: 'start', id: 'x', model: 'm' }
      throw new GatewayError('timeout', 'upstream sent nothing for 30000 ms')
    }
    expect((await frames(idle())).at(-1)).toMatchObject({
      response: { status: 'failed', error: { code: 'timeout', message: 'upstream sent nothing for 30000 ms' } },
    })
  })

  test('a source that ends without finish fails, and the SDK reports the failed response', async () => {
    const events: ExchangeEvent[] = [
      { type: 'start', id: 'x', model: 'm' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'half' },
    ]
    const data = await frames(events)
    expect(data.at(-1)).toMatchObject({ type: 'response.failed', response: { status: 'failed' } })
    const server = serveResponses(() => sseResponse(encode(events)))
    stop = server.stop
    const final = await server.client.responses.stream({ model: 'svc-pro', input: 'q' }).finalResponse()
    // The SDK hands back the failed response with the partial output it accumulated.
    expect(final.status).toBe('failed')
    expect(final.error).toEqual({
      code: 'server_error',
      message: 'the upstream stream ended before the response finished',
    })
    expect(final.output_text).toBe('half')
  })

  test('an answer the upstream ends as broken off (finish reason "error", from a Chat server) is response.failed, not completed', async () => {
    const data = await frames([
      { type: 'start', id: 'x', model: 'm' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Half an ans' },
      { type: 'block_stop', index: 0 },
      { type: 'finish', reason: 'error' },
      { type: 'usage', usage: { input: 20, output: 5 } },
    ])
    expect(data.map((d) => d['type'])).not.toContain('response.completed')
    expect(data.at(-1)).toMatchObject({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'server_error' }, usage: { input_tokens: 20, output_tokens: 5 } },
    })
  })

  test('blocks left open at the end are closed before response.completed; later text items get suffixed ids', async () => {
    const data = await frames([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'one' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'redacted_thinking', data: 'opaque' } },
      { type: 'block_stop', index: 1 },
      { type: 'block_start', index: 2, block: { kind: 'text' } },
      { type: 'text_delta', index: 2, text: 'two' },
      { type: 'block_start', index: 3, block: { kind: 'tool_use', id: 'call_9', name: 'noop' } },
      { type: 'finish', reason: 'end_turn' },
    ])
    expectSequenceFromZero(data)
    const completed = data.at(-1) as { type: string; response: { output: Record<string, unknown>[] } }
    expect(completed.type).toBe('response.completed')
    expect(completed.response.output.map((item) => [item['id'], item['status']])).toEqual([
      ['msg_01JGATEWAY', 'completed'],
      ['msg_01JGATEWAY_1', 'completed'],
      ['fc_01JGATEWAY_2', 'completed'],
    ])
    // An argument-less call still carries parseable arguments.
    expect(completed.response.output[2]?.['arguments']).toBe('{}')
  })

  test("an argument-less call's function_call_arguments.done carries {}, as its item does: clients JSON.parse both", async () => {
    const data = await frames([
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'call_9', name: 'noop' } },
      { type: 'block_stop', index: 0 },
      { type: 'finish', reason: 'tool_use' },
    ])
    const byType = (type: string) => data.filter((d) => d['type'] === type)
    expect(byType('response.function_call_arguments.done')).toEqual([
      expect.objectContaining({ item_id: 'fc_01JGATEWAY_0', name: 'noop', arguments: '{}' }),
    ])
    expect(byType('response.output_item.done')).toEqual([
      expect.objectContaining({ item: expect.objectContaining({ call_id: 'call_9', arguments: '{}' }) }),
    ])
  })

  test("thinking with no words (Anthropic's omitted display) is a reasoning item with an empty summary, no summary part", async () => {
    const data = await frames(
      [
        { type: 'start', id: 'msg_upstream', model: 'claude-sonnet' },
        { type: 'block_start', index: 0, block: { kind: 'thinking' } },
        { type: 'signature_delta', index: 0, signature: 'EqQBCkYIBxgCKkBsig' },
        { type: 'block_stop', index: 0 },
        { type: 'block_start', index: 1, block: { kind: 'text' } },
        { type: 'text_delta', index: 1, text: 'Done.' },
        { type: 'block_stop', index: 1 },
        { type: 'finish', reason: 'end_turn' },
        { type: 'usage', usage: { input: 10, output: 30 } },
      ],
      includeEncrypted,
    )
    expectSequenceFromZero(data)
    expect(data.filter((d) => String(d['type']).startsWith('response.reasoning_summary'))).toEqual([])
    const done = data.find((d) => d['type'] === 'response.output_item.done')!['item'] as Record<string, unknown>
    expect(done).toMatchObject({ type: 'reasoning', summary: [], encrypted_content: expect.any(String) })
    const completed = data.at(-1) as { response: { output: Record<string, unknown>[] } }
    expect(completed.response.output[0]).toEqual(done)
  })

  describe('Anthropic thinking and encrypted_content', () => {
    const signed: ExchangeEvent[] = [
      { type: 'start', id: 'msg_upstream', model: 'claude-sonnet' },
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 0, thinking: 'Weather needs ' },
      { type: 'thinking_delta', index: 0, thinking: 'a lookup.' },
      // Anthropic sends the signature once, just before the block closes.
      { type: 'signature_delta', index: 0, signature: 'EqQBCkYIBxgCKkBsig' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'redacted_thinking', data: 'EmwKAhgBEgy3va' } },
      { type: 'block_stop', index: 1 },
      { type: 'block_start', index: 2, block: { kind: 'tool_use', id: 'toolu_01', name: 'get_weather' } },
      { type: 'tool_args_delta', index: 2, partialJson: '{"city":"Paris"}' },
      { type: 'block_stop', index: 2 },
      { type: 'finish', reason: 'tool_use' },
      { type: 'usage', usage: { input: 10, output: 30 } },
    ]
    const itemsOf = (data: Record<string, unknown>[], type: string) =>
      data.filter((d) => d['type'] === type).map((d) => d['item'] as Record<string, unknown>)

    test('with include, the signature rides on output_item.done and response.completed; redacted data too', async () => {
      const data = await frames(signed, includeEncrypted)
      expectSequenceFromZero(data)
      expect(data.map((d) => d['type']).filter((t) => !String(t).endsWith('.delta'))).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.reasoning_summary_part.added',
        'response.reasoning_summary_text.done',
        'response.reasoning_summary_part.done',
        'response.output_item.done',
        // The redacted block: an item with no summary, so no summary events.
        'response.output_item.added',
        'response.output_item.done',
        'response.output_item.added',
        'response.function_call_arguments.done',
        'response.output_item.done',
        'response.completed',
      ])
      const added = itemsOf(data, 'response.output_item.added')
      const done = itemsOf(data, 'response.output_item.done')
      // The signature is not known when the thinking item opens; the redacted data is.
      expect(added[0]).toEqual({ id: 'rs_01JGATEWAY_0', type: 'reasoning', summary: [] })
      expect(readAnthropicReasoning(added[1]?.['encrypted_content'] as string)).toEqual({
        type: 'redacted_thinking',
        data: 'EmwKAhgBEgy3va',
      })
      expect(done[0]).toEqual({
        id: 'rs_01JGATEWAY_0',
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'Weather needs a lookup.' }],
        encrypted_content: expect.any(String),
      })
      expect(readAnthropicReasoning(done[0]?.['encrypted_content'] as string)).toEqual({
        type: 'thinking',
        signature: 'EqQBCkYIBxgCKkBsig',
      })
      expect(done[1]).toEqual({
        id: 'rs_01JGATEWAY_1',
        type: 'reasoning',
        summary: [],
        encrypted_content: expect.any(String),
      })
      const completed = data.at(-1) as { response: { output: Record<string, unknown>[] } }
      expect(completed.response.output.slice(0, 2)).toEqual(done.slice(0, 2))
      expect(completed.response.output[2]).toMatchObject({ id: 'fc_01JGATEWAY_2', call_id: 'toolu_01' })
    })

    test('without include, no encrypted_content anywhere and the redacted block is left out', async () => {
      const data = await frames(signed)
      expectSequenceFromZero(data)
      expect(JSON.stringify(data)).not.toContain('encrypted_content')
      const completed = data.at(-1) as { response: { output: Record<string, unknown>[] } }
      expect(completed.response.output.map((item) => item['id'])).toEqual(['rs_01JGATEWAY_0', 'fc_01JGATEWAY_1'])
    })

    test('the OpenAI SDK accumulates the encrypted_content into its final response', async () => {
      const server = serveResponses(() => sseResponse(encode(signed, includeEncrypted)))
      stop = server.stop
      const final = await server.client.responses
        .stream({ model: 'svc-pro', input: 'q', include: ['reasoning.encrypted_content'], store: false })
        .finalResponse()
      const reasoning = final.output.filter((item) => item.type === 'reasoning')
      expect(reasoning.map((item) => readAnthropicReasoning(item.encrypted_content ?? ''))).toEqual([
        { type: 'thinking', signature: 'EqQBCkYIBxgCKkBsig' },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
      ])
      expect(reasoning[0]?.summary).toEqual([{ type: 'summary_text', text: 'Weather needs a lookup.' }])
    })
  })

  test('a call to a namespaced tool streams under its namespace and own name', async () => {
    const tools = [{ type: 'namespace', name: 'multi_agent_v1', tools: [{ type: 'function', name: 'wait_agent' }] }]
    const data = await frames(
      [
        { type: 'start', id: 'msg_upstream', model: 'claude-sonnet', usage: { input: 10 } },
        {
          type: 'block_start',
          index: 0,
          block: { kind: 'tool_use', id: 'toolu_7', name: 'multi_agent_v1__wait_agent' },
        },
        { type: 'tool_args_delta', index: 0, partialJson: '{"targets":["a1"]}' },
        { type: 'block_stop', index: 0 },
        { type: 'finish', reason: 'tool_use', stopSequence: null },
      ],
      { tools },
    )
    const call = { call_id: 'toolu_7', namespace: 'multi_agent_v1', name: 'wait_agent' }
    const byType = (type: string) => data.filter((d) => d['type'] === type)
    expect(byType('response.output_item.added')[0]!['item']).toMatchObject({ ...call, arguments: '' })
    expect(byType('response.function_call_arguments.done')[0]).toMatchObject({ name: 'wait_agent' })
    expect(byType('response.output_item.done')[0]!['item']).toMatchObject({ ...call, arguments: '{"targets":["a1"]}' })
    const completed = byType('response.completed')[0]!['response'] as { output: unknown[]; tools: unknown }
    expect(completed.output).toEqual([expect.objectContaining(call)])
    expect(completed.tools).toEqual(tools)
  })
})

describe('responsesStreamEncoder: web search', () => {
  let stop: (() => void) | undefined
  afterEach(() => {
    stop?.()
    stop = undefined
  })

  const searched: ExchangeEvent[] = [
    { type: 'start', id: 'msg_upstream', model: 'claude-sonnet', usage: { input: 10 } },
    {
      type: 'block_start',
      index: 0,
      block: {
        kind: 'web_search',
        search: {
          id: 'srvtoolu_01',
          query: 'bun 1.4',
          outcome: { results: [{ url: 'https://bun.sh/blog/bun-v1.4', title: 'Bun 1.4', pageAge: '2 days ago' }] },
        },
      },
    },
    { type: 'block_stop', index: 0 },
    {
      type: 'block_start',
      index: 1,
      block: {
        kind: 'web_search',
        search: { id: 'srvtoolu_02', query: 'bun 1.5', outcome: { errorCode: 'unavailable' } },
      },
    },
    { type: 'block_stop', index: 1 },
    { type: 'block_start', index: 2, block: { kind: 'text' } },
    { type: 'text_delta', index: 2, text: 'Bun 1.4 is out.' },
    { type: 'block_stop', index: 2 },
    { type: 'usage', usage: { output: 30, webSearches: 1 } },
    { type: 'finish', reason: 'end_turn', stopSequence: null },
  ]

  const found = {
    id: 'ws_01JGATEWAY_0',
    type: 'web_search_call',
    status: 'completed',
    action: { type: 'search', query: 'bun 1.4', sources: [{ type: 'url', url: 'https://bun.sh/blog/bun-v1.4' }] },
  }
  const failed = {
    id: 'ws_01JGATEWAY_1',
    type: 'web_search_call',
    status: 'failed',
    action: { type: 'search', query: 'bun 1.5' },
  }

  test("each search goes through its item's whole lifecycle at its start, and is in the terminal output", async () => {
    const data = await frames(searched)
    expectSequenceFromZero(data)
    const at = (n: number) => ({ item_id: `ws_01JGATEWAY_${n}`, output_index: n })
    const lifecycle = (n: number, done: Record<string, unknown>, query: string) => [
      {
        type: 'response.output_item.added',
        output_index: n,
        item: { id: done['id'], type: 'web_search_call', status: 'in_progress', action: { type: 'search', query } },
      },
      { type: 'response.web_search_call.in_progress', ...at(n) },
      { type: 'response.web_search_call.searching', ...at(n) },
      { type: 'response.web_search_call.completed', ...at(n) },
      { type: 'response.output_item.done', output_index: n, item: done },
    ]
    const withoutSequence = data.map(({ sequence_number: _, ...rest }) => rest)
    expect(withoutSequence.slice(2, 12)).toEqual([
      ...lifecycle(0, found, 'bun 1.4'),
      ...lifecycle(1, failed, 'bun 1.5'),
    ])
    expect(data[12]).toMatchObject({
      type: 'response.output_item.added',
      output_index: 2,
      item: { id: 'msg_01JGATEWAY' },
    })
    const completed = data.at(-1) as { type: string; response: { output: Record<string, unknown>[] } }
    expect(completed.type).toBe('response.completed')
    expect(completed.response.output.slice(0, 2)).toEqual([found, failed])
    expect(completed.response.output[2]).toMatchObject({ id: 'msg_01JGATEWAY', type: 'message' })
  })

  test('the OpenAI SDK reads the search events and accumulates the items into the final response', async () => {
    const server = serveResponses(() => sseResponse(encode(searched)))
    stop = server.stop
    const stream = server.client.responses.stream({ model: 'svc-pro', input: 'news?' })
    const searching: string[] = []
    stream.on('response.web_search_call.searching', (event) => searching.push(event.item_id))
    const done: unknown[] = []
    stream.on('response.output_item.done', (event) => {
      if (event.item.type === 'web_search_call') done.push(event.item)
    })
    const final = await stream.finalResponse()
    expect(searching).toEqual(['ws_01JGATEWAY_0', 'ws_01JGATEWAY_1'])
    expect(done).toEqual([found, failed])
    expect(final.output.filter((item) => item.type === 'web_search_call')).toEqual([found, failed] as never)
    expect(final.output_text).toBe('Bun 1.4 is out.')
  })
})

describe('responsesStreamEncoder: citations', () => {
  let stop: (() => void) | undefined
  afterEach(() => {
    stop?.()
    stop = undefined
  })

  const page = { url: 'https://bun.sh/blog/bun-v1.4', title: 'Bun 1.4', citedText: 'Bun 1.4 ships.' }
  const other = { url: 'https://example.com/', title: 'Example', citedText: 'the answer' }
  const annotation = (c: typeof page, start: number, end: number) => ({
    type: 'url_citation',
    start_index: start,
    end_index: end,
    url: c.url,
    title: c.title,
  })

  // Anthropic: each cited passage is a block of its own, its citations before its text. OpenAI
  // (the last block): a span, after the words it marks.
  const cited: ExchangeEvent[] = [
    { type: 'start', id: 'msg_upstream', model: 'claude-sonnet', usage: { input: 10 } },
    { type: 'block_start', index: 0, block: { kind: 'text' } },
    { type: 'text_delta', index: 0, text: 'Per the notes, ' },
    { type: 'block_stop', index: 0 },
    { type: 'block_start', index: 1, block: { kind: 'text' } },
    { type: 'citation', index: 1, citation: page },
    { type: 'citation', index: 1, citation: other },
    { type: 'text_delta', index: 1, text: 'Bun 1.4 ' },
    { type: 'text_delta', index: 1, text: 'is out.' },
    { type: 'block_stop', index: 1 },
    { type: 'block_start', index: 2, block: { kind: 'text' } },
    { type: 'text_delta', index: 2, text: 'It is fast' },
    { type: 'citation', index: 2, citation: { ...page, span: { start: 0, end: 10 } } },
    { type: 'text_delta', index: 2, text: '.' },
    { type: 'block_stop', index: 2 },
    // Too late: the client has seen the block's output_text done.
    { type: 'citation', index: 2, citation: other },
    { type: 'finish', reason: 'end_turn', stopSequence: null },
  ]

  const wholeBlock = [annotation(page, 0, 15), annotation(other, 0, 15)]
  const spanned = [annotation(page, 0, 10)]

  test("a whole-block citation is added once the block's text is complete, a span at once; done parts carry all", async () => {
    const data = await frames(cited)
    expectSequenceFromZero(data)
    const withoutSequence = data.map(({ sequence_number: _, ...rest }) => rest)
    const at = (id: string, n: number) => ({ item_id: id, output_index: n, content_index: 0 })
    const part = (text: string, annotations: unknown[]) => ({ type: 'output_text', text, annotations, logprobs: [] })
    const item = (id: string, text: string, annotations: unknown[]) => ({
      id,
      type: 'message',
      status: 'completed',
      role: 'assistant',
      content: [part(text, annotations)],
    })
    const second = at('msg_01JGATEWAY_1', 1)
    const third = at('msg_01JGATEWAY_2', 2)
    expect(withoutSequence.slice(8, -1)).toEqual([
      { type: 'response.output_item.added', output_index: 1, item: expect.objectContaining({ content: [] }) },
      { type: 'response.content_part.added', ...second, part: part('', []) },
      { type: 'response.output_text.delta', ...second, delta: 'Bun 1.4 ', logprobs: [] },
      { type: 'response.output_text.delta', ...second, delta: 'is out.', logprobs: [] },
      { type: 'response.output_text.annotation.added', ...second, annotation_index: 0, annotation: wholeBlock[0] },
      { type: 'response.output_text.annotation.added', ...second, annotation_index: 1, annotation: wholeBlock[1] },
      { type: 'response.output_text.done', ...second, text: 'Bun 1.4 is out.', logprobs: [] },
      { type: 'response.content_part.done', ...second, part: part('Bun 1.4 is out.', wholeBlock) },
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: item('msg_01JGATEWAY_1', 'Bun 1.4 is out.', wholeBlock),
      },
      { type: 'response.output_item.added', output_index: 2, item: expect.objectContaining({ content: [] }) },
      { type: 'response.content_part.added', ...third, part: part('', []) },
      { type: 'response.output_text.delta', ...third, delta: 'It is fast', logprobs: [] },
      { type: 'response.output_text.annotation.added', ...third, annotation_index: 0, annotation: spanned[0] },
      { type: 'response.output_text.delta', ...third, delta: '.', logprobs: [] },
      { type: 'response.output_text.done', ...third, text: 'It is fast.', logprobs: [] },
      { type: 'response.content_part.done', ...third, part: part('It is fast.', spanned) },
      { type: 'response.output_item.done', output_index: 2, item: item('msg_01JGATEWAY_2', 'It is fast.', spanned) },
    ])
    const completed = data.at(-1) as { type: string; response: { output: unknown[] } }
    expect(completed.type).toBe('response.completed')
    expect(completed.response.output).toEqual([
      item('msg_01JGATEWAY', 'Per the notes, ', []),
      item('msg_01JGATEWAY_1', 'Bun 1.4 is out.', wholeBlock),
      item('msg_01JGATEWAY_2', 'It is fast.', spanned),
    ])
  })

  test('a whole-block citation of a block the source left open is added when the stream closes it', async () => {
    const open = cited.slice(0, 9).concat({ type: 'finish', reason: 'max_tokens', stopSequence: null })
    const data = await frames(open)
    expect(data.slice(-6).map((d) => [d['type'], d['annotation_index']])).toEqual([
      ['response.output_text.annotation.added', 0],
      ['response.output_text.annotation.added', 1],
      ['response.output_text.done', undefined],
      ['response.content_part.done', undefined],
      ['response.output_item.done', undefined],
      ['response.incomplete', undefined],
    ])
    expect(data.at(-1)).toMatchObject({
      response: { output: [{}, { content: [{ text: 'Bun 1.4 is out.', annotations: wholeBlock }] }] },
    })
  })

  test('the OpenAI SDK reads the annotation events and accumulates the annotations into the final response', async () => {
    const server = serveResponses(() => sseResponse(encode(cited)))
    stop = server.stop
    const stream = server.client.responses.stream({ model: 'svc-pro', input: 'news?' })
    const added: unknown[] = []
    stream.on('response.output_text.annotation.added', (event) => added.push(event.annotation))
    const final = await stream.finalResponse()
    expect(added).toEqual([...wholeBlock, ...spanned])
    const annotations = final.output.map((item) =>
      item.type === 'message' && item.content[0]?.type === 'output_text' ? item.content[0].annotations : undefined,
    )
    expect(annotations).toEqual([[], wholeBlock, spanned] as never)
    expect(final.output_text).toBe('Per the notes, Bun 1.4 is out.It is fast.')
  })
})
