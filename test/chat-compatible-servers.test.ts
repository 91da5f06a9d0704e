// What OpenAI-Chat-compatible servers really send, as exact bytes, through both client routes:
// Mistral's content chunks, Gemini's unmarked parallel calls, errors under a 200, finish reasons
// outside OpenAI's list, Groq's usage, a proxy's second choice. Each answer is read by the official
// SDKs and its ledger record checked.
import { describe, expect, test } from 'bun:test'
import { endedRequestDetail, type Harness, sdkClients } from './support/harness'
import {
  type ScriptedAnswer,
  scriptedPair,
  scriptedUpstream,
  sseFrame,
  twoModelGateway,
} from './support/scripted-upstream'

type Json = Record<string, unknown>

/** svc-pro on two Chat models, `first` ranked above `second`. */
const chatGateway = () => scriptedPair('openai-chat')

const chunk = (delta: Json | null, finish: string | null = null, extra: Json = {}) =>
  sseFrame(undefined, {
    id: 'chatcmpl-1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'first-up',
    choices: delta === null ? [] : [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  })
const done = sseFrame(undefined, '[DONE]')
const usage = (input: number, output: number) => ({
  usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output },
})
const completion = (message: Json, finish: string, extra: Json = usage(20, 4)) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'first-up',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finish }],
  ...extra,
})
const role = chunk({ role: 'assistant', content: '' })

const tools = [
  { name: 'get_weather', description: 'weather', input_schema: { type: 'object' as const, properties: {} } },
  { name: 'get_time', description: 'time', input_schema: { type: 'object' as const, properties: {} } },
]

/** The client's view of an answer, whichever route asked: its blocks and how it ended. */
interface Seen {
  blocks: Json[]
  stop: string
}

async function askMessages(h: Harness, stream: boolean): Promise<Seen> {
  const { anthropic } = sdkClients(h)
  const params = { model: 'svc-pro', max_tokens: 1000, tools, messages: [{ role: 'user' as const, content: 'hi' }] }
  const message = stream
    ? await anthropic.messages.stream(params).finalMessage()
    : await anthropic.messages.create(params)
  const blocks = message.content.map((block) =>
    block.type === 'text'
      ? { text: block.text }
      : block.type === 'thinking'
        ? { thinking: block.thinking }
        : block.type === 'tool_use'
          ? { call: block.name, input: block.input }
          : { other: block.type },
  )
  return { blocks, stop: String(message.stop_reason) }
}

async function askResponses(h: Harness, stream: boolean): Promise<Seen> {
  const { openai } = sdkClients(h)
  const params = {
    model: 'svc-pro',
    input: 'hi',
    tools: tools.map(({ name, description }) => ({
      type: 'function' as const,
      name,
      description,
      parameters: { type: 'object', properties: {} },
      strict: false,
    })),
  }
  const response = stream
    ? await openai.responses.stream(params).finalResponse()
    : await openai.responses.create({ ...params, stream: false })
  const blocks = response.output.map((item) =>
    item.type === 'message'
      ? { text: item.content.map((part) => (part.type === 'output_text' ? part.text : '')).join('') }
      : item.type === 'reasoning'
        ? { thinking: item.summary.map((part) => part.text).join('') }
        : item.type === 'function_call'
          ? { call: item.name, input: JSON.parse(item.arguments) }
          : { other: item.type },
  )
  return { blocks, stop: response.status ?? '' }
}

const routes = [
  {
    route: 'messages',
    ask: askMessages,
    stops: { end_turn: 'end_turn', max_tokens: 'max_tokens', tool_use: 'tool_use', refusal: 'refusal' },
  },
  {
    route: 'responses',
    ask: askResponses,
    stops: { end_turn: 'completed', max_tokens: 'incomplete', tool_use: 'completed', refusal: 'incomplete' },
  },
] as const
const deliveries = [
  { mode: 'streamed', stream: true },
  { mode: 'JSON', stream: false },
] as const

/** The newest request's record, once it has ended. */
async function lastRecord(h: Harness) {
  const [row] = (await (await h.call('/v1/usage/requests')).json()).items
  return endedRequestDetail(h, row.request_id)
}

/** Every upstream call answered by model: the first model's script, then the second's. */
const byModel = (h: Harness, scripts: Record<string, ScriptedAnswer>) =>
  scriptedUpstream(h, (body) => scripts[String(body.model)] ?? { json: {} })

describe.each(routes)('$route route', ({ ask, stops }) => {
  describe.each(deliveries)('$mode', ({ stream }) => {
    test("Mistral's content as chunks: its thinking and its text", async () => {
      const h = await chatGateway()
      const thinking = { type: 'thinking', thinking: [{ type: 'text', text: 'Let me think.' }] }
      byModel(h, {
        'first-up': {
          sse: [
            role,
            chunk({ content: [thinking] }),
            chunk({ content: [{ type: 'text', text: 'Hello' }] }),
            chunk({ content: '' }, 'stop', usage(20, 4)),
            done,
          ],
          json: completion({ content: [thinking, { type: 'text', text: 'Hello' }] }, 'stop'),
        },
      })
      expect(await ask(h, stream)).toEqual({
        blocks: [{ thinking: 'Let me think.' }, { text: 'Hello' }],
        stop: stops.end_turn,
      })
      expect(await lastRecord(h)).toMatchObject({ status: 'completed', total_output_tokens: 4 })
    })

    test('Gemini behind a proxy: parallel calls with neither index nor id are two calls', async () => {
      const h = await chatGateway()
      const call = (name: string, args: string) => ({ id: '', type: 'function', function: { name, arguments: args } })
      byModel(h, {
        'first-up': {
          sse: [
            role,
            chunk({ tool_calls: [call('get_weather', '{"city":"Oslo"}'), call('get_time', '{"zone":"CET"}')] }),
            chunk({}, 'tool_calls', usage(20, 9)),
            done,
          ],
          json: completion(
            {
              content: null,
              tool_calls: [call('get_weather', '{"city":"Oslo"}'), call('get_time', '{"zone":"CET"}')],
            },
            'tool_calls',
          ),
        },
      })
      expect(await ask(h, stream)).toEqual({
        blocks: [
          { call: 'get_weather', input: { city: 'Oslo' } },
          { call: 'get_time', input: { zone: 'CET' } },
        ],
        stop: stops.tool_use,
      })
    })

    test('arguments sent as an object, not its JSON text, are the call’s input', async () => {
      const h = await chatGateway()
      const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } }
      byModel(h, {
        'first-up': {
          sse: [role, chunk({ tool_calls: [{ index: 0, ...call }] }), chunk({}, 'tool_calls', usage(20, 9)), done],
          json: completion({ content: null, tool_calls: [call] }, 'tool_calls'),
        },
      })
      expect((await ask(h, stream)).blocks).toEqual([{ call: 'get_weather', input: { city: 'Oslo' } }])
    })

    test('double-encoded arguments (a JSON string holding the JSON) are the call’s input', async () => {
      const h = await chatGateway()
      const args = JSON.stringify(JSON.stringify({ city: 'Oslo' }))
      const call = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: args } }
      // Streamed in two pieces, cut inside the string.
      const piece = (text: string) => ({ tool_calls: [{ index: 0, function: { arguments: text } }] })
      byModel(h, {
        'first-up': {
          sse: [
            role,
            chunk({ tool_calls: [{ index: 0, ...call, function: { name: 'get_weather', arguments: '' } }] }),
            chunk(piece(args.slice(0, 9))),
            chunk(piece(args.slice(9))),
            chunk({}, 'tool_calls', usage(20, 9)),
            done,
          ],
          json: completion({ content: null, tool_calls: [call] }, 'tool_calls'),
        },
      })
      expect(await ask(h, stream)).toEqual({
        blocks: [{ call: 'get_weather', input: { city: 'Oslo' } }],
        stop: stops.tool_use,
      })
    })

    test("Mistral's model_length (the window filled) ends the answer as cut by the limit", async () => {
      const h = await chatGateway()
      byModel(h, {
        'first-up': {
          sse: [role, chunk({ content: 'Hel' }), chunk({}, 'model_length', usage(20, 1)), done],
          json: completion({ content: 'Hel' }, 'model_length'),
        },
      })
      expect(await ask(h, stream)).toEqual({ blocks: [{ text: 'Hel' }], stop: stops.max_tokens })
    })

    test.each([
      ['MAX_TOKENS', 'max_tokens'],
      ['SAFETY', 'refusal'],
    ] as const)("Gemini's upper-case finish %s ends the answer as %s", async (reason, stop) => {
      const h = await chatGateway()
      byModel(h, {
        'first-up': {
          sse: [role, chunk({ content: 'Hel' }), chunk({}, reason, usage(20, 1)), done],
          json: completion({ content: 'Hel' }, reason),
        },
      })
      expect(await ask(h, stream)).toEqual({ blocks: [{ text: 'Hel' }], stop: stops[stop] })
    })

    test("GLM's sensitive finish is a refusal", async () => {
      const h = await chatGateway()
      byModel(h, {
        'first-up': {
          sse: [role, chunk({ content: 'I cannot' }), chunk({}, 'sensitive', usage(20, 2)), done],
          json: completion({ content: 'I cannot' }, 'sensitive'),
        },
      })
      expect(await ask(h, stream)).toEqual({ blocks: [{ text: 'I cannot' }], stop: stops.refusal })
    })

    test('finish_reason tool_calls with no call (a tool parser that found none) is a plain end', async () => {
      const h = await chatGateway()
      byModel(h, {
        'first-up': {
          sse: [role, chunk({ content: 'No tool needed.' }), chunk({}, 'tool_calls', usage(20, 4)), done],
          json: completion({ content: 'No tool needed.' }, 'tool_calls'),
        },
      })
      expect(await ask(h, stream)).toEqual({ blocks: [{ text: 'No tool needed.' }], stop: stops.end_turn })
    })

    test.each(['error', 'abort', 'network_error'])(
      'finish_reason %s before any text falls back to the next model, the broken leg uncharged',
      async (reason) => {
        const h = await chatGateway()
        byModel(h, {
          'first-up': {
            sse: [chunk({ content: '' }, reason), done],
            json: completion({ content: '' }, reason),
          },
          'second-up': {
            sse: [role, chunk({ content: 'From the second.' }), chunk({}, 'stop', usage(20, 4)), done],
            json: completion({ content: 'From the second.' }, 'stop'),
          },
        })
        expect((await ask(h, stream)).blocks).toEqual([{ text: 'From the second.' }])
        const record = await lastRecord(h)
        expect(record.usage_events).toEqual([
          expect.objectContaining({ model_id: 'first', outcome: 'failed', charged_nanos: 0 }),
          expect.objectContaining({ model_id: 'second', outcome: 'ok' }),
        ])
      },
    )
  })

  test('a 200 JSON body that is an error (OpenRouter, vLLM) falls back to the next model', async () => {
    for (const errorBody of [
      { error: { message: 'Provider returned error', code: 502 } },
      { object: 'error', message: 'The engine is dead', type: 'InternalServerError', code: 500 },
      { error: 'Upstream provider timed out' },
    ]) {
      const h = await chatGateway()
      byModel(h, {
        'first-up': { json: errorBody },
        'second-up': { json: completion({ content: 'From the second.' }, 'stop') },
      })
      expect((await ask(h, false)).blocks).toEqual([{ text: 'From the second.' }])
      const record = await lastRecord(h)
      expect(record.usage_events).toEqual([
        expect.objectContaining({ model_id: 'first', outcome: 'failed', charged_nanos: 0 }),
        expect.objectContaining({ model_id: 'second', outcome: 'ok', estimated: false }),
      ])
      const said =
        typeof errorBody.error === 'string' ? errorBody.error : (errorBody.error?.message ?? errorBody.message)
      expect(record.usage_events[0].error).toContain(said as string)
    }
  })

  // Asked without `stream`, such a server answered SSE, which a JSON request cannot read: it failed.
  test('a JSON request says stream: false, for servers that stream unless told not to', async () => {
    const h = await chatGateway()
    h.deps.fetch = (async (_url: string, init: RequestInit) => {
      if (JSON.parse(String(init.body)).stream === false) return Response.json(completion({ content: 'Hello' }, 'stop'))
      const frames = [role, chunk({ content: 'Hello' }), chunk({}, 'stop', usage(20, 4)), done]
      return new Response(new Blob(frames).stream(), { headers: { 'content-type': 'text/event-stream' } })
    }) as unknown as typeof fetch
    expect(await ask(h, false)).toEqual({ blocks: [{ text: 'Hello' }], stop: stops.end_turn })
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ model_id: 'first', outcome: 'ok', estimated: false, output_tokens: 4 }),
    ])
  })

  test('finish_reason error after text (OpenRouter): the client hears an error and the request failed', async () => {
    const h = await chatGateway()
    byModel(h, {
      'first-up': { sse: [role, chunk({ content: 'Half an ans' }), chunk({}, 'error'), done] },
    })
    // The Anthropic SDK throws on the error event; OpenAI's hands back the failed response.
    const seen = await ask(h, true).catch(() => 'the SDK threw')
    expect(seen).toEqual(ask === askMessages ? 'the SDK threw' : { blocks: [{ text: 'Half an ans' }], stop: 'failed' })
    const record = await lastRecord(h)
    expect(record).toMatchObject({ status: 'failed' })
    expect(record.usage_events).toEqual([expect.objectContaining({ model_id: 'first', outcome: 'failed' })])
  })

  // Both were read as an empty answer that ended well: billed, and the next model never tried.
  test.each([
    ['[DONE] before any chunk', [done]],
    [
      "llama.cpp's `error:` field (its model still loading)",
      ['error: {"code":503,"message":"Loading model","type":"unavailable_error"}\n\n', done],
    ],
    [
      "llama.cpp's `error:` field (the prompt past its context: a model with a larger one may serve)",
      [
        'error: {"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error"}\n\n',
        done,
      ],
    ],
  ])('%s falls back to the next model, the failed leg uncharged', async (_, frames) => {
    const h = await chatGateway()
    byModel(h, {
      'first-up': { sse: frames },
      'second-up': { sse: [role, chunk({ content: 'From the second.' }), chunk({}, 'stop', usage(20, 4)), done] },
    })
    expect(await ask(h, true)).toEqual({ blocks: [{ text: 'From the second.' }], stop: stops.end_turn })
    const record = await lastRecord(h)
    expect(record.usage_events).toEqual([
      expect.objectContaining({ model_id: 'first', outcome: 'failed', charged_nanos: 0 }),
      expect.objectContaining({ model_id: 'second', outcome: 'ok', estimated: false, output_tokens: 4 }),
    ])
  })

  // With no data line, the body was dropped: the client heard "upstream stream failed before its
  // first event", never why.
  test.each(['text/event-stream', 'text/plain'])(
    "a 200 stream under %s whose body is a bare JSON error: the client hears the upstream's message",
    async (contentType) => {
      const h = await chatGateway()
      const message = 'Context length 40000 exceeds max 32768'
      const bare = JSON.stringify({ error: { message, type: 'invalid_request_error', code: 400 } })
      h.deps.fetch = (async () =>
        new Response(bare, { headers: { 'content-type': contentType } })) as unknown as typeof fetch
      const error = await ask(h, true).catch((e: unknown) => e)
      const said = { type: 'invalid_request_error', message }
      expect(error).toMatchObject({ status: 400, error: ask === askMessages ? { type: 'error', error: said } : said })
      const record = await lastRecord(h)
      expect(record).toMatchObject({ status: 'failed', error: { message } })
      expect(record.usage_events).toEqual([
        expect.objectContaining({ model_id: 'first', outcome: 'failed', charged_nanos: 0, error: message }),
      ])
    },
  )

  // Read as one chunk, it was an empty answer billed as a success, and the next model never tried.
  test.each(['text/event-stream', 'text/plain'])(
    'a stream request answered under %s with a whole chat.completion falls back, the leg uncharged',
    async (contentType) => {
      const h = await chatGateway()
      const whole = JSON.stringify(completion({ content: 'The whole answer, unstreamed.' }, 'stop'))
      h.deps.fetch = (async (_url: string, init: RequestInit) =>
        JSON.parse(String(init.body)).model === 'first-up'
          ? new Response(whole, { headers: { 'content-type': contentType } })
          : new Response(
              [role, chunk({ content: 'From the second.' }), chunk({}, 'stop', usage(20, 4)), done].join(''),
              {
                headers: { 'content-type': 'text/event-stream' },
              },
            )) as unknown as typeof fetch
      expect(await ask(h, true)).toEqual({ blocks: [{ text: 'From the second.' }], stop: stops.end_turn })
      expect((await lastRecord(h)).usage_events).toEqual([
        expect.objectContaining({ model_id: 'first', outcome: 'failed', charged_nanos: 0 }),
        expect.objectContaining({ model_id: 'second', outcome: 'ok', output_tokens: 4 }),
      ])
    },
  )

  test("llama.cpp's `error:` field after text: the client hears an error and the request failed", async () => {
    const h = await chatGateway()
    byModel(h, {
      'first-up': {
        sse: [role, chunk({ content: 'Half an ans' }), 'error: {"code":500,"message":"boom"}\n\n', done],
      },
    })
    const seen = await ask(h, true).catch(() => 'the SDK threw')
    expect(seen).toEqual(ask === askMessages ? 'the SDK threw' : { blocks: [{ text: 'Half an ans' }], stop: 'failed' })
    const record = await lastRecord(h)
    expect(record).toMatchObject({ status: 'failed' })
    expect(record.usage_events).toEqual([
      expect.objectContaining({ model_id: 'first', outcome: 'failed', error: expect.stringContaining('boom') }),
    ])
  })
})

describe('stream chunks', () => {
  test('a server that holds the connection open after its usage chunk: the answer ends there, whole', async () => {
    const h = await chatGateway()
    const frames = [role, chunk({ content: 'Hi' }), chunk({}, 'stop'), chunk(null, null, usage(20, 2))]
    let upstreamClosed = false
    h.deps.fetch = (async (_url: string, init: RequestInit) => {
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const frame of frames) controller.enqueue(new TextEncoder().encode(frame))
          // No [DONE] and no end: only svc closing its side ends this.
          init.signal?.addEventListener('abort', () => {
            upstreamClosed = true
            controller.error(new Error('aborted'))
          })
        },
        cancel() {
          upstreamClosed = true
        },
      })
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
    }) as unknown as typeof fetch
    for (const ask of [askMessages, askResponses]) {
      expect((await ask(h, true)).blocks).toEqual([{ text: 'Hi' }])
      expect(await lastRecord(h)).toMatchObject({ status: 'completed', total_output_tokens: 2 })
      expect(upstreamClosed).toBe(true)
      upstreamClosed = false
    }
  })

  // Held until its block closed, a double-encoded call cut mid-arguments was lost: the client saw
  // none of it, and the leg was billed 2 output tokens for the ~500 that flowed. So too where the
  // upstream's connection broke instead of ending.
  const quoted = JSON.stringify(JSON.stringify({ path: 'a.txt', text: 'x'.repeat(2000) }))
  /** A double-encoded call, its first 2,000 characters: ~500 tokens at 4 bytes a token. */
  const quotedCallBegun = () => {
    const piece = (text: string) => chunk({ tool_calls: [{ index: 0, function: { arguments: text } }] })
    const opening = { index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }
    return [role, chunk({ tool_calls: [opening] }), piece(quoted.slice(0, 1000)), piece(quoted.slice(1000, 2000))]
  }
  test.each([
    ['cut', undefined],
    ['broken by a reset', 'reset' as const],
  ])('a double-encoded call %s mid-arguments: the client gets what flowed, billed', async (_, after) => {
    const h = await chatGateway()
    byModel(h, { 'first-up': { sse: quotedCallBegun(), after } })
    const { anthropic, openai } = sdkClients(h)
    const shown: string[] = []
    const messages = anthropic.messages
      .stream({ model: 'svc-pro', max_tokens: 4000, tools, messages: [{ role: 'user', content: 'hi' }] })
      .on('streamEvent', (event) => {
        if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
          shown.push(event.delta.partial_json)
      })
    expect(await messages.finalMessage().catch(() => 'the SDK threw')).toBe('the SDK threw')
    expect(shown).toEqual([quoted.slice(0, 2000)])
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ outcome: 'failed', estimated: true, output_tokens: 2000 / 4 }),
    ])
    const response = await openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
    expect(response).toMatchObject({
      status: 'failed',
      output: [{ type: 'function_call', arguments: quoted.slice(0, 2000) }],
    })
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ outcome: 'failed', estimated: true, output_tokens: 2000 / 4 }),
    ])
  })

  // A long answer gathered for JSON: the client that leaves is charged what the upstream wrote,
  // held arguments included (they were billed nothing).
  test('a client that leaves a gathered answer mid-call is charged the double-encoded arguments that came', async () => {
    const h = await chatGateway()
    h.deps.config.routing.streamUpstreamAboveMaxTokens = 0
    byModel(h, { 'first-up': { sse: quotedCallBegun(), after: 'stall' } })
    const client = new AbortController()
    const answer = h.call('/compat-a/v1/messages', {
      method: 'POST',
      json: { model: 'svc-pro', max_tokens: 4000, tools, messages: [{ role: 'user', content: 'hi' }] },
      signal: client.signal,
      headers: { 'anthropic-version': '2023-06-01' },
    })
    await Bun.sleep(100)
    client.abort()
    await answer.catch(() => {})
    expect(await lastRecord(h)).toMatchObject({
      status: 'aborted',
      usage_events: [expect.objectContaining({ outcome: 'aborted', estimated: true, output_tokens: 2000 / 4 })],
    })
  })

  // llama.cpp builds and proxies in front of vLLM: refused for its label, every such answer failed.
  test.each([
    ['text/plain', 'text/plain; charset=utf-8'],
    ['no content-type', undefined],
  ])('a stream under %s is read as the stream it is', async (_, contentType) => {
    const h = await chatGateway()
    const frames = [role, chunk({ content: 'Hello' }), chunk({}, 'stop', usage(20, 1)), done]
    h.deps.fetch = (async () =>
      new Response(new Blob(frames).stream(), {
        headers: contentType === undefined ? {} : { 'content-type': contentType },
      })) as unknown as typeof fetch
    for (const ask of [askMessages, askResponses]) {
      expect((await ask(h, true)).blocks).toEqual([{ text: 'Hello' }])
      expect((await lastRecord(h)).usage_events).toEqual([
        expect.objectContaining({ model_id: 'first', outcome: 'ok', estimated: false, output_tokens: 1 }),
      ])
    }
  })

  // Parsed as a chunk, it failed the answer as malformed JSON.
  test('an empty `data:` keep-alive mid-answer is skipped', async () => {
    const h = await chatGateway()
    byModel(h, {
      'first-up': {
        sse: [
          role,
          chunk({ content: 'Hello ' }),
          'data:\n\n',
          chunk({ content: 'world' }),
          chunk({}, 'stop', usage(20, 2)),
          done,
        ],
      },
    })
    for (const ask of [askMessages, askResponses]) {
      expect(await ask(h, true)).toEqual({
        blocks: [{ text: 'Hello world' }],
        stop: ask === askMessages ? 'end_turn' : 'completed',
      })
      expect(await lastRecord(h)).toMatchObject({ status: 'completed', total_output_tokens: 2 })
    }
  })

  test("Groq's usage under x_groq is the reported usage", async () => {
    const h = await chatGateway()
    byModel(h, {
      'first-up': {
        sse: [role, chunk({ content: 'Hi' }), chunk({}, 'stop', { x_groq: { id: 'req_1', ...usage(50, 2) } }), done],
      },
    })
    expect((await askMessages(h, true)).blocks).toEqual([{ text: 'Hi' }])
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ outcome: 'ok', estimated: false, input_tokens: 50, output_tokens: 2 }),
    ])
  })

  // Moonshot's place for it, with its cache hits beside prompt_tokens: read nowhere, the answer was
  // billed an estimate, its 4,000 cached tokens at the full input price.
  test("Moonshot's usage in the finish chunk's choice is the reported usage, its cache hits cached", async () => {
    const h = await twoModelGateway({ kind: 'openai-chat', model: { cache_read_usd_per_mtok: 0.1 } })
    const moonshotUsage = { prompt_tokens: 5000, completion_tokens: 2, total_tokens: 5002, cached_tokens: 4000 }
    const finish = { index: 0, delta: {}, finish_reason: 'stop', usage: moonshotUsage }
    byModel(h, {
      'first-up': {
        sse: [
          role,
          chunk({ content: 'Hi' }),
          sseFrame(undefined, { id: 'c', object: 'chat.completion.chunk', model: 'first-up', choices: [finish] }),
          done,
        ],
      },
    })
    expect((await askMessages(h, true)).blocks).toEqual([{ text: 'Hi' }])
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({
        outcome: 'ok',
        estimated: false,
        input_tokens: 1000,
        cached_input_tokens: 4000,
        output_tokens: 2,
        // 1,000 × 1,000 + 4,000 × 100 + 2 × 1,000 nanos.
        charged_nanos: 1_402_000,
      }),
    ])
  })

  // Such a server counted the prompt from its first chunk: re-estimated by the tokenizer, a cut
  // stream's 48,000 cached tokens were billed at the full input price (~7× the prompt's cost).
  test('usage on every chunk, the stream cut before its finish: the prompt is billed as counted, the output estimated', async () => {
    const h = await chatGateway()
    const counted = (output: number) => ({
      usage: { prompt_tokens: 50_000, completion_tokens: output, prompt_tokens_details: { cached_tokens: 48_000 } },
    })
    byModel(h, {
      'first-up': {
        sse: [
          chunk({ role: 'assistant', content: 'Hello ' }, null, counted(1)),
          chunk({ content: 'world' }, null, counted(2)),
        ],
      },
    })
    await h
      .call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: 'svc-pro', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] },
      })
      .then((res) => res.text())
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ estimated: true, input_tokens: 2_000, cached_input_tokens: 48_000, output_tokens: 3 }),
    ])
  })

  test("a proxy echoing a second choice: only the first choice's words", async () => {
    const h = await chatGateway()
    const choice = (index: number, delta: Json, finish: string | null = null) => ({
      index,
      delta,
      finish_reason: finish,
    })
    const frame = (choices: Json[], extra: Json = {}) =>
      sseFrame(undefined, { id: 'c', object: 'chat.completion.chunk', model: 'first-up', choices, ...extra })
    byModel(h, {
      'first-up': {
        sse: [
          frame([choice(0, { role: 'assistant', content: '' }), choice(1, { role: 'assistant', content: '' })]),
          frame([choice(1, { content: 'Other' })]),
          frame([choice(0, { content: 'Hello' })]),
          frame([choice(1, {}, 'stop')]),
          frame([choice(0, {}, 'stop')]),
          frame([], usage(20, 2)),
          done,
        ],
      },
    })
    expect(await askMessages(h, true)).toEqual({ blocks: [{ text: 'Hello' }], stop: 'end_turn' })
  })
})
