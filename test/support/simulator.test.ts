// Proves the simulator speaks the three provider protocols well enough for the official SDKs to
// accept every answer, and that its faults look to those SDKs like the real failures.

import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { parseModelShortcut, type Simulator, startSimulator } from './simulator'
import { pacedWaitMs, splitBytes } from './simulator-stream'

const KEY = 'sk-sim-test'
let sim: Simulator
let anthropic: Anthropic
let openai: OpenAI

beforeAll(() => {
  sim = startSimulator({ apiKey: KEY })
  // logLevel off: the fault tests make the SDKs log parse failures we provoke on purpose.
  anthropic = new Anthropic({ apiKey: KEY, baseURL: sim.url, maxRetries: 0, logLevel: 'off' })
  openai = new OpenAI({ apiKey: KEY, baseURL: `${sim.url}/v1`, maxRetries: 0, logLevel: 'off' })
})
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const ask = { max_tokens: 256, messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }] }
const chatAsk = { messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }] }
const weather = { id: 'toolu_sim_weather_1', name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } }
const cached = { input: 86, cacheRead: 1920, cacheWrite: 10, output: 48, reasoning: 7 }

/** The rejection of a promise (SDK APIPromises are thenables, so wrap them), or a failure if it resolved. */
const failure = (p: PromiseLike<unknown>): Promise<unknown> =>
  Promise.resolve(p).then(
    (value) => {
      throw new Error(`expected a rejection, got ${JSON.stringify(value)}`)
    },
    (err: unknown) => err,
  )

/** Raw SSE text of one streamed answer, for asserting the wire itself. */
async function rawStream(path: string, body: unknown, headers: Record<string, string>): Promise<string> {
  const res = await fetch(`${sim.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  })
  expect(res.headers.get('content-type')).toStartWith('text/event-stream')
  return res.text()
}
const anthropicHeaders = { 'x-api-key': KEY, 'anthropic-version': '2023-06-01' }
const bearer = { authorization: `Bearer ${KEY}` }
const dataOf = (sse: string) =>
  sse
    .split('\n')
    .filter((l) => l.startsWith('data: ') && l !== 'data: [DONE]')
    .map((l) => JSON.parse(l.slice(6)))

describe('Anthropic Messages', () => {
  test('non-stream text with cache usage', async () => {
    sim.setScenario('claude-sim', { text: 'Hi there!', usage: cached })
    const msg = await anthropic.messages.create({ model: 'claude-sim', ...ask })
    expect(msg.id).toStartWith('msg_sim')
    expect(msg).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'claude-sim',
      content: [{ type: 'text', text: 'Hi there!' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 86, cache_read_input_tokens: 1920, cache_creation_input_tokens: 10, output_tokens: 48 },
    })
    expect(sim.requests[0]).toMatchObject({ method: 'POST', path: '/v1/messages', aborted: false })
    // SDK 1.12 sends the key as a Bearer token; x-api-key is accepted too (see the raw tests).
    expect(sim.requests[0]?.headers['authorization']).toBe(`Bearer ${KEY}`)
    expect(sim.requests[0]?.body).toMatchObject({ model: 'claude-sim', max_tokens: 256 })
  })

  test('streamed thinking + text folds into the same message as non-stream', async () => {
    sim.setScenario('claude-sim', {
      thinking: 'Paris is in France; weather is mild.',
      text: 'It is 18°C.',
      usage: cached,
    })
    const streamed = await anthropic.messages.stream({ model: 'claude-sim', ...ask }).finalMessage()
    const plain = await anthropic.messages.create({ model: 'claude-sim', ...ask })
    const expected = [
      { type: 'thinking', thinking: 'Paris is in France; weather is mild.', signature: expect.any(String) },
      { type: 'text', text: 'It is 18°C.' },
    ]
    expect(streamed.content).toMatchObject(expected)
    expect(plain.content).toMatchObject(expected)
    // The signature is deterministic, so a client replaying it gets the same bytes either way.
    const signature = (m: Anthropic.Message) => (m.content[0] as Anthropic.ThinkingBlock).signature
    expect(signature(streamed)).toBe(signature(plain))
    expect(streamed.usage).toMatchObject(plain.usage)
    expect(streamed.stop_reason).toBe('end_turn')
  })

  test('streamed tool use arrives through input_json_delta', async () => {
    sim.setScenario('claude-sim', { text: 'Checking.', toolCall: weather })
    const msg = await anthropic.messages.stream({ model: 'claude-sim', ...ask }).finalMessage()
    expect(msg.content).toMatchObject([
      { type: 'text', text: 'Checking.' },
      { type: 'tool_use', id: 'toolu_sim_weather_1', name: 'get_weather', input: weather.arguments },
    ])
    expect(msg.stop_reason).toBe('tool_use')
  })

  test('wire order: message_start, first block start, ping, blocks, message_delta with full usage, message_stop', async () => {
    sim.setScenario('claude-sim', { thinking: 'Hmm.', text: 'Yes.', usage: cached })
    const sse = await rawStream('/v1/messages', { model: 'claude-sim', stream: true, ...ask }, anthropicHeaders)
    const events = [...sse.matchAll(/^event: (.+)$/gm)].map((m) => m[1])
    // The ping follows the first content_block_start, as in Anthropic's own streams (§5.1).
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    const data = dataOf(sse)
    expect(data[0].message.usage).toMatchObject({ input_tokens: 86, cache_read_input_tokens: 1920, output_tokens: 1 })
    expect(data[4].delta.type).toBe('signature_delta')
    expect(data.at(-2).usage).toEqual({
      input_tokens: 86,
      cache_creation_input_tokens: 10,
      cache_read_input_tokens: 1920,
      output_tokens: 48,
    })
  })

  test('stop reasons, beta path, count_tokens and models', async () => {
    sim.queue('claude-sim', { stopReason: 'max_tokens' }, { stopReason: 'stop_sequence' })
    expect((await anthropic.messages.create({ model: 'claude-sim', ...ask })).stop_reason).toBe('max_tokens')
    const stopped = await anthropic.messages.create({ model: 'claude-sim', ...ask, stop_sequences: ['END'] })
    expect(stopped).toMatchObject({ stop_reason: 'stop_sequence', stop_sequence: 'END' })

    // Claude Code's beta path, with the x-api-key header.
    const beta = await fetch(`${sim.url}/v1/messages?beta=true`, {
      method: 'POST',
      headers: anthropicHeaders,
      body: JSON.stringify({ model: 'claude-sim', ...ask }),
    })
    expect(beta.status).toBe(200)
    expect(beta.headers.get('request-id')).toStartWith('req_sim')
    expect(sim.requests[2]?.path).toBe('/v1/messages?beta=true')

    // ceil(chars/4) of the text: 'What is the weather in Paris?' is 29 chars → 8.
    const count = await anthropic.messages.countTokens({ model: 'claude-sim', messages: ask.messages })
    expect(count).toEqual({ input_tokens: 8 })

    const models = await anthropic.models.list()
    expect(models.data.map((m) => m.id)).toEqual(['claude-sim', 'sim-claude', 'sim-gpt'])
  })
})

describe('OpenAI Chat Completions', () => {
  test('non-stream tool call with cache usage (prompt_tokens includes cache)', async () => {
    sim.setScenario('gpt-sim', { toolCall: { ...weather, id: 'call_abc123' }, usage: cached })
    const res = await openai.chat.completions.create({ model: 'gpt-sim', ...chatAsk })
    expect(res.id).toStartWith('chatcmpl-sim')
    expect(res.model).toBe('gpt-sim')
    expect(res.choices[0]).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_abc123',
            type: 'function',
            function: { name: 'get_weather', arguments: JSON.stringify(weather.arguments) },
          },
        ],
      },
    })
    expect(res.usage).toMatchObject({
      prompt_tokens: 2016,
      completion_tokens: 48,
      total_tokens: 2064,
      prompt_tokens_details: { cached_tokens: 1920 },
      completion_tokens_details: { reasoning_tokens: 7 },
    })
    expect(sim.requests[0]?.headers['authorization']).toBe(`Bearer ${KEY}`)
  })

  test('streamed text with include_usage: role first, finish chunk, usage chunk, [DONE]', async () => {
    sim.setScenario('gpt-sim', { text: 'Hi there, friend!', usage: cached })
    const stream = await openai.chat.completions.create({
      model: 'gpt-sim',
      ...chatAsk,
      stream: true,
      stream_options: { include_usage: true },
    })
    const chunks = []
    for await (const chunk of stream) chunks.push(chunk)
    expect(chunks[0]?.choices[0]?.delta.role).toBe('assistant')
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hi there, friend!')
    const [finish, usage] = chunks.slice(-2)
    expect(finish?.choices[0]?.finish_reason).toBe('stop')
    expect(finish?.usage).toBeNull()
    expect(usage?.choices).toEqual([])
    expect(usage?.usage).toMatchObject({ prompt_tokens: 2016, completion_tokens: 48 })
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1)

    const sse = await rawStream('/v1/chat/completions', { model: 'gpt-sim', stream: true, ...chatAsk }, bearer)
    expect(sse).toEndWith('data: [DONE]\n\n')
    expect(sse).not.toContain('"usage"')
  })

  test('streamed reasoning_content and tool-call fragments; OpenRouter comments parse', async () => {
    sim.setScenario('gpt-sim', { thinking: 'Need the weather tool.', toolCall: weather, pings: true })
    const sse = await rawStream('/v1/chat/completions', { model: 'gpt-sim', stream: true, ...chatAsk }, bearer)
    expect(sse).toStartWith(': OPENROUTER PROCESSING\n\n')
    const deltas = dataOf(sse).map((c) => c.choices[0]?.delta)
    expect(deltas.map((d) => d?.reasoning_content ?? '').join('')).toBe('Need the weather tool.')
    const calls = deltas.flatMap((d) => d?.tool_calls ?? [])
    expect(calls[0]).toEqual({
      index: 0,
      id: weather.id,
      type: 'function',
      function: { name: 'get_weather', arguments: '' },
    })
    expect(calls.map((c) => c.function.arguments).join('')).toBe(JSON.stringify(weather.arguments))

    const final = await openai.chat.completions.stream({ model: 'gpt-sim', ...chatAsk }).finalChatCompletion()
    expect(final.choices[0]?.finish_reason).toBe('tool_calls')
    expect(final.choices[0]?.message.tool_calls?.[0]).toMatchObject({ function: { name: 'get_weather' } })
  })
})

describe('OpenAI Responses', () => {
  test('non-stream text', async () => {
    sim.setScenario('gpt-sim', { text: 'Hi there!', usage: cached })
    const res = await openai.responses.create({ model: 'gpt-sim', input: 'Hello' })
    expect(res.id).toStartWith('resp_sim')
    expect(res).toMatchObject({ object: 'response', status: 'completed', model: 'gpt-sim', output_text: 'Hi there!' })
    expect(res.usage).toEqual({
      input_tokens: 2016,
      input_tokens_details: { cached_tokens: 1920, cache_write_tokens: 10 } as never,
      output_tokens: 48,
      output_tokens_details: { reasoning_tokens: 7 },
      total_tokens: 2064,
    })
  })

  test('stream().finalResponse() with reasoning and a function call', async () => {
    sim.setScenario('gpt-sim', { thinking: 'Use the tool.', toolCall: { ...weather, id: 'call_1' }, usage: cached })
    const streamed = await openai.responses.stream({ model: 'gpt-sim', input: 'Weather?' }).finalResponse()
    const plain = await openai.responses.create({ model: 'gpt-sim', input: 'Weather?' })
    for (const res of [streamed, plain]) {
      expect(res.status).toBe('completed')
      expect(res.output).toMatchObject([
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'Use the tool.' }] },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: JSON.stringify(weather.arguments) },
      ])
      expect(res.usage?.input_tokens_details.cached_tokens).toBe(1920)
    }
  })

  test('event list with strictly increasing sequence_number; max_tokens ends incomplete', async () => {
    sim.setScenario('gpt-sim', { text: 'Hi there!', stopReason: 'max_tokens' })
    const sse = await rawStream('/v1/responses', { model: 'gpt-sim', input: 'Hello', stream: true }, bearer)
    const events = dataOf(sse)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    expect([...sse.matchAll(/^event: (.+)$/gm)].map((m) => m[1])).toEqual(events.map((e) => e.type))
    expect(events.map((e) => e.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.incomplete',
    ])
    expect(events.at(-1).response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    })
  })
})

describe('faults', () => {
  test('status errors surface as APIError in each dialect, with retry-after', async () => {
    sim.setScenario('m', { fault: { kind: 'status', status: 529 } })
    const a = await anthropic.messages.create({ model: 'm', ...ask }).catch((e: unknown) => e)
    expect(a).toBeInstanceOf(Anthropic.APIError)
    expect(a).toMatchObject({ status: 529, type: 'overloaded_error' })

    sim.setScenario('m', { fault: { kind: 'status', status: 429, retryAfter: 7 } })
    const c = (await failure(openai.chat.completions.create({ model: 'm', ...chatAsk }))) as InstanceType<
      typeof OpenAI.RateLimitError
    >
    expect(c).toBeInstanceOf(OpenAI.RateLimitError)
    expect(c.headers.get('retry-after')).toBe('7')
    expect(c.error).toEqual({ message: expect.any(String), type: 'requests', param: null, code: 'rate_limit_exceeded' })

    sim.setScenario('m', { fault: { kind: 'status', status: 500 } })
    const r = await openai.responses.create({ model: 'm', input: 'x' }).catch((e: unknown) => e)
    expect(r).toBeInstanceOf(OpenAI.InternalServerError)

    const wrong = new Anthropic({ apiKey: 'nope', baseURL: sim.url, maxRetries: 0 })
    const w = await wrong.messages.create({ model: 'm', ...ask }).catch((e: unknown) => e)
    expect(w).toMatchObject({ status: 401, type: 'authentication_error' })
    const wrongOpenai = new OpenAI({ apiKey: 'nope', baseURL: `${sim.url}/v1`, maxRetries: 0 })
    expect(await wrongOpenai.responses.create({ model: 'm', input: 'x' }).catch((e: unknown) => e)).toBeInstanceOf(
      OpenAI.AuthenticationError,
    )
  })

  test('reset makes every SDK throw mid-stream', async () => {
    sim.setScenario('m', { fault: { kind: 'reset', afterFrames: 3 } })
    expect(await failure(anthropic.messages.stream({ model: 'm', ...ask }).finalMessage())).toBeInstanceOf(Error)
    expect(
      await failure(openai.chat.completions.stream({ model: 'm', ...chatAsk }).finalChatCompletion()),
    ).toBeInstanceOf(Error)
    expect(await failure(openai.responses.stream({ model: 'm', input: 'x' }).finalResponse())).toBeInstanceOf(Error)
    // Non-streaming: the body dies halfway.
    expect(await failure(anthropic.messages.create({ model: 'm', ...ask }))).toBeInstanceOf(
      Anthropic.APIConnectionError,
    )
  })

  test('cut ends the body cleanly without a terminal event', async () => {
    sim.setScenario('m', { text: 'one two three four five six', chunks: 6, fault: { kind: 'cut', afterFrames: 4 } })
    // The Anthropic SDK only yields a message at message_stop, so it throws.
    expect(await failure(anthropic.messages.stream({ model: 'm', ...ask }).finalMessage())).toBeInstanceOf(
      Anthropic.AnthropicError,
    )
    // openai-node folds what arrived on a clean EOF: the gateway must notice the missing
    // finish_reason / [DONE] / response.completed itself.
    const res = await openai.responses.stream({ model: 'm', input: 'x' }).finalResponse()
    expect(res.status).toBe('in_progress')
    const sse = await rawStream('/v1/chat/completions', { model: 'm', stream: true, ...chatAsk }, bearer)
    expect(dataOf(sse).map((c) => c.choices[0].finish_reason)).toEqual([null, null, null, null])
    expect(sse).not.toContain('[DONE]')
  })

  test('malformed frames and in-band error events make the SDKs throw', async () => {
    const text = 'one two three four five six'
    sim.setScenario('m', { text, chunks: 6, fault: { kind: 'malformed', afterFrames: 3 } })
    const parseError = { message: expect.stringMatching(/JSON/) }
    expect(await failure(anthropic.messages.stream({ model: 'm', ...ask }).finalMessage())).toMatchObject(parseError)
    expect(
      await failure(openai.chat.completions.stream({ model: 'm', ...chatAsk }).finalChatCompletion()),
    ).toMatchObject(parseError)
    expect(await failure(openai.responses.stream({ model: 'm', input: 'x' }).finalResponse())).toMatchObject(parseError)

    sim.setScenario('m', { text, chunks: 6, fault: { kind: 'error_event', afterFrames: 4 } })
    const a = await failure(anthropic.messages.stream({ model: 'm', ...ask }).finalMessage())
    expect(a).toBeInstanceOf(Anthropic.APIError)
    expect(a).toMatchObject({ type: 'overloaded_error' })
    expect(
      await failure(openai.chat.completions.stream({ model: 'm', ...chatAsk }).finalChatCompletion()),
    ).toBeInstanceOf(OpenAI.APIError)
    expect(await failure(openai.responses.stream({ model: 'm', input: 'x' }).finalResponse())).toBeInstanceOf(
      OpenAI.APIError,
    )
    // Non-streaming requests get the provider's overloaded status instead.
    expect(await failure(anthropic.messages.create({ model: 'm', ...ask }))).toMatchObject({ status: 529 })
  })

  test('truncated JSON and wrong content type', async () => {
    sim.setScenario('m', { fault: { kind: 'truncated_json' } })
    expect(await failure(openai.chat.completions.create({ model: 'm', ...chatAsk }))).toBeInstanceOf(Error)
    const cut = await fetch(`${sim.url}/v1/responses`, {
      method: 'POST',
      headers: bearer,
      body: '{"model":"m","input":"x"}',
    })
    expect(cut.headers.get('content-type')).toBe('application/json')
    expect(await failure(cut.text().then(JSON.parse))).toBeInstanceOf(Error)

    sim.setScenario('m', { fault: { kind: 'wrong_content_type' } })
    const html = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: anthropicHeaders,
      body: JSON.stringify({ model: 'm', stream: true, ...ask }),
    })
    expect(html.status).toBe(200)
    expect(html.headers.get('content-type')).toStartWith('text/html')
  })

  test('client disconnect mid-stream is recorded as aborted', async () => {
    sim.setScenario('m', { chunks: 5, chunkDelayMs: 60_000 })
    const ac = new AbortController()
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ model: 'm', stream: true, ...chatAsk }),
      signal: ac.signal,
    })
    await res.body?.getReader().read()
    ac.abort()
    expect(await sim.waitForAbort(0)).toBe(true)
    expect(sim.requests[0]).toMatchObject({ aborted: true, finished: false })
  })

  test('hang never answers until the client gives up', async () => {
    sim.setScenario('m', { fault: { kind: 'hang' } })
    const err = await openai.chat.completions
      .create({ model: 'm', ...chatAsk }, { signal: AbortSignal.timeout(100) })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Error)
    expect(await sim.waitForAbort(0)).toBe(true)
  })

  test('a completed request is marked finished, not aborted, and waiting for its abort ends at once', async () => {
    await openai.chat.completions.create({ model: 'm', ...chatAsk })
    expect(sim.requests[0]).toMatchObject({ finished: true, aborted: false })
    const started = performance.now()
    expect(await sim.waitForAbort(0, 5_000)).toBe(false)
    expect(performance.now() - started).toBeLessThan(1_000)
  })
})

describe('requests the real APIs refuse', () => {
  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    fetch(`${sim.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    })
  const hi = [{ role: 'user', content: 'hi' }]
  const tool = { name: 't', input_schema: { type: 'object' } }
  const use = (id: string) => ({ role: 'assistant', content: [{ type: 'tool_use', id, name: 't', input: {} }] })
  const result = (id: string) => ({ type: 'tool_result', tool_use_id: id, content: 'ok' })
  const thinking = { type: 'enabled', budget_tokens: 1024 }

  // Each: name, body (over model and max_tokens 2048), headers (default anthropicHeaders), the
  // message's telling part, or null for a body Anthropic takes.
  const anthropicCases: [string, Record<string, unknown>, Record<string, string> | undefined, string | null][] = [
    ['no anthropic-version header', { messages: hi }, { 'x-api-key': KEY }, 'anthropic-version'],
    ['thinking with temperature 0.5', { thinking, temperature: 0.5, messages: hi }, undefined, '`temperature`'],
    ['thinking with temperature 1', { thinking, temperature: 1, messages: hi }, undefined, null],
    ['thinking with top_k', { thinking, top_k: 5, messages: hi }, undefined, '`top_k`'],
    [
      'budget_tokens under 1024',
      { thinking: { type: 'enabled', budget_tokens: 1000 }, messages: hi },
      undefined,
      '1024',
    ],
    [
      'budget_tokens = max_tokens',
      { thinking: { type: 'enabled', budget_tokens: 2048 }, messages: hi },
      undefined,
      '`max_tokens`',
    ],
    [
      'budget_tokens over max_tokens with interleaved thinking',
      { thinking: { type: 'enabled', budget_tokens: 4096 }, messages: hi },
      { ...anthropicHeaders, 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
      null,
    ],
    [
      'thinking with a final assistant message (a prefill)',
      { thinking, messages: [...hi, { role: 'assistant', content: 'Sure:' }] },
      undefined,
      'prefill',
    ],
    ['a prefill without thinking', { messages: [...hi, { role: 'assistant', content: 'Sure:' }] }, undefined, null],
    [
      'thinking with tool_choice any',
      { thinking, tools: [tool], tool_choice: { type: 'any' }, messages: hi },
      undefined,
      'tool_choice',
    ],
    [
      'thinking with tool_choice tool',
      { thinking, tools: [tool], tool_choice: { type: 'tool', name: 't' }, messages: hi },
      undefined,
      'tool_choice',
    ],
    [
      'tool_use answered by text',
      { tools: [tool], messages: [...hi, use('toolu_1'), { role: 'user', content: 'next' }] },
      undefined,
      'toolu_1',
    ],
    [
      'tool_result after text',
      {
        tools: [tool],
        messages: [...hi, use('toolu_1'), { role: 'user', content: [{ type: 'text', text: 'a' }, result('toolu_1')] }],
      },
      undefined,
      'immediately after',
    ],
    [
      'tool_result for no tool_use',
      {
        tools: [tool],
        messages: [...hi, { role: 'assistant', content: 'a' }, { role: 'user', content: [result('toolu_9')] }],
      },
      undefined,
      'toolu_9',
    ],
    [
      'tool_use answered',
      { tools: [tool], messages: [...hi, use('toolu_1'), { role: 'user', content: [result('toolu_1')] }] },
      undefined,
      null,
    ],
    ['tool_use ending the prefill', { tools: [tool], messages: [...hi, use('toolu_1')] }, undefined, null],
    [
      'tool blocks with no tools',
      { messages: [...hi, use('toolu_1'), { role: 'user', content: [result('toolu_1')] }] },
      undefined,
      'must define tools',
    ],
    [
      'empty text block',
      { messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] },
      undefined,
      'non-empty',
    ],
    ['empty user message', { messages: [{ role: 'user', content: '' }] }, undefined, 'non-empty'],
    ['empty final assistant prefill', { messages: [...hi, { role: 'assistant', content: '' }] }, undefined, null],
    ['empty system text block', { system: [{ type: 'text', text: '' }], messages: hi }, undefined, 'non-empty'],
    [
      'tool id outside [a-zA-Z0-9_-]',
      { tools: [tool], messages: [...hi, use('functions.t:0'), { role: 'user', content: [result('functions.t:0')] }] },
      undefined,
      'pattern',
    ],
  ]
  test.each(anthropicCases)('anthropic: %s', async (_name, body, headers, refused) => {
    const res = await post('/v1/messages', { model: 'm', max_tokens: 2048, ...body }, headers ?? anthropicHeaders)
    const answer = (await res.json()) as { type: string; error: { type: string; message: string } }
    if (refused === null) {
      expect(answer.type).toBe('message')
      return
    }
    expect(res.status).toBe(400)
    expect(res.headers.get('request-id')).toStartWith('req_sim')
    expect(answer).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(answer.error.message).toContain(refused)
  })

  test('anthropic: count_tokens asks for the version header too', async () => {
    const res = await post('/v1/messages/count_tokens', { model: 'm', messages: hi }, { 'x-api-key': KEY })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.stringContaining('anthropic-version') },
    })
  })

  /** OpenAI's error body: all four keys, the param at fault named. */
  const expectOpenAIRefusal = (answer: unknown, param: string) => {
    expect(answer).toMatchObject({ error: { type: 'invalid_request_error', param, message: expect.any(String) } })
    const error = (answer as { error: Record<string, unknown> }).error
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type'])
    expect(error['code'] === null || typeof error['code'] === 'string').toBe(true)
  }

  const call = (id: string) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: 'f', arguments: '{}' } }],
  })
  const fn = (name: string) => ({ type: 'function', function: { name, parameters: { type: 'object' } } })
  // Each: name, body (over model), the `param` OpenAI names, or undefined for a body it takes.
  const chatCases: [string, Record<string, unknown>, string | undefined][] = [
    ['stream_options without stream', { messages: hi, stream_options: { include_usage: true } }, 'stream_options'],
    ['stream_options with stream', { messages: hi, stream: true, stream_options: { include_usage: true } }, undefined],
    [
      'tool message with no tool_calls before it',
      { messages: [...hi, { role: 'tool', tool_call_id: 'call_1', content: 'x' }] },
      'messages.[1].role',
    ],
    [
      'tool message for another call',
      { messages: [...hi, call('call_1'), { role: 'tool', tool_call_id: 'call_2', content: 'x' }] },
      'messages.[2].role',
    ],
    [
      'tool_calls left unanswered',
      { messages: [...hi, call('call_1'), { role: 'user', content: 'and?' }] },
      'messages.[1].role',
    ],
    [
      'tool_calls answered',
      { messages: [...hi, call('call_1'), { role: 'tool', tool_call_id: 'call_1', content: 'x' }] },
      undefined,
    ],
    ['5 stop strings', { messages: hi, stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
    ['4 stop strings', { messages: hi, stop: ['a', 'b', 'c', 'd'] }, undefined],
    ['parallel_tool_calls without tools', { messages: hi, parallel_tool_calls: false }, 'parallel_tool_calls'],
    ['function name with a dot', { messages: hi, tools: [fn('a.b')] }, 'tools[0].function.name'],
    ['function name of 65 characters', { messages: hi, tools: [fn('a'.repeat(65))] }, 'tools[0].function.name'],
    [
      'function name of 64 characters',
      { messages: hi, tools: [fn('a'.repeat(64))], parallel_tool_calls: true },
      undefined,
    ],
  ]
  test.each(chatCases)('chat: %s', async (_name, body, param) => {
    const res = await post('/v1/chat/completions', { model: 'm', ...body }, bearer)
    const answer = (await res.text()) as string
    if (param === undefined) {
      expect(res.status).toBe(200)
      return
    }
    expect(res.status).toBe(400)
    expectOpenAIRefusal(JSON.parse(answer), param)
  })

  const fc = { type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}' }
  // Each: name, body (over model), the status and `param` OpenAI answers, or undefined for a body it takes.
  const responsesCases: [string, Record<string, unknown>, [number, string] | undefined][] = [
    ['max_output_tokens under 16', { input: 'hi', max_output_tokens: 15 }, [400, 'max_output_tokens']],
    ['max_output_tokens 16', { input: 'hi', max_output_tokens: 16 }, undefined],
    [
      'function_call_output with no call',
      { input: [{ type: 'function_call_output', call_id: 'call_9', output: 'x' }] },
      [400, 'input'],
    ],
    [
      'function_call_output after its call',
      { input: [fc, { type: 'function_call_output', call_id: 'call_1', output: 'x' }] },
      undefined,
    ],
    ['no input', {}, [400, 'input']],
    [
      'previous_response_id (nothing stored)',
      { input: 'hi', previous_response_id: 'resp_nope' },
      [404, 'previous_response_id'],
    ],
    [
      'function name with a dot',
      { input: 'hi', tools: [{ type: 'function', name: 'a.b', parameters: {} }] },
      [400, 'tools[0].name'],
    ],
  ]
  test.each(responsesCases)('responses: %s', async (_name, body, refused) => {
    const res = await post('/v1/responses', { model: 'm', ...body }, bearer)
    const answer = await res.json()
    if (refused === undefined) {
      expect(res.status).toBe(200)
      return
    }
    expect(res.status).toBe(refused[0])
    expectOpenAIRefusal(answer, refused[1])
  })
})

describe('network splits', () => {
  test('splitBytes cuts inside lines and inside a UTF-8 character', () => {
    const bytes = new TextEncoder().encode('data: {"text":"café 👋"}\n\n')
    const [head, tail] = splitBytes(bytes, 'mid-utf8')
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(head)).toThrow()
    expect(new TextDecoder().decode(Buffer.concat([head!, tail!]))).toBe('data: {"text":"café 👋"}\n\n')
    const lines = splitBytes(bytes, 'mid-line')
    expect(lines).toHaveLength(2)
    expect(new TextDecoder().decode(lines[0]).endsWith('\n')).toBe(false)
    expect(splitBytes(bytes, 'per-byte')).toHaveLength(bytes.length)
  })

  for (const split of ['mid-line', 'mid-utf8', 'per-byte'] as const) {
    test(`${split}: every SDK still folds the same final answer`, async () => {
      sim.setScenario('m', { split, thinking: 'Ok.' })
      const msg = await anthropic.messages.stream({ model: 'm', ...ask }).finalMessage()
      expect(msg.content[1]).toMatchObject({ type: 'text', text: 'Hello from m — café 👋' })
      const chat = await openai.chat.completions.stream({ model: 'm', ...chatAsk }).finalChatCompletion()
      expect(chat.choices[0]?.message.content).toBe('Hello from m — café 👋')
      const res = await openai.responses.stream({ model: 'm', input: 'x' }).finalResponse()
      expect(res.output_text).toBe('Hello from m — café 👋')
    })
  }

  test('mid-utf8 reaches the client as separate network reads', async () => {
    // Six deltas, each split: under load the kernel may join one split's two writes into one read
    // (it failed once so), but not all six.
    sim.setScenario('m', { split: 'mid-utf8', text: 'é é é é é é', chunks: 6 })
    const res = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: anthropicHeaders,
      body: JSON.stringify({ model: 'm', stream: true, ...ask }),
    })
    const strict = new TextDecoder('utf-8', { fatal: true })
    let brokenRead = false
    for await (const chunk of res.body!) {
      try {
        strict.decode(chunk)
      } catch {
        brokenRead = true
      }
    }
    expect(brokenRead).toBe(true)
  })
})

describe('scenarios', () => {
  test('queue before sticky, own model before *', async () => {
    sim.setScenario('*', { text: 'any' })
    sim.setScenario('m', { text: 'sticky' })
    sim.queue('m', { text: 'one' }, { text: 'two' })
    const texts = []
    for (let i = 0; i < 3; i++) texts.push((await openai.responses.create({ model: 'm', input: 'x' })).output_text)
    texts.push((await openai.responses.create({ model: 'other', input: 'x' })).output_text)
    expect(texts).toEqual(['one', 'two', 'sticky', 'any'])
  })

  test('model-name shortcuts', async () => {
    expect(parseModelShortcut('sim-stream-20x5ms')).toEqual({ chunks: 20, chunkDelayMs: 5 })
    expect(parseModelShortcut('sim-wait-50ms')).toEqual({ firstByteDelayMs: 50 })
    expect(parseModelShortcut('sim-status-429')).toEqual({ fault: { kind: 'status', status: 429 } })
    expect(parseModelShortcut('gpt-4o-stream-2x1ms')).toBeUndefined()

    const stream = await openai.chat.completions.create({ model: 'sim-stream-6x1ms', ...chatAsk, stream: true })
    let deltas = 0
    for await (const chunk of stream) if (chunk.choices[0]?.delta.content) deltas++
    expect(deltas).toBe(6)
  })

  /** When each network read of a streamed chat answer arrived; `afterRead` runs after each. */
  async function readTimes(model: string, afterRead: (count: number) => void = () => {}): Promise<number[]> {
    const res = await fetch(`${sim.url}/v1/chat/completions`, {
      method: 'POST',
      headers: bearer,
      body: JSON.stringify({ model, stream: true, ...chatAsk }),
    })
    const reads: number[] = []
    for await (const _ of res.body!) {
      reads.push(performance.now())
      afterRead(reads.length)
    }
    return reads
  }

  test('streams are paced frame by frame, not buffered', async () => {
    sim.setScenario('m', { chunks: 4, chunkDelayMs: 40 })
    const reads = await readTimes('m')
    expect(reads.length).toBeGreaterThanOrEqual(4)
    // Three 40 ms gaps between four deltas.
    expect(reads.at(-1)! - reads[0]!).toBeGreaterThanOrEqual(110)
  })

  test('deltas keep to the clock: a stall is made up, so a stream does not gather the lag', async () => {
    sim.setScenario('m', { chunks: 10, chunkDelayMs: 40 })
    // The simulator shares this event loop: hold it for 200 ms once, after the second delta.
    const reads = await readTimes('m', (count) => {
      if (count === 2) for (const until = performance.now() + 200; performance.now() < until; );
    })
    // Nine 40 ms gaps: the last delta is due 360 ms after the first; the ones the stall made late
    // come 20 ms apart (half a gap) until they are on time again, by the last. Paced from each
    // previous send, it would come at 520 (the third 160 ms late, and every later one with it).
    // The bounds are that far apart so that a busy machine's own delays do not decide the test
    // (with a 100 ms stall they were 30 ms from the right answer, and a loaded run crossed them).
    expect(reads.length).toBe(10)
    const span = reads.at(-1)! - reads[0]!
    expect(span).toBeGreaterThanOrEqual(350)
    expect(span).toBeLessThan(450)
  })

  test('a late delta catches up, but never to less than half a gap after the previous one', () => {
    expect(pacedWaitMs(1000, 1, 5, 1000)).toBe(5)
    // Two gaps in, sent 0.8 ms late: the third is due at 1015.
    expect(pacedWaitMs(1000, 3, 5, 1010.8)).toBeCloseTo(4.2)
    expect(pacedWaitMs(1000, 3, 5, 1014.9)).toBe(2.5)
  })
})

describe('upstream behaviours: failed responses, spent quota, redacted thinking, refusals', () => {
  const failed = { code: 'server_error', message: 'An error occurred while processing your request.' }

  test('responses: response.failed right after the opening, no output item; the SDK folds a failed response', async () => {
    sim.setScenario('gpt-sim', { failure: failed })
    const sse = await rawStream('/v1/responses', { model: 'gpt-sim', input: 'Hello', stream: true }, bearer)
    const events = dataOf(sse)
    expect(events.map((e) => e.type)).toEqual(['response.created', 'response.in_progress', 'response.failed'])
    expect(events.map((e) => e.sequence_number)).toEqual([0, 1, 2])
    expect(events[2].response).toMatchObject({
      object: 'response',
      status: 'failed',
      error: failed,
      incomplete_details: null,
      output: [],
      usage: null,
    })
    expect(events[2].response.id).toBe(events[0].response.id)
    // openai-node folds response.failed into a final response that says it failed (it does not throw).
    const limited = { code: 'rate_limit_exceeded', message: 'Rate limit reached for gpt-sim.' }
    sim.setScenario('gpt-sim', { failure: limited })
    const folded = await openai.responses.stream({ model: 'gpt-sim', input: 'x' }).finalResponse()
    expect(folded).toMatchObject({ status: 'failed', error: limited, output: [] })
  })

  test('responses: a non-stream failed answer is a 200 whose status is failed, with the error', async () => {
    sim.setScenario('gpt-sim', { failure: failed, thinking: 'ignored', toolCall: weather })
    const res = await openai.responses.create({ model: 'gpt-sim', input: 'Hello' })
    expect(res).toMatchObject({ status: 'failed', error: failed, output: [], usage: null, completed_at: null })
  })

  test('the other dialects ignore failure; only Responses plays it', async () => {
    sim.setScenario('m', { failure: failed, text: 'Fine.' })
    expect((await anthropic.messages.create({ model: 'm', ...ask })).content as unknown[]).toEqual([
      { type: 'text', text: 'Fine.' },
    ])
    expect((await openai.chat.completions.create({ model: 'm', ...chatAsk })).choices[0]?.message.content).toBe('Fine.')
  })

  test('no_credit: OpenAI’s 429 insufficient_quota on both dialects, Anthropic’s 400 credit balance', async () => {
    sim.setScenario('m', { fault: { kind: 'no_credit' } })
    const quota = {
      message: expect.stringMatching(/^You exceeded your current quota, please check your plan and billing details\./),
      type: 'insufficient_quota',
      param: null,
      code: 'insufficient_quota',
    }
    for (const path of ['/v1/chat/completions', '/v1/responses']) {
      const res = await fetch(`${sim.url}${path}`, {
        method: 'POST',
        headers: bearer,
        body: JSON.stringify({ model: 'm', input: 'x', ...chatAsk, stream: true }),
      })
      expect(res.status).toBe(429)
      expect(res.headers.get('x-request-id')).toStartWith('req_sim')
      expect(await res.json()).toEqual({ error: quota })
    }
    const c = await failure(openai.chat.completions.create({ model: 'm', ...chatAsk }))
    expect(c).toBeInstanceOf(OpenAI.RateLimitError)
    expect(c).toMatchObject({ code: 'insufficient_quota', type: 'insufficient_quota' })
    const r = await failure(openai.responses.create({ model: 'm', input: 'x' }))
    expect(r).toBeInstanceOf(OpenAI.RateLimitError)

    const res = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: anthropicHeaders,
      body: JSON.stringify({ model: 'm', ...ask }),
    })
    expect(res.status).toBe(400)
    expect(res.headers.get('request-id')).toStartWith('req_sim')
    expect(await res.json()).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      },
      request_id: expect.stringMatching(/^req_sim/),
    })
    expect(await failure(anthropic.messages.create({ model: 'm', ...ask }))).toBeInstanceOf(Anthropic.BadRequestError)
  })

  test('anthropic: redacted_thinking whole at content_block_start, no deltas; the SDK keeps it in place', async () => {
    const data = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP'
    sim.setScenario('claude-sim', { thinking: 'Hmm.', redactedThinking: data, text: 'Yes.' })
    const sse = await rawStream('/v1/messages', { model: 'claude-sim', stream: true, ...ask }, anthropicHeaders)
    const events = [...sse.matchAll(/^event: (.+)$/gm)].map((m) => m[1])
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    const data_ = dataOf(sse)
    expect(data_[6]).toEqual({
      type: 'content_block_start',
      index: 1,
      content_block: { type: 'redacted_thinking', data },
    })
    expect(data_[7]).toEqual({ type: 'content_block_stop', index: 1 })
    const expected = [
      { type: 'thinking', thinking: 'Hmm.', signature: expect.any(String) },
      { type: 'redacted_thinking', data },
      { type: 'text', text: 'Yes.' },
    ]
    expect((await anthropic.messages.stream({ model: 'claude-sim', ...ask }).finalMessage()).content).toMatchObject(
      expected,
    )
    expect((await anthropic.messages.create({ model: 'claude-sim', ...ask })).content).toMatchObject(expected)
    // A redacted block alone opens the answer: the ping follows it.
    sim.setScenario('claude-sim', { redactedThinking: data, text: 'Yes.' })
    const alone = await rawStream('/v1/messages', { model: 'claude-sim', stream: true, ...ask }, anthropicHeaders)
    expect([...alone.matchAll(/^event: (.+)$/gm)].map((m) => m[1]).slice(0, 4)).toEqual([
      'message_start',
      'content_block_start',
      'ping',
      'content_block_stop',
    ])
  })

  const refusal = "I'm sorry, but I can't help with that request."

  test('chat: a refusal is delta.refusal after a {content: null, refusal: ""} role chunk, message.refusal not streamed', async () => {
    sim.setScenario('gpt-sim', { refusal })
    const sse = await rawStream('/v1/chat/completions', { model: 'gpt-sim', stream: true, ...chatAsk }, bearer)
    const chunks = dataOf(sse)
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: null, refusal: '' })
    const deltas = chunks.slice(1, -1).map((c) => c.choices[0].delta)
    expect(deltas.every((d) => Object.keys(d).join() === 'refusal')).toBe(true)
    expect(deltas.map((d) => d.refusal).join('')).toBe(refusal)
    expect(chunks.at(-1).choices[0]).toMatchObject({ delta: {}, finish_reason: 'stop' })
    expect(sse).not.toContain('"content":"')

    const plain = await openai.chat.completions.create({ model: 'gpt-sim', ...chatAsk })
    expect(plain.choices[0]).toMatchObject({
      finish_reason: 'stop',
      message: { role: 'assistant', content: null, refusal },
    })
    const folded = await openai.chat.completions.stream({ model: 'gpt-sim', ...chatAsk }).finalChatCompletion()
    expect(folded.choices[0]?.message).toMatchObject({ content: null, refusal })
  })

  test('responses: a refusal part streams content_part.added, refusal deltas, refusal.done; non-stream has the part', async () => {
    sim.setScenario('gpt-sim', { refusal })
    const sse = await rawStream('/v1/responses', { model: 'gpt-sim', input: 'Hello', stream: true }, bearer)
    const events = dataOf(sse)
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i))
    const types = events.map((e) => e.type)
    expect(types.filter((t) => t !== 'response.refusal.delta')).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.refusal.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ])
    const byType = (t: string) => events.filter((e) => e.type === t)
    const itemId = byType('response.output_item.added')[0].item.id
    expect(byType('response.output_item.added')[0].item).toEqual({
      id: itemId,
      type: 'message',
      status: 'in_progress',
      role: 'assistant',
      content: [],
    })
    expect(byType('response.content_part.added')[0]).toMatchObject({
      item_id: itemId,
      output_index: 0,
      content_index: 0,
      part: { type: 'refusal', refusal: '' },
    })
    expect(
      byType('response.refusal.delta')
        .map((e) => e.delta)
        .join(''),
    ).toBe(refusal)
    expect(byType('response.refusal.delta')[0]).toMatchObject({ item_id: itemId, output_index: 0, content_index: 0 })
    expect(byType('response.refusal.done')[0]).toMatchObject({ item_id: itemId, content_index: 0, refusal })
    expect(byType('response.content_part.done')[0].part).toEqual({ type: 'refusal', refusal })
    const part = [{ type: 'refusal', refusal }]
    expect(events.at(-1).response).toMatchObject({
      status: 'completed',
      output: [{ id: itemId, type: 'message', status: 'completed', role: 'assistant', content: part }],
    })
    const plain = await openai.responses.create({ model: 'gpt-sim', input: 'Hello' })
    expect(plain.output).toMatchObject([{ type: 'message', content: part }])
    const folded = await openai.responses.stream({ model: 'gpt-sim', input: 'Hello' }).finalResponse()
    expect(folded.output).toMatchObject([{ type: 'message', content: part }])
  })

  test('anthropic ignores refusal; chat and responses ignore redactedThinking', async () => {
    sim.setScenario('m', { refusal, redactedThinking: 'opaque' })
    expect((await anthropic.messages.create({ model: 'm', ...ask })).content as unknown[]).toEqual([
      { type: 'redacted_thinking', data: 'opaque' },
      { type: 'text', text: 'Hello from m' },
    ])
    const chat = await openai.chat.completions.create({ model: 'm', ...chatAsk })
    expect(chat.choices[0]?.message).toMatchObject({ content: null, refusal })
    expect(JSON.stringify(chat)).not.toContain('opaque')
  })
})
