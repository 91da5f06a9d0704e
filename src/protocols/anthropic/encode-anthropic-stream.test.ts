import { describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type { ExchangeEvent } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { collect, framesOf, iterate, readFixture, runCodec, sseOf } from '../fixture-streams'
import { chatStreamDecoder } from '../openai-chat/decode-chat-stream'
import { responsesStreamDecoder } from '../openai-responses/decode-responses-stream'
import { anthropicStreamDecoder } from './decode-anthropic-stream'
import { anthropicStreamEncoder } from './encode-anthropic-stream'

const ids = { id: 'msg_gw_0001', model: 'gpt-4o-mini' }

const encodeText = async (events: AsyncIterable<ExchangeEvent>, opts = ids): Promise<string> =>
  (await collect(runCodec(anthropicStreamEncoder(opts), events))).join('')

const encodeEvents = (events: ExchangeEvent[]): Promise<string> => encodeText(iterate(events))

async function translateChat(fixture: string, model: string): Promise<string> {
  return encodeText(runCodec(chatStreamDecoder(), sseOf(await readFixture(`openai-chat/${fixture}`))), {
    ...ids,
    model,
  })
}

/** What the official SDK makes of our stream: if it can't parse us, we are wrong. */
async function sdkFinalMessage(sse: string): Promise<unknown> {
  const respond = async () => new Response(sse, { headers: { 'content-type': 'text/event-stream' } })
  const client = new Anthropic({ apiKey: 'test-key', maxRetries: 0, fetch: respond as unknown as typeof fetch })
  return client.messages
    .stream({ model: 'any', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] })
    .finalMessage()
}

const start: ExchangeEvent = { type: 'start', id: 'up', model: 'up-model' }

describe('anthropicStreamEncoder: Chat upstream goldens', () => {
  const goldens: [string, string, string][] = [
    ['tool-call.sse', 'expected-from-chat-tool-call.sse', 'gpt-4o-mini'],
    ['text-include-usage.sse', 'expected-from-chat-text-include-usage.sse', 'gpt-4o-mini'],
    ['deepseek-reasoning.sse', 'expected-from-chat-deepseek-reasoning.sse', 'deepseek-reasoner'],
    ['thinking-tool-calls.sse', 'expected-from-chat-thinking-tool-calls.sse', 'deepseek-chat'],
    ['cached-usage-after-finish.sse', 'expected-from-chat-cached-usage.sse', 'gpt-4o-mini'],
  ]
  for (const [source, expected, model] of goldens) {
    test(`${source} → ${expected}`, async () => {
      const actual = await translateChat(source, model)
      expect(await framesOf(actual)).toEqual(await framesOf(await readFixture(`anthropic/${expected}`)))
    })
  }

  test('5.5 → 5.6 as the SDK sees it', async () => {
    const message = await sdkFinalMessage(await translateChat('tool-call.sse', 'gpt-4o-mini'))
    expect(message).toEqual({
      id: 'msg_gw_0001',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o-mini',
      content: [{ type: 'tool_use', id: 'call_abc123', name: 'get_weather', input: { city: 'Paris' } }],
      stop_reason: 'tool_use',
      stop_sequence: null,
      // The SDK's own addition for structured outputs.
      parsed_output: null,
      usage: { input_tokens: 86, output_tokens: 18, cache_creation_input_tokens: 0, cache_read_input_tokens: 1920 },
    })
  })

  test('thinking + parallel tool calls as the SDK sees it', async () => {
    const message = await sdkFinalMessage(await translateChat('thinking-tool-calls.sse', 'deepseek-chat'))
    expect(message).toMatchObject({
      content: [
        { type: 'thinking', thinking: 'The user wants weather in Paris and Tokyo.', signature: '' },
        { type: 'tool_use', id: 'call_00_paris', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'functions_get_weather_1_9bl5h6', name: 'get_weather', input: { city: 'Tokyo' } },
      ],
      stop_reason: 'tool_use',
      usage: { input_tokens: 176, cache_read_input_tokens: 1024, output_tokens: 95 },
    })
  })
})

describe('anthropicStreamEncoder: Anthropic round trips', () => {
  for (const fixture of ['thinking-text.sse', 'text-tool-use.sse']) {
    test(`${fixture} → decode → encode keeps every event, block and count`, async () => {
      const original = await readFixture(`anthropic/${fixture}`)
      const opts = { id: 'msg_gw_rt', model: 'claude-sonnet-4-5' }
      const encoded = await encodeText(runCodec(anthropicStreamDecoder(), sseOf(original)), opts)

      const before = (await framesOf(original)).filter((f) => f.event !== 'ping')
      const after = await framesOf(encoded)
      expect(after.map((f) => f.event)).toEqual(before.map((f) => f.event))
      // Block frames are byte-identical in meaning.
      const blocks = (frames: typeof before) => frames.filter((f) => f.event?.startsWith('content_block'))
      expect(blocks(after)).toEqual(blocks(before))

      // message_start differs only by id; the usage counts all survive.
      const sdkBefore = await sdkFinalMessage(original)
      const sdkAfter = await sdkFinalMessage(encoded)
      expect(sdkAfter).toEqual({ ...(sdkBefore as object), id: 'msg_gw_rt' })
    })
  }

  test('5.9 mid-stream error: frames reproduced, no message_stop, the SDK raises the error type', async () => {
    const original = await readFixture('anthropic/mid-stream-error.sse')
    const encoded = await encodeText(runCodec(anthropicStreamDecoder(), sseOf(original)), {
      id: 'x',
      model: 'claude-sonnet-4-5',
    })
    const before = await framesOf(original)
    const after = await framesOf(encoded)
    expect(after.slice(1)).toEqual(before.slice(1))
    const error = await sdkFinalMessage(encoded).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Anthropic.APIError)
    expect(error).toMatchObject({ type: 'overloaded_error' })
  })
})

describe('anthropicStreamEncoder: ordering rules', () => {
  test('message_delta is held until the source ends and carries the last usage', async () => {
    const frames = await framesOf(
      await encodeEvents([
        start,
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'hi' },
        { type: 'block_stop', index: 0 },
        { type: 'finish', reason: 'end_turn' },
        { type: 'usage', usage: { input: 3, output: 1 } },
        { type: 'usage', usage: { output: 7, cacheRead: 2 } },
      ]),
    )
    expect(frames.at(-2)).toEqual({
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { input_tokens: 3, cache_creation_input_tokens: 0, cache_read_input_tokens: 2, output_tokens: 7 },
      },
    })
    expect(frames.at(-1)).toEqual({ event: 'message_stop', data: { type: 'message_stop' } })
  })

  test('1-hour cache writes go out split by TTL, in message_start and message_delta, as Anthropic sends them', async () => {
    const frames = await framesOf(
      await encodeEvents([
        { ...start, usage: { input: 3, cacheWrite: 100, cacheWrite1h: 60 } },
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'hi' },
        { type: 'block_stop', index: 0 },
        { type: 'finish', reason: 'end_turn' },
        { type: 'usage', usage: { output: 7 } },
      ]),
    )
    const byTtl = { ephemeral_5m_input_tokens: 40, ephemeral_1h_input_tokens: 60 }
    expect(frames[0]?.data).toMatchObject({
      message: { usage: { input_tokens: 3, cache_creation_input_tokens: 100, cache_creation: byTtl } },
    })
    expect(frames.at(-2)?.data).toMatchObject({
      usage: { input_tokens: 3, cache_creation_input_tokens: 100, cache_creation: byTtl, output_tokens: 7 },
    })
  })

  test('late thinking is dropped with its deltas; indices stay dense; an open block is closed', async () => {
    const frames = await framesOf(
      await encodeEvents([
        { ...start, usage: { input: 10, cacheRead: 4, cacheWrite: 2 } },
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'a' },
        { type: 'block_stop', index: 0 },
        { type: 'block_start', index: 1, block: { kind: 'thinking' } },
        { type: 'thinking_delta', index: 1, thinking: 'late' },
        { type: 'block_stop', index: 1 },
        { type: 'block_start', index: 2, block: { kind: 'tool_use', id: 'functions.f:0', name: 'f' } },
        { type: 'tool_args_delta', index: 2, partialJson: '{}' },
        { type: 'text_delta', index: 0, text: 'to a closed block' },
        { type: 'finish', reason: 'tool_use' },
      ]),
    )
    expect(frames.map((f) => [f.event, (f.data as { index?: number }).index])).toEqual([
      ['message_start', undefined],
      ['content_block_start', 0],
      ['content_block_delta', 0],
      ['content_block_stop', 0],
      ['content_block_start', 1],
      ['content_block_delta', 1],
      ['content_block_stop', 1],
      ['message_delta', undefined],
      ['message_stop', undefined],
    ])
    expect(frames[0]?.data).toMatchObject({
      message: {
        usage: { input_tokens: 10, output_tokens: 0, cache_read_input_tokens: 4, cache_creation_input_tokens: 2 },
      },
    })
    expect(frames[4]?.data).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'tool_use', id: 'functions_f_0_jis8l4', name: 'f', input: {} },
    })
  })

  test('an error event ends the stream with event: error and no message_stop', async () => {
    const text = await encodeEvents([
      start,
      { type: 'error', error: { status: 429, type: 'rate_limit_error', message: 'slow down' } },
      { type: 'finish', reason: 'end_turn' },
    ])
    expect((await framesOf(text)).slice(1)).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } } },
    ])
  })

  test('an error before anything else is the only frame', async () => {
    const text = await encodeEvents([
      { type: 'error', error: { status: 529, type: 'overloaded_error', message: 'busy' } },
    ])
    expect(await framesOf(text)).toEqual([
      { event: 'error', data: { type: 'error', error: { type: 'overloaded_error', message: 'busy' } } },
    ])
  })

  test('a source that ends without finish is reported as api_error', async () => {
    const text = await encodeEvents([start, { type: 'block_start', index: 0, block: { kind: 'text' } }])
    expect((await framesOf(text)).at(-1)).toEqual({
      event: 'error',
      data: { type: 'error', error: { type: 'api_error', message: 'upstream stream ended early' } },
    })
  })

  test('a throwing source becomes an in-band error in the GatewayError kind', async () => {
    async function* failing(): AsyncGenerator<ExchangeEvent> {
      yield start
      throw new GatewayError('timeout', 'upstream went quiet')
    }
    const frames = await framesOf(await encodeText(failing()))
    expect(frames.map((f) => f.event)).toEqual(['message_start', 'error'])
    expect(frames[1]?.data).toEqual({ type: 'error', error: { type: 'timeout_error', message: 'upstream went quiet' } })

    async function* broken(): AsyncGenerator<ExchangeEvent> {
      yield start
      throw new Error('socket hang up')
    }
    expect((await framesOf(await encodeText(broken()))).at(-1)?.data).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'upstream stream failed: socket hang up' },
    })
  })

  test('finish reason error becomes an error event', async () => {
    const frames = await framesOf(await encodeEvents([start, { type: 'finish', reason: 'error' }]))
    expect(frames.map((f) => f.event)).toEqual(['message_start', 'error'])
  })

  test('context_exceeded and stop sequences use Anthropic names', async () => {
    const frames = await framesOf(
      await encodeEvents([start, { type: 'finish', reason: 'stop_sequence', stopSequence: '###' }]),
    )
    expect(frames.at(-2)?.data).toMatchObject({ delta: { stop_reason: 'stop_sequence', stop_sequence: '###' } })
    const exceeded = await framesOf(await encodeEvents([start, { type: 'finish', reason: 'context_exceeded' }]))
    expect(exceeded.at(-2)?.data).toMatchObject({ delta: { stop_reason: 'model_context_window_exceeded' } })
  })

  test('once ended, the encoder says nothing more: not for late events, an end, or a failure', () => {
    const afterError = anthropicStreamEncoder(ids)
    afterError.push(start)
    expect(afterError.push({ type: 'error', error: { status: 500, type: 'api_error', message: 'x' } })).toHaveLength(1)
    expect(afterError.done).toBe(true)
    expect(afterError.push({ type: 'text_delta', index: 0, text: 'late' })).toEqual([])
    expect(afterError.end()).toEqual([])
    expect(afterError.fail(new Error('late'))).toEqual([])

    const afterEnd = anthropicStreamEncoder(ids)
    afterEnd.push(start)
    afterEnd.push({ type: 'finish', reason: 'end_turn' })
    expect(afterEnd.done).toBe(false)
    expect(afterEnd.end().at(-1)).toContain('message_stop')
    expect(afterEnd.done).toBe(true)
    expect(afterEnd.fail(new Error('late'))).toEqual([])
    expect(afterEnd.end()).toEqual([])
  })
})

describe('anthropicStreamEncoder: web searches', () => {
  const found = {
    id: 'ws_1',
    query: 'svc gateway',
    outcome: { results: [{ url: 'https://a.example/', title: 'https://a.example/' }] },
  }
  /** What `found` is to an Anthropic client: its result block. */
  const foundResult = {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_ws_1',
    content: [
      {
        type: 'web_search_result',
        url: 'https://a.example/',
        title: 'https://a.example/',
        encrypted_content: '',
        page_age: null,
      },
    ],
  }

  test('a search is a server_tool_use with its query as one delta, then the whole result block', async () => {
    const frames = await framesOf(
      await encodeEvents([
        start,
        { type: 'block_start', index: 0, block: { kind: 'thinking' } },
        { type: 'thinking_delta', index: 0, thinking: 'look' },
        { type: 'block_stop', index: 0 },
        { type: 'block_start', index: 1, block: { kind: 'web_search', search: found } },
        { type: 'block_stop', index: 1 },
        {
          type: 'block_start',
          index: 2,
          block: { kind: 'web_search', search: { id: 'ws_2', query: 'again', outcome: { errorCode: 'unavailable' } } },
        },
        { type: 'block_stop', index: 2 },
        { type: 'block_start', index: 3, block: { kind: 'text' } },
        { type: 'text_delta', index: 3, text: 'Found.' },
        { type: 'block_stop', index: 3 },
        { type: 'usage', usage: { input: 30, output: 5, webSearches: 2 } },
        { type: 'finish', reason: 'end_turn' },
      ]),
    )
    const blockStart = (index: number, block: unknown) => ({
      event: 'content_block_start',
      data: { type: 'content_block_start', index, content_block: block },
    })
    const blockStop = (index: number) => ({ event: 'content_block_stop', data: { type: 'content_block_stop', index } })
    const queryDelta = (index: number, query: string) => ({
      event: 'content_block_delta',
      data: {
        type: 'content_block_delta',
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify({ query }) },
      },
    })
    expect(frames.slice(4, -2)).toEqual([
      blockStart(1, { type: 'server_tool_use', id: 'srvtoolu_ws_1', name: 'web_search', input: {} }),
      queryDelta(1, 'svc gateway'),
      blockStop(1),
      blockStart(2, foundResult),
      blockStop(2),
      blockStart(3, { type: 'server_tool_use', id: 'srvtoolu_ws_2', name: 'web_search', input: {} }),
      queryDelta(3, 'again'),
      blockStop(3),
      blockStart(4, {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_ws_2',
        content: { type: 'web_search_tool_result_error', error_code: 'unavailable' },
      }),
      blockStop(4),
      blockStart(5, { type: 'text', text: '' }),
      {
        event: 'content_block_delta',
        data: { type: 'content_block_delta', index: 5, delta: { type: 'text_delta', text: 'Found.' } },
      },
      blockStop(5),
    ])
    expect(frames.at(-2)?.data).toMatchObject({
      usage: { input_tokens: 30, output_tokens: 5, server_tool_use: { web_search_requests: 2 } },
    })
  })

  test("a Responses upstream's searches, as the SDK sees them; later reasoning is dropped like after a tool", async () => {
    const searched = {
      id: 'ws_1',
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query: 'svc gateway', sources: [{ type: 'url', url: 'https://a.example/' }] },
    }
    const reasoning = { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'then' }] }
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Found.', annotations: [] }],
    }
    const upstream = [
      { type: 'response.created', response: { id: 'resp_1', model: 'gpt-5', status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item: { ...searched, status: 'in_progress' } },
      { type: 'response.web_search_call.completed', output_index: 0, item_id: 'ws_1' },
      { type: 'response.output_item.done', output_index: 0, item: searched },
      { type: 'response.output_item.done', output_index: 1, item: reasoning },
      { type: 'response.output_item.done', output_index: 2, item: message },
      {
        type: 'response.completed',
        response: {
          id: 'resp_1',
          model: 'gpt-5',
          status: 'completed',
          output: [searched, reasoning, message],
          usage: { input_tokens: 30, output_tokens: 5 },
        },
      },
    ]
    const sse = upstream.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ sequence_number: i, ...e })}\n\n`)
    const encoded = await encodeText(runCodec(responsesStreamDecoder(), sseOf(sse.join(''))))
    expect(await sdkFinalMessage(encoded)).toMatchObject({
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_ws_1', name: 'web_search', input: { query: 'svc gateway' } },
        foundResult,
        { type: 'text', text: 'Found.' },
      ],
      stop_reason: 'end_turn',
      usage: { input_tokens: 30, output_tokens: 5, server_tool_use: { web_search_requests: 1 } },
    })
  })
})

describe('anthropicStreamEncoder: citations', () => {
  const cited = { url: 'https://a.example/', title: 'Page A', citedText: 'Found', span: { start: 0, end: 5 } }
  const location = {
    type: 'web_search_result_location',
    url: 'https://a.example/',
    title: 'Page A',
    cited_text: 'Found',
    encrypted_index: '',
  }

  test('a citation of the open text block is a citations_delta at its client index; any other is dropped', async () => {
    const frames = await framesOf(
      await encodeEvents([
        start,
        { type: 'block_start', index: 0, block: { kind: 'thinking' } },
        { type: 'thinking_delta', index: 0, thinking: 'look' },
        { type: 'citation', index: 0, citation: cited },
        { type: 'block_stop', index: 0 },
        {
          type: 'block_start',
          index: 1,
          block: { kind: 'web_search', search: { id: 'ws_1', query: 'q', outcome: { results: [] } } },
        },
        { type: 'citation', index: 1, citation: cited },
        { type: 'block_stop', index: 1 },
        { type: 'block_start', index: 2, block: { kind: 'text' } },
        { type: 'citation', index: 1, citation: cited },
        { type: 'text_delta', index: 2, text: 'Found.' },
        { type: 'citation', index: 2, citation: cited },
        { type: 'block_stop', index: 2 },
        { type: 'citation', index: 2, citation: cited },
        { type: 'finish', reason: 'end_turn' },
      ]),
    )
    const deltas = frames.filter((f) => f.event === 'content_block_delta').map((f) => f.data)
    expect(deltas).toEqual([
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'look' } },
      {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify({ query: 'q' }) },
      },
      { type: 'content_block_delta', index: 3, delta: { type: 'text_delta', text: 'Found.' } },
      { type: 'content_block_delta', index: 3, delta: { type: 'citations_delta', citation: location } },
    ])
  })

  test("a Responses upstream's annotations, as the SDK sees them", async () => {
    const annotation = {
      type: 'url_citation',
      start_index: 0,
      end_index: 5,
      url: 'https://a.example/',
      title: 'Page A',
    }
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Found it.', annotations: [annotation] }],
    }
    const at = { item_id: 'msg_1', output_index: 0, content_index: 0 }
    const upstream = [
      { type: 'response.created', response: { id: 'resp_1', model: 'gpt-5', status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.output_text.delta', ...at, delta: 'Found it.' },
      { type: 'response.output_text.annotation.added', ...at, annotation_index: 0, annotation },
      { type: 'response.output_item.done', output_index: 0, item: message },
      {
        type: 'response.completed',
        response: {
          id: 'resp_1',
          model: 'gpt-5',
          status: 'completed',
          output: [message],
          usage: { input_tokens: 30, output_tokens: 5 },
        },
      },
    ]
    const sse = upstream.map((e, i) => `event: ${e.type}\ndata: ${JSON.stringify({ sequence_number: i, ...e })}\n\n`)
    const encoded = await encodeText(runCodec(responsesStreamDecoder(), sseOf(sse.join(''))))
    expect(await sdkFinalMessage(encoded)).toMatchObject({
      content: [{ type: 'text', text: 'Found it.', citations: [location] }],
      stop_reason: 'end_turn',
    })
  })
})
