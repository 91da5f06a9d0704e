// The responses route end to end, as a user sees it: the official OpenAI SDK (and raw bytes) in,
// each of the three upstream kinds out through the simulator, ids, usage, error bodies and the
// ledger row with its legs and costs to the nano. Also the messages route answered by a Responses
// upstream, with the Anthropic SDK as the client.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type {
  Response as OpenAIResponse,
  ResponseCreateParamsNonStreaming,
  ResponseFunctionToolCall,
  ResponseInputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses'
import type { ConfigFile } from '../src/config/schema'
import { createHarness, type Harness } from './support/harness'
import { parseFrames, type SseFrame } from './support/sse-frames'
import { type Simulator, startSimulator } from './support/simulator'

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/
const GRANT_NANOS = 5_000_000_000

let sim: Simulator

beforeAll(() => {
  sim = startSimulator({ apiKey: 'sim-key' })
})
afterAll(async () => {
  await sim.stop()
})
beforeEach(() => {
  sim.reset()
})

interface Price {
  input: number
  output: number
  cacheRead: number
  cacheWrite: number
}

interface Upstream {
  kind: 'anthropic' | 'openai-chat' | 'openai-responses'
  profile: string
  mode: string
  modelId: string
  providerId: string
  upstreamModel: string
  /** Nanos per token, as configured below in USD per Mtok. */
  price: Price
}

// One model per profile, so each profile reaches exactly one upstream kind.
const upstreams: Upstream[] = [
  {
    kind: 'anthropic',
    profile: 'svc-max',
    mode: 'max',
    modelId: 'claude-x',
    providerId: 'anth',
    upstreamModel: 'claude-x-up',
    price: { input: 3000, output: 15000, cacheRead: 300, cacheWrite: 3750 },
  },
  {
    kind: 'openai-chat',
    profile: 'svc-pro',
    mode: 'pro',
    modelId: 'gpt-y',
    providerId: 'chat',
    upstreamModel: 'gpt-y-up',
    price: { input: 1250, output: 10000, cacheRead: 125, cacheWrite: 1250 },
  },
  {
    kind: 'openai-responses',
    profile: 'svc-ultra-saver',
    mode: 'ultra_saver',
    modelId: 'gpt-r',
    providerId: 'resp',
    upstreamModel: 'gpt-r-up',
    price: { input: 400, output: 1600, cacheRead: 100, cacheWrite: 500 },
  },
]

const byKind = (kind: Upstream['kind']) => upstreams.find((u) => u.kind === kind)!

const usd = (nanosPerToken: number) => nanosPerToken / 1000

function baseConfig(): ConfigFile {
  return {
    catalog: { builtin: false },
    providers: {
      anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
      chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
      resp: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY', openai_itself: true },
    },
    models: upstreams.map((u) => ({
      id: u.modelId,
      provider: u.providerId,
      upstream_model: u.upstreamModel,
      profiles: [u.mode as 'max' | 'pro' | 'ultra_saver'],
      quality: 80,
      thinking: true,
      vision: true,
      input_usd_per_mtok: usd(u.price.input),
      output_usd_per_mtok: usd(u.price.output),
      cache_read_usd_per_mtok: usd(u.price.cacheRead),
      cache_write_usd_per_mtok: usd(u.price.cacheWrite),
    })),
  }
}

async function setup(opts: { config?: ConfigFile; grantUsd?: number | null } = {}) {
  const h = await createHarness({
    config: opts.config ?? baseConfig(),
    env: { SIM_KEY: 'sim-key' },
    grantUsd: opts.grantUsd === null ? undefined : (opts.grantUsd ?? 5),
  })
  const fetchApp = (url: string | URL | Request, init?: RequestInit) =>
    h.app.handle(url instanceof Request ? new Request(url, init) : new Request(url.toString(), init))
  const openai = new OpenAI({ apiKey: h.key, baseURL: 'http://localhost/compat-b/v1', fetch: fetchApp, maxRetries: 0 })
  const anthropic = new Anthropic({
    apiKey: h.key,
    baseURL: 'http://localhost/compat-a',
    fetch: fetchApp,
    maxRetries: 0,
  })
  return { h, openai, anthropic }
}

async function ledgerRow(h: Harness, requestId: string) {
  const res = await h.call(`/v1/usage/requests/${requestId}`)
  expect(res.status).toBe(200)
  return res.json()
}

async function grantRemaining(h: Harness): Promise<number> {
  return (await (await h.call('/v1/usage')).json()).remaining_nanos
}

/** Usage every scenario reports, in the simulator's (Anthropic) semantics. */
const usage = { input: 12, cacheRead: 200, cacheWrite: 30, output: 9, reasoning: 4 }
const costOf = (p: Price, u = usage) =>
  u.input * p.input + u.cacheRead * p.cacheRead + u.cacheWrite * p.cacheWrite + u.output * p.output

/** What the Responses client sees, whatever the upstream: input_tokens counts cache reads and writes. */
const clientUsage = {
  input_tokens: 242,
  input_tokens_details: { cached_tokens: 200, cache_write_tokens: 30 },
  output_tokens: 9,
  output_tokens_details: { reasoning_tokens: 4 },
  total_tokens: 251,
}

function expectedLedger(u: Upstream, requestId: string, stream: boolean) {
  const cost = costOf(u.price)
  return {
    request_id: requestId,
    status: 'completed',
    http_status: 200,
    surface: 'responses',
    routing_mode: u.mode,
    stream,
    selected_model_id: u.modelId,
    selected_provider_id: u.providerId,
    attempts: 1,
    total_cost_nanos: cost,
    charged_nanos: cost,
    total_input_tokens: 12,
    total_cached_input_tokens: 200,
    total_cache_creation_input_tokens: 30,
    total_output_tokens: 9,
    error: null,
    usage_events: [
      {
        attempt: 1,
        model_id: u.modelId,
        provider_id: u.providerId,
        upstream_model: u.upstreamModel,
        estimated: false,
        outcome: 'ok',
        error: null,
        input_tokens: 12,
        cached_input_tokens: 200,
        cache_creation_input_tokens: 30,
        output_tokens: 9,
        web_search_requests: 0,
        cost_nanos: cost,
        charged_nanos: cost,
      },
    ],
    grant_charges: [{ cost_type: 'model_usage', amount_nanos: cost }],
  }
}

type Mode = 'create' | 'stream'

/** One call through the SDK, non-streaming (with the X-Request-Id header) or streamed to a final response. */
async function ask(openai: OpenAI, mode: Mode, params: Omit<ResponseCreateParamsNonStreaming, 'stream'>) {
  if (mode === 'create') {
    const { data, response } = await openai.responses.create(params).withResponse()
    return { response: data, requestIdHeader: response.headers.get('x-request-id') }
  }
  const response = await openai.responses.stream(params).finalResponse()
  return { response: response as OpenAIResponse, requestIdHeader: null }
}

/** The request id a response names: resp_<ulid>, checked against the header when there is one. */
function requestIdOf(response: OpenAIResponse, header: string | null): string {
  expect(response.id).toMatch(/^resp_[0-9A-HJKMNP-TV-Z]{26}$/)
  const id = response.id.slice('resp_'.length)
  expect(id).toMatch(ULID)
  if (header !== null) expect(header).toBe(id)
  return id
}

const messagesOf = (r: OpenAIResponse) => r.output.filter((o): o is ResponseOutputMessage => o.type === 'message')
const callsOf = (r: OpenAIResponse) => r.output.filter((o): o is ResponseFunctionToolCall => o.type === 'function_call')

const weatherTool = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Current weather for a city',
  parameters: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
  strict: false,
}

describe.each(upstreams)('responses route via a $kind upstream ($profile)', (u) => {
  describe.each(['create', 'stream'] as const)('%s', (mode) => {
    test('text: ids from X-Request-Id, model is the profile, usage, ledger to the nano', async () => {
      const { h, openai } = await setup()
      sim.setScenario(u.upstreamModel, { text: 'Bonjour from upstream, café ☕', usage })
      const { response, requestIdHeader } = await ask(openai, mode, {
        model: u.profile,
        input: 'Say hello',
        instructions: 'Be brief.',
        max_output_tokens: 300,
        temperature: 0.5,
        top_p: 0.9,
        metadata: { ticket: 'T-1' },
      })
      if (mode === 'create') expect(requestIdHeader).toMatch(ULID)
      const id = requestIdOf(response, requestIdHeader)
      expect(response.model).toBe(u.profile)
      expect(response.status).toBe('completed')
      expect(response.output_text).toBe('Bonjour from upstream, café ☕')
      const messages = messagesOf(response)
      expect(messages.map((m) => [m.id, m.status, m.role, m.content])).toEqual([
        [
          `msg_${id}`,
          'completed',
          'assistant',
          [expect.objectContaining({ type: 'output_text', text: 'Bonjour from upstream, café ☕' })],
        ],
      ])
      expect(response.usage).toEqual(clientUsage)
      // Request fields the Response echoes.
      expect([
        response.instructions,
        response.max_output_tokens,
        response.temperature,
        response.top_p,
        response.metadata,
      ]).toEqual(['Be brief.', 300, 0.5, 0.9, { ticket: 'T-1' }])

      expect(await ledgerRow(h, id)).toMatchObject(expectedLedger(u, id, mode === 'stream'))
      expect(await grantRemaining(h)).toBe(GRANT_NANOS - costOf(u.price))
    })

    test('function call round trip: function_call, then function_call_output', async () => {
      const { h, openai } = await setup()
      sim.queue(
        u.upstreamModel,
        { toolCall: { name: 'get_weather', arguments: { city: 'Paris' } }, usage },
        { text: 'It is 18 °C in Paris.', usage },
      )
      const question: ResponseInputItem = { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] }
      const params = {
        model: u.profile,
        instructions: 'You answer weather questions.',
        tools: [weatherTool],
        tool_choice: 'auto' as const,
        max_output_tokens: 400,
      }
      const first = await ask(openai, mode, { ...params, input: [question] })
      const firstId = requestIdOf(first.response, first.requestIdHeader)
      expect(first.response.model).toBe(u.profile)
      expect(messagesOf(first.response)).toEqual([])
      const calls = callsOf(first.response)
      expect(calls).toHaveLength(1)
      const call = calls[0]!
      expect(call).toMatchObject({
        type: 'function_call',
        name: 'get_weather',
        arguments: '{"city":"Paris"}',
        status: 'completed',
      })
      // The call id is the upstream's own (the client echoes it back); translated items get the gateway's item id.
      expect(call.call_id).toMatch(u.kind === 'anthropic' ? /^toolu_sim/ : /^call_sim/)
      if (u.kind !== 'openai-responses') expect(call.id).toBe(`fc_${firstId}_0`)
      expect(first.response.usage).toEqual(clientUsage)

      const output: ResponseInputItem = { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c":18}' }
      const second = await ask(openai, mode, { ...params, input: [question, call, output] })
      const secondId = requestIdOf(second.response, second.requestIdHeader)
      expect(secondId).not.toBe(firstId)
      expect(second.response.output_text).toBe('It is 18 °C in Paris.')
      expect(messagesOf(second.response).map((m) => m.id)).toEqual([`msg_${secondId}`])
      expect(callsOf(second.response)).toEqual([])

      // What the upstream received for the follow-up, in its own dialect.
      expect(sim.requests).toHaveLength(2)
      const body = sim.requests[1]!.body as Record<string, unknown>
      const stream = mode === 'stream'
      if (u.kind === 'anthropic') {
        expect(body).toEqual({
          model: 'claude-x-up',
          max_tokens: 400,
          system: [{ type: 'text', text: 'You answer weather questions.' }],
          messages: [
            { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
            {
              role: 'assistant',
              content: [{ type: 'tool_use', id: call.call_id, name: 'get_weather', input: { city: 'Paris' } }],
            },
            {
              role: 'user',
              content: [
                { type: 'tool_result', tool_use_id: call.call_id, content: [{ type: 'text', text: '{"temp_c":18}' }] },
              ],
            },
          ],
          tools: [
            { name: 'get_weather', description: 'Current weather for a city', input_schema: weatherTool.parameters },
          ],
          tool_choice: { type: 'auto' },
          stream,
        })
      } else if (u.kind === 'openai-chat') {
        expect(body).toEqual({
          model: 'gpt-y-up',
          messages: [
            { role: 'system', content: 'You answer weather questions.' },
            { role: 'user', content: 'Weather in Paris?' },
            {
              role: 'assistant',
              content: null,
              tool_calls: [
                {
                  id: call.call_id,
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                },
              ],
            },
            { role: 'tool', tool_call_id: call.call_id, content: '{"temp_c":18}' },
          ],
          max_tokens: 400,
          tools: [
            {
              type: 'function',
              function: {
                name: 'get_weather',
                description: 'Current weather for a city',
                parameters: weatherTool.parameters,
              },
            },
          ],
          tool_choice: 'auto',
          ...(stream ? { stream: true, stream_options: { include_usage: true } } : { stream: false }),
        })
      } else {
        // Pass-through: the client's own body; only the model changes.
        expect(body).toEqual({
          ...params,
          model: 'gpt-r-up',
          input: [question, JSON.parse(JSON.stringify(call)), output],
          ...(stream ? { stream: true } : {}),
        })
      }

      for (const id of [firstId, secondId]) {
        expect(await ledgerRow(h, id)).toMatchObject(expectedLedger(u, id, stream))
      }
      expect(await grantRemaining(h)).toBe(GRANT_NANOS - 2 * costOf(u.price))
    })
  })
})

const streamRequest = (model: string, extra: Record<string, unknown> = {}) => ({
  method: 'POST',
  json: { model, input: 'Tell me about foxes', stream: true, ...extra },
})

describe('streams on the wire', () => {
  test.each(['anthropic', 'openai-chat'] as const)(
    'translated from %s: the full event order, strictly increasing sequence_number',
    async (kind) => {
      const u = byKind(kind)
      const { h } = await setup()
      const text = 'The quick brown fox jumps over the lazy dog'
      sim.setScenario(u.upstreamModel, { text, chunks: 4, usage, split: 'mid-line' })
      const res = await h.call('/compat-b/v1/responses', streamRequest(u.profile))
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      const id = res.headers.get('x-request-id')!
      expect(id).toMatch(ULID)
      const frames = parseFrames(await res.text())
      const types = frames.map((f) => f.data.type)
      expect(types).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ])
      for (const f of frames) expect(f.event).toBe(f.data.type as string)
      expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i))

      const msgId = `msg_${id}`
      const [created, inProgress, added, partAdded, ...rest] = frames
      for (const f of [created!, inProgress!]) {
        expect(f.data.response).toMatchObject({
          id: `resp_${id}`,
          object: 'response',
          status: 'in_progress',
          model: u.profile,
          output: [],
          usage: null,
        })
      }
      expect(added!.data).toMatchObject({
        output_index: 0,
        item: { id: msgId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
      })
      expect(partAdded!.data).toMatchObject({
        item_id: msgId,
        output_index: 0,
        content_index: 0,
        part: { type: 'output_text', text: '' },
      })
      const deltas = rest.filter((f) => f.data.type === 'response.output_text.delta')
      expect(deltas.map((f) => f.data.delta).join('')).toBe(text)
      for (const d of deltas) expect(d.data).toMatchObject({ item_id: msgId, output_index: 0, content_index: 0 })
      const byType = (t: string) => frames.find((f) => f.data.type === t)!.data
      expect(byType('response.output_text.done')).toMatchObject({ item_id: msgId, text })
      expect(byType('response.content_part.done')).toMatchObject({
        item_id: msgId,
        part: { type: 'output_text', text },
      })
      const completedItem = {
        id: msgId,
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [expect.objectContaining({ type: 'output_text', text })],
      }
      expect(byType('response.output_item.done')).toMatchObject({ output_index: 0, item: completedItem })
      expect(byType('response.completed').response).toMatchObject({
        id: `resp_${id}`,
        status: 'completed',
        model: u.profile,
        output: [completedItem],
        usage: clientUsage,
      })
      // The upstream's ids and model never reach the client.
      const all = frames.map((f) => f.raw).join('')
      expect(all).not.toContain(u.upstreamModel)
      expect(all).not.toMatch(/msg_sim|chatcmpl-sim/)
    },
  )

  test('translated with reasoning and a tool call: every item in order, one sequence', async () => {
    const u = byKind('anthropic')
    const { h } = await setup()
    sim.setScenario(u.upstreamModel, {
      thinking: 'Paris weather needs a lookup.',
      toolCall: { name: 'get_weather', arguments: { city: 'Paris' } },
      usage,
    })
    const res = await h.call(
      '/compat-b/v1/responses',
      streamRequest(u.profile, { tools: [weatherTool], reasoning: { effort: 'low' } }),
    )
    const id = res.headers.get('x-request-id')!
    const frames = parseFrames(await res.text())
    expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i))
    expect(frames.map((f) => f.data.type).filter((t) => !String(t).endsWith('.delta'))).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ])
    const completed = frames.at(-1)!.data.response as { output: unknown[]; usage: unknown }
    expect(completed.output).toEqual([
      {
        id: `rs_${id}_0`,
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'Paris weather needs a lookup.' }],
      },
      {
        id: `fc_${id}_1`,
        type: 'function_call',
        status: 'completed',
        arguments: '{"city":"Paris"}',
        call_id: expect.stringMatching(/^toolu_sim/),
        name: 'get_weather',
      },
    ])
    expect(completed.usage).toEqual(clientUsage)
    // reasoning.effort became low's thinking budget upstream: claude-x is not configured with adaptive_thinking.
    expect(sim.requests[0]!.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 } })
    expect(sim.requests[0]!.body).not.toHaveProperty('output_config')
  })

  test('pass-through: non-lifecycle frames byte for byte; ids and model rewritten wherever the client sees them', async () => {
    const u = byKind('openai-responses')
    const { h } = await setup()
    // Tap the upstream bytes so the client's stream can be compared with what the upstream sent.
    const upstreamTexts: Promise<string>[] = []
    const realFetch = h.deps.fetch
    h.deps.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await realFetch(input, init)
      if (!res.body) return res
      const [mine, theirs] = res.body.tee()
      upstreamTexts.push(new Response(mine).text())
      return new Response(theirs, { status: res.status, headers: res.headers })
    }) as typeof fetch
    sim.setScenario(u.upstreamModel, {
      thinking: 'Foxes: be accurate.',
      text: 'Foxes are small omnivores.',
      toolCall: { name: 'get_weather', arguments: { city: 'Oslo' } },
      usage,
      split: 'per-byte',
    })
    const res = await h.call('/compat-b/v1/responses', streamRequest(u.profile, { tools: [weatherTool] }))
    expect(res.status).toBe(200)
    const id = res.headers.get('x-request-id')!
    const clientText = await res.text()
    const upstreamText = await upstreamTexts[0]!
    const mine = parseFrames(clientText)
    const theirs = parseFrames(upstreamText)
    expect(mine.map((f) => f.data.type)).toEqual(theirs.map((f) => f.data.type))
    // Sequence numbers are the upstream's, already strictly increasing.
    expect(mine.map((f) => f.data.sequence_number)).toEqual(theirs.map((f) => f.data.sequence_number))
    expect(mine.map((f) => f.data.sequence_number)).toEqual(mine.map((_, i) => i))

    const upstreamResponseId = (theirs[0]!.data.response as { id: string }).id
    const upstreamMessageId = (
      theirs.find((f) => (f.data.item as { type?: string } | undefined)?.type === 'message')!.data.item as {
        id: string
      }
    ).id
    expect(upstreamResponseId).toMatch(/^resp_sim/)
    expect(upstreamMessageId).toMatch(/^msg_sim/)
    const lifecycle = new Set(['response.created', 'response.in_progress', 'response.completed'])
    const messageScoped = (f: SseFrame) =>
      f.data.item_id === upstreamMessageId || (f.data.item as { id?: string } | undefined)?.id === upstreamMessageId
    let rewritten = 0
    theirs.forEach((up, i) => {
      const down = mine[i]!
      if (lifecycle.has(up.data.type as string)) {
        const swap = (v: unknown) =>
          JSON.parse(
            JSON.stringify(v).replaceAll(upstreamResponseId, `resp_${id}`).replaceAll(upstreamMessageId, `msg_${id}`),
          )
        expect(down.data).toEqual({ ...swap(up.data), response: { ...swap(up.data.response), model: u.profile } })
        rewritten++
      } else if (messageScoped(up)) {
        expect(down.data).toEqual(JSON.parse(JSON.stringify(up.data).replaceAll(upstreamMessageId, `msg_${id}`)))
        rewritten++
      } else {
        // Reasoning and function-call frames: exactly the upstream's bytes.
        expect(down.raw).toBe(up.raw)
      }
    })
    expect(rewritten).toBeGreaterThan(6)
    expect(clientText).not.toContain(upstreamResponseId)
    expect(clientText).not.toContain(upstreamMessageId)
    expect(clientText).not.toContain(u.upstreamModel)
    const completed = mine.at(-1)!.data.response as { usage: unknown; output: { type: string; id: string }[] }
    expect(completed.usage).toEqual(clientUsage)
    expect(completed.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call'])
    expect(completed.output[1]!.id).toBe(`msg_${id}`)
    expect(await ledgerRow(h, id)).toMatchObject(expectedLedger(u, id, true))
  })

  test('pass-through JSON: upstream ids and model replaced, the rest is the upstream body', async () => {
    const u = byKind('openai-responses')
    const { h } = await setup()
    sim.setScenario(u.upstreamModel, { text: 'plain', usage })
    const res = await h.call('/openai/v1/responses', {
      method: 'POST',
      json: { model: u.profile, input: 'hi', store: false },
    })
    expect(res.status).toBe(200)
    const id = res.headers.get('x-request-id')!
    const text = await res.text()
    expect(text).not.toContain(u.upstreamModel)
    expect(text).not.toMatch(/resp_sim|msg_sim/)
    const body = JSON.parse(text)
    expect(body).toMatchObject({
      id: `resp_${id}`,
      object: 'response',
      model: u.profile,
      status: 'completed',
      store: false,
      output: [{ id: `msg_${id}`, type: 'message', content: [{ type: 'output_text', text: 'plain' }] }],
      usage: clientUsage,
    })
  })
})

describe('request features reach the upstream', () => {
  test('anthropic: input_image parts, reasoning.effort, temperature/top_p, tool_choice by name', async () => {
    const u = byKind('anthropic')
    const { openai } = await setup()
    sim.setScenario(u.upstreamModel, { text: 'A red pixel.', usage })
    const pixel = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
    const r = await openai.responses.create({
      model: u.profile,
      instructions: 'Describe images.',
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is this?' },
            { type: 'input_image', image_url: `data:image/png;base64,${pixel}`, detail: 'auto' },
          ],
        },
      ],
      tools: [weatherTool],
      tool_choice: { type: 'function', name: 'get_weather' },
      temperature: 0.2,
      max_output_tokens: 100,
    })
    expect(r.output_text).toBe('A red pixel.')
    expect(sim.requests[0]!.body).toMatchObject({
      model: 'claude-x-up',
      max_tokens: 100,
      system: [{ type: 'text', text: 'Describe images.' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: pixel } },
          ],
        },
      ],
      tool_choice: { type: 'tool', name: 'get_weather' },
      temperature: 0.2,
    })
  })

  // openai-node's parse helpers mark a tool strict; held to its schema at OpenAI, it must be on Chat too.
  test('openai-chat: a tool the client marked strict is strict there; another is sent as it was', async () => {
    const u = byKind('openai-chat')
    const { openai } = await setup()
    sim.setScenario(u.upstreamModel, { text: 'ok', usage })
    const parameters = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    }
    await openai.responses.create({
      model: u.profile,
      input: 'hi',
      tools: [
        { type: 'function', name: 'get_weather', parameters, strict: true },
        { type: 'function', name: 'ping', parameters: { type: 'object' }, strict: false },
      ],
    })
    const sent = sim.requests[0]!.body as { tools: { function: Record<string, unknown> }[] }
    expect(sent.tools.map((t) => t.function)).toEqual([
      { name: 'get_weather', parameters, strict: true },
      { name: 'ping', parameters: { type: 'object' } },
    ])
  })

  // Codex sends reasoning.effort on every turn; a Claude 4.5 model answers adaptive thinking with a 400.
  test('anthropic: reasoning.effort is a thinking budget, or adaptive + output_config.effort where the model takes it', async () => {
    const u = byKind('anthropic')
    const params = { model: u.profile, input: 'hi', reasoning: { effort: 'high' as const }, max_output_tokens: 1000 }

    const { openai } = await setup()
    sim.setScenario(u.upstreamModel, { thinking: 'Short.', text: 'ok', usage })
    const r = await openai.responses.create(params)
    expect(r.status).toBe('completed')
    expect(r.output_text).toBe('ok')
    const budgeted = sim.requests[0]!.body as Record<string, unknown>
    // The budget stays below max_tokens: raised by it, the answer keeps its 1000.
    expect(budgeted).toMatchObject({
      model: 'claude-x-up',
      max_tokens: 5096,
      thinking: { type: 'enabled', budget_tokens: 4096 },
    })
    expect(budgeted).not.toHaveProperty('output_config')

    const config = baseConfig()
    config.models = config.models?.map((m) => (m.id === u.modelId ? { ...m, adaptive_thinking: true } : m))
    const adaptive = await setup({ config })
    const again = await adaptive.openai.responses.create(params)
    expect(again.output_text).toBe('ok')
    expect(sim.requests).toHaveLength(2)
    expect(sim.requests[1]!.body).toMatchObject({
      model: 'claude-x-up',
      max_tokens: 1000,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    })
  })

  test('chat: reasoning.effort, top_p, tool_choice required, parallel_tool_calls false', async () => {
    const u = byKind('openai-chat')
    const { openai } = await setup()
    sim.setScenario(u.upstreamModel, { text: 'ok', usage })
    await openai.responses.create({
      model: u.profile,
      input: 'hi',
      tools: [weatherTool],
      tool_choice: 'required',
      parallel_tool_calls: false,
      reasoning: { effort: 'high' },
      top_p: 0.8,
      max_output_tokens: 50,
    })
    expect(sim.requests[0]!.body).toMatchObject({
      model: 'gpt-y-up',
      messages: [{ role: 'user', content: 'hi' }],
      max_tokens: 50,
      top_p: 0.8,
      reasoning_effort: 'high',
      tool_choice: 'required',
      parallel_tool_calls: false,
    })
  })
})

describe('reasoning items replayed as reasoning_content (DeepSeek-style openai-chat upstream)', () => {
  test.each([true, false])('reasoning_content = %p: a function call round trip', async (reasoningContent) => {
    const u = byKind('openai-chat')
    const config = baseConfig()
    config.providers!.chat!.reasoning_content = reasoningContent
    const { openai } = await setup({ config })
    const thought = 'Need the weather first; call get_weather for Paris.'
    sim.queue(u.upstreamModel, {
      thinking: thought,
      toolCall: { id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } },
      usage,
    })
    const question: ResponseInputItem = { role: 'user', content: 'Weather in Paris?' }
    const first = await openai.responses.create({ model: u.profile, input: [question], tools: [weatherTool] })
    // Codex keeps the reasoning item and the function call in its history and sends both back.
    expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call'])
    expect(first.output[0]).toMatchObject({ summary: [{ type: 'summary_text', text: thought }] })

    sim.queue(u.upstreamModel, { text: '18°C.', usage })
    await openai.responses.create({
      model: u.profile,
      tools: [weatherTool],
      input: [
        question,
        ...(first.output as ResponseInputItem[]),
        { type: 'function_call_output', call_id: 'call_paris', output: '18°C' },
      ],
    })
    const assistant = (sim.requests[1]!.body as { messages: Record<string, unknown>[] }).messages[1]
    expect(assistant).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
      ...(reasoningContent ? { reasoning_content: thought } : {}),
    })
  })
})

// Codex runs stateless (store:false) and asks for include:["reasoning.encrypted_content"]: Claude's
// thinking signature must ride the reasoning item's encrypted_content and come back with the replayed
// history, else the Anthropic request loses its signed thinking block and thinking goes off after the
// first tool call.
describe('anthropic thinking signatures round-trip through encrypted_content (Codex tool loop)', () => {
  test.each(['create', 'stream'] as const)('%s', async (mode) => {
    const u = byKind('anthropic')
    const { h, openai } = await setup()
    // Tap what the upstream answered, to know the signature it made.
    const upstreamTexts: Promise<string>[] = []
    const realFetch = h.deps.fetch
    h.deps.fetch = (async (input: string | URL | Request, init?: RequestInit) => {
      const res = await realFetch(input, init)
      upstreamTexts.push(res.clone().text())
      return res
    }) as typeof fetch
    const thought = 'Paris weather needs a lookup.'
    sim.queue(
      u.upstreamModel,
      { thinking: thought, toolCall: { name: 'get_weather', arguments: { city: 'Paris' } }, usage },
      { text: 'It is 18 °C in Paris.', usage },
    )
    const question: ResponseInputItem = { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] }
    const params = {
      model: u.profile,
      tools: [weatherTool],
      reasoning: { effort: 'low' as const },
      include: ['reasoning.encrypted_content' as const],
      store: false,
      max_output_tokens: 400,
    }

    const first = await ask(openai, mode, { ...params, input: [question] })
    expect(first.response.output.map((item) => item.type)).toEqual(['reasoning', 'function_call'])
    const signature = /"signature":"([^"]+)"/.exec(await upstreamTexts[0]!)?.[1]
    expect(signature).toBeString()
    const reasoning = first.response.output[0] as ResponseReasoningItem
    expect(reasoning.summary).toEqual([{ type: 'summary_text', text: thought }])
    // Opaque to the client: the signature is inside, not in clear.
    expect(reasoning.encrypted_content).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(reasoning.encrypted_content).not.toContain(signature!)
    const call = callsOf(first.response)[0]!

    // Codex sends the whole history back: the output items as they came, then the tool's output.
    const second = await ask(openai, mode, {
      ...params,
      input: [
        question,
        ...(first.response.output as ResponseInputItem[]),
        { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c":18}' },
      ],
    })
    expect(second.response.output_text).toBe('It is 18 °C in Paris.')

    expect(sim.requests).toHaveLength(2)
    const body = sim.requests[1]!.body as Record<string, unknown>
    // Thinking stays on: the last assistant turn opens with the signed thinking block.
    expect(body['thinking']).toEqual({ type: 'enabled', budget_tokens: 1024 })
    expect(body['messages']).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: thought, signature },
          { type: 'tool_use', id: call.call_id, name: 'get_weather', input: { city: 'Paris' } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: call.call_id, content: [{ type: 'text', text: '{"temp_c":18}' }] },
        ],
      },
    ])
  })
})

test("a Claude-served conversation sent on to an OpenAI-Responses upstream leaves Claude's reasoning out", async () => {
  const claude = byKind('anthropic')
  const openaiUpstream = byKind('openai-responses')
  const { openai } = await setup()
  sim.queue(claude.upstreamModel, {
    thinking: 'Paris weather needs a lookup.',
    toolCall: { name: 'get_weather', arguments: { city: 'Paris' } },
    usage,
  })
  sim.setScenario(openaiUpstream.upstreamModel, { text: 'It is 18 °C in Paris.', usage })
  const question: ResponseInputItem = { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris?' }] }
  const params = { tools: [weatherTool], include: ['reasoning.encrypted_content' as const], store: false }
  const first = await openai.responses.create({
    ...params,
    model: claude.profile,
    reasoning: { effort: 'low' },
    input: [question],
  })
  expect(first.output.map((item) => item.type)).toEqual(['reasoning', 'function_call'])
  const call = callsOf(first)[0]!
  // The next turn lands on OpenAI (here by profile; after a fallback alike), which cannot read
  // Claude's signature and would refuse the request over it.
  const replayed: ResponseInputItem[] = [
    question,
    ...(first.output as ResponseInputItem[]),
    { type: 'function_call_output', call_id: call.call_id, output: '{"temp_c":18}' },
  ]
  const second = await openai.responses.create({ ...params, model: openaiUpstream.profile, input: replayed })
  expect(second.output_text).toBe('It is 18 °C in Paris.')
  const forwarded = (sim.requests[1]!.body as { input: { type?: string }[] }).input
  expect(forwarded.map((item) => item.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output'])
})

// A reasoning item with no blob is a reference OpenAI looks up among the responses it stored: under
// store:false there is none, and OpenAI would answer 404 "Item with id 'rs_…' not found".
test('a reasoning item that is only an id reaches OpenAI when the conversation is stored, and is left out when not', async () => {
  const u = byKind('openai-responses')
  const { openai } = await setup()
  const input: ResponseInputItem[] = [
    { role: 'user', content: 'hi' },
    { type: 'reasoning', id: 'rs_abc', summary: [] },
    { role: 'assistant', content: 'hello' },
    { role: 'user', content: 'again' },
  ]
  const forwardedTypes = async (store: boolean) => {
    sim.reset()
    sim.setScenario(u.upstreamModel, { text: 'Hello again.', usage })
    await openai.responses.create({ model: u.profile, input, store })
    return (sim.requests[0]!.body as { input: { type?: string }[] }).input.map((item) => item.type ?? 'message')
  }
  expect(await forwardedTypes(true)).toEqual(['message', 'reasoning', 'message', 'message'])
  expect(await forwardedTypes(false)).toEqual(['message', 'message', 'message'])
})

describe('session attributes', () => {
  test('x-session-id, x-agent-id and x-session-source land on the ledger row', async () => {
    const u = byKind('openai-chat')
    const { h } = await setup()
    sim.setScenario(u.upstreamModel, { text: 'ok', usage })
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      headers: { 'x-session-id': 'sess-42', 'x-agent-id': 'agent-7', 'x-session-source': 'my-ide' },
      json: { model: u.profile, input: 'hi' },
    })
    expect(res.status).toBe(200)
    const row = await ledgerRow(h, res.headers.get('x-request-id')!)
    expect(row).toMatchObject({ session_id: 'sess-42', agent_id: 'agent-7', session_source: 'my-ide' })
  })

  test.each(['session-id', 'session_id'])("Codex's %s header: session_source codex", async (header) => {
    const u = byKind('openai-responses')
    const { h } = await setup()
    sim.setScenario(u.upstreamModel, { text: 'ok', usage })
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      headers: { [header]: '01a200ce-532c-7fe3-8f06-95cb597348b5' },
      json: { model: u.profile, input: 'hi', stream: true },
    })
    await res.text()
    const row = await ledgerRow(h, res.headers.get('x-request-id')!)
    expect(row).toMatchObject({ session_id: '01a200ce-532c-7fe3-8f06-95cb597348b5', session_source: 'codex' })
    expect(row.agent_id).toBeUndefined()
  })
})

const post = (h: Harness, json: unknown, init: { key?: string | null; path?: string } = {}) =>
  h.call(init.path ?? '/compat-b/v1/responses', { method: 'POST', json, key: init.key })

describe('errors in OpenAI shape', () => {
  test('unknown profile: 400 listing the valid ones, with no X-Request-Id (nothing is recorded)', async () => {
    const { h } = await setup()
    const res = await post(h, { model: 'gpt-4o', input: 'hi' })
    expect(res.status).toBe(400)
    expect(res.headers.get('x-request-id')).toBeNull()
    expect(await res.json()).toEqual({
      error: {
        message: 'model must be a routing profile, one of svc-pro, svc-max, svc-ultra-saver (got "gpt-4o")',
        type: 'invalid_request_error',
        param: 'model',
        code: null,
      },
    })
    expect(sim.requests).toEqual([])
  })

  test('missing input: 400 that names input', async () => {
    const { h } = await setup()
    const res = await post(h, { model: 'svc-pro' })
    expect(res.status).toBe(400)
    // The decoder's words (the schema leaves it to the decoder, which also names a stored prompt).
    expect(await res.json()).toEqual({
      error: {
        message: 'input must be a string or an array of input items',
        type: 'invalid_request_error',
        param: 'input',
        code: null,
      },
    })
    expect(sim.requests).toEqual([])
  })

  test("a field of the wrong kind: 400 saying what it takes, the field as param (the SDK's err.param)", async () => {
    const { h, openai } = await setup()
    const err = await openai.responses.create({ model: 'svc-pro', input: 'hi', max_output_tokens: 0 }).then(
      () => {
        throw new Error('expected a 400')
      },
      (e: unknown) => e as InstanceType<typeof OpenAI.BadRequestError>,
    )
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.param).toBe('max_output_tokens')
    expect(err.error).toMatchObject({
      message: 'max_output_tokens: must be an integer of at least 1, or null (got 0)',
      param: 'max_output_tokens',
    })
    // An array where a string or an array may stand: what is wrong is inside it, named as OpenAI names it.
    const inside = await post(h, { model: 'svc-pro', input: [1] })
    expect((await inside.json()).error).toMatchObject({
      message: 'input[0]: expected object (got 1)',
      param: 'input[0]',
    })
    expect(sim.requests).toEqual([])
  })

  test("an OpenAI upstream's own error code reaches the client (err.code), on both dialects of upstream", async () => {
    for (const path of ['/chat/completions', '/responses']) {
      const { h, openai } = await setup()
      h.deps.fetch = (async (url: string) =>
        Response.json(
          {
            error: {
              message: 'Invalid prompt: your prompt was flagged as potentially violating our usage policy.',
              type: 'invalid_request_error',
              param: null,
              code: 'invalid_prompt',
            },
          },
          { status: String(url).endsWith(path) ? 400 : 500 },
        )) as unknown as typeof fetch
      const profile = path === '/responses' ? byKind('openai-responses').profile : byKind('openai-chat').profile
      const err = await openai.responses.create({ model: profile, input: 'hi' }).then(
        () => {
          throw new Error('expected a 400')
        },
        (e: unknown) => e as InstanceType<typeof OpenAI.BadRequestError>,
      )
      expect({ status: err.status, code: err.code }).toEqual({ status: 400, code: 'invalid_prompt' })
    }
  })

  test('a stored conversation or prompt template: 400 naming it, nothing sent upstream', async () => {
    const { h } = await setup()
    for (const [param, value, message] of [
      [
        'conversation',
        'conv_123',
        'conversation is not supported: this gateway is stateless, send the full conversation in input',
      ],
      [
        'conversation',
        { id: 'conv_123' },
        'conversation is not supported: this gateway is stateless, send the full conversation in input',
      ],
      [
        'prompt',
        { id: 'pmpt_operator' },
        'prompt (a stored prompt template) is not supported: send its text as instructions and input',
      ],
    ] as const) {
      const res = await post(h, { model: 'svc-pro', input: 'hi', [param]: value })
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ error: { message, type: 'invalid_request_error', param, code: null } })
    }
    expect(sim.requests).toEqual([])
  })

  test('previous_response_id: 400 naming it (the gateway is stateless)', async () => {
    const { h, openai } = await setup()
    const res = await post(h, { model: 'svc-pro', input: 'and then?', previous_response_id: 'resp_abc' })
    expect(res.status).toBe(400)
    expect(res.headers.get('x-request-id')).toBeNull()
    expect(await res.json()).toEqual({
      error: {
        message:
          'previous_response_id is not supported: this gateway is stateless, send the full conversation in input',
        type: 'invalid_request_error',
        param: 'previous_response_id',
        code: null,
      },
    })
    // The SDK surfaces it as a BadRequestError with the same param.
    const err = await openai.responses
      .create({ model: 'svc-pro', input: 'x', previous_response_id: 'resp_abc' })
      .catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.param).toBe('previous_response_id')
    expect(sim.requests).toEqual([])
  })

  test('no key and a bad key: 401 in OpenAI shape', async () => {
    const { h } = await setup()
    const missing = await post(h, { model: 'svc-pro', input: 'hi' }, { key: null })
    expect(missing.status).toBe(401)
    expect(await missing.json()).toEqual({
      error: {
        message: 'missing API key: send `Authorization: Bearer <key>`',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    })
    const bad = await post(h, { model: 'svc-pro', input: 'hi' }, { key: 'svc-not-a-real-key-000000000000000000' })
    expect(bad.status).toBe(401)
    expect(await bad.json()).toEqual({
      error: {
        message: 'invalid API key (unknown or revoked)',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_api_key',
      },
    })
    // x-api-key is the messages route's; the responses route wants Bearer.
    const xApiKey = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      headers: { 'x-api-key': h.key },
      key: null,
      json: { model: 'svc-pro', input: 'hi' },
    })
    expect(xApiKey.status).toBe(401)
    expect(sim.requests).toEqual([])
  })

  test('no credit: 429 insufficient_quota (as OpenAI answers it; Codex stops at once), recorded, upstream never called', async () => {
    const { h, openai } = await setup({ grantUsd: null })
    const res = await post(h, { model: 'svc-pro', input: 'hi' })
    expect(res.status).toBe(429)
    expect(res.headers.get('x-should-retry')).toBe('false')
    const id = res.headers.get('x-request-id')!
    expect(id).toMatch(ULID)
    expect(await res.json()).toEqual({
      error: {
        message: expect.stringContaining('no credit applies to this request under svc-pro'),
        type: 'insufficient_quota',
        param: null,
        code: 'insufficient_quota',
      },
    })
    expect(await ledgerRow(h, id)).toMatchObject({
      status: 'failed',
      http_status: 429,
      attempts: 0,
      total_cost_nanos: 0,
      usage_events: [],
    })
    const err = await openai.responses.create({ model: 'svc-pro', input: 'hi' }).catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.APIError)
    expect(err.status).toBe(429)
    expect(err.code).toBe('insufficient_quota')
    expect(sim.requests).toEqual([])
  })
})

/** Two candidates under svc-max: an Anthropic model first (higher quality), a Responses model second. */
function fallbackConfig(): ConfigFile {
  const config = baseConfig()
  config.models = [
    { ...config.models![0]!, profiles: ['max'], quality: 95 },
    { ...config.models![2]!, profiles: ['max'], quality: 85 },
  ]
  return config
}

describe('fallback before the first byte', () => {
  test.each([
    [500, false],
    [529, true],
  ] as const)('upstream %i → the next candidate answers; two legs (stream: %p)', async (status, stream) => {
    const first = byKind('anthropic')
    const second = byKind('openai-responses')
    const { h, openai } = await setup({ config: fallbackConfig() })
    sim.queue(first.upstreamModel, { fault: { kind: 'status', status } })
    sim.setScenario(second.upstreamModel, { text: 'from the second candidate', usage })
    const { response, requestIdHeader } = await ask(openai, stream ? 'stream' : 'create', {
      model: 'svc-max',
      input: 'hi',
    })
    const id = requestIdOf(response, requestIdHeader)
    expect(response.output_text).toBe('from the second candidate')
    expect(response.model).toBe('svc-max')
    expect(sim.requests.map((r) => r.path)).toEqual(['/v1/messages', '/v1/responses'])
    const cost = costOf(second.price)
    const row = await ledgerRow(h, id)
    expect(row).toMatchObject({
      status: 'completed',
      attempts: 2,
      selected_model_id: second.modelId,
      total_cost_nanos: cost,
      charged_nanos: cost,
    })
    expect(row.usage_events).toMatchObject([
      {
        attempt: 1,
        model_id: first.modelId,
        outcome: 'failed',
        error: status === 529 ? 'Overloaded' : 'Internal server error (simulated)',
        input_tokens: 0,
        output_tokens: 0,
        web_search_requests: 0,
        cost_nanos: 0,
        charged_nanos: 0,
      },
      {
        attempt: 2,
        model_id: second.modelId,
        outcome: 'ok',
        estimated: false,
        output_tokens: 9,
        web_search_requests: 0,
        cost_nanos: cost,
        charged_nanos: cost,
      },
    ])
    expect(await grantRemaining(h)).toBe(GRANT_NANOS - cost)
  })

  test('every candidate fails: 503 in OpenAI shape with X-Request-Id, both legs recorded', async () => {
    const { h, openai } = await setup({ config: fallbackConfig() })
    sim.setScenario('claude-x-up', { fault: { kind: 'status', status: 529 } })
    sim.setScenario('gpt-r-up', { fault: { kind: 'status', status: 529 } })
    const res = await post(h, { model: 'svc-max', input: 'hi', stream: true })
    expect(res.status).toBe(503)
    expect(res.headers.get('content-type')).toContain('application/json')
    const id = res.headers.get('x-request-id')!
    expect(id).toMatch(ULID)
    expect(await res.json()).toEqual({
      error: { message: 'Overloaded', type: 'server_error', param: null, code: 'server_overloaded' },
    })
    const row = await ledgerRow(h, id)
    // The ledger keeps the status the client was sent (503), not the upstream's 529.
    expect(row).toMatchObject({
      status: 'failed',
      http_status: 503,
      attempts: 2,
      total_cost_nanos: 0,
      charged_nanos: 0,
    })
    expect(row.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['failed', 'failed'])
    expect(await grantRemaining(h)).toBe(GRANT_NANOS)

    // What the SDK user sees: an APIError with status 503 and OpenAI's error body.
    const err = await openai.responses.create({ model: 'svc-max', input: 'hi' }).catch((e) => e)
    expect(err).toBeInstanceOf(OpenAI.InternalServerError)
    expect(err.status).toBe(503)
    expect(err.error).toEqual({ message: 'Overloaded', type: 'server_error', param: null, code: 'server_overloaded' })
    expect(err.requestID).toMatch(ULID)
  })
})

describe('pass-through upstream failing in its first event', () => {
  test('an error event before anything else falls back like a 5xx; nothing of it reaches the client', async () => {
    const config = baseConfig()
    // The Responses model first (higher quality), the Anthropic one second, both under svc-max.
    config.models = [
      { ...config.models![2]!, profiles: ['max'], quality: 95 },
      { ...config.models![0]!, profiles: ['max'], quality: 85 },
    ]
    const { h } = await setup({ config })
    sim.queue('gpt-r-up', { fault: { kind: 'error_event', afterFrames: 0 } })
    sim.setScenario('claude-x-up', { text: 'second candidate', usage })
    const res = await h.call('/compat-b/v1/responses', streamRequest('svc-max'))
    expect(res.status).toBe(200)
    const id = res.headers.get('x-request-id')!
    const frames = parseFrames(await res.text())
    expect(frames.map((f) => f.data.type)).not.toContain('error')
    expect(frames.at(-1)!.data).toMatchObject({
      type: 'response.completed',
      response: { id: `resp_${id}`, model: 'svc-max' },
    })
    expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i))
    const row = await ledgerRow(h, id)
    expect(row).toMatchObject({ status: 'completed', attempts: 2, selected_model_id: 'claude-x' })
    expect(row.usage_events).toMatchObject([
      { attempt: 1, model_id: 'gpt-r', outcome: 'failed', error: 'The server is overloaded.', cost_nanos: 0 },
      { attempt: 2, model_id: 'claude-x', outcome: 'ok', cost_nanos: costOf(byKind('anthropic').price) },
    ])
  })
})

describe('failures after the first byte', () => {
  const text = 'The quick brown fox jumps over the lazy dog'

  test('translated (anthropic) cut mid-stream: response.failed ends the stream; estimated leg', async () => {
    const u = byKind('anthropic')
    const { h } = await setup()
    // message_start, content_block_start, ping, then two of four deltas (21 of 43 characters).
    sim.setScenario(u.upstreamModel, { text, chunks: 4, usage, fault: { kind: 'cut', afterFrames: 5 } })
    const res = await h.call('/compat-b/v1/responses', streamRequest(u.profile))
    expect(res.status).toBe(200)
    const id = res.headers.get('x-request-id')!
    const frames = parseFrames(await res.text())
    expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i))
    expect(frames.map((f) => f.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.failed',
    ])
    const failed = frames.at(-1)!.data.response as Record<string, unknown>
    expect(failed).toMatchObject({
      id: `resp_${id}`,
      status: 'failed',
      model: u.profile,
      error: { code: 'server_error', message: 'the upstream stream ended before the response finished' },
      // The partial message as it stood: the item never finished.
      output: [
        {
          id: `msg_${id}`,
          type: 'message',
          status: 'in_progress',
          content: [{ type: 'output_text', text: text.slice(0, 21) }],
        },
      ],
    })
    const output = Math.ceil(21 / 4)
    const cost = costOf(u.price, { ...usage, output })
    expect(await ledgerRow(h, id)).toMatchObject({
      status: 'failed',
      http_status: 200,
      attempts: 1,
      total_output_tokens: output,
      total_cost_nanos: cost,
      charged_nanos: cost,
      usage_events: [
        // Input as message_start reported it; output estimated from the 21 characters that flowed.
        {
          outcome: 'failed',
          estimated: true,
          input_tokens: 12,
          cached_input_tokens: 200,
          cache_creation_input_tokens: 30,
          output_tokens: output,
          web_search_requests: 0,
          cost_nanos: cost,
        },
      ],
    })
    expect(await grantRemaining(h)).toBe(GRANT_NANOS - cost)
  })

  test('pass-through cut mid-stream: an error event follows the relayed frames; estimated leg', async () => {
    const u = byKind('openai-responses')
    const { h } = await setup()
    // created, in_progress, output_item.added, content_part.added, then two of four deltas.
    sim.setScenario(u.upstreamModel, { text, chunks: 4, usage, fault: { kind: 'cut', afterFrames: 6 } })
    const res = await h.call('/compat-b/v1/responses', streamRequest(u.profile))
    expect(res.status).toBe(200)
    const id = res.headers.get('x-request-id')!
    const frames = parseFrames(await res.text())
    expect(frames.map((f) => f.data.sequence_number)).toEqual(frames.map((_, i) => i))
    expect(frames.map((f) => f.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'error',
    ])
    expect(frames.at(-1)).toMatchObject({
      event: 'error',
      data: {
        type: 'error',
        code: 'server_error',
        message: 'upstream stream ended before the message was complete',
        param: null,
        sequence_number: 6,
      },
    })
    const row = await ledgerRow(h, id)
    const output = Math.ceil(21 / 4)
    const leg = row.usage_events[0]
    expect(leg).toMatchObject({ outcome: 'failed', estimated: true, output_tokens: output, cached_input_tokens: 0 })
    // The prompt is estimated by the gateway (the upstream never reported usage).
    expect(leg.input_tokens).toBeGreaterThan(0)
    expect(leg.cost_nanos).toBe(leg.input_tokens * u.price.input + output * u.price.output)
    expect(row).toMatchObject({
      status: 'failed',
      http_status: 200,
      total_cost_nanos: leg.cost_nanos,
      charged_nanos: leg.cost_nanos,
    })
  })

  test('pass-through upstream error event: relayed once, the SDK throws, the leg failed', async () => {
    const u = byKind('openai-responses')
    const { h, openai } = await setup()
    sim.setScenario(u.upstreamModel, { text, chunks: 4, usage, fault: { kind: 'error_event', afterFrames: 5 } })
    const res = await h.call('/compat-b/v1/responses', streamRequest(u.profile))
    const id = res.headers.get('x-request-id')!
    const frames = parseFrames(await res.text())
    expect(frames.map((f) => f.data.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'error',
    ])
    expect(frames.at(-1)!.data).toEqual({
      type: 'error',
      code: 'server_error',
      message: 'The server is overloaded.',
      param: null,
      sequence_number: 5,
    })
    const row = await ledgerRow(h, id)
    expect(row).toMatchObject({
      status: 'failed',
      http_status: 200,
      error: { message: 'The server is overloaded.' },
      usage_events: [
        { outcome: 'failed', estimated: true, error: 'The server is overloaded.', output_tokens: Math.ceil(10 / 4) },
      ],
    })

    const err = await openai.responses
      .stream({ model: u.profile, input: 'again' })
      .finalResponse()
      .catch((e) => e)
    expect(err).toBeInstanceOf(Error)
    expect(String(err.message)).toContain('The server is overloaded.')
  })
})

describe('messages route answered by an openai-responses upstream (Anthropic SDK)', () => {
  const u = byKind('openai-responses')

  test('non-streaming: msg_<ulid>, the upstream model, Anthropic usage, ledger', async () => {
    const { h, anthropic } = await setup()
    sim.setScenario(u.upstreamModel, { text: 'Hello from Responses', usage })
    const { data, response } = await anthropic.messages
      .create({ model: u.profile, max_tokens: 256, system: 'Be kind.', messages: [{ role: 'user', content: 'Hi' }] })
      .withResponse()
    const id = response.headers.get('x-request-id')!
    expect(id).toMatch(ULID)
    expect(data).toMatchObject({
      id: `msg_${id}`,
      type: 'message',
      role: 'assistant',
      model: u.upstreamModel,
      content: [{ type: 'text', text: 'Hello from Responses' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 12, cache_read_input_tokens: 200, cache_creation_input_tokens: 30, output_tokens: 9 },
    })
    expect(sim.requests[0]!.path).toBe('/v1/responses')
    expect(sim.requests[0]!.body).toEqual({
      model: u.upstreamModel,
      instructions: 'Be kind.',
      input: [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }] }],
      max_output_tokens: 256,
      stream: false,
      store: false,
    })
    const cost = costOf(u.price)
    expect(await ledgerRow(h, id)).toMatchObject({ ...expectedLedger(u, id, false), surface: 'messages' })
    expect(await grantRemaining(h)).toBe(GRANT_NANOS - cost)
  })

  test('streaming with a tool call: tool_use block, tools as Responses functions', async () => {
    const { h, anthropic } = await setup()
    sim.setScenario(u.upstreamModel, {
      text: 'Let me check.',
      toolCall: { name: 'get_weather', arguments: { city: 'Rome' } },
      usage,
    })
    const stream = anthropic.messages.stream({
      model: u.profile,
      max_tokens: 512,
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
      tools: [{ name: 'get_weather', description: 'Current weather for a city', input_schema: weatherTool.parameters }],
    })
    const message = await stream.finalMessage()
    expect(message.id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/)
    const id = message.id.slice('msg_'.length)
    expect(message.model).toBe(u.upstreamModel)
    expect(message.stop_reason).toBe('tool_use')
    expect(message.content).toEqual([
      { type: 'text', text: 'Let me check.' },
      expect.objectContaining({
        type: 'tool_use',
        id: expect.stringMatching(/^call_sim/),
        name: 'get_weather',
        input: { city: 'Rome' },
      }),
    ])
    expect(message.usage).toMatchObject({
      input_tokens: 12,
      cache_read_input_tokens: 200,
      cache_creation_input_tokens: 30,
      output_tokens: 9,
    })
    expect(sim.requests[0]!.body).toMatchObject({
      model: u.upstreamModel,
      stream: true,
      store: false,
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Current weather for a city',
          parameters: weatherTool.parameters,
          strict: false,
        },
      ],
    })
    expect(await ledgerRow(h, id)).toMatchObject({ ...expectedLedger(u, id, true), surface: 'messages' })
  })
})
