// A non-streaming client whose answer may be long (an output limit above
// `stream_upstream_above_max_tokens`) gets JSON, but svc streams it from the upstream and gathers
// it: the first event bounds a hung provider, each silence a stalled one, and a slow, steady answer
// takes as long as it needs (README, Routing). Checked here: the gathered answer is the very JSON
// the non-streaming call gives, and costs the same, on both surfaces and every upstream kind; an
// answer longer than first_byte_timeout_ms arrives whole; a stream that breaks anywhere before its
// end still falls back, its leg uncharged; a client that leaves stops the upstream.
import { describe, expect, test } from 'bun:test'
import type { ProviderKind } from '../src/config/schema'
import { type Harness, requestDetail, sdkClients } from './support/harness'
import { scriptedUpstream, sseFrame } from './support/scripted-upstream'
import type { Scenario } from './support/simulator'
import {
  oneModelGateway,
  profileFor,
  rankedProGateway,
  simKey,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()

type Json = Record<string, unknown>

const kinds: ProviderKind[] = ['anthropic', 'openai-chat', 'openai-responses']

const scenarios: Record<string, Scenario> = {
  text: { text: 'Plain words, streamed in pieces: é, 😀 and the rest.', chunks: 5 },
  'thinking and a tool call': {
    thinking: 'The user wants the weather; call the tool.',
    text: 'Let me look.',
    toolCall: { name: 'get_weather', arguments: { city: 'Zürich', days: [1, 2] }, fragments: 4 },
  },
  'parallel tool calls, interleaved': {
    toolCall: { name: 'get_weather', arguments: { city: 'Oslo' } },
    moreToolCalls: [{ name: 'get_time', arguments: { zone: 'Europe/Oslo' } }],
    interleaveToolCalls: true,
  },
  'usage never reported': { text: 'No counts come with this answer.', usageReport: 'omitted' },
}

const tools = [
  { name: 'get_weather', description: 'weather', input_schema: { type: 'object', properties: {} } },
  { name: 'get_time', description: 'time', input_schema: { type: 'object', properties: {} } },
]

const request = (surface: 'messages' | 'responses', kind: ProviderKind) =>
  surface === 'messages'
    ? {
        path: '/compat-a/v1/messages',
        headers: { 'anthropic-version': '2023-06-01' },
        json: {
          model: profileFor[kind],
          max_tokens: 1000,
          tools,
          messages: [{ role: 'user', content: 'What is the weather in Zürich?' }],
        },
      }
    : {
        path: '/compat-b/v1/responses',
        headers: {} as Record<string, string>,
        json: {
          model: profileFor[kind],
          max_output_tokens: 1000,
          tools: tools.map(({ name, description, input_schema }) => ({
            type: 'function',
            name,
            description,
            parameters: input_schema,
          })),
          input: 'What is the weather in Zürich?',
        },
      }

/** The answer with the request's own id and clock taken out: what must match between two requests. */
const withoutIds = (body: Json, requestId: string): unknown =>
  JSON.parse(
    JSON.stringify(body)
      .replaceAll(requestId, '<id>')
      // The simulator's own ids (tool calls, items), new on every answer.
      .replace(/([a-z]+)_sim[0-9a-z]+/g, '$1_<sim>')
      // Each answer's own clock, in seconds: two answers a few ms apart can straddle a second.
      .replace(/"(created_at|completed_at)":\d+/g, '"$1":0'),
  )

/** What the ledger kept of a request's one leg: tokens, searches, cost, whether estimated. */
const legOf = async (h: Harness, id: string) => {
  const detail = await requestDetail(h, id)
  expect(detail.status).toBe('completed')
  expect(detail.usage_events).toHaveLength(1)
  const leg = detail.usage_events[0]
  const { outcome, estimated, input_tokens, output_tokens, reasoning_tokens, web_search_requests, cost_nanos } = leg
  return {
    outcome,
    estimated,
    input_tokens,
    output_tokens,
    reasoning_tokens,
    web_search_requests,
    cost_nanos,
    charged: detail.charged_nanos,
  }
}

/**
 * The same request answered as JSON, then gathered from a stream: the answers, and their legs, equal.
 * `pausable`: a search a Responses client offers Claude is gathered either way, as svc may send its
 * turn back (paused-turn.ts).
 */
async function bothWays(
  h: Harness,
  call: { path: string; headers: Record<string, string>; json: Json },
  pausable = false,
) {
  const direct = await h.call(call.path, { method: 'POST', ...call })
  expect(direct.status).toBe(200)
  h.deps.config.routing.streamUpstreamAboveMaxTokens = 0
  const gathered = await h.call(call.path, { method: 'POST', ...call })
  expect(gathered.status).toBe(200)
  expect(gathered.headers.get('content-type')).toStartWith('application/json')
  expect(sim.requests.map((r) => (r.body as Json).stream === true)).toEqual([pausable, true])
  const directId = direct.headers.get('x-request-id')!
  const gatheredId = gathered.headers.get('x-request-id')!
  expect(withoutIds(await gathered.json(), gatheredId)).toEqual(withoutIds(await direct.json(), directId))
  const leg = await legOf(h, gatheredId)
  expect(leg).toEqual(await legOf(h, directId))
  return leg
}

describe('a gathered answer is the JSON the non-streaming call gives', () => {
  for (const surface of ['messages', 'responses'] as const) {
    for (const kind of kinds) {
      for (const [name, scenario] of Object.entries(scenarios)) {
        test(`${surface} ← ${kind}: ${name}`, async () => {
          const h = await translationGateway(sim)
          sim.setScenario(upstreamModelFor[kind], scenario)
          await bothWays(h, request(surface, kind))
        })
      }
    }
  }
})

describe('a gathered answer with the provider’s own web search is the same answer, its searches billed alike', () => {
  const searchTool = {
    messages: { type: 'web_search_20250305', name: 'web_search', max_uses: 5 },
    responses: { type: 'web_search' },
  }
  for (const surface of ['messages', 'responses'] as const) {
    for (const kind of ['anthropic', 'openai-responses'] as const) {
      test(`${surface} ← ${kind}`, async () => {
        const h = await translationGateway(sim)
        sim.setScenario(upstreamModelFor[kind], {
          text: 'Found it.',
          usage: { input: 100, output: 20, webSearches: 2 },
        })
        const call = request(surface, kind)
        const pausable = surface === 'responses' && kind === 'anthropic'
        const leg = await bothWays(h, { ...call, json: { ...call.json, tools: [searchTool[surface]] } }, pausable)
        expect(leg.web_search_requests).toBe(2)
      })
    }
  }
})

/** One Anthropic model on the simulator behind svc-pro, with these routing settings. */
const slowModelGateway = (routing: Record<string, number>) =>
  oneModelGateway(sim, { upstreamModel: 'slow-up', key: simKey, routing })

describe('a long answer', () => {
  test('takes longer than first_byte_timeout_ms and still arrives whole, where the same answer as JSON times out', async () => {
    const h = await slowModelGateway({ first_byte_timeout_ms: 250 })
    // Ten deltas 80 ms apart: ~0.8 s of writing, three times the first-byte limit.
    sim.setScenario('slow-up', {
      text: 'one two three four five six seven eight nine ten',
      chunks: 10,
      chunkDelayMs: 80,
    })
    const { anthropic } = sdkClients(h)
    const ask = { model: 'svc-pro', messages: [{ role: 'user' as const, content: 'count' }] }

    const message = await anthropic.messages.create({ ...ask, max_tokens: 8000 })
    expect(message.content).toMatchObject([{ type: 'text', text: 'one two three four five six seven eight nine ten' }])
    expect(message.stop_reason).toBe('end_turn')
    expect(message.id).toStartWith('msg_')
    const record = await requestDetail(h, message.id.slice('msg_'.length))
    expect(record.status).toBe('completed')
    expect(record.usage_events).toEqual([expect.objectContaining({ outcome: 'ok', estimated: false })])
    // At or under the threshold (4,096 by default) the upstream is asked for JSON, whose first byte
    // comes once the whole answer is written.
    const short = await anthropic.messages.create({ ...ask, max_tokens: 4096 }).catch((err: Error) => err)
    expect(short).toBeInstanceOf(Error)
    expect((short as Error).message).toContain('within 250 ms')
    expect(sim.requests.map((r) => (r.body as Json).stream === true)).toEqual([true, false])
  })

  test('from a hung provider falls back once first_byte_timeout_ms passes without an event', async () => {
    const h = await rankedProGateway(sim, [
      { id: 'first', kind: 'anthropic', quality: 90 },
      { id: 'second', kind: 'openai-chat', quality: 80 },
    ])
    // A streaming upstream's headers are bounded by connect_timeout_ms, its first event by first_byte_timeout_ms.
    h.deps.config.routing.connectTimeoutMs = 150
    h.deps.config.routing.firstByteTimeoutMs = 150
    sim.setScenario(upstreamModelFor.anthropic, { text: 'never', firstByteDelayMs: 2000 })
    sim.setScenario(upstreamModelFor['openai-chat'], { text: 'served' })
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: 8000, messages: [{ role: 'user', content: 'go' }] },
    })
    expect(res.status).toBe(200)
    expect((await res.json()).content).toMatchObject([{ type: 'text', text: 'served' }])
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.usage_events.map((e: Json) => [e.model_id, e.outcome, e.cost_nanos])).toEqual([
      ['first', 'failed', 0],
      ['second', 'ok', expect.any(Number)],
    ])
    expect(detail.usage_events[0].error).toContain('150 ms')
  })

  test('a Responses client without max_output_tokens (Codex’s way) has its answer streamed from the upstream', async () => {
    const h = await translationGateway(sim)
    sim.setScenario(upstreamModelFor.anthropic, { text: 'All of it.' })
    const { openai } = sdkClients(h)
    const response = await openai.responses.create({ model: profileFor.anthropic, input: 'go' })
    expect(response.output_text).toBe('All of it.')
    expect(response.status).toBe('completed')
    expect(sim.requests[0]!.body).toMatchObject({ stream: true })
  })
})

describe('a gathered answer that breaks falls back, the broken leg uncharged', () => {
  const faults: [string, Scenario, string][] = [
    [
      'an in-band error after the answer began',
      { text: 'a b c d e f', chunks: 6, fault: { kind: 'error_event', afterFrames: 4 } },
      'verloaded',
    ],
    [
      'a cut before the message ended',
      { text: 'a b c d e f', chunks: 6, fault: { kind: 'cut', afterFrames: 4 } },
      'before the message was complete',
    ],
    ['a reset mid-answer', { text: 'a b c d e f', chunks: 6, fault: { kind: 'reset', afterFrames: 4 } }, 'ECONNRESET'],
    [
      'a malformed frame',
      { text: 'a b c d e f', chunks: 6, fault: { kind: 'malformed', afterFrames: 4 } },
      'malformed',
    ],
    ['a silence past idle_timeout_ms mid-answer', { text: 'a b', chunks: 2, chunkDelayMs: 2000 }, 'silent for 150 ms'],
  ]
  for (const [name, scenario, said] of faults) {
    for (const kind of ['anthropic', 'openai-chat'] as const) {
      test(`${name} (${kind})`, async () => {
        const h = await rankedProGateway(sim, [
          { id: 'first', kind, quality: 90 },
          { id: 'second', kind: kind === 'anthropic' ? 'openai-responses' : 'anthropic', quality: 80 },
        ])
        h.deps.config.routing.idleTimeoutMs = 150
        h.deps.config.routing.streamUpstreamAboveMaxTokens = 0
        sim.setScenario(upstreamModelFor[kind], scenario)
        sim.setScenario(upstreamModelFor[kind === 'anthropic' ? 'openai-responses' : 'anthropic'], { text: 'served' })
        const res = await h.call('/compat-a/v1/messages', {
          method: 'POST',
          headers: { 'anthropic-version': '2023-06-01' },
          json: { model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user', content: 'go' }] },
        })
        expect(res.status).toBe(200)
        const body = await res.json()
        expect(body.content).toMatchObject([{ type: 'text', text: 'served' }])
        const detail = await requestDetail(h, res.headers.get('x-request-id')!)
        expect(detail.status).toBe('completed')
        expect(detail.usage_events.map((e: Json) => [e.model_id, e.outcome, e.cost_nanos])).toEqual([
          ['first', 'failed', 0],
          ['second', 'ok', expect.any(Number)],
        ])
        expect(detail.usage_events[0].error).toContain(said)
        expect(detail.charged_nanos).toBe(detail.usage_events[1].cost_nanos)
      })
    }
  }
})

test('a client that leaves while its answer is gathered stops the upstream; the request is recorded aborted, charged what came', async () => {
  const h = await slowModelGateway({})
  sim.setScenario('slow-up', { text: 'a b c d e f g h', chunks: 8, chunkDelayMs: 100 })
  const client = new AbortController()
  const answer = h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 8000, messages: [{ role: 'user', content: 'go' }] },
    signal: client.signal,
  })
  await Bun.sleep(250)
  client.abort()
  await answer.catch(() => {})
  expect(await sim.waitForAbort(0, 2000)).toBe(true)
  const [row] = (await (await h.call('/v1/usage/requests')).json()).items
  expect(row).toMatchObject({ status: 'aborted', http_status: 499, error: { message: 'client went away' } })
  // The prompt at least: the upstream had taken it (its message_start came at once).
  expect(row.charged_nanos).toBeGreaterThan(0)
})

// The provider bills what it wrote before the client left, though svc held all of it: charged as a
// stream cut there is (an audit: 25,000 tokens written, the client gone just before the end, cost
// the account nothing).
describe('a client that leaves a gathered answer near its end is charged what the upstream wrote', () => {
  /** An Anthropic stream that writes `frames`, then waits for the end that never comes; `wrote` when written. */
  function stallingUpstream(h: Harness, frames: string[]) {
    h.deps.config.routing.streamUpstreamAboveMaxTokens = 0
    const upstream = { wrote: Promise.withResolvers<void>(), aborted: Promise.withResolvers<void>() }
    h.deps.fetch = (async (_url: string, init: RequestInit) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (const frame of frames) controller.enqueue(new TextEncoder().encode(frame))
          upstream.wrote.resolve()
          init.signal!.addEventListener('abort', () => {
            upstream.aborted.resolve()
            controller.error(new DOMException('aborted', 'AbortError'))
          })
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    }) as unknown as typeof fetch
    return upstream
  }
  // 2,000 characters of text after a prompt counted as 50 tokens: ~500 tokens at 4 characters a token.
  const written = () => [
    ...anthropicStream([], 'end_turn', { input_tokens: 50, output_tokens: 1 }, {}).slice(0, 1),
    sseFrame('content_block_start', {
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'text', text: '' },
    }),
    ...Array.from({ length: 20 }, () =>
      sseFrame('content_block_delta', {
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: 'word '.repeat(20) },
      }),
    ),
  ]
  for (const [route, json] of [
    ['/compat-a/v1/messages', { model: 'svc-pro', max_tokens: 8000, messages: [{ role: 'user', content: 'go' }] }],
    ['/compat-b/v1/responses', { model: 'svc-pro', max_output_tokens: 8000, input: 'go' }],
  ] as const) {
    test(route.endsWith('messages') ? 'passed through' : 'translated', async () => {
      const h = await slowModelGateway({})
      const upstream = stallingUpstream(h, written())
      const client = new AbortController()
      const answer = h.call(route, {
        method: 'POST',
        json,
        signal: client.signal,
        headers: { 'anthropic-version': '2023-06-01' },
      })
      await upstream.wrote.promise
      await Bun.sleep(50)
      client.abort()
      await answer.catch(() => {})
      await upstream.aborted.promise
      const [row] = (await (await h.call('/v1/usage/requests')).json()).items
      const detail = await requestDetail(h, row.request_id)
      expect(detail.usage_events.map((e: Json) => [e.outcome, e.estimated, e.input_tokens, e.output_tokens])).toEqual([
        ['aborted', true, 50, 500],
      ])
      expect(detail).toMatchObject({ status: 'aborted', http_status: 499, charged_nanos: 550 * 1000 })
    })
  }
})

// ---- wire corners the simulator does not play, as exact upstream bytes --------------------------

/** h's upstream streams these frames to every request, which svc gathers for non-streaming clients. */
function scriptedStream(h: Harness, frames: string[], opts: { headerDelayMs?: number } = {}) {
  h.deps.config.routing.streamUpstreamAboveMaxTokens = 0
  return scriptedUpstream(h, () => ({ sse: frames, headerDelayMs: opts.headerDelayMs }))
}

const anthropicStream = (blocks: string[], stop: string, startUsage: Json, endUsage: Json) => [
  sseFrame('message_start', {
    type: 'message_start',
    message: {
      id: 'msg_up',
      type: 'message',
      role: 'assistant',
      model: 'claude-t-up',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: startUsage,
    },
  }),
  ...blocks,
  sseFrame('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null },
    usage: endUsage,
  }),
  sseFrame('message_stop', { type: 'message_stop' }),
]

/** A text block's three frames, its text in one delta. */
const textBlock = (text: string, index = 0) => [
  sseFrame('content_block_start', { type: 'content_block_start', index, content_block: { type: 'text', text: '' } }),
  sseFrame('content_block_delta', { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }),
  sseFrame('content_block_stop', { type: 'content_block_stop', index }),
]

const askMessages = (max_tokens = 1000) => ({
  method: 'POST',
  headers: { 'anthropic-version': '2023-06-01' },
  json: { model: profileFor.anthropic, max_tokens, messages: [{ role: 'user', content: 'write the file' }] },
})

/** A tool call's block opening and its arguments in one delta, as Anthropic streams them (index 0). */
const toolCallFrames = (name: string, partialJson: string) => [
  sseFrame('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: { type: 'tool_use', id: 'toolu_1', name, input: {} },
  }),
  sseFrame('content_block_delta', {
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'input_json_delta', partial_json: partialJson },
  }),
]

describe('gathered from exact upstream bytes', () => {
  const cutInput = '{"file_path":"/a.txt","content":"lorem ipsum dol'

  test('a tool call cut by max_tokens (a long file write): 200, stop_reason max_tokens, the input {}, the whole output charged', async () => {
    const h = await translationGateway(sim)
    scriptedStream(
      h,
      anthropicStream(
        [
          ...toolCallFrames('Write', cutInput),
          sseFrame('content_block_stop', { type: 'content_block_stop', index: 0 }),
        ],
        'max_tokens',
        { input_tokens: 10, output_tokens: 1 },
        { output_tokens: 1000 },
      ),
    )
    const res = await h.call('/compat-a/v1/messages', askMessages())
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toMatchObject({
      stop_reason: 'max_tokens',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'Write', input: {} }],
    })
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.usage_events).toEqual([
      expect.objectContaining({ outcome: 'ok', estimated: false, input_tokens: 10, output_tokens: 1000 }),
    ])
  })

  test('a Chat tool call cut by the length limit: the Anthropic client gets max_tokens and the input {}', async () => {
    const h = await translationGateway(sim)
    const chunk = (delta: Json, finish: string | null = null, extra: Json = {}) =>
      sseFrame(undefined, {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-chat-t-up',
        choices: [{ index: 0, delta, finish_reason: finish }],
        ...extra,
      })
    scriptedStream(h, [
      chunk({
        role: 'assistant',
        tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'Write', arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: cutInput } }] }),
      chunk({}, 'length'),
      sseFrame(undefined, {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'gpt-chat-t-up',
        choices: [],
        usage: { prompt_tokens: 10, completion_tokens: 1000, total_tokens: 1010 },
      }),
      sseFrame(undefined, '[DONE]'),
    ])
    const res = await h.call('/compat-a/v1/messages', {
      ...askMessages(),
      json: { ...askMessages().json, model: profileFor['openai-chat'] },
    })
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      stop_reason: 'max_tokens',
      content: [{ type: 'tool_use', name: 'Write', input: {} }],
    })
  })

  test('a tool call whose block a compatible server never closes (no content_block_stop) keeps its arguments', async () => {
    const h = await translationGateway(sim)
    scriptedStream(
      h,
      anthropicStream(
        [...toolCallFrames('get_weather', '{"city":"Zürich"}')],
        'tool_use',
        { input_tokens: 10, output_tokens: 1 },
        { output_tokens: 5 },
      ),
    )
    const call = request('responses', 'anthropic')
    const res = await h.call(call.path, { method: 'POST', ...call })
    expect(res.status).toBe(200)
    expect((await res.json()).output).toMatchObject([
      { type: 'function_call', call_id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Zürich"}' },
    ])
  })

  test('message_delta usage with nulls (the SDK types allow them) keeps the counts message_start gave', async () => {
    const h = await translationGateway(sim)
    scriptedStream(
      h,
      anthropicStream(
        [...textBlock('Done.')],
        'end_turn',
        { input_tokens: 10, cache_read_input_tokens: 50, output_tokens: 1 },
        { input_tokens: null, cache_read_input_tokens: null, output_tokens: 5, server_tool_use: null },
      ),
    )
    const res = await h.call('/compat-a/v1/messages', askMessages())
    expect((await res.json()).usage).toEqual({ input_tokens: 10, cache_read_input_tokens: 50, output_tokens: 5 })
  })

  test('an answer past 64 MB is refused as a JSON answer of that size is: a 502, nothing charged', async () => {
    const h = await translationGateway(sim)
    const piece = 'x'.repeat(1024 * 1024)
    const delta = sseFrame('content_block_delta', {
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'text_delta', text: piece },
    })
    scriptedStream(
      h,
      anthropicStream(
        [
          sseFrame('content_block_start', {
            type: 'content_block_start',
            index: 0,
            content_block: { type: 'text', text: '' },
          }),
          ...Array.from({ length: 65 }, () => delta),
        ],
        'end_turn',
        { input_tokens: 10, output_tokens: 1 },
        { output_tokens: 16_000_000 },
      ),
    )
    const res = await h.call('/compat-a/v1/messages', askMessages())
    expect(res.status).toBe(502)
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'upstream answer is larger than 64 MB' },
    })
    expect(await requestDetail(h, res.headers.get('x-request-id')!)).toMatchObject({
      status: 'failed',
      charged_nanos: 0,
    })
  })

  test('a compatible Responses server whose response.completed has its output left empty: the items its events gave', async () => {
    const h = await translationGateway(sim)
    const item = {
      type: 'message',
      id: 'msg_up',
      status: 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: 'Hello', annotations: [] }],
    }
    const response = (status: string, output: unknown[]) => ({
      id: 'resp_up',
      object: 'response',
      created_at: 1,
      status,
      model: 'gpt-resp-t-up',
      output,
      usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 },
    })
    const event = (type: string, sequence: number, rest: Json) =>
      sseFrame(type, { type, sequence_number: sequence, ...rest })
    scriptedStream(h, [
      event('response.created', 0, { response: response('in_progress', []) }),
      event('response.output_item.added', 1, {
        output_index: 0,
        item: { ...item, status: 'in_progress', content: [] },
      }),
      event('response.output_text.delta', 2, { output_index: 0, content_index: 0, item_id: 'msg_up', delta: 'Hello' }),
      event('response.output_item.done', 3, { output_index: 0, item }),
      event('response.completed', 4, { response: response('completed', []) }),
    ])
    const { openai } = sdkClients(h)
    const answer = await openai.responses.create({ model: profileFor['openai-responses'], input: 'hi' })
    expect(answer.output_text).toBe('Hello')
    expect(answer.output).toMatchObject([{ type: 'message', content: [{ type: 'output_text', text: 'Hello' }] }])
  })

  test("a block index far out of range is the upstream's fault, refused at once, not billions of slots", async () => {
    const h = await translationGateway(sim)
    scriptedStream(
      h,
      anthropicStream(
        [
          sseFrame('content_block_start', {
            type: 'content_block_start',
            index: 4_294_967_294,
            content_block: { type: 'text', text: '' },
          }),
        ],
        'end_turn',
        { input_tokens: 1, output_tokens: 1 },
        { output_tokens: 1 },
      ),
    )
    const started = performance.now()
    const res = await h.call('/compat-a/v1/messages', askMessages())
    expect(performance.now() - started).toBeLessThan(1000)
    expect(res.status).toBe(502)
    expect((await res.json()).error.message).toContain('content block index out of range')
  })

  test('a message_delta without its output count: the client is told the count the ledger bills', async () => {
    const h = await translationGateway(sim)
    const text = 'Forty characters of answer, more or less.'
    scriptedStream(h, anthropicStream(textBlock(text), 'end_turn', { input_tokens: 12, output_tokens: 1 }, {}))
    const res = await h.call('/compat-a/v1/messages', askMessages())
    const body = await res.json()
    const leg = (await requestDetail(h, res.headers.get('x-request-id')!)).usage_events[0]
    expect(leg).toMatchObject({ estimated: true, input_tokens: 12, output_tokens: Math.ceil(text.length / 4) })
    expect(body.usage).toMatchObject({ input_tokens: 12, output_tokens: leg.output_tokens })
  })

  test('an upstream that answers JSON when asked for a stream is served as a JSON call is', async () => {
    const h = await translationGateway(sim)
    h.deps.config.routing.streamUpstreamAboveMaxTokens = 0
    const sent = scriptedUpstream(h, () => ({
      json: {
        id: 'msg_up',
        type: 'message',
        role: 'assistant',
        model: 'claude-t-up',
        content: [{ type: 'text', text: 'No stream here.' }],
        stop_reason: 'end_turn',
        stop_sequence: null,
        usage: { input_tokens: 3, output_tokens: 4 },
      },
    }))
    const res = await h.call('/compat-a/v1/messages', askMessages())
    expect(res.status).toBe(200)
    expect((await res.json()).content).toEqual([{ type: 'text', text: 'No stream here.' }])
    expect(sent[0]).toMatchObject({ stream: true })
  })

  test('headers slower than connect_timeout_ms (a server that sends them with its first token) are within first_byte_timeout_ms, as for JSON', async () => {
    const h = await translationGateway(sim)
    h.deps.config.routing.connectTimeoutMs = 100
    h.deps.config.routing.firstByteTimeoutMs = 2000
    scriptedStream(
      h,
      anthropicStream(textBlock('ok'), 'end_turn', { input_tokens: 1, output_tokens: 1 }, { output_tokens: 1 }),
      {
        headerDelayMs: 300,
      },
    )
    const res = await h.call('/compat-a/v1/messages', askMessages())
    expect(res.status).toBe(200)
    expect((await res.json()).content).toMatchObject([{ type: 'text', text: 'ok' }])
  })
})
