import { describe, expect, test } from 'bun:test'
import type { ExchangeEvent } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { parseSse, runCodec } from '../fixture-streams'
import { readResponsesFailure, responsesStreamDecoder } from './decode-responses-stream'
import { tagResponsesSignature } from './reasoning-signature'
import { chunkBytes, collect, readFixture } from './test-support'

const decodeFixture = async (name: string, chunk = 7) =>
  collect(runCodec(responsesStreamDecoder(), parseSse(chunkBytes(await readFixture(name), chunk))))

/** Frames written by hand: each entry is one event's JSON (the `event:` line is taken from `type`). */
const decodeFrames = (events: Record<string, unknown>[]) => {
  const text = events.map((e, i) => `event: ${e['type']}\ndata: ${JSON.stringify({ sequence_number: i, ...e })}\n\n`)
  return collect(runCodec(responsesStreamDecoder(), parseSse(chunkBytes(text.join(''), 13))))
}

const created = (id = 'resp_1') => ({
  type: 'response.created',
  response: { id, object: 'response', status: 'in_progress', model: 'gpt-5', output: [], usage: null },
})
const completed = (output: unknown[] = [], usage: unknown = null) => ({
  type: 'response.completed',
  response: { id: 'resp_1', status: 'completed', model: 'gpt-5', output, usage },
})

describe('responsesStreamDecoder', () => {
  test('§5.3 text transcript', async () => {
    expect(await decodeFixture('text.sse')).toEqual([
      { type: 'start', id: 'resp_golden_text_01', model: 'gpt-4.1-mini' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Hi' },
      { type: 'text_delta', index: 0, text: ' there!' },
      { type: 'block_stop', index: 0 },
      { type: 'usage', usage: { input: 12, cacheRead: 0, cacheWrite: 0, output: 4, reasoning: 0 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ] satisfies ExchangeEvent[])
  })

  test('§5.8 function-call transcript', async () => {
    expect(await decodeFixture('function-call.sse', 3)).toEqual([
      { type: 'start', id: 'resp_golden_fc_01', model: 'gpt-4.1-mini' },
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'call_golden_01', name: 'get_weather' } },
      { type: 'tool_args_delta', index: 0, partialJson: '{"city":' },
      { type: 'tool_args_delta', index: 0, partialJson: '"Paris"}' },
      { type: 'block_stop', index: 0 },
      { type: 'usage', usage: { input: 60, cacheRead: 0, cacheWrite: 0, output: 15, reasoning: 0 } },
      { type: 'finish', reason: 'tool_use', stopSequence: null },
    ] satisfies ExchangeEvent[])
  })

  test('reasoning summary parts become one thinking block before the text, with the blob as signature', async () => {
    expect(await decodeFixture('reasoning-text.sse')).toEqual([
      { type: 'start', id: 'resp_golden_reason_01', model: 'gpt-5-mini' },
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 0, thinking: 'Thinking' },
      { type: 'thinking_delta', index: 0, thinking: ' about it' },
      { type: 'thinking_delta', index: 0, thinking: '\n\n' },
      { type: 'thinking_delta', index: 0, thinking: 'Second part.' },
      { type: 'signature_delta', index: 0, signature: tagResponsesSignature('enc_blob_01') },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'Answer' },
      { type: 'text_delta', index: 1, text: '.' },
      { type: 'block_stop', index: 1 },
      // input_tokens 2006 includes the 1920 cached ones.
      { type: 'usage', usage: { input: 86, cacheRead: 1920, cacheWrite: 0, output: 300, reasoning: 200 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ] satisfies ExchangeEvent[])
  })

  test('response.incomplete with max_output_tokens finishes as max_tokens', async () => {
    const events = await decodeFixture('incomplete.sse')
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: { input: 20, cacheRead: 0, cacheWrite: 0, output: 16, reasoning: 0 } },
      { type: 'finish', reason: 'max_tokens', stopSequence: null },
    ])
  })

  test("response.incomplete for OpenAI's content filter finishes as a refusal, not as max_tokens", async () => {
    const events = await decodeFrames([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message', content: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'I can' },
      {
        type: 'response.incomplete',
        response: {
          id: 'resp_1',
          status: 'incomplete',
          model: 'gpt-5',
          output: [],
          incomplete_details: { reason: 'content_filter' },
          usage: { input_tokens: 20, output_tokens: 3, total_tokens: 23 },
        },
      },
    ])
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'refusal', stopSequence: null })
  })

  test('response.failed becomes an error event and ends the stream', async () => {
    expect(await decodeFixture('failed.sse')).toEqual([
      { type: 'start', id: 'resp_golden_failed_01', model: 'gpt-5-mini' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Partial' },
      { type: 'error', error: { status: 500, type: 'api_error', message: 'The model produced invalid output.' } },
    ] satisfies ExchangeEvent[])
  })

  test("response.failed's own usage comes before its error: the failed leg is billed as it reports, not estimated", async () => {
    const events = await decodeFrames([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message', content: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Partial' },
      {
        type: 'response.failed',
        response: {
          id: 'resp_1',
          status: 'failed',
          model: 'gpt-5',
          output: [],
          error: { code: 'server_error', message: 'boom' },
          usage: { input_tokens: 20, output_tokens: 500, total_tokens: 520 },
        },
      },
    ])
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: { input: 20, cacheRead: 0, cacheWrite: 0, output: 500, reasoning: 0 } },
      { type: 'error', error: { status: 500, type: 'api_error', message: 'boom' } },
    ])
  })

  test('a top-level error event maps its code', async () => {
    const events = await decodeFrames([
      created(),
      { type: 'error', code: 'rate_limit_exceeded', message: 'Rate limit reached', param: null },
      completed(),
    ])
    expect(events).toEqual([
      { type: 'start', id: 'resp_1', model: 'gpt-5' },
      { type: 'error', error: { status: 429, type: 'rate_limit_error', message: 'Rate limit reached' } },
    ])
  })

  test('interleaved items are serialised: one block open at a time, in the order items were added', async () => {
    const call = (id: string, callId: string) => ({
      id,
      type: 'function_call',
      status: 'in_progress',
      arguments: '',
      call_id: callId,
      name: 'f',
    })
    const events = await decodeFrames([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: call('fc_a', 'call_a') },
      { type: 'response.output_item.added', output_index: 1, item: call('fc_b', 'call_b') },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_b', output_index: 1, delta: '{"b":1}' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_a', output_index: 0, delta: '{"a":1}' },
      {
        type: 'response.output_item.done',
        output_index: 1,
        item: { ...call('fc_b', 'call_b'), status: 'completed', arguments: '{"b":1}' },
      },
      {
        type: 'response.output_item.done',
        output_index: 0,
        item: { ...call('fc_a', 'call_a'), status: 'completed', arguments: '{"a":1}' },
      },
      completed(),
    ])
    expect(events).toEqual([
      { type: 'start', id: 'resp_1', model: 'gpt-5' },
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'call_a', name: 'f' } },
      { type: 'tool_args_delta', index: 0, partialJson: '{"a":1}' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'tool_use', id: 'call_b', name: 'f' } },
      { type: 'tool_args_delta', index: 1, partialJson: '{"b":1}' },
      { type: 'block_stop', index: 1 },
      // The terminal response has no usage: no usage event, so the leg is estimated (relay/meter.ts).
      { type: 'finish', reason: 'tool_use', stopSequence: null },
    ])
  })

  test('nested error fields (OpenAI at times, OpenRouter) and a bare error frame keep their message and code', async () => {
    const nested = {
      type: 'error',
      error: { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'Slow down' },
    }
    expect((await decodeFrames([created(), nested])).at(-1)).toEqual({
      type: 'error',
      error: { status: 429, type: 'rate_limit_error', message: 'Slow down' },
    })
    // OpenRouter's mid-stream failure: a data line with no event name and no type.
    const bare = JSON.stringify({ error: { code: 502, message: 'Provider disconnected' } })
    const decoder = responsesStreamDecoder()
    // Its code is the HTTP status: a 502 is the provider's overload, a 429 a rate limit.
    expect(decoder.push({ data: bare, raw: `data: ${bare}\n\n` })).toEqual([
      { type: 'error', error: { status: 502, type: 'overloaded_error', message: 'Provider disconnected' } },
    ])
    expect(decoder.done).toBe(true)
    expect(readResponsesFailure({ error: { code: 429, message: 'Rate limited' } })).toEqual({
      status: 429,
      type: 'rate_limit_error',
      message: 'Rate limited',
    })
    // A proxy's error as its message alone.
    expect(readResponsesFailure({ error: 'upstream timed out' })).toEqual({
      status: 500,
      type: 'api_error',
      message: 'upstream timed out',
    })
  })

  describe('llama.cpp and Lemonade: no output_index, no sequence_number, calls named by call_id', () => {
    /** Each frame as llama-server writes it (tools/server/server-task.cpp), decoded on its own. */
    const pushEach = (events: Record<string, unknown>[]) => {
      const decoder = responsesStreamDecoder()
      return events.map((e) => decoder.push({ event: String(e['type']), data: JSON.stringify(e), raw: '' }))
    }
    const message = (text: string) => ({
      id: 'msg_lc',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', annotations: [], text }],
    })
    const call = (args: string) => ({
      type: 'function_call',
      status: 'completed',
      call_id: 'fc_a1',
      name: 'f',
      arguments: args,
    })
    const final = (output: unknown[]) => ({
      type: 'response.completed',
      response: {
        id: 'resp_lc',
        object: 'response',
        status: 'completed',
        model: 'qwen',
        output,
        usage: { input_tokens: 20, output_tokens: 4 },
      },
    })

    test('each delta comes out as it arrives, and the final response says nothing twice', () => {
      const steps = pushEach([
        { type: 'response.created', response: { id: 'resp_lc', object: 'response', status: 'in_progress' } },
        { type: 'response.output_item.added', item: { id: 'rs_lc', type: 'reasoning', summary: [], content: [] } },
        { type: 'response.reasoning_text.delta', item_id: 'rs_lc', delta: 'Think.' },
        { type: 'response.output_item.added', item: { ...message(''), status: 'in_progress', content: [] } },
        { type: 'response.output_text.delta', item_id: 'msg_lc', delta: 'Hel' },
        {
          type: 'response.output_item.done',
          item: { id: 'rs_lc', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Think.' }] },
        },
        { type: 'response.output_text.delta', item_id: 'msg_lc', delta: 'lo' },
        { type: 'response.output_item.added', item: { ...call(''), status: 'in_progress' } },
        { type: 'response.function_call_arguments.delta', item_id: 'fc_a1', delta: '{"a":1}' },
        { type: 'response.output_item.done', item: message('Hello') },
        { type: 'response.output_item.done', item: call('{"a":1}') },
        final([
          { id: 'rs_lc', type: 'reasoning', summary: [], content: [{ type: 'reasoning_text', text: 'Think.' }] },
          message('Hello'),
          call('{"a":1}'),
        ]),
      ])
      // A new item ends the streamed ones before it (llama.cpp's items never interleave): their
      // done items, when they come, say nothing more.
      expect(steps).toEqual([
        [{ type: 'start', id: 'resp_lc', model: '' }],
        [],
        [
          { type: 'block_start', index: 0, block: { kind: 'thinking' } },
          { type: 'thinking_delta', index: 0, thinking: 'Think.' },
        ],
        // A message's block opens with its first content (it may be a refusal's): here, its first words.
        [{ type: 'block_stop', index: 0 }],
        [
          { type: 'block_start', index: 1, block: { kind: 'text' } },
          { type: 'text_delta', index: 1, text: 'Hel' },
        ],
        [],
        [{ type: 'text_delta', index: 1, text: 'lo' }],
        [
          { type: 'block_stop', index: 1 },
          { type: 'block_start', index: 2, block: { kind: 'tool_use', id: 'fc_a1', name: 'f' } },
        ],
        [{ type: 'tool_args_delta', index: 2, partialJson: '{"a":1}' }],
        [],
        [{ type: 'block_stop', index: 2 }],
        [
          { type: 'usage', usage: { input: 20, cacheRead: 0, cacheWrite: 0, output: 4, reasoning: 0 } },
          { type: 'finish', reason: 'tool_use', stopSequence: null },
        ],
      ] satisfies ExchangeEvent[][])
    })

    test('every done item at the end, as llama-server sends them: the text still streams as it comes', () => {
      const reasoning = {
        id: 'rs_lc',
        type: 'reasoning',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'Think.' }],
      }
      const steps = pushEach([
        { type: 'response.created', response: { id: 'resp_lc', object: 'response', status: 'in_progress' } },
        { type: 'response.output_item.added', item: { id: 'rs_lc', type: 'reasoning', summary: [], content: [] } },
        { type: 'response.reasoning_text.delta', item_id: 'rs_lc', delta: 'Think.' },
        { type: 'response.output_item.added', item: { ...message(''), status: 'in_progress', content: [] } },
        { type: 'response.output_text.delta', item_id: 'msg_lc', delta: 'Hello' },
        { type: 'response.output_item.done', item: reasoning },
        { type: 'response.output_item.done', item: message('Hello') },
        final([reasoning, message('Hello')]),
      ])
      expect(steps.slice(3, 7)).toEqual([
        [{ type: 'block_stop', index: 0 }],
        // Before any done item: a client sees the text while the model writes it.
        [
          { type: 'block_start', index: 1, block: { kind: 'text' } },
          { type: 'text_delta', index: 1, text: 'Hello' },
        ],
        [],
        [{ type: 'block_stop', index: 1 }],
      ] satisfies ExchangeEvent[][])
    })

    test('text that goes on after a call began (one content string a turn) goes on in a block after the call', () => {
      const steps = pushEach([
        { type: 'response.output_item.added', item: { ...message(''), status: 'in_progress', content: [] } },
        { type: 'response.output_text.delta', item_id: 'msg_lc', delta: 'Let me check. ' },
        { type: 'response.output_item.added', item: { ...call(''), status: 'in_progress' } },
        { type: 'response.function_call_arguments.delta', item_id: 'fc_a1', delta: '{"a":1}' },
        { type: 'response.output_text.delta', item_id: 'msg_lc', delta: 'I will report back.' },
        { type: 'response.output_item.done', item: message('Let me check. I will report back.') },
        { type: 'response.output_item.done', item: call('{"a":1}') },
      ])
      expect(steps.flat().filter((e) => e.type !== 'start')).toEqual([
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'Let me check. ' },
        { type: 'block_stop', index: 0 },
        { type: 'block_start', index: 1, block: { kind: 'tool_use', id: 'fc_a1', name: 'f' } },
        { type: 'tool_args_delta', index: 1, partialJson: '{"a":1}' },
        { type: 'block_stop', index: 1 },
        // Nothing lost: the rest of the text, after the call, in the order it was written.
        { type: 'block_start', index: 2, block: { kind: 'text' } },
        { type: 'text_delta', index: 2, text: 'I will report back.' },
        { type: 'block_stop', index: 2 },
      ] satisfies ExchangeEvent[])
    })

    test('a call that streamed no arguments waits for its done item, which holds them', () => {
      const steps = pushEach([
        { type: 'response.output_item.added', item: { ...call(''), status: 'in_progress' } },
        { type: 'response.output_item.added', item: { ...message(''), status: 'in_progress', content: [] } },
        { type: 'response.output_text.delta', item_id: 'msg_lc', delta: 'Done.' },
        { type: 'response.output_item.done', item: call('{"a":1}') },
      ])
      expect(steps.flat()).toEqual([
        { type: 'start', id: '', model: '' },
        { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'fc_a1', name: 'f' } },
        { type: 'tool_args_delta', index: 0, partialJson: '{"a":1}' },
        { type: 'block_stop', index: 0 },
        { type: 'block_start', index: 1, block: { kind: 'text' } },
        { type: 'text_delta', index: 1, text: 'Done.' },
      ] satisfies ExchangeEvent[])
    })

    test('items the stream left open are closed from the final response, their text not said again', () => {
      const steps = pushEach([
        { type: 'response.output_item.added', item: { ...message(''), status: 'in_progress', content: [] } },
        { type: 'response.output_text.delta', item_id: 'msg_lc', delta: 'Hello' },
        final([message('Hello')]),
      ])
      expect(steps.flat().filter((e) => e.type.startsWith('block') || e.type.endsWith('delta'))).toEqual([
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'Hello' },
        { type: 'block_stop', index: 0 },
      ])
    })
  })

  test('a usage event only for a terminal usage with numeric counts', async () => {
    const usageEvents = async (usage: unknown) =>
      (await decodeFrames([created(), completed([], usage)])).filter((e) => e.type === 'usage')
    expect(await usageEvents({ input_tokens: 10, output_tokens: 225 })).toEqual([
      { type: 'usage', usage: { input: 10, cacheRead: 0, cacheWrite: 0, output: 225, reasoning: 0 } },
    ])
    expect(await usageEvents(null)).toEqual([])
    expect(await usageEvents({ input_tokens: '10', output_tokens: '225' })).toEqual([])
  })

  test('items sent without deltas still deliver their content (LM Studio style)', async () => {
    const message = {
      id: 'msg_x',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'whole', annotations: [] }],
    }
    const call = { id: 'fc_x', type: 'function_call', call_id: 'call_x', name: 'g', arguments: '{"k":2}' }
    const events = await decodeFrames([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.output_item.done', output_index: 0, item: message },
      { type: 'response.output_item.added', output_index: 1, item: { ...call, arguments: '' } },
      { type: 'response.function_call_arguments.done', item_id: 'fc_x', output_index: 1, arguments: '{"k":2}' },
      { type: 'response.output_item.done', output_index: 1, item: call },
      completed([message, call]),
    ])
    expect(events.filter((e) => e.type !== 'start' && e.type !== 'usage')).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'whole' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'tool_use', id: 'call_x', name: 'g' } },
      { type: 'tool_args_delta', index: 1, partialJson: '{"k":2}' },
      { type: 'block_stop', index: 1 },
      { type: 'finish', reason: 'tool_use', stopSequence: null },
    ])
  })

  describe("a model's refusal: a message whose part is a refusal opens a declined block", () => {
    const words = "I can't help with that."
    const message = (content: unknown[], status = 'completed') => ({
      id: 'msg_r',
      type: 'message',
      role: 'assistant',
      status,
      content,
    })
    const at = { item_id: 'msg_r', output_index: 0, content_index: 0 }
    /** The events each frame gives, one list a frame. */
    const pushEach = (events: Record<string, unknown>[]) => {
      const decoder = responsesStreamDecoder()
      return events.map((e) => decoder.push({ event: String(e['type']), data: JSON.stringify(e), raw: '' }))
    }

    test('as OpenAI streams it: content_part.added says it is a refusal, before its words', async () => {
      const events = await decodeFrames([
        created(),
        { type: 'response.output_item.added', output_index: 0, item: message([], 'in_progress') },
        { type: 'response.content_part.added', ...at, part: { type: 'refusal', refusal: '' } },
        { type: 'response.refusal.delta', ...at, delta: "I can't " },
        { type: 'response.refusal.delta', ...at, delta: 'help with that.' },
        { type: 'response.refusal.done', ...at, refusal: words },
        { type: 'response.content_part.done', ...at, part: { type: 'refusal', refusal: words } },
        { type: 'response.output_item.done', output_index: 0, item: message([{ type: 'refusal', refusal: words }]) },
        completed([message([{ type: 'refusal', refusal: words }])]),
      ])
      expect(events.filter((e) => e.type !== 'start' && e.type !== 'usage')).toEqual([
        { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
        { type: 'text_delta', index: 0, text: "I can't " },
        { type: 'text_delta', index: 0, text: 'help with that.' },
        { type: 'block_stop', index: 0 },
        { type: 'finish', reason: 'refusal', stopSequence: null },
      ] satisfies ExchangeEvent[])
    })

    test('with no content_part.added, its first refusal delta; with no delta, its done item', async () => {
      const deltasOnly = await decodeFrames([
        created(),
        { type: 'response.output_item.added', output_index: 0, item: message([], 'in_progress') },
        { type: 'response.refusal.delta', ...at, delta: words },
        completed([message([{ type: 'refusal', refusal: words }])]),
      ])
      expect(deltasOnly.filter((e) => e.type === 'block_start')).toEqual([
        { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
      ])
      const wholeOnly = await decodeFrames([
        created(),
        { type: 'response.output_item.added', output_index: 0, item: message([], 'in_progress') },
        { type: 'response.output_item.done', output_index: 0, item: message([{ type: 'refusal', refusal: words }]) },
        completed([message([{ type: 'refusal', refusal: words }])]),
      ])
      expect(wholeOnly.filter((e) => e.type !== 'start' && e.type !== 'usage')).toEqual([
        { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
        { type: 'text_delta', index: 0, text: words },
        { type: 'block_stop', index: 0 },
        { type: 'finish', reason: 'refusal', stopSequence: null },
      ] satisfies ExchangeEvent[])
    })

    test("an answer's message opens as text at its output_text part, before its words", async () => {
      const steps = pushEach([
        created(),
        { type: 'response.output_item.added', output_index: 0, item: message([], 'in_progress') },
        { type: 'response.content_part.added', ...at, part: { type: 'output_text', text: '', annotations: [] } },
        { type: 'response.output_text.delta', ...at, delta: 'Hi' },
      ])
      expect(steps.slice(1)).toEqual([
        [],
        [{ type: 'block_start', index: 0, block: { kind: 'text' } }],
        [{ type: 'text_delta', index: 0, text: 'Hi' }],
      ] satisfies ExchangeEvent[][])
    })
  })

  test('a final response with no streamed items is replayed from its output', async () => {
    const events = await decodeFrames([
      created(),
      completed(
        [
          { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'hmm' }] },
          { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
        ],
        { input_tokens: 5, output_tokens: 2 },
      ),
    ])
    expect(events).toEqual([
      { type: 'start', id: 'resp_1', model: 'gpt-5' },
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 0, thinking: 'hmm' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'ok' },
      { type: 'block_stop', index: 1 },
      { type: 'usage', usage: { input: 5, cacheRead: 0, cacheWrite: 0, output: 2, reasoning: 0 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ])
  })

  test('reasoning after the answer started is dropped; empty reasoning opens no block', async () => {
    const events = await decodeFrames([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_0', type: 'reasoning', summary: [] } },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_0', type: 'reasoning', summary: [] } },
      { type: 'response.output_item.added', output_index: 1, item: { id: 'msg_1', type: 'message', content: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'A' },
      { type: 'response.output_item.done', output_index: 1, item: { id: 'msg_1', type: 'message', content: [] } },
      { type: 'response.output_item.added', output_index: 2, item: { id: 'rs_2', type: 'reasoning', summary: [] } },
      { type: 'response.reasoning_text.delta', item_id: 'rs_2', output_index: 2, content_index: 0, delta: 'late' },
      { type: 'response.output_item.done', output_index: 2, item: { id: 'rs_2', type: 'reasoning', summary: [] } },
      completed(),
    ])
    expect(events.filter((e) => e.type.startsWith('block') || e.type.endsWith('delta'))).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'A' },
      { type: 'block_stop', index: 0 },
    ])
  })

  test('a reasoning item with only its encrypted blob (no summary asked for) is a thinking block carrying it', async () => {
    const reasoning = { id: 'rs_0', type: 'reasoning', summary: [] }
    const message = { id: 'msg_1', type: 'message', role: 'assistant', status: 'completed', content: [] }
    const events = await decodeFrames([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: reasoning },
      { type: 'response.output_item.done', output_index: 0, item: { ...reasoning, encrypted_content: 'gAAAAblob' } },
      { type: 'response.output_item.added', output_index: 1, item: { ...message, status: 'in_progress' } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Hi' },
      { type: 'response.output_item.done', output_index: 1, item: message },
      completed(),
    ])
    // The blob is what the next turn sends back to OpenAI, in the thinking block's signature.
    expect(events.filter((e) => e.type.startsWith('block') || e.type.endsWith('delta'))).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'signature_delta', index: 0, signature: tagResponsesSignature('gAAAAblob') },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'Hi' },
      { type: 'block_stop', index: 1 },
    ])
  })

  test("a search opens whole at its item's done, titled by URL; the usage counts the calls", async () => {
    const search = (id: string, status: string, action: Record<string, unknown>) => ({
      id,
      type: 'web_search_call',
      status,
      action,
    })
    const sources = [
      { type: 'url', url: 'https://a.example/' },
      { type: 'url', url: 'https://b.example/' },
    ]
    const searched = search('ws_1', 'completed', { type: 'search', query: 'svc gateway', sources })
    const opened = search('ws_2', 'completed', { type: 'open_page', url: 'https://a.example/' })
    const failed = search('ws_3', 'failed', { type: 'search', query: 'again' })
    const reasoning = (id: string, text: string) => ({
      id,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text }],
    })
    const cited = { type: 'url_citation', start_index: 0, end_index: 5, url: 'https://a.example/', title: 'Page A' }
    const message = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: 'Found', annotations: [cited] }],
    }
    const progress = (type: string, index: number, id: string) => ({ type, item_id: id, output_index: index })
    const events = await decodeFrames([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: reasoning('rs_0', 'first') },
      { type: 'response.output_item.done', output_index: 0, item: reasoning('rs_0', 'first') },
      {
        type: 'response.output_item.added',
        output_index: 1,
        item: search('ws_1', 'in_progress', { type: 'search', query: 'svc gateway' }),
      },
      progress('response.web_search_call.in_progress', 1, 'ws_1'),
      progress('response.web_search_call.searching', 1, 'ws_1'),
      progress('response.web_search_call.completed', 1, 'ws_1'),
      { type: 'response.output_item.done', output_index: 1, item: searched },
      { type: 'response.output_item.added', output_index: 2, item: reasoning('rs_2', 'then') },
      { type: 'response.output_item.done', output_index: 2, item: reasoning('rs_2', 'then') },
      { type: 'response.output_item.added', output_index: 3, item: { ...opened, status: 'in_progress' } },
      { type: 'response.output_item.done', output_index: 3, item: opened },
      { type: 'response.output_item.added', output_index: 4, item: { ...failed, status: 'in_progress' } },
      { type: 'response.output_item.done', output_index: 4, item: failed },
      { type: 'response.output_item.added', output_index: 5, item: { ...message, status: 'in_progress', content: [] } },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 5, content_index: 0, delta: 'Found' },
      { type: 'response.output_item.done', output_index: 5, item: message },
      completed([reasoning('rs_0', 'first'), searched, reasoning('rs_2', 'then'), opened, failed, message], {
        input_tokens: 50,
        output_tokens: 9,
      }),
    ])
    expect(events).toEqual([
      { type: 'start', id: 'resp_1', model: 'gpt-5' },
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 0, thinking: 'first' },
      { type: 'block_stop', index: 0 },
      {
        type: 'block_start',
        index: 1,
        block: {
          kind: 'web_search',
          search: {
            id: 'ws_1',
            query: 'svc gateway',
            outcome: {
              results: [
                { url: 'https://a.example/', title: 'https://a.example/' },
                { url: 'https://b.example/', title: 'https://b.example/' },
              ],
            },
          },
        },
      },
      { type: 'block_stop', index: 1 },
      // OpenAI reasons between searches: that reasoning is kept.
      { type: 'block_start', index: 2, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 2, thinking: 'then' },
      { type: 'block_stop', index: 2 },
      {
        type: 'block_start',
        index: 3,
        block: { kind: 'web_search', search: { id: 'ws_3', query: 'again', outcome: { errorCode: 'unavailable' } } },
      },
      { type: 'block_stop', index: 3 },
      { type: 'block_start', index: 4, block: { kind: 'text' } },
      { type: 'text_delta', index: 4, text: 'Found' },
      { type: 'block_stop', index: 4 },
      // Billed per search action that did not fail: the page it opened is no search.
      { type: 'usage', usage: { input: 50, cacheRead: 0, cacheWrite: 0, output: 9, reasoning: 0, webSearches: 1 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ] satisfies ExchangeEvent[])
  })

  test('a search only the final response lists is replayed from it', async () => {
    const searched = {
      id: 'ws_1',
      type: 'web_search_call',
      status: 'completed',
      action: { type: 'search', query: 'q', sources: [{ type: 'url', url: 'https://a.example/' }] },
    }
    const events = await decodeFrames([created(), completed([searched], { input_tokens: 5, output_tokens: 2 })])
    expect(events.slice(1, 3)).toEqual([
      {
        type: 'block_start',
        index: 0,
        block: {
          kind: 'web_search',
          search: {
            id: 'ws_1',
            query: 'q',
            outcome: { results: [{ url: 'https://a.example/', title: 'https://a.example/' }] },
          },
        },
      },
      { type: 'block_stop', index: 0 },
    ])
  })

  describe('citations', () => {
    const cite = (start_index: number, end_index: number, url = 'https://a.example/') => ({
      type: 'url_citation',
      start_index,
      end_index,
      url,
      title: 'Page A',
    })
    const at = (output_index: number, content_index = 0) => ({ item_id: 'msg_1', output_index, content_index })
    const textDelta = (output_index: number, delta: string, content_index = 0) => ({
      type: 'response.output_text.delta',
      ...at(output_index, content_index),
      delta,
    })
    const annotated = (output_index: number, annotation_index: number, annotation: unknown, content_index = 0) => ({
      type: 'response.output_text.annotation.added',
      ...at(output_index, content_index),
      annotation_index,
      annotation,
    })
    const message = (text: string, annotations: unknown[]) => ({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text, annotations }],
    })
    const citation = (
      index: number,
      citedText: string,
      start: number,
      end: number,
      url = 'https://a.example/',
    ): ExchangeEvent => ({
      type: 'citation',
      index,
      citation: { url, title: 'Page A', citedText, span: { start, end } },
    })

    test('an annotation cites the text streamed before it, in its part; a span past it is clamped', async () => {
      const done = message('Svc is a gateway. More.', [])
      const events = await decodeFrames([
        created(),
        { type: 'response.output_item.added', output_index: 0, item: { ...done, status: 'in_progress', content: [] } },
        textDelta(0, 'Svc is '),
        textDelta(0, 'a gateway.'),
        annotated(0, 0, cite(0, 3)),
        annotated(0, 1, { type: 'file_citation', index: 0, file_id: 'file_1', filename: 'a.pdf' }),
        annotated(0, 2, cite(7, 40, 'https://b.example/')),
        annotated(0, 3, cite(5, 5)),
        { type: 'response.output_text.done', ...at(0), text: 'Svc is a gateway.' },
        textDelta(0, ' More.', 1),
        annotated(0, 0, cite(0, 5), 1),
        { type: 'response.output_item.done', output_index: 0, item: done },
        completed([done], { input_tokens: 5, output_tokens: 7 }),
      ])
      expect(events.slice(1, -2)).toEqual([
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'Svc is ' },
        { type: 'text_delta', index: 0, text: 'a gateway.' },
        citation(0, 'Svc', 0, 3),
        citation(0, 'a gateway.', 7, 17, 'https://b.example/'),
        { type: 'text_delta', index: 0, text: ' More.' },
        // The second part starts at 17 in the block.
        citation(0, ' More', 17, 22),
        { type: 'block_stop', index: 0 },
      ] satisfies ExchangeEvent[])
    })

    test("a later item's annotations wait in its queue with its text, and follow that text", async () => {
      const call = { id: 'fc_0', type: 'function_call', call_id: 'call_0', name: 'look', arguments: '{}' }
      const done = message('Found.', [cite(0, 5)])
      const events = await decodeFrames([
        created(),
        { type: 'response.output_item.added', output_index: 0, item: { ...call, arguments: '' } },
        { type: 'response.output_item.added', output_index: 1, item: { ...done, status: 'in_progress', content: [] } },
        textDelta(1, 'Found.'),
        annotated(1, 0, cite(0, 5)),
        { type: 'response.function_call_arguments.delta', item_id: 'fc_0', output_index: 0, delta: '{}' },
        { type: 'response.output_item.done', output_index: 0, item: call },
        { type: 'response.output_item.done', output_index: 1, item: done },
        completed([call, done], { input_tokens: 5, output_tokens: 7 }),
      ])
      expect(events.slice(1, -2)).toEqual([
        { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'call_0', name: 'look' } },
        { type: 'tool_args_delta', index: 0, partialJson: '{}' },
        { type: 'block_stop', index: 0 },
        { type: 'block_start', index: 1, block: { kind: 'text' } },
        { type: 'text_delta', index: 1, text: 'Found.' },
        citation(1, 'Found', 0, 5),
        { type: 'block_stop', index: 1 },
      ] satisfies ExchangeEvent[])
    })

    test('a message that streamed no text brings its annotations from the finished item', async () => {
      const done = message('Found it.', [cite(6, 9)])
      const events = await decodeFrames([
        created(),
        { type: 'response.output_item.done', output_index: 0, item: done },
        completed([done], { input_tokens: 5, output_tokens: 7 }),
      ])
      expect(events.slice(1, -2)).toEqual([
        { type: 'block_start', index: 0, block: { kind: 'text' } },
        { type: 'text_delta', index: 0, text: 'Found it.' },
        citation(0, 'it.', 6, 9),
        { type: 'block_stop', index: 0 },
      ] satisfies ExchangeEvent[])
    })
  })

  test('a stream cut before its terminal event ends with an error event', async () => {
    const events = await decodeFrames([
      created(),
      { type: 'response.output_item.added', output_index: 0, item: { id: 'msg_1', type: 'message', content: [] } },
    ])
    expect(events.at(-1)).toEqual({
      type: 'error',
      error: {
        status: 500,
        type: 'api_error',
        message: 'upstream Responses stream ended before the response finished',
      },
    })
  })

  test('malformed JSON throws a 502 api_error', async () => {
    const bad = 'event: response.created\ndata: {"type":"response.created",\n\n'
    const run = collect(runCodec(responsesStreamDecoder(), parseSse(chunkBytes(bad))))
    const error = await run.catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ kind: 'api_error', status: 502 })
  })
})
