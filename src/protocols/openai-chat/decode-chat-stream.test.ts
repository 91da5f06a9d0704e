import { describe, expect, test } from 'bun:test'
import type { ExchangeEvent } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { collect, readFixture, runCodec, sseOf } from '../fixture-streams'
import { chatStreamDecoder } from './decode-chat-stream'
import { shortenToolName } from '../openai-tool-names'

const decodeText = (text: string): Promise<ExchangeEvent[]> => collect(runCodec(chatStreamDecoder(), sseOf(text)))

type Delta = Record<string, unknown>
const chunk = (delta: Delta | null, extra: Record<string, unknown> = {}): string =>
  `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: delta === null ? [] : [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`
const finish = (reason: string, delta: Delta = {}): string =>
  `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta, finish_reason: reason }] })}\n\n`
const done = 'data: [DONE]\n\n'
const tool = (index: number, fields: { id?: string; name?: string; args?: string }): Delta => ({
  tool_calls: [
    {
      index,
      ...(fields.id ? { id: fields.id, type: 'function' } : {}),
      function: {
        ...(fields.name ? { name: fields.name } : {}),
        ...(fields.args === undefined ? {} : { arguments: fields.args }),
      },
    },
  ],
})

describe('chatStreamDecoder', () => {
  test('calls with neither index nor id: a whole object after a whole call is the next call, a trailing fragment is not', async () => {
    const unmarked = (name: string, args: string): Delta => ({
      tool_calls: [{ id: '', type: 'function', function: { name, arguments: args } }],
    })
    const calls = async (...deltas: Delta[]) =>
      (await decodeText(deltas.map((delta) => chunk(delta)).join('') + finish('tool_calls') + done))
        .filter((e) => e.type === 'block_start' || e.type === 'tool_args_delta')
        .map((e) =>
          e.type === 'block_start' ? `start ${e.block.kind === 'tool_use' ? e.block.name : ''}` : e.partialJson,
        )
    expect(
      await calls(unmarked('get_weather', '{"city":"Oslo"}'), unmarked('get_weather', '{"city":"Paris"}')),
    ).toEqual(['start get_weather', '{"city":"Oslo"}', 'start get_weather', '{"city":"Paris"}'])
    // Double-encoded, whole: the next one is still a call of its own.
    expect(await calls(unmarked('get_weather', JSON.stringify('{"city":"Oslo"}')), unmarked('get_time', '{}'))).toEqual(
      ['start get_weather', '{"city":"Oslo"}', 'start get_time', '{}'],
    )
    // A server that repeats the name on every fragment, its last one a newline: one call.
    expect(await calls(unmarked('get_weather', '{"city":"Oslo"}'), unmarked('get_weather', '\n'))).toEqual([
      'start get_weather',
      '{"city":"Oslo"}',
      '\n',
    ])
  })

  test('a lone choice is the answer whatever its index says', async () => {
    const lone = (index: unknown, delta: Delta, reason: string | null = null) =>
      `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index, delta, finish_reason: reason }] })}\n\n`
    for (const index of [1, null]) {
      const events = await decodeText(lone(index, { content: 'Hello' }) + lone(index, {}, 'stop') + done)
      expect(events.filter((e) => e.type === 'text_delta')).toEqual([{ type: 'text_delta', index: 0, text: 'Hello' }])
    }
  })

  test("OpenAI's usage chunk after the finish ends the message, [DONE] or not", async () => {
    // Pushed one by one, never ended: as a server that holds the connection open delivers them.
    const pushAll = (decoder: ReturnType<typeof chatStreamDecoder>, text: string) =>
      text
        .split('\n\n')
        .filter((frame) => frame !== '')
        .flatMap((frame) => decoder.push({ data: frame.slice('data: '.length), raw: `${frame}\n\n` }))
    const decoder = chatStreamDecoder()
    const events = pushAll(
      decoder,
      chunk({ content: 'Hi' }) + finish('stop') + chunk(null, { usage: { prompt_tokens: 3, completion_tokens: 1 } }),
    )
    expect(decoder.done).toBe(true)
    expect(events.slice(-2)).toEqual([
      { type: 'usage', usage: expect.objectContaining({ input: 3, output: 1 }) },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ])
    // Before the finish, a chunk without choices (Azure's filter results) ends nothing.
    const early = chatStreamDecoder()
    pushAll(early, chunk(null, { usage: { prompt_tokens: 3, completion_tokens: 0 } }) + chunk({ content: 'Hi' }))
    expect(early.done).toBe(false)
  })

  test('a refusal streamed as `refusal` deltas finishes as a refusal, its words the text', async () => {
    const events = await decodeText(
      chunk({ role: 'assistant', content: null, refusal: '' }) +
        chunk({ refusal: "I can't help with that." }) +
        finish('stop') +
        done,
    )
    expect(events.filter((e) => e.type !== 'start')).toEqual([
      // A declined block: a Responses client's refusal part.
      { type: 'block_start', index: 0, block: { kind: 'text', refusal: true } },
      { type: 'text_delta', index: 0, text: "I can't help with that." },
      { type: 'block_stop', index: 0 },
      { type: 'finish', reason: 'refusal', stopSequence: null },
    ])
  })

  test("a refusal after an answer's words is a block of its own; the answer's stays text", async () => {
    const events = await decodeText(
      chunk({ role: 'assistant', content: 'Well. ' }) +
        chunk({ refusal: "I can't" }) +
        chunk({ refusal: ' say more.' }) +
        finish('stop') +
        done,
    )
    expect(events.filter((e) => e.type === 'block_start' || e.type === 'text_delta')).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Well. ' },
      { type: 'block_start', index: 1, block: { kind: 'text', refusal: true } },
      { type: 'text_delta', index: 1, text: "I can't" },
      { type: 'text_delta', index: 1, text: ' say more.' },
    ])
  })

  test('5.4 text with the usage chunk after finish', async () => {
    expect(await decodeText(await readFixture('openai-chat/text-include-usage.sse'))).toEqual([
      { type: 'start', id: 'chatcmpl-golden01', model: 'gpt-4o-mini-2024-07-18' },
      { type: 'block_start', index: 0, block: { kind: 'text' } },
      { type: 'text_delta', index: 0, text: 'Hi' },
      { type: 'text_delta', index: 0, text: ' there!' },
      { type: 'block_stop', index: 0 },
      { type: 'usage', usage: { input: 12, cacheRead: 0, cacheWrite: 0, output: 4, reasoning: 0 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ])
  })

  test('5.5 tool call: the empty first arguments fragment makes no delta', async () => {
    expect((await decodeText(await readFixture('openai-chat/tool-call.sse'))).slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'call_abc123', name: 'get_weather' } },
      { type: 'tool_args_delta', index: 0, partialJson: '{"city":' },
      { type: 'tool_args_delta', index: 0, partialJson: '"Paris"}' },
      { type: 'block_stop', index: 0 },
      { type: 'usage', usage: { input: 86, cacheRead: 1920, cacheWrite: 0, output: 18, reasoning: 0 } },
      { type: 'finish', reason: 'tool_use', stopSequence: null },
    ])
  })

  test('5.10 DeepSeek reasoning, usage riding on the finish chunk', async () => {
    expect((await decodeText(await readFixture('openai-chat/deepseek-reasoning.sse'))).slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 0, thinking: '9.11 vs 9.8: compare tenths, 1 < 8.' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: '9.8 is larger.' },
      { type: 'block_stop', index: 1 },
      { type: 'usage', usage: { input: 15, cacheRead: 0, cacheWrite: 0, output: 40, reasoning: 30 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ])
  })

  test('OpenRouter `reasoning`, content and finish_reason in one chunk, role-only deltas ignored', async () => {
    const text =
      chunk({ role: 'assistant' }) +
      chunk({ reasoning: 'think' }) +
      finish('length', { content: 'cut' }) +
      chunk(null, { usage: { prompt_tokens: 5, completion_tokens: 9 } }) +
      done
    expect((await decodeText(text)).slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'thinking' } },
      { type: 'thinking_delta', index: 0, thinking: 'think' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'text' } },
      { type: 'text_delta', index: 1, text: 'cut' },
      { type: 'block_stop', index: 1 },
      { type: 'usage', usage: { input: 5, cacheRead: 0, cacheWrite: 0, output: 9, reasoning: 0 } },
      { type: 'finish', reason: 'max_tokens', stopSequence: null },
    ])
  })

  test("Moonshot's usage in the finish chunk's choice, its cache hits beside prompt_tokens", async () => {
    const usage = { prompt_tokens: 50, completion_tokens: 2, total_tokens: 52, cached_tokens: 40 }
    const moonshotFinish = `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta: {}, finish_reason: 'stop', usage }] })}\n\n`
    expect((await decodeText(chunk({ content: 'Hi' }) + moonshotFinish + done)).slice(-2)).toEqual([
      { type: 'usage', usage: { input: 10, cacheRead: 40, cacheWrite: 0, output: 2, reasoning: 0 } },
      { type: 'finish', reason: 'end_turn', stopSequence: null },
    ])
  })

  test('a usage event only for a usage with numeric counts: the last such chunk wins', async () => {
    const usageEvents = async (...usages: unknown[]) =>
      (
        await decodeText(
          chunk({ role: 'assistant', content: 'hi' }) +
            finish('stop') +
            usages.map((usage) => chunk(null, { usage })).join('') +
            done,
        )
      ).filter((e) => e.type === 'usage')
    expect(await usageEvents()).toEqual([])
    expect(await usageEvents({ prompt_tokens: '10', completion_tokens: '225' })).toEqual([])
    expect(await usageEvents({ prompt_tokens: 10 })).toEqual([])
    expect(await usageEvents({ prompt_tokens: 10, completion_tokens: 225 }, { prompt_tokens: '10' })).toEqual([
      { type: 'usage', usage: { input: 10, cacheRead: 0, cacheWrite: 0, output: 225, reasoning: 0 } },
    ])
  })

  test('sequential parallel calls: a new index closes the finished call', async () => {
    const text =
      chunk(tool(0, { id: 'a', name: 'f', args: '{"x":1}' })) +
      chunk(tool(1, { id: 'b', name: 'g', args: '' })) +
      chunk(tool(1, { args: '{"y":2}' })) +
      finish('tool_calls') +
      done
    expect((await decodeText(text)).slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'a', name: 'f' } },
      { type: 'tool_args_delta', index: 0, partialJson: '{"x":1}' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'tool_use', id: 'b', name: 'g' } },
      { type: 'tool_args_delta', index: 1, partialJson: '{"y":2}' },
      { type: 'block_stop', index: 1 },
      { type: 'finish', reason: 'tool_use', stopSequence: null },
    ])
  })

  test('interleaved calls: the second is buffered and sent whole, no fragment lost', async () => {
    const text =
      chunk(tool(0, { id: 'a', name: 'f', args: '{"x":' })) +
      chunk(tool(1, { id: 'b', name: 'g', args: '{"y":' })) +
      chunk(tool(0, { args: '1}' })) +
      chunk(tool(1, { args: '2}' })) +
      finish('stop') +
      done
    expect((await decodeText(text)).slice(1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'a', name: 'f' } },
      { type: 'tool_args_delta', index: 0, partialJson: '{"x":' },
      { type: 'tool_args_delta', index: 0, partialJson: '1}' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'tool_use', id: 'b', name: 'g' } },
      { type: 'tool_args_delta', index: 1, partialJson: '{"y":2}' },
      { type: 'block_stop', index: 1 },
      // Ollama-style `stop` on a tool turn still reports tool_use.
      { type: 'finish', reason: 'tool_use', stopSequence: null },
    ])
  })

  test('interleaved calls go out in their order, whichever of them speaks first once the open one is whole', async () => {
    const text =
      chunk(tool(0, { id: 'a', name: 'f', args: '{"x":' })) +
      chunk(tool(1, { id: 'b', name: 'g', args: '{"y":' })) +
      chunk(tool(2, { id: 'c', name: 'h', args: '{"z":' })) +
      chunk(tool(0, { args: '1}' })) +
      // C speaks before B once A is whole: B still goes first.
      chunk(tool(2, { args: '3}' })) +
      chunk(tool(1, { args: '2}' })) +
      finish('tool_calls') +
      done
    const events = (await decodeText(text)).slice(1)
    const starts = events.flatMap((e) => (e.type === 'block_start' && e.block.kind === 'tool_use' ? [e.block.id] : []))
    expect(starts).toEqual(['a', 'b', 'c'])
    const args = (index: number) =>
      events.flatMap((e) => (e.type === 'tool_args_delta' && e.index === index ? [e.partialJson] : [])).join('')
    expect([args(0), args(1), args(2)]).toEqual(['{"x":1}', '{"y":2}', '{"z":3}'])
  })

  test('double-encoded arguments go out unwrapped as the call ends; plain ones stream as they come', async () => {
    const quoted = JSON.stringify('{"x":1}')
    const text =
      chunk(tool(0, { id: 'a', name: 'f', args: '' })) +
      chunk(tool(0, { args: quoted.slice(0, 4) })) +
      chunk(tool(0, { args: quoted.slice(4) })) +
      chunk(tool(1, { id: 'b', name: 'g', args: '{"y":' })) +
      chunk(tool(1, { args: '2}' })) +
      finish('tool_calls') +
      done
    expect((await decodeText(text)).slice(1, -1)).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'a', name: 'f' } },
      { type: 'tool_args_delta', index: 0, partialJson: '{"x":1}' },
      { type: 'block_stop', index: 0 },
      { type: 'block_start', index: 1, block: { kind: 'tool_use', id: 'b', name: 'g' } },
      { type: 'tool_args_delta', index: 1, partialJson: '{"y":' },
      { type: 'tool_args_delta', index: 1, partialJson: '2}' },
      { type: 'block_stop', index: 1 },
    ])
  })

  // Held to the end of a block that never closed, the arguments were lost: the client saw no
  // partial_json, and the meter billed 2 output tokens for ~500 the model wrote.
  test('double-encoded arguments still held as the answer ends go out as they came', async () => {
    const quoted = JSON.stringify(JSON.stringify({ text: 'x'.repeat(40) }))
    const opened = chunk(tool(0, { id: 'a', name: 'f', args: '' })) + chunk(tool(0, { args: quoted.slice(0, 30) }))
    const held = (events: ExchangeEvent[]) => events.filter((e) => e.type === 'tool_args_delta' || e.type === 'error')
    // Cut: no finish follows, so the encoder reports the error.
    const cut = await decodeText(opened)
    expect(held(cut)).toEqual([{ type: 'tool_args_delta', index: 0, partialJson: quoted.slice(0, 30) }])
    expect(cut.at(-1)?.type).toBe('tool_args_delta')
    // An in-band error: the arguments, then the error.
    const erred = held(await decodeText(`${opened}data: {"error":{"message":"boom"}}\n\n`))
    expect(erred.map((e) => e.type)).toEqual(['tool_args_delta', 'error'])
    // At a finish, arguments that hold no object go as they came, not as {}.
    for (const args of [quoted.slice(0, 30), '"just a string"']) {
      const events = await decodeText(chunk(tool(0, { id: 'a', name: 'f', args })) + finish('length') + done)
      expect(held(events)).toEqual([{ type: 'tool_args_delta', index: 0, partialJson: args }])
    }
  })

  test('a provider repeating index 0 with new ids yields separate calls', async () => {
    const text =
      chunk(tool(0, { id: 'a', name: 'f', args: '{}' })) +
      chunk(tool(0, { id: 'b', name: 'f', args: '{"k":1}' })) +
      finish('tool_calls') +
      done
    const starts = (await decodeText(text)).filter((e) => e.type === 'block_start')
    expect(starts).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'a', name: 'f' } },
      { type: 'block_start', index: 1, block: { kind: 'tool_use', id: 'b', name: 'f' } },
    ])
  })

  test('a call without an id gets one; object arguments are serialised', async () => {
    const text =
      chunk({ tool_calls: [{ index: 0, function: { name: 'f', arguments: { a: 1 } } }] }) + finish('tool_calls') + done
    const events = await decodeText(text)
    expect(events[1]).toMatchObject({ type: 'block_start', block: { kind: 'tool_use', name: 'f' } })
    expect((events[1] as { block: { id: string } }).block.id).toMatch(/^call_[0-9a-f]{24}$/)
    expect(events[2]).toEqual({ type: 'tool_args_delta', index: 0, partialJson: '{"a":1}' })
  })

  test('late reasoning after text is dropped', async () => {
    const text =
      chunk({ content: 'a' }) + chunk({ reasoning_content: 'late' }) + chunk({ content: 'b' }) + finish('stop') + done
    expect((await decodeText(text)).filter((e) => e.type === 'thinking_delta' || e.type === 'block_start')).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'text' } },
    ])
  })

  test('in-band errors: OpenAI, OpenRouter and vLLM shapes', async () => {
    const openai =
      chunk({ content: 'x' }) + `data: ${JSON.stringify({ error: { message: 'boom', type: 'server_error' } })}\n\n`
    expect((await decodeText(openai)).at(-1)).toEqual({
      type: 'error',
      error: { status: 500, type: 'api_error', message: 'boom' },
    })
    const openrouter = `data: ${JSON.stringify({ error: { code: 429, message: 'limited' } })}\n\n`
    expect(await decodeText(openrouter)).toEqual([
      { type: 'error', error: { status: 429, type: 'rate_limit_error', message: 'limited' } },
    ])
    const vllm = `data: ${JSON.stringify({ object: 'error', message: 'bad', type: 'BadRequestError', code: 400 })}\n\n`
    expect(await decodeText(vllm)).toEqual([
      { type: 'error', error: { status: 400, type: 'invalid_request_error', message: 'bad' } },
    ])
  })

  test('OpenRouter finish_reason error is passed on as an error finish', async () => {
    expect((await decodeText(chunk({ content: 'x' }) + finish('error') + done)).at(-1)).toEqual({
      type: 'finish',
      reason: 'error',
      stopSequence: null,
    })
  })

  test('a stream cut before finish and [DONE] has no finish; [DONE] alone means end_turn', async () => {
    expect((await decodeText(chunk({ content: 'x' }))).map((e) => e.type)).toEqual([
      'start',
      'block_start',
      'text_delta',
    ])
    expect((await decodeText(chunk({ content: 'x' }) + done)).at(-1)).toEqual({
      type: 'finish',
      reason: 'end_turn',
      stopSequence: null,
    })
  })

  test('tool names encodeChatRequest shortened come back as the request named them', async () => {
    const long = 'mcp__claude_ai_Atlassian_Rovo__getConfluencePageFooterCommentsWithInlineRepliesAndHistory2'
    const text =
      chunk(tool(0, { id: 'a', name: shortenToolName(long), args: '' })) +
      chunk(tool(0, { args: '{"x":1}' })) +
      chunk(tool(1, { id: 'b', name: 'g', args: '{}' })) +
      finish('tool_calls') +
      done
    const restoring = chatStreamDecoder(() => [long, 'g'])
    const events = await collect(runCodec(restoring, sseOf(text)))
    expect(events.filter((e) => e.type === 'block_start')).toEqual([
      { type: 'block_start', index: 0, block: { kind: 'tool_use', id: 'a', name: long } },
      { type: 'block_start', index: 1, block: { kind: 'tool_use', id: 'b', name: 'g' } },
    ])
    // Streams without tool calls never read the request's names.
    let asked = 0
    const decoder = chatStreamDecoder(() => {
      asked++
      return []
    })
    await collect(runCodec(decoder, sseOf(chunk({ content: 'hi' }) + finish('stop') + done)))
    expect(asked).toBe(0)
  })

  // Read as an empty answer that ended well, it was billed and the next model never tried.
  test('[DONE] before any chunk is a retryable 502, not an empty answer', async () => {
    const error = await decodeText(done).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ kind: 'api_error', status: 502, retryable: true })
  })

  test('an empty data frame (a keep-alive) is skipped, blank or not', async () => {
    const events = await decodeText(
      chunk({ content: 'Hello ' }) + 'data:\n\ndata:  \n\n' + chunk({ content: 'world' }) + done,
    )
    expect(events.filter((e) => e.type === 'text_delta').map((e) => (e.type === 'text_delta' ? e.text : ''))).toEqual([
      'Hello ',
      'world',
    ])
    expect(events.at(-1)).toEqual({ type: 'finish', reason: 'end_turn', stopSequence: null })
  })

  test('malformed JSON is a 502 api_error', async () => {
    const error = await decodeText(`${chunk({ content: 'x' })}data: {"id":\n\n`).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ kind: 'api_error', status: 502 })
  })
})
