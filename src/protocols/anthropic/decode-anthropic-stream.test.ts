import { describe, expect, test } from 'bun:test'
import type { ExchangeEvent } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { collect, readFixture, runCodec, sseOf } from '../fixture-streams'
import { encodeSse } from '../sse'
import { anthropicStreamDecoder } from './decode-anthropic-stream'

const decodeText = (text: string): Promise<ExchangeEvent[]> => collect(runCodec(anthropicStreamDecoder(), sseOf(text)))

describe('anthropicStreamDecoder', () => {
  test("a block's stop waits for the next event: the last one goes out with the finish", () => {
    const frame = (type: string, data: Record<string, unknown>) => {
      const raw = encodeSse(type, { type, ...data })
      return { event: type, data: JSON.stringify({ type, ...data }), raw }
    }
    const decoder = anthropicStreamDecoder()
    decoder.push(frame('message_start', { message: { id: 'm', model: 'claude', usage: { input_tokens: 3 } } }))
    decoder.push(frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }))
    decoder.push(frame('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Cut' } }))
    expect(decoder.push(frame('content_block_stop', { index: 0 }))).toEqual([])
    expect(decoder.push(frame('ping', {}))).toEqual([])
    expect(
      decoder.push(frame('message_delta', { delta: { stop_reason: 'max_tokens' }, usage: { output_tokens: 1 } })),
    ).toEqual([
      { type: 'block_stop', index: 0 },
      { type: 'usage', usage: expect.objectContaining({ output: 1 }) },
      { type: 'finish', reason: 'max_tokens', stopSequence: null },
    ])
    // Cut right after a block's end: the end still comes, with no finish after it.
    const cut = anthropicStreamDecoder()
    cut.push(frame('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }))
    cut.push(frame('content_block_stop', { index: 0 }))
    expect(cut.end()).toEqual([{ type: 'block_stop', index: 0 }])
  })

  test('5.1 thinking + text', async () => {
    expect(await decodeText(await readFixture('anthropic/thinking-text.sse'))).toEqual([
      {
        type: 'start',
        id: 'msg_01GoldenThink000000000001',
        model: 'claude-sonnet-4-5',
        usage: { input: 24, cacheRead: 0, cacheWrite: 0, output: 1, reasoning: 0 },
      },
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 0, thinking: '27 * 453 = 27*400 + 27*53' },
      { type: 'thinking_delta', index: 0, thinking: ' = 10800 + 1431 = 12231.' },
      { type: 'signature_delta', index: 0, signature: 'R29sZGVuU2lnbmF0dXJlMDAx' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: '27 x 453 = ' },
      { type: 'text_delta', index: 1, text: '12,231' },
      { type: 'block_stop', index: 1 },
      { type: 'usage', usage: { output: 58 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ])
  })

  test('5.2 text + tool_use, including the empty first input_json_delta', async () => {
    const events = await decodeText(await readFixture('anthropic/text-tool-use.sse'))
    expect(events[0]).toEqual({
      type: 'start',
      id: 'msg_01GoldenTool0000000000001',
      model: 'claude-sonnet-4-5',
      usage: { input: 86, cacheRead: 1920, cacheWrite: 0, output: 2, reasoning: 0 },
    })
    expect(events.slice(4)).toEqual([
      {
        type: 'block_start',
        index: 1,
        block: { kind: 'tool_use', id: 'toolu_01GoldenToolUse00000001', name: 'get_weather' },
      },
      { type: 'tool_args_delta', index: 1, partialJson: '' },
      { type: 'tool_args_delta', index: 1, partialJson: '{"city": "Pa' },
      { type: 'tool_args_delta', index: 1, partialJson: 'ris", "unit": "celsius"}' },
      { type: 'block_stop', index: 1 },
      { type: 'usage', usage: { output: 48 } },
      { type: 'finish', reason: 'tool_use', stopSequence: null },
    ])
  })

  test('5.9 mid-stream error becomes an error event and ends the stream', async () => {
    const events = await decodeText(await readFixture('anthropic/mid-stream-error.sse'))
    expect(events.slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Partial' },
      { type: 'error', error: { status: 529, type: 'overloaded_error', message: 'Overloaded' } },
    ])
  })

  test('skips server-tool blocks and renumbers the rest densely; ignores unknown events and deltas', async () => {
    const text = [
      encodeSse('message_start', {
        type: 'message_start',
        message: { id: 'm', model: 'c', usage: { input_tokens: 5 } },
      }),
      encodeSse('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
      }),
      encodeSse('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'input_json_delta', partial_json: '{"q":1}' },
      }),
      encodeSse('content_block_stop', { type: 'content_block_stop', index: 0 }),
      encodeSse('future_event', 'not even an object'),
      encodeSse('content_block_start', {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 't1', name: 'f', input: {} },
      }),
      encodeSse('content_block_delta', {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'citations_delta', citation: {} },
      }),
      encodeSse('content_block_stop', { type: 'content_block_stop', index: 1 }),
      encodeSse('content_block_start', {
        type: 'content_block_start',
        index: 2,
        content_block: { type: 'redacted_thinking', data: 'opaque' },
      }),
      encodeSse('content_block_stop', { type: 'content_block_stop', index: 2 }),
      encodeSse('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'model_context_window_exceeded', stop_sequence: null },
        usage: { output_tokens: 9, input_tokens: 6, cache_read_input_tokens: null },
      }),
      encodeSse('message_stop', { type: 'message_stop' }),
      encodeSse('message_start', { type: 'message_start', message: {} }),
    ].join('')
    expect((await decodeText(text)).slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 't1', name: 'f' } },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'redacted_thinking', data: 'opaque' } },
      { type: 'block_stop', index: 1 },
      { type: 'usage', usage: { output: 9, input: 6 } },
      { type: 'finish', reason: 'context_exceeded', stopSequence: null },
    ])
  })

  test('a web search opens, complete, at its result with the query its call streamed; the call has no index', async () => {
    const start = (index: number, block: unknown) =>
      encodeSse('content_block_start', { type: 'content_block_start', index, content_block: block })
    const delta = (index: number, d: unknown) =>
      encodeSse('content_block_delta', { type: 'content_block_delta', index, delta: d })
    const stop = (index: number) => encodeSse('content_block_stop', { type: 'content_block_stop', index })
    const call = (index: number, id: string, query: string) => [
      start(index, { type: 'server_tool_use', id, name: 'web_search', input: {} }),
      delta(index, { type: 'input_json_delta', partial_json: '' }),
      delta(index, { type: 'input_json_delta', partial_json: '{"query": "bun' }),
      delta(index, { type: 'input_json_delta', partial_json: ` ${query}"}` }),
      stop(index),
    ]
    const result = {
      type: 'web_search_result',
      url: 'https://bun.sh/',
      title: 'Bun',
      encrypted_content: 'Eq',
      page_age: null,
    }
    const text = [
      encodeSse('message_start', {
        type: 'message_start',
        message: { id: 'm', model: 'c', usage: { input_tokens: 5 } },
      }),
      start(0, { type: 'text', text: '' }),
      delta(0, { type: 'text_delta', text: 'Searching.' }),
      stop(0),
      ...call(1, 'srvtoolu_1', '1.4'),
      start(2, { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [result] }),
      stop(2),
      ...call(3, 'srvtoolu_2', '1.5'),
      start(4, {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_2',
        content: { type: 'web_search_tool_result_error', error_code: 'too_many_requests' },
      }),
      stop(4),
      start(5, { type: 'text', text: '' }),
      delta(5, { type: 'text_delta', text: 'Bun 1.4 is out.' }),
      stop(5),
      encodeSse('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: 'end_turn', stop_sequence: null },
        usage: { output_tokens: 30, server_tool_use: { web_search_requests: 1 } },
      }),
      encodeSse('message_stop', { type: 'message_stop' }),
    ].join('')
    expect((await decodeText(text)).slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Searching.' },
      { type: 'block_stop', index: 0 },
      {
        type: 'block_start',
        index: 1,
        block: {
          kind: 'web_search',
          search: {
            id: 'srvtoolu_1',
            query: 'bun 1.4',
            outcome: { results: [{ url: 'https://bun.sh/', title: 'Bun' }] },
          },
        },
      },
      { type: 'block_stop', index: 1 },
      {
        type: 'block_start',
        index: 2,
        block: {
          kind: 'web_search',
          search: { id: 'srvtoolu_2', query: 'bun 1.5', outcome: { errorCode: 'too_many_requests' } },
        },
      },
      { type: 'block_stop', index: 2 },
      { type: 'block_start', index: 3, block: { kind: 'text' } },
      { type: 'text_delta', index: 3, text: 'Bun 1.4 is out.' },
      { type: 'block_stop', index: 3 },
      { type: 'usage', usage: { output: 30, webSearches: 1 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ])
  })

  test("a text block's web search citations come first, as citation events of the whole block; others go", async () => {
    const delta = (d: unknown) => encodeSse('content_block_delta', { type: 'content_block_delta', index: 0, delta: d })
    const citation = {
      type: 'web_search_result_location',
      url: 'https://bun.sh/',
      title: 'Bun',
      cited_text: 'Bun is fast.',
      encrypted_index: 'Eo8B',
    }
    const text = [
      encodeSse('message_start', { type: 'message_start', message: { id: 'm', model: 'c', usage: {} } }),
      encodeSse('content_block_start', {
        type: 'content_block_start',
        index: 0,
        content_block: { type: 'text', text: '', citations: [] },
      }),
      delta({ type: 'citations_delta', citation }),
      delta({ type: 'citations_delta', citation: { type: 'char_location', cited_text: 'x', document_index: 0 } }),
      delta({ type: 'citations_delta', citation: { ...citation, title: null } }),
      delta({ type: 'text_delta', text: 'Bun is fast.' }),
      encodeSse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    ].join('')
    const cited = { url: 'https://bun.sh/', title: 'Bun', citedText: 'Bun is fast.' }
    expect((await decodeText(text)).slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'citation', index: 0, citation: cited },
      { type: 'citation', index: 0, citation: { ...cited, title: 'https://bun.sh/' } },
      { type: 'text_delta', index: 0, text: 'Bun is fast.' },
      { type: 'block_stop', index: 0 },
    ])
  })

  test("a message_stop with no stop reason before it ends a whole answer, as end_turn; a cut stream doesn't", async () => {
    const start = encodeSse('message_start', { type: 'message_start', message: { id: 'm', model: 'c', usage: {} } })
    const text = [
      encodeSse('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text' } }),
      encodeSse('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: 'Hi' },
      }),
      encodeSse('content_block_stop', { type: 'content_block_stop', index: 0 }),
    ].join('')
    const unnamed = encodeSse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: null, stop_sequence: null },
      usage: { output_tokens: 2 },
    })
    const stop = encodeSse('message_stop', { type: 'message_stop' })
    const body: ExchangeEvent[] = [
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Hi' },
      { type: 'block_stop', index: 0 },
    ]
    const finish: ExchangeEvent = { type: 'finish', reason: 'end_turn', stopSequence: null }
    expect((await decodeText(start + text + unnamed + stop)).slice(1)).toEqual([
      ...body,
      { type: 'usage', usage: { output: 2 } },
      finish,
    ])
    expect((await decodeText(start + text + stop)).slice(1)).toEqual([...body, finish])
    expect((await decodeText(start + text + unnamed)).slice(1)).toEqual([
      ...body,
      { type: 'usage', usage: { output: 2 } },
    ])
  })

  test('a body that ends after a named stop reason, without message_stop, decodes as it would with one', async () => {
    const frames = (await readFixture('anthropic/text-tool-use.sse')).split(/(?=event: message_stop)/)
    const [untilDelta, stop] = frames
    expect(stop).toStartWith('event: message_stop')
    expect(await decodeText(untilDelta ?? '')).toEqual(await decodeText(`${untilDelta}${stop}`))
  })

  test("a tool call's whole input in its content_block_start goes out at its stop, unless input_json_delta text came", async () => {
    const call = (index: number, input: unknown, ...partials: string[]) => [
      encodeSse('content_block_start', {
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id: `t${index}`, name: 'Read', input },
      }),
      ...partials.map((partial_json) =>
        encodeSse('content_block_delta', {
          type: 'content_block_delta',
          index,
          delta: { type: 'input_json_delta', partial_json },
        }),
      ),
      encodeSse('content_block_stop', { type: 'content_block_stop', index }),
    ]
    const text = [
      ...call(0, { path: 'x' }),
      ...call(1, { path: 'x' }, '', '{"path":', '"y"}'),
      ...call(2, { path: 'x' }, ''),
    ].join('')
    const started = (index: number): ExchangeEvent => ({
      type: 'block_start',
      index,
      block: { kind: 'tool_use', id: `t${index}`, name: 'Read' },
    })
    expect(await decodeText(text)).toEqual([
      started(0),
      { type: 'tool_args_delta', index: 0, partialJson: '{"path":"x"}' },
      { type: 'block_stop', index: 0 },
      started(1),
      { type: 'tool_args_delta', index: 1, partialJson: '' },
      { type: 'tool_args_delta', index: 1, partialJson: '{"path":' },
      { type: 'tool_args_delta', index: 1, partialJson: '"y"}' },
      { type: 'block_stop', index: 1 },
      started(2),
      { type: 'tool_args_delta', index: 2, partialJson: '' },
      { type: 'tool_args_delta', index: 2, partialJson: '{"path":"x"}' },
      { type: 'block_stop', index: 2 },
    ])
  })

  test("text or thinking a compatible server puts in its content_block_start is kept, as the block's first delta", async () => {
    const start = (index: number, block: unknown) =>
      encodeSse('content_block_start', { type: 'content_block_start', index, content_block: block })
    const stop = (index: number) => encodeSse('content_block_stop', { type: 'content_block_stop', index })
    const text = [
      start(0, { type: 'thinking', thinking: 'Pondering.', signature: '' }),
      stop(0),
      start(1, { type: 'text', text: 'Hello ' }),
      encodeSse('content_block_delta', {
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'text_delta', text: 'there.' },
      }),
      stop(1),
    ].join('')
    expect(await decodeText(text)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 0, thinking: 'Pondering.' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'Hello ' },
      { type: 'text_delta', index: 1, text: 'there.' },
      { type: 'block_stop', index: 1 },
    ])
  })

  test('a stop sequence is carried through', async () => {
    const text = encodeSse('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: 'stop_sequence', stop_sequence: '###' },
      usage: { output_tokens: 3 },
    })
    expect(await decodeText(text)).toEqual([
      { type: 'usage', usage: { output: 3 } },
      { type: 'finish', reason: 'stop_sequence', stopSequence: '###' },
    ])
  })

  test('malformed JSON in a known event is a 502 api_error', async () => {
    const text = 'event: content_block_delta\ndata: {"type":"content_block_delta",\n\n'
    const error = await decodeText(text).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ kind: 'api_error', status: 502 })
  })
})
