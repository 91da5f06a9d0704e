// What OpenAI-Responses-compatible servers really send, as exact bytes, through both client routes:
// llama.cpp's streams with no output_index, an error under a 200, OpenAI's nested error event,
// OpenRouter's bare error frame, Chat's [DONE] and Chat's usage names. Each answer is read by the
// official SDKs and its ledger record checked. Such a server is translated for by default (it is not
// OpenAI itself: openai_itself off); where a file says it is (a proxy in front of OpenAI that adds
// these shapes of its own), a Responses client's answer is passed through, and both must hold.
import { describe, expect, test } from 'bun:test'
import { createHarness, endedRequestDetail, type Harness, sdkClients } from './support/harness'
import { type ScriptedAnswer, scriptedPair, scriptedUpstream, sseFrame } from './support/scripted-upstream'

type Json = Record<string, unknown>

/** svc-pro on two Responses models, `first` ranked above `second`, on a compatible server (translated for). */
const responsesGateway = () => scriptedPair('openai-responses')
/** The same, on a server the file says is OpenAI itself: a Responses client's answer passes through. */
const passThroughGateway = () => scriptedPair('openai-responses', {}, 5, { openai_itself: true })

/** An event as OpenAI writes it: its `event:` line names the JSON's type. */
const ev = (type: string, data: Json = {}) => sseFrame(type, { type, ...data })

const usage = { input_tokens: 20, output_tokens: 4, total_tokens: 24 }
const message = (text: string, id = 'msg_up') => ({
  type: 'message',
  id,
  status: 'completed',
  role: 'assistant',
  content: [{ type: 'output_text', text, annotations: [] }],
})
const response = (status: string, output: unknown[], used: unknown = usage, model = 'first-up') => ({
  id: 'resp_up',
  object: 'response',
  created_at: 1,
  status,
  model,
  output,
  usage: used,
})

/** OpenAI's own text stream, cut before its terminal event, then `tail`. */
const openaiText = (text: string, tail: string[], model = 'first-up') => {
  let n = 0
  const seq = () => ({ sequence_number: n++ })
  const at = { item_id: 'msg_up', output_index: 0, content_index: 0 }
  return [
    ev('response.created', { response: response('in_progress', [], null, model), ...seq() }),
    ev('response.output_item.added', {
      output_index: 0,
      item: { ...message(''), status: 'in_progress', content: [] },
      ...seq(),
    }),
    ev('response.content_part.added', { ...at, part: { type: 'output_text', text: '', annotations: [] }, ...seq() }),
    ev('response.output_text.delta', { ...at, delta: text, ...seq() }),
    ev('response.output_text.done', { ...at, text, ...seq() }),
    ev('response.output_item.done', { output_index: 0, item: message(text), ...seq() }),
    ...tail,
  ]
}
const completed = (text: string, used: unknown = usage, model = 'first-up') =>
  ev('response.completed', { response: response('completed', [message(text)], used, model), sequence_number: 9 })

const second: ScriptedAnswer = {
  sse: openaiText('From the second.', [completed('From the second.', usage, 'second-up')], 'second-up'),
  json: response('completed', [message('From the second.')], usage, 'second-up'),
}

// llama.cpp's llama-server (tools/server/server-task.cpp), which Lemonade serves too: no
// sequence_number, no output_index or content_index anywhere; a function call item has a call_id
// and no id, and its deltas name it by that call_id.
const llamaMessage = (text: string) => ({ ...message(text, 'msg_lc'), content: [{ type: 'output_text', text }] })
const llamaReasoning = (text: string) => ({
  id: 'rs_lc',
  type: 'reasoning',
  summary: [],
  content: [{ type: 'reasoning_text', text }],
})
const llamaCall = (args: string) => ({
  type: 'function_call',
  status: 'completed',
  call_id: 'fc_a1',
  name: 'get_weather',
  arguments: args,
})
const llamaStream = (thinking: string, parts: string[], args: string) => {
  const text = parts.join('')
  return [
    ev('response.created', { response: { id: 'resp_lc', object: 'response', status: 'in_progress' } }),
    ev('response.output_item.added', { item: { ...llamaReasoning(''), content: [], status: 'in_progress' } }),
    ev('response.reasoning_text.delta', { item_id: 'rs_lc', delta: thinking }),
    ev('response.output_item.done', { item: llamaReasoning(thinking) }),
    ev('response.output_item.added', { item: { ...llamaMessage(''), status: 'in_progress', content: [] } }),
    ev('response.content_part.added', { item_id: 'msg_lc', part: { type: 'output_text', text: '' } }),
    ...parts.map((delta) => ev('response.output_text.delta', { item_id: 'msg_lc', delta })),
    ev('response.output_text.done', { item_id: 'msg_lc', text }),
    ev('response.output_item.done', { item: llamaMessage(text) }),
    ev('response.output_item.added', { item: { ...llamaCall(''), status: 'in_progress' } }),
    ev('response.function_call_arguments.delta', { item_id: 'fc_a1', delta: args }),
    ev('response.output_item.done', { item: llamaCall(args) }),
    ev('response.completed', {
      response: response('completed', [llamaReasoning(thinking), llamaMessage(text), llamaCall(args)]),
    }),
  ]
}

const tools = [
  { name: 'get_weather', description: 'weather', input_schema: { type: 'object' as const, properties: {} } },
]
const messagesParams = (maxTokens = 1000) => ({
  model: 'svc-pro',
  max_tokens: maxTokens,
  tools,
  messages: [{ role: 'user' as const, content: 'hi' }],
})

/** An Anthropic client's answer as blocks, or what it threw. */
async function askMessages(
  h: Harness,
  stream: boolean,
  maxTokens?: number,
): Promise<{ blocks?: Json[]; threw?: string }> {
  const { anthropic } = sdkClients(h)
  try {
    const params = messagesParams(maxTokens)
    const answer = stream
      ? await anthropic.messages.stream(params).finalMessage()
      : await anthropic.messages.create(params)
    const blocks = answer.content.map((block) =>
      block.type === 'text'
        ? { text: block.text }
        : block.type === 'thinking'
          ? { thinking: block.thinking }
          : block.type === 'tool_use'
            ? { call: block.name, id: block.id, input: block.input }
            : { other: block.type },
    )
    return { blocks }
  } catch (error) {
    return { threw: String(error) }
  }
}

/** A Responses client's answer as its texts and status, or what it threw. */
async function askResponses(
  h: Harness,
  stream: boolean,
): Promise<{ texts?: string[]; status?: string; threw?: string }> {
  const { openai } = sdkClients(h)
  try {
    const answer = stream
      ? await openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
      : await openai.responses.create({ model: 'svc-pro', input: 'hi' })
    const texts = answer.output.flatMap((item) =>
      item.type === 'message' ? item.content.map((part) => (part.type === 'output_text' ? part.text : '')) : [],
    )
    return { texts, status: answer.status }
  } catch (error) {
    return { threw: String(error) }
  }
}

/** The newest request's record, once it has ended. */
async function lastRecord(h: Harness) {
  const [row] = (await (await h.call('/v1/usage/requests')).json()).items
  return endedRequestDetail(h, row.request_id)
}

/** Every upstream call answered by model: the first model's script, then the second's. */
const byModel = (h: Harness, scripts: Record<string, ScriptedAnswer>) =>
  scriptedUpstream(h, (body) => scripts[String(body.model)] ?? { json: {} })

describe('llama.cpp and Lemonade: no output_index, calls named by their call_id', () => {
  test('an Anthropic client streaming gets thinking, text and the call, each once', async () => {
    const h = await responsesGateway()
    byModel(h, { 'first-up': { sse: llamaStream('Think.', ['Hel', 'lo'], '{"city":"Oslo"}') } })
    expect(await askMessages(h, true)).toEqual({
      blocks: [
        { thinking: 'Think.' },
        { text: 'Hello' },
        { call: 'get_weather', id: 'fc_a1', input: { city: 'Oslo' } },
      ],
    })
    expect(await lastRecord(h)).toMatchObject({ status: 'completed', total_output_tokens: 4 })
  })

  test('a stream cut before its end has given the client the words that came', async () => {
    const h = await responsesGateway()
    const frames = llamaStream('Think.', ['Hel', 'lo'], '{}')
    const cut = frames.slice(
      0,
      frames.findIndex((frame) => frame.includes('response.output_text.done')),
    )
    byModel(h, { 'first-up': { sse: cut } })
    const stream = sdkClients(h).anthropic.messages.stream(messagesParams())
    const heard: string[] = []
    stream.on('text', (text) => heard.push(text))
    expect(String(await stream.finalMessage().catch((error) => error))).toContain('ended before the response finished')
    expect(heard).toEqual(['Hel', 'lo'])
    expect(await lastRecord(h)).toMatchObject({ status: 'failed' })
  })
})

describe('a 200 JSON body that is an error (OpenRouter, once generation has started)', () => {
  const errorBody = { error: { message: 'Provider returned error', code: 502 } }
  for (const [route, ask] of [
    ['Anthropic JSON', (h: Harness) => askMessages(h, false)],
    // A long output limit: svc streams from the upstream and gathers the answer, which answers JSON.
    ['Anthropic gathered', (h: Harness) => askMessages(h, false, 8000)],
    ['Responses JSON', (h: Harness) => askResponses(h, false)],
  ] as const) {
    test(`${route}: the next model answers; the upstream's message is recorded`, async () => {
      const h = await responsesGateway()
      byModel(h, { 'first-up': { json: errorBody }, 'second-up': second })
      expect(JSON.stringify(await ask(h))).toContain('From the second.')
      expect((await lastRecord(h)).usage_events).toEqual([
        expect.objectContaining({
          model_id: 'first',
          outcome: 'failed',
          charged_nanos: 0,
          error: 'Provider returned error',
        }),
        expect.objectContaining({ model_id: 'second', outcome: 'ok' }),
      ])
    })
  }
})

// A proxy in front of the server answers its error as the message alone, as Chat servers' proxies
// do: recorded in its words, as a Chat upstream's is (it was recorded as the raw JSON).
test('an HTTP error whose body is {"error":"…"}: the next model answers; the message is recorded', async () => {
  const h = await responsesGateway()
  byModel(h, { 'first-up': { status: 503, json: { error: 'no healthy upstream' } }, 'second-up': second })
  expect(JSON.stringify(await askResponses(h, false))).toContain('From the second.')
  expect((await lastRecord(h)).usage_events).toEqual([
    expect.objectContaining({ model_id: 'first', outcome: 'failed', error: 'no healthy upstream' }),
    expect.objectContaining({ model_id: 'second', outcome: 'ok' }),
  ])
})

describe('in-band errors in a stream', () => {
  // OpenAI's own, at times: the fields nested under `error` (openai-dotnet#881).
  const nested = (code: string, text: string) =>
    ev('error', { error: { type: code, code, message: text, param: null }, sequence_number: 9 })

  test('a nested error event after text: the Anthropic client and the ledger have its message', async () => {
    const h = await responsesGateway()
    byModel(h, { 'first-up': { sse: openaiText('Hel', [nested('server_error', 'The engine died')]) } })
    expect((await askMessages(h, true)).threw).toContain('The engine died')
    expect(await lastRecord(h)).toMatchObject({
      status: 'failed',
      usage_events: [expect.objectContaining({ outcome: 'failed', error: 'The engine died' })],
    })
  })

  test("a nested rate limit first: the next model answers, the limit recorded in svc's words", async () => {
    const h = await responsesGateway()
    byModel(h, {
      'first-up': { sse: [nested('rate_limit_exceeded', 'Rate limit reached for requests')] },
      'second-up': second,
    })
    expect(await askMessages(h, true)).toEqual({ blocks: [{ text: 'From the second.' }] })
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({
        model_id: 'first',
        outcome: 'failed',
        error: expect.stringMatching(/^p is rate-limiting the gateway's own account there/),
      }),
      expect.objectContaining({ model_id: 'second', outcome: 'ok' }),
    ])
  })

  // OpenRouter's mid-stream failure (its streaming docs, "Handling Errors During Streaming").
  const bare = sseFrame(undefined, { error: { code: 502, message: 'Provider disconnected' } })
  // A translated Responses answer that breaks ends as OpenAI's own do, `response.failed` (which the
  // SDK returns rather than throws, and Codex reads as a failed turn); a relayed one with svc's error event.
  const cases = [
    ['Anthropic', responsesGateway, (h: Harness) => askMessages(h, true), { threw: 'Provider disconnected' }],
    ['Responses', responsesGateway, (h: Harness) => askResponses(h, true), { status: 'failed' }],
    [
      'Responses passed through',
      passThroughGateway,
      (h: Harness) => askResponses(h, true),
      { threw: 'Provider disconnected' },
    ],
  ] as const
  for (const [route, gateway, ask, told] of cases) {
    test(`${route}: an {"error":…} frame with no type is the upstream's error, its message kept`, async () => {
      const h = await gateway()
      byModel(h, { 'first-up': { sse: openaiText('Hel', [bare]) } })
      const answer = await ask(h)
      if ('threw' in told) expect(answer.threw).toContain(told.threw)
      else expect(answer).toMatchObject({ texts: ['Hel'], status: told.status })
      expect(await lastRecord(h)).toMatchObject({
        status: 'failed',
        usage_events: [expect.objectContaining({ outcome: 'failed', error: 'Provider disconnected' })],
      })
    })
  }

  test("Chat's [DONE] with no terminal event: the Responses client is told the answer broke", async () => {
    const h = await responsesGateway()
    byModel(h, { 'first-up': { sse: openaiText('Hello', [sseFrame(undefined, '[DONE]')]) } })
    expect(await askResponses(h, true)).toMatchObject({ texts: ['Hello'], status: 'failed' })
    expect(await lastRecord(h)).toMatchObject({ status: 'failed' })

    const relayed = await passThroughGateway()
    byModel(relayed, { 'first-up': { sse: openaiText('Hello', [sseFrame(undefined, '[DONE]')]) } })
    // Relayed, [DONE] ended the SDK's reading with a quiet in_progress answer, svc's error after it unread.
    expect((await askResponses(relayed, true)).threw).toContain('ended before')
    expect(await lastRecord(relayed)).toMatchObject({ status: 'failed' })
  })
})

test("usage under Chat's names is the reported usage, on both routes", async () => {
  const chatNamed = { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 }
  for (const ask of [(h: Harness) => askMessages(h, true), (h: Harness) => askResponses(h, true)]) {
    const h = await responsesGateway()
    byModel(h, { 'first-up': { sse: openaiText('Hello', [completed('Hello', chatNamed)]) } })
    expect(JSON.stringify(await ask(h))).toContain('Hello')
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ outcome: 'ok', estimated: false, input_tokens: 20, output_tokens: 4 }),
    ])
  }
})

test("usage under Chat's names reaches a Responses client under Responses' names, streamed and JSON (Codex requires them)", async () => {
  const chatNamed = { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 }
  for (const stream of [true, false]) {
    const h = await responsesGateway()
    byModel(h, {
      'first-up': {
        sse: openaiText('Hello', [completed('Hello', chatNamed)]),
        json: response('completed', [message('Hello')], chatNamed),
      },
    })
    const { openai } = sdkClients(h)
    const answer = stream
      ? await openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
      : await openai.responses.create({ model: 'svc-pro', input: 'hi' })
    expect(answer.usage).toMatchObject({ input_tokens: 20, output_tokens: 4, total_tokens: 24 })
  }
})

test("passed through (a proxy in front of OpenAI), Chat-named usage reaches the client under Responses' names, in response.incomplete too", async () => {
  const chatNamed = { prompt_tokens: 20, completion_tokens: 4, total_tokens: 24 }
  const cut = ev('response.incomplete', {
    response: {
      ...response('incomplete', [message('Hello')], chatNamed),
      incomplete_details: { reason: 'max_output_tokens' },
    },
    sequence_number: 9,
  })
  for (const terminal of [completed('Hello', chatNamed), cut]) {
    const h = await passThroughGateway()
    byModel(h, { 'first-up': { sse: openaiText('Hello', [terminal]) } })
    const answer = await sdkClients(h).openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
    expect(answer.usage).toMatchObject({ input_tokens: 20, output_tokens: 4, total_tokens: 24 })
  }
})

test("OpenRouter's bare error frame reaches a Responses client as a typed event, which Codex reads", async () => {
  const bare = sseFrame(undefined, { error: { code: 502, message: 'Provider disconnected' } })
  const lastFrame = async (h: Harness) => {
    byModel(h, { 'first-up': { sse: openaiText('Hel', [bare]) } })
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: 'svc-pro', input: 'hi', stream: true },
    })
    const frames = (await res.text()).split('\n\n').filter((frame) => frame !== '')
    expect(frames.filter((frame) => frame.includes('Provider disconnected'))).toHaveLength(1)
    const last = frames.at(-1)!
    return { event: last.slice(0, last.indexOf('\n')), data: JSON.parse(last.slice(last.indexOf('data: ') + 6)) }
  }
  const translated = await lastFrame(await responsesGateway())
  expect(translated).toMatchObject({
    event: 'event: response.failed',
    data: { type: 'response.failed', response: { status: 'failed', error: { message: 'Provider disconnected' } } },
  })
  const relayed = await lastFrame(await passThroughGateway())
  expect(relayed).toMatchObject({ event: 'event: error', data: { type: 'error', message: 'Provider disconnected' } })
})

describe("Codex's tools on a compatible server, which takes function tools only", () => {
  // What Codex 0.169 offers on every request: a namespace, its freeform apply_patch, a function and
  // OpenAI's web search. llama.cpp: "'type' of tool must be 'function'"; LM Studio, Ollama and vLLM refuse them too.
  const codexTools = [
    { type: 'function', name: 'shell', description: 'Run a command', parameters: { type: 'object', properties: {} } },
    {
      type: 'namespace',
      name: 'multi_agent_v1',
      description: 'Subagents',
      tools: [{ type: 'function', name: 'spawn', parameters: { type: 'object', properties: {} } }],
    },
    {
      type: 'custom',
      name: 'apply_patch',
      description: 'Edit files',
      format: { type: 'grammar', syntax: 'lark', definition: 'start: /.+/' },
    },
    { type: 'web_search', external_web_access: false },
  ]
  const ask = (h: Harness) =>
    h.call('/compat-b/v1/responses', { method: 'POST', json: { model: 'svc-pro', input: 'go', tools: codexTools } })
  const callOf = (name: string) => ({
    type: 'function_call',
    id: 'fc_up',
    call_id: 'call_1',
    name,
    arguments: '{}',
    status: 'completed',
  })

  test('gets them as functions, without the search; a namespaced call reaches Codex under its namespace', async () => {
    const h = await responsesGateway()
    const sent = scriptedUpstream(h, (body) => {
      const names = (body.tools as Json[]).map((tool) => String(tool.name))
      return { json: response('completed', [callOf(names.find((name) => name.includes('spawn'))!)]) }
    })
    const res = await ask(h)
    expect(res.status).toBe(200)
    const tools = sent[0]!.tools as Json[]
    expect(tools.map((tool) => tool.type)).toEqual(['function', 'function', 'function'])
    expect(tools.map((tool) => tool.name)).toEqual(['shell', expect.stringContaining('spawn'), 'apply_patch'])
    const answer = (await res.json()) as { output: Json[] }
    expect(answer.output).toEqual([
      expect.objectContaining({ type: 'function_call', namespace: 'multi_agent_v1', name: 'spawn', call_id: 'call_1' }),
    ])
  })

  test('a server the file says is OpenAI itself gets them as Codex sent them', async () => {
    const h = await passThroughGateway()
    const sent = scriptedUpstream(h, () => ({ json: response('completed', [message('Done.')]) }))
    expect((await ask(h)).status).toBe(200)
    expect(sent[0]!.tools).toEqual(codexTools)
  })
})

test("gpt-oss on a compatible server gets its tool loop's reasoning back, as text it reads (llama.cpp refuses a reasoning item without content)", async () => {
  const h = await responsesGateway()
  const sent = scriptedUpstream(h, () => ({ json: response('completed', [message('Sunny in Oslo.')]) }))
  const input = [
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
    // As the server gave it and the client kept it: text, no encrypted_content.
    { type: 'reasoning', id: 'rs_up', summary: [], content: [{ type: 'reasoning_text', text: 'Call get_weather.' }] },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'sun' },
  ]
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    json: { model: 'svc-pro', input, store: false, tools: [{ type: 'function', name: 'get_weather', parameters: {} }] },
  })
  expect(res.status).toBe(200)
  expect(sent[0]!.input).toEqual([
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather in Oslo?' }] },
    { type: 'reasoning', id: 'rs_1', summary: [], content: [{ type: 'reasoning_text', text: 'Call get_weather.' }] },
    { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'sun' },
  ])
})

test("a compatible server's encrypted reasoning goes back to it alone, never to OpenAI (OpenRouter's, Ollama's plain text)", async () => {
  // A profile of a model on OpenRouter's Responses API above OpenAI itself.
  const h = await createHarness({
    grantUsd: 5,
    env: { K: 'upstream-key-0123456789' },
    config: {
      catalog: { builtin: false },
      providers: {
        router: { kind: 'openai-responses', base_url: 'https://openrouter.ai/api/v1', api_key_env: 'K' },
        openai: { kind: 'openai-responses', base_url: 'http://127.0.0.1:9/v1', api_key_env: 'K' },
      },
      models: ['router', 'openai'].map((provider, i) => ({
        id: provider,
        provider,
        upstream_model: `${provider}-up`,
        profiles: ['pro'],
        quality: 90 - i,
        input_usd_per_mtok: 1,
        output_usd_per_mtok: 1,
      })),
    },
  })
  const routerReasoning = {
    id: 'rs_123',
    type: 'reasoning',
    summary: [{ type: 'summary_text', text: 'I should call the tool.' }],
    encrypted_content: 'gAAAAB-router-blob',
  }
  const toolCall = {
    type: 'function_call',
    id: 'fc_1',
    call_id: 'call_1',
    name: 'get_weather',
    arguments: '{}',
    status: 'completed',
  }
  let routerUp = true
  const sent = scriptedUpstream(h, (body) =>
    body.model === 'router-up' && routerUp
      ? { json: response('completed', [routerReasoning, toolCall], usage, 'router-up') }
      : body.model === 'router-up'
        ? { status: 503, json: { error: { message: 'no provider available' } } }
        : { json: response('completed', [message('Sunny.')], usage, 'openai-up') },
  )
  const { openai } = sdkClients(h)
  const tools = [{ type: 'function' as const, name: 'get_weather', parameters: {}, strict: false }]
  const first = await openai.responses.create({
    model: 'svc-pro',
    input: 'Weather?',
    tools,
    store: false,
    include: ['reasoning.encrypted_content'],
  })
  // The client keeps the thinking's words and svc's wrapper of the blob, which names its maker.
  const reasoning = first.output.find((item) => item.type === 'reasoning')!
  expect(reasoning).toMatchObject({ summary: [{ type: 'summary_text', text: 'I should call the tool.' }] })
  expect(reasoning.encrypted_content).toStartWith(Buffer.from('{"v":1,"provider":"server",').toString('base64url'))
  const call = first.output.find((item) => item.type === 'function_call')!
  const next = [
    'Weather?',
    ...first.output,
    { type: 'function_call_output', call_id: call.call_id, output: 'sun' },
  ].map((item) => (typeof item === 'string' ? { role: 'user' as const, content: item } : item)) as never

  // The server back: its own blob, as it made it, beside the words.
  await openai.responses.create({ model: 'svc-pro', input: next, tools, store: false })
  expect((sent.at(-1)!.input as Record<string, unknown>[]).find((item) => item.type === 'reasoning')).toMatchObject({
    content: [{ type: 'reasoning_text', text: 'I should call the tool.' }],
    encrypted_content: 'gAAAAB-router-blob',
  })

  // The server down: OpenAI itself serves, with no reasoning item it cannot read (passed through,
  // the client's items as sent, less that one).
  routerUp = false
  await openai.responses.create({ model: 'svc-pro', input: next, tools, store: false })
  const toOpenAI = sent.at(-1)!
  expect(toOpenAI.model).toBe('openai-up')
  expect(JSON.stringify(toOpenAI.input)).not.toContain('router-blob')
  expect((toOpenAI.input as { type?: string; role?: string }[]).map((item) => item.type ?? item.role)).toEqual([
    'user',
    'function_call',
    'function_call_output',
  ])
})
