// End to end over the messages route (/compat-a, /anthropic): the official Anthropic SDK and raw
// bytes against the gateway in-process, the upstream simulator behind it, and the ledger as the
// usage API shows it. Faults, fallback and aborts live in messages-faults.test.ts.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type { ModelSection } from '../src/config/schema'
import { decodeAnthropicRequest } from '../src/protocols/anthropic/decode-anthropic-request'
import { estimateRequestTokens as countLocally } from '../src/router/count-tokens'
import { createHarness, type Harness, remainingNanos, requestDetail } from './support/harness'
import { simClaude, simGpt } from './support/sim-models'
import { parseFrames } from './support/sse-frames'
import { scriptedUpstream, sseFrame } from './support/scripted-upstream'
import { countRequestTokens, startSimulator } from './support/simulator'
import { profileFor, translationGateway, upstreamModelFor } from './support/translation-gateway'

const SIM_KEY = 'sim-key-0001'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const GRANT = 5_000_000_000
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/

// Prices in USD/Mtok; ×1000 = nanos per token. claude-x: 3000 in, 300 cache read, 3750 cache
// write, 15000 out. gpt-y: 1000 in, 100 cache read, 1250 cache write, 2000 out.
const claudeX = simClaude({ id: 'claude-x', upstream_model: 'claude-x-up' })
const gptY = simGpt({ cache_read_usd_per_mtok: 0.1, cache_write_usd_per_mtok: 1.25 })

function gateway(opts: { models?: ModelSection[]; grantUsd?: number } = {}): Promise<Harness> {
  return createHarness({
    grantUsd: 'grantUsd' in opts ? opts.grantUsd : 5,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: {
        anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
        chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
      },
      models: opts.models ?? [claudeX, gptY],
    },
  })
}

/** The official SDK against the in-process app; `sent` collects the requests it makes. */
const sdk = (h: Harness, base = 'compat-a', sent: Request[] = []) =>
  new Anthropic({
    apiKey: h.key,
    baseURL: `http://localhost/${base}`,
    fetch: (url, init) => {
      const request = new Request(String(url), init)
      sent.push(request)
      return h.app.handle(request)
    },
    maxRetries: 0,
  })

const versioned = { 'anthropic-version': '2023-06-01' }

function postMessages(h: Harness, body: unknown, headers: Record<string, string> = versioned, path = '/compat-a') {
  return h.call(`${path}/v1/messages`, { method: 'POST', json: body, headers })
}

const ask = [{ role: 'user' as const, content: 'hello' }]

describe('messages: SDK happy paths with cache tokens, and the ledger', () => {
  test('messages.create through an anthropic upstream: pass-through body under msg_<request id>', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', { text: 'Hi there', usage: { input: 10, cacheRead: 100, cacheWrite: 5, output: 3 } })
    const {
      data: message,
      response,
      request_id: sdkRequestId,
    } = await sdk(h).messages.create({ model: 'svc-max', max_tokens: 100, messages: ask }).withResponse()
    const requestId = response.headers.get('x-request-id')!
    expect(requestId).toMatch(ULID)
    // The SDK's own request id (from `request-id`) is the one the usage API looks up.
    expect(sdkRequestId).toBe(requestId)
    // Compared as plain JSON: the SDK's types carry fields this API version does not send.
    expect(message as unknown).toEqual({
      id: `msg_${requestId}`,
      type: 'message',
      role: 'assistant',
      model: 'claude-x-up',
      content: [{ type: 'text', text: 'Hi there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        cache_creation_input_tokens: 5,
        cache_read_input_tokens: 100,
        cache_creation: { ephemeral_5m_input_tokens: 5, ephemeral_1h_input_tokens: 0 },
        output_tokens: 3,
        service_tier: 'standard',
      },
    })
    // 10×3000 + 100×300 + 5×3750 + 3×15000
    const cost = 30_000 + 30_000 + 18_750 + 45_000
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      request_id: requestId,
      status: 'completed',
      http_status: 200,
      surface: 'messages',
      routing_mode: 'max',
      stream: false,
      selected_model_id: 'claude-x',
      selected_provider_id: 'anth',
      attempts: 1,
      total_cost_nanos: cost,
      charged_nanos: cost,
      total_input_tokens: 10,
      total_cached_input_tokens: 100,
      total_cache_creation_input_tokens: 5,
      total_output_tokens: 3,
      byok: false,
      error: null,
      provider_ranks: [
        {
          model_id: 'claude-x',
          provider_id: 'anth',
          upstream_model: 'claude-x-up',
          status: 'chosen',
          reason: expect.stringMatching(/^eligible/),
        },
      ],
    })
    expect(detail.usage_events).toEqual([
      expect.objectContaining({
        attempt: 1,
        model_id: 'claude-x',
        provider_id: 'anth',
        upstream_model: 'claude-x-up',
        estimated: false,
        outcome: 'ok',
        error: null,
        input_tokens: 10,
        cached_input_tokens: 100,
        cache_creation_input_tokens: 5,
        output_tokens: 3,
        web_search_requests: 0,
        cost_nanos: cost,
        charged_nanos: cost,
      }),
    ])
    expect(detail.grant_charges).toEqual([
      {
        grant_id: expect.stringMatching(/^grant_/),
        usage_event_id: detail.usage_events[0].id,
        cost_type: 'model_usage',
        amount_nanos: cost,
      },
    ])
    expect(await remainingNanos(h)).toBe(GRANT - cost)
    // What the upstream got: the client's body with only the model swapped.
    expect(sim.requests[0]!.body).toEqual({ model: 'claude-x-up', max_tokens: 100, messages: ask })
    expect(sim.requests[0]!.headers['x-api-key']).toBe(SIM_KEY)
  })

  test('messages.stream through an anthropic upstream: finalMessage and ledger', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', {
      text: 'Hello streamed world, café 👋',
      thinking: 'A greeting.',
      usage: { input: 12, cacheRead: 200, cacheWrite: 40, output: 9 },
      split: 'mid-utf8',
    })
    const stream = sdk(h).messages.stream({ model: 'svc-max', max_tokens: 100, messages: ask })
    const { response } = await stream.withResponse()
    const message = await stream.finalMessage()
    const requestId = response.headers.get('x-request-id')!
    expect(requestId).toMatch(ULID)
    expect(response.headers.get('content-type')).toContain('text/event-stream')
    expect(message).toMatchObject({
      id: `msg_${requestId}`,
      model: 'claude-x-up',
      content: [
        { type: 'thinking', thinking: 'A greeting.', signature: Buffer.from('sim-signature:3').toString('base64') },
        { type: 'text', text: 'Hello streamed world, café 👋' },
      ],
      stop_reason: 'end_turn',
      usage: { input_tokens: 12, cache_read_input_tokens: 200, cache_creation_input_tokens: 40, output_tokens: 9 },
    })
    // 12×3000 + 200×300 + 40×3750 + 9×15000
    const cost = 36_000 + 60_000 + 150_000 + 135_000
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'completed',
      stream: true,
      total_cost_nanos: cost,
      charged_nanos: cost,
      attempts: 1,
    })
    expect(detail.usage_events).toEqual([
      expect.objectContaining({
        outcome: 'ok',
        estimated: false,
        input_tokens: 12,
        cached_input_tokens: 200,
        cache_creation_input_tokens: 40,
        output_tokens: 9,
        web_search_requests: 0,
        cost_nanos: cost,
        charged_nanos: cost,
      }),
    ])
    expect(await remainingNanos(h)).toBe(GRANT - cost)
    expect(sim.requests[0]!.body).toEqual({ model: 'claude-x-up', max_tokens: 100, messages: ask, stream: true })
  })

  test('messages.create through an openai-chat upstream: translated, cache counts split out of prompt_tokens', async () => {
    const h = await gateway()
    sim.setScenario('gpt-y-up', { text: 'Hi from chat', usage: { input: 20, cacheRead: 40, cacheWrite: 8, output: 7 } })
    const { data: message, response } = await sdk(h)
      .messages.create({ model: 'svc-pro', max_tokens: 100, system: 'Be brief.', messages: ask })
      .withResponse()
    const requestId = response.headers.get('x-request-id')!
    expect(message as unknown).toEqual({
      id: `msg_${requestId}`,
      type: 'message',
      role: 'assistant',
      model: 'gpt-y-up',
      content: [{ type: 'text', text: 'Hi from chat' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: { input_tokens: 20, cache_creation_input_tokens: 8, cache_read_input_tokens: 40, output_tokens: 7 },
    })
    expect(sim.requests[0]!.path).toBe('/v1/chat/completions')
    expect(sim.requests[0]!.headers.authorization).toBe(`Bearer ${SIM_KEY}`)
    expect(sim.requests[0]!.body).toEqual({
      model: 'gpt-y-up',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'hello' },
      ],
      max_tokens: 100,
      stream: false,
    })
    // 20×1000 + 40×100 + 8×1250 + 7×2000
    const cost = 20_000 + 4_000 + 10_000 + 14_000
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'completed',
      routing_mode: 'pro',
      selected_model_id: 'gpt-y',
      selected_provider_id: 'chat',
      total_cost_nanos: cost,
      charged_nanos: cost,
      total_input_tokens: 20,
      total_cached_input_tokens: 40,
      total_cache_creation_input_tokens: 8,
      total_output_tokens: 7,
    })
    expect(detail.usage_events).toEqual([
      expect.objectContaining({ outcome: 'ok', estimated: false, cost_nanos: cost, charged_nanos: cost }),
    ])
    expect(await remainingNanos(h)).toBe(GRANT - cost)
  })

  test('messages.stream through an openai-chat upstream: usage from the include_usage chunk', async () => {
    const h = await gateway()
    sim.setScenario('gpt-y-up', {
      text: 'Streamed héllo from chat',
      thinking: 'let me think',
      usage: { input: 30, cacheRead: 64, cacheWrite: 16, output: 11 },
      split: 'mid-line',
    })
    const stream = sdk(h).messages.stream({ model: 'svc-pro', max_tokens: 100, messages: ask })
    const { response } = await stream.withResponse()
    const message = await stream.finalMessage()
    const requestId = response.headers.get('x-request-id')!
    expect(message).toMatchObject({
      id: `msg_${requestId}`,
      model: 'gpt-y-up',
      content: [
        { type: 'thinking', thinking: 'let me think' },
        { type: 'text', text: 'Streamed héllo from chat' },
      ],
      stop_reason: 'end_turn',
      usage: { input_tokens: 30, cache_read_input_tokens: 64, cache_creation_input_tokens: 16, output_tokens: 11 },
    })
    expect(sim.requests[0]!.body).toMatchObject({
      model: 'gpt-y-up',
      stream: true,
      stream_options: { include_usage: true },
    })
    // 30×1000 + 64×100 + 16×1250 + 11×2000
    const cost = 30_000 + 6_400 + 20_000 + 22_000
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({ status: 'completed', stream: true, total_cost_nanos: cost, charged_nanos: cost })
    expect(detail.usage_events).toEqual([
      expect.objectContaining({
        outcome: 'ok',
        estimated: false,
        input_tokens: 30,
        cached_input_tokens: 64,
        cache_creation_input_tokens: 16,
        output_tokens: 11,
        web_search_requests: 0,
        cost_nanos: cost,
      }),
    ])
    expect(await remainingNanos(h)).toBe(GRANT - cost)
  })

  test('/anthropic is the same surface as /compat-a', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', { text: 'same', usage: { input: 1, output: 1 } })
    const message = await sdk(h, 'anthropic').messages.create({ model: 'svc-max', max_tokens: 10, messages: ask })
    expect(message.content as unknown[]).toEqual([{ type: 'text', text: 'same' }])
    expect(message.id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/)
  })
})

const weatherTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
}
const question = { role: 'user' as const, content: 'What is the weather in Paris?' }

describe('messages: BYOK', () => {
  test('the account’s own provider key is used upstream; the ledger charges only the BYOK fee', async () => {
    // No platform key for the provider: only the account's own key can serve.
    const h = await createHarness({
      grantUsd: 5,
      config: {
        catalog: { builtin: false },
        providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'UNSET_KEY' } },
        models: [claudeX],
      },
    })
    await h.deps.admin.addProviderKey({ account: h.accountId, provider: 'anth', key: SIM_KEY })
    sim.setScenario('claude-x-up', { text: 'Hi there', usage: { input: 10, cacheRead: 100, cacheWrite: 5, output: 3 } })
    const { response } = await sdk(h)
      .messages.create({ model: 'svc-max', max_tokens: 100, messages: ask })
      .withResponse()
    expect(sim.requests[0]!.headers['x-api-key']).toBe(SIM_KEY)
    // Cost 123,750 nanos as above; the default 5% fee is 6,187.5, rounded up to the nano.
    const cost = 123_750
    const fee = 6_188
    const detail = await requestDetail(h, response.headers.get('x-request-id')!)
    expect(detail).toMatchObject({ status: 'completed', byok: true, total_cost_nanos: cost, charged_nanos: fee })
    expect(detail.provider_ranks[0]).toMatchObject({ byok: true, status: 'chosen' })
    expect(detail.usage_events).toEqual([expect.objectContaining({ byok: true, cost_nanos: cost, charged_nanos: fee })])
    expect(detail.grant_charges).toEqual([expect.objectContaining({ cost_type: 'byok_fee', amount_nanos: fee })])
    expect(await remainingNanos(h)).toBe(GRANT - fee)
  })

  test('an account’s own key has a health of its own: its failures steer no one else, the platform’s none of it', async () => {
    const h = await gateway({ models: [claudeX, simGpt({ profiles: ['max'], quality: 10 })] })
    await h.deps.admin.createAccount('bob')
    const bob = await h.deps.admin.createKey({ account: 'bob' })
    await h.deps.admin.addGrant({ account: 'bob', usd: 5 })
    sim.setScenario('claude-x-up', { text: 'from claude', usage: { input: 10, output: 3 } })
    sim.setScenario('gpt-y-up', { text: 'from gpt', usage: { input: 10, output: 3 } })
    const ask = async (key: string) => {
      sim.requests.length = 0
      const res = await h.call('/compat-a/v1/messages', {
        method: 'POST',
        key,
        headers: versioned,
        json: { model: 'svc-max', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(res.status).toBe(200)
      return {
        text: (await res.json()).content[0].text,
        sent: sim.requests.map((r) => r.headers['x-api-key'] ?? 'chat'),
      }
    }
    // Bob's own key is revoked at the provider: three 401s open Bob's circuit for Claude, and only his.
    await h.deps.admin.addProviderKey({ account: 'bob', provider: 'anth', key: 'sk-ant-revoked-0001' })
    for (let i = 0; i < 3; i++) {
      expect(await ask(bob.key)).toEqual({ text: 'from gpt', sent: ['sk-ant-revoked-0001', 'chat'] })
    }
    expect(await ask(bob.key)).toEqual({ text: 'from gpt', sent: ['chat'] })
    expect(await ask(h.key)).toEqual({ text: 'from claude', sent: [SIM_KEY] })
    // The platform's key is rate limited for a while; Bob, now with a good key of his own, is not.
    await h.deps.admin.addProviderKey({ account: 'bob', provider: 'anth', key: SIM_KEY })
    h.clock.advance(5 * 60_000)
    sim.queue('claude-x-up', { fault: { kind: 'status', status: 429, retryAfter: 60 } })
    expect(await ask(h.key)).toEqual({ text: 'from gpt', sent: [SIM_KEY, 'chat'] })
    expect(await ask(h.key)).toEqual({ text: 'from gpt', sent: ['chat'] })
    expect(await ask(bob.key)).toEqual({ text: 'from claude', sent: [SIM_KEY] })
  })

  test('the provider refuses the account’s own key: the client is told it is that key, not its svc key', async () => {
    const h = await gateway({ models: [claudeX] })
    await h.deps.admin.addProviderKey({ account: h.accountId, provider: 'anth', key: 'sk-ant-revoked-0001' })
    const res = await postMessages(h, { model: 'svc-max', max_tokens: 10, messages: ask })
    expect(res.status).toBe(502)
    // The provider's "invalid x-api-key" as "invalid API key": Claude Code reads any error naming
    // x-api-key as its own sign-in gone, and tells the user to log in to Anthropic.
    const refused =
      'anth refused the key stored for this account (BYOK; the stored key needs replacing): invalid API key'
    expect((await res.json()).error).toEqual({ type: 'api_error', message: refused })
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.usage_events).toEqual([expect.objectContaining({ byok: true, outcome: 'failed', error: refused })])
  })

  test('a stored key the gateway cannot open: that provider does not serve the account, not on the platform’s key either', async () => {
    // Both providers have a platform key; the account stored its own for `anth`.
    const h = await gateway({ models: [claudeX, simGpt({ profiles: ['max'], quality: 10 })] })
    await h.deps.admin.addProviderKey({ account: h.accountId, provider: 'anth', key: 'sk-ant-own-0001' })
    sim.setScenario('gpt-y-up', { text: 'from gpt', usage: { input: 10, output: 3 } })
    // As after a restart with another master key, then with none: the sealed key no longer opens.
    for (const masterKey of ['another-master-key', undefined]) {
      h.config.server.masterKey = masterKey
      h.deps.byok.invalidate(h.accountId)
      sim.requests.length = 0
      const { data, response } = await sdk(h)
        .messages.create({ model: 'svc-max', max_tokens: 10, messages: ask })
        .withResponse()
      expect(data.content as unknown[]).toEqual([{ type: 'text', text: 'from gpt' }])
      expect(sim.requests.map((r) => r.path)).toEqual(['/v1/chat/completions'])
      const detail = await requestDetail(h, response.headers.get('x-request-id')!)
      expect(detail).toMatchObject({ selected_model_id: 'gpt-y', byok: false })
      expect(detail.provider_ranks.find((r: { model_id: string }) => r.model_id === 'claude-x')).toMatchObject({
        status: 'skipped',
        byok: true,
        reason: expect.stringContaining('the account’s own key for this provider cannot be opened'),
      })
    }
    // With only that provider, the account gets the reason, and nothing reaches the upstream.
    const only = await gateway({ models: [claudeX] })
    await only.deps.admin.addProviderKey({ account: only.accountId, provider: 'anth', key: 'sk-ant-own-0001' })
    only.config.server.masterKey = undefined
    only.deps.byok.invalidate(only.accountId)
    sim.requests.length = 0
    const res = await postMessages(only, { model: 'svc-max', max_tokens: 10, messages: ask })
    expect(res.status).toBe(503)
    expect((await res.json()).error.message).toContain(
      'claude-x via anth: the account’s own key for this provider cannot be opened (the gateway’s master key is unset or not the one it was sealed with); the platform’s key is not used in its place',
    )
    expect(sim.requests).toEqual([])
    expect(await remainingNanos(only)).toBe(GRANT)
    // count_tokens neither: it counts locally rather than ask Claude with the platform's key.
    const counted = await sdk(only).messages.countTokens({ model: 'svc-max', messages: ask })
    expect(counted.input_tokens).toBeGreaterThan(0)
    expect(sim.requests).toEqual([])
  })
})

describe('messages: tool use round trip', () => {
  test('anthropic upstream: tool_use, then the tool_result follow-up reaches the upstream as sent', async () => {
    const h = await gateway()
    const client = sdk(h)
    sim.queue('claude-x-up', { toolCall: { id: 'toolu_fixed_1', name: 'get_weather', arguments: { city: 'Paris' } } })
    const first = await client.messages.create({
      model: 'svc-max',
      max_tokens: 200,
      tools: [weatherTool],
      messages: [question],
    })
    expect(first.stop_reason).toBe('tool_use')
    expect(first.content as unknown).toEqual([
      { type: 'tool_use', id: 'toolu_fixed_1', name: 'get_weather', input: { city: 'Paris' } },
    ])

    sim.queue('claude-x-up', { text: 'It is 18°C and sunny in Paris.' })
    const followUp = [
      question,
      { role: 'assistant' as const, content: first.content },
      {
        role: 'user' as const,
        content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_fixed_1', content: '18°C, sunny' }],
      },
    ]
    const second = await client.messages.create({
      model: 'svc-max',
      max_tokens: 200,
      tools: [weatherTool],
      messages: followUp,
    })
    expect(second.content as unknown[]).toEqual([{ type: 'text', text: 'It is 18°C and sunny in Paris.' }])
    expect(second.stop_reason).toBe('end_turn')
    // Pass-through: the upstream sees the client's tools and messages unchanged.
    expect(sim.requests[1]!.body).toEqual({
      model: 'claude-x-up',
      max_tokens: 200,
      tools: [weatherTool],
      messages: followUp,
    })
  })

  test('openai-chat upstream: streamed tool call, then tools / tool_calls / role:tool in the Chat request', async () => {
    const h = await gateway()
    const client = sdk(h)
    sim.queue('gpt-y-up', { toolCall: { id: 'call_abc123', name: 'get_weather', arguments: { city: 'Paris' } } })
    const first = await client.messages
      .stream({ model: 'svc-pro', max_tokens: 200, tools: [weatherTool], messages: [question] })
      .finalMessage()
    expect(first.stop_reason).toBe('tool_use')
    expect(first.content as unknown).toEqual([
      { type: 'tool_use', id: 'call_abc123', name: 'get_weather', input: { city: 'Paris' } },
    ])
    expect(sim.requests[0]!.body).toMatchObject({
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: weatherTool.input_schema,
          },
        },
      ],
    })

    sim.queue('gpt-y-up', { text: 'It is 18°C and sunny in Paris.' })
    const second = await client.messages.create({
      model: 'svc-pro',
      max_tokens: 200,
      tools: [weatherTool],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'call_abc123', content: '18°C, sunny' },
            { type: 'text', text: 'Answer in one line.' },
          ],
        },
      ],
    })
    expect(second.content as unknown[]).toEqual([{ type: 'text', text: 'It is 18°C and sunny in Paris.' }])
    expect(sim.requests[1]!.body).toEqual({
      model: 'gpt-y-up',
      max_tokens: 200,
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_abc123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_abc123', content: '18°C, sunny' },
        { role: 'user', content: 'Answer in one line.' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather for a city',
            parameters: weatherTool.input_schema,
          },
        },
      ],
      stream: false,
    })
  })
})

// DeepSeek's thinking models answer 400 when an assistant turn with tool calls comes back without
// its reasoning_content; Claude Code keeps its thinking blocks in the history it resends.
describe('messages: thinking replayed as reasoning_content to an openai-chat upstream', () => {
  const dsModel: ModelSection = { ...gptY, id: 'ds-think', provider: 'ds', upstream_model: 'ds-think-up' }
  const deepseekLike = (reasoningContent: boolean | undefined) =>
    createHarness({
      grantUsd: 5,
      env: { SIM_KEY },
      config: {
        catalog: { builtin: false },
        providers: {
          ds: {
            kind: 'openai-chat',
            base_url: `${sim.url}/v1`,
            api_key_env: 'SIM_KEY',
            ...(reasoningContent === undefined ? {} : { reasoning_content: reasoningContent }),
          },
        },
        models: [dsModel],
      },
    })
  const firstThought = 'The user wants the weather in Paris; call get_weather.'
  const secondThought = 'Paris done. Compare with Lyon.'

  test.each([
    ['reasoning_content = true', true],
    ['reasoning_content = false', false],
    ['reasoning_content unset', undefined],
  ] as const)('a two-step tool loop, %s', async (_, reasoningContent) => {
    const h = await deepseekLike(reasoningContent)
    const client = sdk(h)
    // Turn 1: the upstream thinks, then calls a tool; the client gets a thinking block (signature "").
    sim.queue('ds-think-up', {
      thinking: firstThought,
      toolCall: { id: 'call_paris', name: 'get_weather', arguments: { city: 'Paris' } },
    })
    const first = await client.messages
      .stream({ model: 'svc-pro', max_tokens: 200, tools: [weatherTool], messages: [question] })
      .finalMessage()
    expect(first.stop_reason).toBe('tool_use')
    expect(first.content as unknown).toEqual([
      { type: 'thinking', thinking: firstThought, signature: '' },
      { type: 'tool_use', id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } },
    ])

    // Turn 3 of the loop: the history holds that turn as the client got it, and a second tool-call
    // turn whose thinking block has no signature field at all.
    sim.queue('ds-think-up', { text: 'Paris 18°C, Lyon 20°C.' })
    const final = await client.messages.create({
      model: 'svc-pro',
      max_tokens: 200,
      tools: [weatherTool],
      messages: [
        question,
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_paris', content: '18°C, sunny' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: secondThought } as unknown as Anthropic.ThinkingBlockParam,
            { type: 'text', text: 'Checking Lyon too.' },
            { type: 'tool_use', id: 'call_lyon', name: 'get_weather', input: { city: 'Lyon' } },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_lyon', content: '20°C, cloudy' }] },
      ],
    })
    expect(final.content as unknown[]).toEqual([{ type: 'text', text: 'Paris 18°C, Lyon 20°C.' }])

    const replay = (thought: string) => (reasoningContent ? { reasoning_content: thought } : {})
    const messages = (sim.requests[1]!.body as { messages: Record<string, unknown>[] }).messages
    expect(messages).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
        ...replay(firstThought),
      },
      { role: 'tool', tool_call_id: 'call_paris', content: '18°C, sunny' },
      {
        role: 'assistant',
        content: 'Checking Lyon too.',
        tool_calls: [
          { id: 'call_lyon', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
        ],
        ...replay(secondThought),
      },
      { role: 'tool', tool_call_id: 'call_lyon', content: '20°C, cloudy' },
    ])
    if (!reasoningContent) for (const m of messages) expect(m).not.toHaveProperty('reasoning_content')
  })
})

describe('messages: stream bytes', () => {
  test('a Chat upstream with thinking + text + tool call becomes Anthropic events in exact order', async () => {
    const h = await gateway()
    sim.setScenario('gpt-y-up', {
      thinking: 'I should call the weather tool.',
      text: 'Checking the weather now.',
      toolCall: { id: 'call_w1', name: 'get_weather', arguments: { city: 'Paris' } },
      usage: { input: 25, output: 18 },
    })
    const res = await postMessages(h, {
      model: 'svc-pro',
      max_tokens: 300,
      stream: true,
      tools: [weatherTool],
      messages: [question],
    })
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    expect(requestId).toMatch(ULID)
    const frames = parseFrames(await res.text())
    // Every frame names its event, and the name matches the payload's type.
    for (const f of frames) expect(f.data.type).toBe(f.event)
    expect(frames.map((f) => (f.data.index === undefined ? f.event : `${f.event}:${f.data.index}`))).toEqual([
      'message_start',
      'content_block_start:0',
      'content_block_delta:0',
      'content_block_delta:0',
      'content_block_stop:0',
      'content_block_start:1',
      'content_block_delta:1',
      'content_block_delta:1',
      'content_block_stop:1',
      'content_block_start:2',
      'content_block_delta:2',
      'content_block_delta:2',
      'content_block_delta:2',
      'content_block_stop:2',
      'message_delta',
      'message_stop',
    ])
    expect(frames[0]!.data.message).toMatchObject({
      id: `msg_${requestId}`,
      model: 'gpt-y-up',
      role: 'assistant',
      content: [],
    })
    expect(frames[1]!.data.content_block).toEqual({ type: 'thinking', thinking: '', signature: '' })
    expect(frames[5]!.data.content_block).toEqual({ type: 'text', text: '' })
    expect(frames[9]!.data.content_block).toEqual({ type: 'tool_use', id: 'call_w1', name: 'get_weather', input: {} })
    const deltas = (index: number) =>
      frames.filter((f) => f.event === 'content_block_delta' && f.data.index === index).map((f) => f.data.delta)
    expect(
      deltas(0)
        .map((d) => d.thinking)
        .join(''),
    ).toBe('I should call the weather tool.')
    expect(deltas(0).every((d) => d.type === 'thinking_delta')).toBe(true)
    expect(
      deltas(1)
        .map((d) => d.text)
        .join(''),
    ).toBe('Checking the weather now.')
    expect(deltas(2).every((d) => d.type === 'input_json_delta')).toBe(true)
    expect(
      JSON.parse(
        deltas(2)
          .map((d) => d.partial_json)
          .join(''),
      ),
    ).toEqual({ city: 'Paris' })
    expect(frames.at(-2)!.data).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { input_tokens: 25, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 18 },
    })
    // The cost is on the ledger by the time the body has ended: 25×1000 + 18×2000.
    expect((await requestDetail(h, requestId)).total_cost_nanos).toBe(61_000)
  })

  test('pass-through relays every upstream frame byte for byte, except message_start under our id', async () => {
    const h = await gateway()
    const scenario = {
      thinking: 'Thinking, with ünïcode.',
      text: 'Bonjour — ça va? 👋 fine',
      toolCall: { id: 'toolu_same', name: 'get_weather', arguments: { city: 'Paris' } },
      usage: { input: 9, cacheRead: 3, output: 21 },
      pings: true,
      split: 'per-byte' as const,
    }
    sim.setScenario('claude-x-up', scenario)
    const body = { max_tokens: 300, stream: true, tools: [weatherTool], messages: [question] }
    // What the simulator sends for this body when asked directly.
    const direct = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': SIM_KEY, ...versioned, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model: 'claude-x-up' }),
    })
    const upstreamFrames = parseFrames(await direct.text())

    const res = await postMessages(h, { ...body, model: 'svc-max' })
    const requestId = res.headers.get('x-request-id')!
    const frames = parseFrames(await res.text())
    expect(frames.map((f) => f.event)).toEqual(upstreamFrames.map((f) => f.event))
    expect(frames.filter((f) => f.event === 'ping')).toHaveLength(1)
    const upstreamId = upstreamFrames[0]!.data.message.id
    expect(frames[0]!.raw).toBe(upstreamFrames[0]!.raw.replace(upstreamId, `msg_${requestId}`))
    for (let i = 1; i < frames.length; i++) expect(frames[i]!.raw).toBe(upstreamFrames[i]!.raw)
  })

  // A long answer is relayed as the upstream's own text with the id spliced in, a short one parsed
  // and serialized again: from either, the client gets the upstream's bytes under our id.
  test.each([
    ['short', 'Bonjour — ça va? 👋 fine'],
    ['long', `${'Bonjour — ça va? 👋 "fine"\n'.repeat(100)}end`],
  ])('pass-through JSON (%s answer): the upstream body under our id, as application/json', async (_size, text) => {
    const h = await gateway()
    const scenario = {
      text,
      toolCall: { id: 'toolu_same', name: 'get_weather', arguments: { city: 'Paris' } },
      usage: { input: 9, cacheRead: 3, output: 21 },
    }
    sim.setScenario('claude-x-up', scenario)
    const body = { max_tokens: 300, tools: [weatherTool], messages: [question] }
    const direct = await fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': SIM_KEY, ...versioned, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, model: 'claude-x-up' }),
    })
    const upstreamText = await direct.text()
    const upstreamId = JSON.parse(upstreamText).id

    sim.setScenario('claude-x-up', scenario)
    const res = await postMessages(h, { ...body, model: 'svc-max' })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/json;charset=utf-8')
    const requestId = res.headers.get('x-request-id')!
    expect(await res.text()).toBe(upstreamText.replace(`"id":"${upstreamId}"`, `"id":"msg_${requestId}"`))
    expect(await requestDetail(h, requestId)).toMatchObject({
      status: 'completed',
      total_input_tokens: 9,
      total_cached_input_tokens: 3,
      total_output_tokens: 21,
    })
  })

  test('anthropic-beta, ?beta=true and the client’s anthropic-version reach the anthropic upstream', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', { text: 'beta ok', usage: { input: 2, output: 2 } })
    const sent: Request[] = []
    const message = await sdk(h, 'compat-a', sent).beta.messages.create({
      model: 'svc-max',
      max_tokens: 50,
      messages: ask,
      betas: ['interleaved-thinking-2025-05-14'],
    })
    expect(message.content as unknown[]).toEqual([{ type: 'text', text: 'beta ok' }])
    expect(sim.requests[0]!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14')
    expect(sim.requests[0]!.headers['anthropic-version']).toBe(sent[0]!.headers.get('anthropic-version')!)

    const res = await h.call('/compat-a/v1/messages?beta=true', {
      method: 'POST',
      json: { model: 'svc-max', max_tokens: 50, messages: ask },
      headers: {
        'anthropic-version': '2024-10-22',
        'anthropic-beta': 'prompt-caching-2024-07-31,files-api-2025-04-14',
      },
    })
    expect(res.status).toBe(200)
    expect(sim.requests[1]!.headers['anthropic-beta']).toBe('prompt-caching-2024-07-31,files-api-2025-04-14')
    expect(sim.requests[1]!.headers['anthropic-version']).toBe('2024-10-22')

    // x-compat-version alone is enough for the gateway; the upstream gets Anthropic's default version.
    const compat = await postMessages(
      h,
      { model: 'svc-max', max_tokens: 50, messages: ask },
      { 'x-compat-version': '2023-06-01' },
    )
    expect(compat.status).toBe(200)
    expect(sim.requests[2]!.headers['anthropic-version']).toBe('2023-06-01')
  })

  test('anthropic-beta without the 1M-context beta for a 200K model, where Anthropic bills it above list price', async () => {
    const h = await gateway({ models: [{ ...claudeX, context_window: 200_000 }] })
    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 2, output: 2 } })
    for (const [sent, forwarded] of [
      ['context-1m-2025-08-07,interleaved-thinking-2025-05-14', 'interleaved-thinking-2025-05-14'],
      [
        'interleaved-thinking-2025-05-14, context-1m-2025-08-07 ,fine-grained-tool-streaming-2025-05-14',
        'interleaved-thinking-2025-05-14,fine-grained-tool-streaming-2025-05-14',
      ],
      ['context-1m-2025-08-07', undefined],
    ] as const) {
      sim.requests.length = 0
      const res = await postMessages(
        h,
        { model: 'svc-max', max_tokens: 10, messages: ask },
        { ...versioned, 'anthropic-beta': sent },
      )
      expect(res.status).toBe(200)
      expect(sim.requests[0]!.headers['anthropic-beta']).toBe(forwarded)
    }
    // A model the catalog gives a 1M window (and prices for it) gets it as sent.
    const wide = await gateway({ models: [{ ...claudeX, context_window: 1_000_000 }] })
    sim.requests.length = 0
    await postMessages(
      wide,
      { model: 'svc-max', max_tokens: 10, messages: ask },
      { ...versioned, 'anthropic-beta': 'context-1m-2025-08-07' },
    )
    expect(sim.requests[0]!.headers['anthropic-beta']).toBe('context-1m-2025-08-07')
  })

  test('a Chat upstream never sees anthropic-beta', async () => {
    const h = await gateway()
    sim.setScenario('gpt-y-up', { text: 'ok', usage: { input: 1, output: 1 } })
    const res = await postMessages(
      h,
      { model: 'svc-pro', max_tokens: 10, messages: ask },
      { ...versioned, 'anthropic-beta': 'x-1' },
    )
    expect(res.status).toBe(200)
    expect(sim.requests[0]!.headers['anthropic-beta']).toBeUndefined()
  })
})

async function expectError(res: Response, status: number, type: string, message?: string | RegExp) {
  expect(res.status).toBe(status)
  expect(res.headers.get('content-type')).toContain('application/json')
  const body = (await res.json()) as { type: string; error: { type: string; message: string } }
  expect(body).toEqual({ type: 'error', error: { type, message: expect.any(String) } })
  if (typeof message === 'string') expect(body.error.message).toContain(message)
  else if (message) expect(body.error.message).toMatch(message)
  return body.error.message
}

describe('messages: validation and errors before any upstream', () => {
  test('unknown profile: 400 listing the valid ones, with no request id (nothing is recorded)', async () => {
    const h = await gateway()
    const res = await postMessages(h, { model: 'claude-3-opus', max_tokens: 10, messages: ask })
    expect(res.headers.get('x-request-id')).toBeNull()
    const message = await expectError(res, 400, 'invalid_request_error')
    for (const name of ['svc-pro', 'svc-max', 'svc-ultra-saver', 'claude-3-opus']) expect(message).toContain(name)
    expect(sim.requests).toHaveLength(0)
  })

  test('the SDK surfaces a 400 as BadRequestError', async () => {
    const h = await gateway()
    const err = await sdk(h)
      .messages.create({ model: 'gpt-4', max_tokens: 10, messages: ask })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.BadRequestError)
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error' },
    })
  })

  test('max_tokens 0, missing max_tokens, messages [] and a non-JSON body are 400 invalid_request_error', async () => {
    const h = await gateway()
    await expectError(
      await postMessages(h, { model: 'svc-max', max_tokens: 0, messages: ask }),
      400,
      'invalid_request_error',
      'max_tokens',
    )
    await expectError(
      await postMessages(h, { model: 'svc-max', messages: ask }),
      400,
      'invalid_request_error',
      'max_tokens',
    )
    await expectError(
      await postMessages(h, { model: 'svc-max', max_tokens: 10, messages: [] }),
      400,
      'invalid_request_error',
      'messages',
    )
    const notJson = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      body: '{"model": "svc-max",',
      headers: { ...versioned, 'content-type': 'application/json' },
    })
    await expectError(notJson, 400, 'invalid_request_error', 'not valid JSON')
    expect(sim.requests).toHaveLength(0)
  })

  test('extra fields are allowed and passed through to an anthropic upstream', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 1, output: 1 } })
    const body = {
      model: 'svc-max',
      max_tokens: 10,
      messages: ask,
      context_management: { edits: [] },
      some_future_field: 1,
    }
    expect((await postMessages(h, body)).status).toBe(200)
    expect(sim.requests[0]!.body).toEqual({ ...body, model: 'claude-x-up' })
  })

  test('a version header is required', async () => {
    const h = await gateway()
    await expectError(
      await postMessages(h, { model: 'svc-max', max_tokens: 10, messages: ask }, {}),
      400,
      'invalid_request_error',
      'anthropic-version',
    )
    expect(sim.requests).toHaveLength(0)
  })

  test('a version header that is not a YYYY-MM-DD date is a 400 naming the header, with an example', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 1, output: 1 } })
    const body = { model: 'svc-max', max_tokens: 10, messages: ask }
    const malformed: Record<string, string>[] = [
      { 'anthropic-version': 'banana' },
      { 'x-compat-version': 'banana' },
      { 'anthropic-version': '2023-13-01' },
      { 'x-compat-version': '20230601' },
      // Each header sent is checked, even beside a good one.
      { 'anthropic-version': '2023-06-01', 'x-compat-version': 'v1' },
    ]
    for (const headers of malformed) {
      const name = 'x-compat-version' in headers ? 'x-compat-version' : 'anthropic-version'
      const message = await expectError(await postMessages(h, body, headers), 400, 'invalid_request_error', name)
      expect(message).toContain('YYYY-MM-DD')
      expect(message).toContain('2023-06-01')
    }
    expect(sim.requests).toHaveLength(0)

    // What Claude Code and the Anthropic SDK send, and other dates, pass in either header.
    const wellFormed: Record<string, string>[] = [
      { 'anthropic-version': '2023-06-01' },
      { 'x-compat-version': '2023-06-01' },
      { 'anthropic-version': '2024-10-22' },
      { 'x-compat-version': '2024-02-29' },
      { 'anthropic-version': '2023-06-01', 'x-compat-version': '2023-06-01' },
    ]
    for (const headers of wellFormed) {
      expect({ headers, status: (await postMessages(h, body, headers)).status }).toEqual({ headers, status: 200 })
    }
    expect(sim.requests).toHaveLength(wellFormed.length)
  })

  test('no key and a bad key are 401 authentication_error; x-api-key is accepted', async () => {
    const h = await gateway()
    const body = { model: 'svc-max', max_tokens: 10, messages: ask }
    const none = await h.call('/compat-a/v1/messages', { method: 'POST', json: body, headers: versioned, key: null })
    await expectError(none, 401, 'authentication_error', 'missing API key')
    const bad = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      json: body,
      headers: versioned,
      key: 'svc-not-a-real-key-000000',
    })
    await expectError(bad, 401, 'authentication_error', 'invalid API key')
    const wrongHeader = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      json: body,
      headers: { ...versioned, 'x-api-key': 'nope' },
      key: null,
    })
    await expectError(wrongHeader, 401, 'authentication_error')
    const err = await new Anthropic({
      apiKey: 'svc-wrong',
      baseURL: 'http://localhost/compat-a',
      fetch: (url, init) => h.app.handle(new Request(String(url), init)),
      maxRetries: 0,
    }).messages
      .create(body)
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError)

    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 1, output: 1 } })
    const viaXApiKey = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      json: body,
      headers: { ...versioned, 'x-api-key': h.key },
      key: null,
    })
    expect(viaXApiKey.status).toBe(200)

    // A proxy's own Basic credentials in front of the SDK's x-api-key: the client's key still
    // counts (it was refused as "missing"); a Basic header alone is said to hold no key.
    const behindProxy = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      json: body,
      headers: { ...versioned, 'x-api-key': h.key, authorization: 'Basic cHJveHk6c2VjcmV0' },
      key: null,
    })
    expect(behindProxy.status).toBe(200)
    const basicOnly = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      json: body,
      headers: { ...versioned, authorization: 'Basic cHJveHk6c2VjcmV0' },
      key: null,
    })
    await expectError(basicOnly, 401, 'authentication_error', 'no API key in the Authorization header')
  })

  // Elysia reads and checks a body before the route's key check: an unknown caller heard what was
  // wrong with its body. Anthropic's and OpenAI's APIs answer 401 first.
  test('no key or a bad one with a malformed body: still 401, on both model routes, usage and admin', async () => {
    const h = await gateway()
    const refused = (res: Response) => res.status
    const bodies = [{ model: 5 }, { model: 'svc-max', max_tokens: 'x', messages: ask }]
    for (const json of bodies) {
      for (const key of [null, 'svc-not-a-real-key-000000']) {
        const a = await h.call('/compat-a/v1/messages', { method: 'POST', json, headers: versioned, key })
        await expectError(a, 401, 'authentication_error')
        const b = await h.call('/compat-b/v1/responses', { method: 'POST', json: { ...json, input: 5 }, key })
        expect(refused(b)).toBe(401)
      }
    }
    const notJson = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      body: '{oops',
      headers: versioned,
      key: null,
    })
    await expectError(notJson, 401, 'authentication_error')
    // With its key, the body's fault is said.
    const known = await h.call('/compat-a/v1/messages', { method: 'POST', json: bodies[1], headers: versioned })
    await expectError(known, 400, 'invalid_request_error', 'max_tokens')
    // The usage and admin routes alike: their key, or the admin token, first.
    const feedback = await h.call('/v1/usage/requests/x/feedback', {
      method: 'POST',
      key: null,
      json: { rating: 'sideways' },
    })
    await expectError(feedback, 401, 'authentication_error')
    const grant = await h.call('/v1/admin/grants', { method: 'POST', key: 'wrong-token', json: { usd: 1 } })
    await expectError(grant, 401, 'authentication_error', 'invalid admin token')
  })

  test('402 billing_error when the account has no credit; the request is recorded', async () => {
    const h = await gateway({ grantUsd: undefined })
    const res = await postMessages(h, { model: 'svc-max', max_tokens: 10, messages: ask })
    const requestId = res.headers.get('x-request-id')!
    expect(requestId).toMatch(ULID)
    await expectError(res, 402, 'billing_error', 'svc-max')
    expect(sim.requests).toHaveLength(0)
    expect(await requestDetail(h, requestId)).toMatchObject({
      status: 'failed',
      http_status: 402,
      attempts: 0,
      total_cost_nanos: 0,
      error: { type: 'billing' },
      provider_ranks: [{ model_id: 'claude-x', status: 'skipped', reason: expect.stringContaining('no credit') }],
    })
    const err = await sdk(h)
      .messages.create({ model: 'svc-max', max_tokens: 10, messages: ask })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.APIError)
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(402)
  })

  test('402 when the only grant is scoped to another routing mode; that mode still works', async () => {
    const h = await gateway({ grantUsd: undefined })
    await h.deps.admin.addGrant({ account: h.accountId, usd: 1, routingModes: ['pro'] })
    h.deps.credit.invalidate(h.accountId)
    const res = await postMessages(h, { model: 'svc-max', max_tokens: 10, messages: ask })
    expect(res.headers.get('x-request-id')).toMatch(ULID)
    await expectError(res, 402, 'billing_error')
    sim.setScenario('gpt-y-up', { text: 'ok', usage: { input: 1, output: 1 } })
    expect((await postMessages(h, { model: 'svc-pro', max_tokens: 10, messages: ask })).status).toBe(200)
  })

  test('503 when no provider serves the profile', async () => {
    const h = await gateway()
    const res = await postMessages(h, { model: 'svc-ultra-saver', max_tokens: 10, messages: ask })
    const requestId = res.headers.get('x-request-id')!
    expect(requestId).toMatch(ULID)
    // api_error, not overloaded_error: Claude Code retries the latter for minutes whatever x-should-retry says.
    await expectError(res, 503, 'api_error', 'svc-ultra-saver')
    expect(await requestDetail(h, requestId)).toMatchObject({ status: 'failed', http_status: 503, attempts: 0 })
  })

  test('503 when the profile’s only model is unpriced or its provider has no key', async () => {
    const h = await createHarness({
      grantUsd: 5,
      env: {},
      config: {
        catalog: { builtin: false },
        providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
        models: [claudeX],
      },
    })
    const res = await postMessages(h, { model: 'svc-max', max_tokens: 10, messages: ask })
    await expectError(res, 503, 'api_error', 'no key')
    expect(res.headers.get('x-request-id')).toMatch(ULID)
  })
})

describe('messages: models, HEAD, count_tokens', () => {
  test('models list in Anthropic’s shape, with pagination and each profile’s largest window and output', async () => {
    const h = await gateway({
      models: [
        { ...claudeX, profiles: ['max', 'pro'], context_window: 200_000, max_output_tokens: 64_000 },
        { ...gptY, context_window: 400_000, max_output_tokens: 32_000 },
        // Retired: no longer routed to, so its window is no longer the profile's.
        { ...gptY, id: 'gpt-old', profiles: ['max'], context_window: 1_000_000, retires_on: '2026-01-01' },
      ],
    })
    const list = async (query = '') => {
      const res = await h.call(`/compat-a/v1/models${query}`)
      expect(res.status).toBe(200)
      return res.json()
    }
    const all = await list()
    const limits: Record<string, [number | null, number | null]> = {
      'svc-pro': [400_000, 64_000],
      'svc-max': [200_000, 64_000],
      'svc-ultra-saver': [null, null],
    }
    expect(all).toEqual({
      data: ['svc-pro', 'svc-max', 'svc-ultra-saver'].map((id) => ({
        type: 'model',
        id,
        display_name: expect.stringContaining(id),
        created_at: '2026-11-01T00:00:00Z',
        max_input_tokens: limits[id]![0],
        max_tokens: limits[id]![1],
      })),
      has_more: false,
      first_id: 'svc-pro',
      last_id: 'svc-ultra-saver',
    })
    const ids = (page: { data: { id: string }[] }) => page.data.map((m) => m.id)
    expect(await list('?limit=1')).toMatchObject({ has_more: true, first_id: 'svc-pro', last_id: 'svc-pro' })
    const second = await list('?limit=1&after_id=svc-pro')
    expect(ids(second)).toEqual(['svc-max'])
    expect(second.has_more).toBe(true)
    const last = await list('?limit=2&after_id=svc-pro')
    expect(ids(last)).toEqual(['svc-max', 'svc-ultra-saver'])
    expect(last.has_more).toBe(false)
    const before = await list('?limit=1&before_id=svc-ultra-saver')
    expect(ids(before)).toEqual(['svc-max'])
    expect(before.has_more).toBe(true)
    expect(ids(await list('?before_id=svc-max'))).toEqual(['svc-pro'])
    expect(ids(await h.call('/anthropic/v1/models').then((r) => r.json()))).toEqual([
      'svc-pro',
      'svc-max',
      'svc-ultra-saver',
    ])

    // The SDK's auto-pagination walks the pages.
    const seen: string[] = []
    for await (const model of sdk(h).models.list({ limit: 1 })) seen.push(model.id)
    expect(seen).toEqual(['svc-pro', 'svc-max', 'svc-ultra-saver'])
  })

  test('one model, and 404 for an unknown one', async () => {
    const h = await gateway()
    const one = await sdk(h).models.retrieve('svc-ultra-saver')
    expect(one).toMatchObject({ type: 'model', id: 'svc-ultra-saver', created_at: '2026-11-01T00:00:00Z' })
    const res = await h.call('/compat-a/v1/models/claude-3-opus')
    await expectError(res, 404, 'not_found_error', 'svc-pro')
    expect((await h.call('/compat-a/v1/models', { key: null })).status).toBe(401)
  })

  test('HEAD on the base URLs is answered', async () => {
    const h = await gateway()
    for (const path of ['/compat-a', '/compat-a/', '/anthropic', '/anthropic/']) {
      const res = await h.app.handle(new Request(`http://localhost${path}`, { method: 'HEAD' }))
      expect(res.status).toBe(200)
      expect(await res.text()).toBe('')
    }
  })

  test('count_tokens for an account with no credit is counted locally, not on the platform’s key', async () => {
    const h = await gateway({ grantUsd: undefined })
    const body = { model: 'svc-max', system: 'You are a weather bot.', tools: [weatherTool], messages: [question] }
    const counted = await sdk(h).messages.countTokens(body)
    expect(counted.input_tokens).toBe(countLocally(decodeAnthropicRequest({ ...body, max_tokens: 1 })))
    expect(sim.requests).toEqual([])
  })

  test('count_tokens asks no Claude model routing would not send the request to (unpriced, retired)', async () => {
    const body = { model: 'svc-max', messages: [question] }
    const local = countLocally(decodeAnthropicRequest({ ...body, max_tokens: 1 }))
    const unpriced = await gateway({ models: [{ ...claudeX, input_usd_per_mtok: undefined }, gptY] })
    expect((await sdk(unpriced).messages.countTokens(body)).input_tokens).toBe(local)
    const retired = await gateway({ models: [{ ...claudeX, retires_on: '2026-01-01' }, gptY] })
    expect((await sdk(retired).messages.countTokens(body)).input_tokens).toBe(local)
    expect(sim.requests).toEqual([])
  })

  test('count_tokens is forwarded to the profile’s anthropic upstream', async () => {
    const h = await gateway()
    const body = {
      model: 'svc-max',
      system: 'You are a weather bot.',
      tools: [weatherTool],
      messages: [question],
    }
    const counted = await sdk(h).messages.countTokens(body)
    expect(counted).toEqual({ input_tokens: countRequestTokens({ ...body, model: 'claude-x-up' }) })
    expect(counted.input_tokens).toBeGreaterThan(0)
    expect(sim.requests).toHaveLength(1)
    expect(sim.requests[0]!.path).toBe('/v1/messages/count_tokens')
    expect(sim.requests[0]!.headers['x-api-key']).toBe(SIM_KEY)
    expect(sim.requests[0]!.body).toEqual({ ...body, model: 'claude-x-up' })

    const viaBeta = await h.call('/anthropic/v1/messages/count_tokens?beta=true', {
      method: 'POST',
      json: { model: 'svc-max', messages: ask },
      headers: { ...versioned, 'anthropic-beta': 'token-counting-2024-11-01' },
    })
    expect(await viaBeta.json()).toEqual({ input_tokens: 2 })
    expect(sim.requests[1]!.headers['anthropic-beta']).toBe('token-counting-2024-11-01')
  })

  test('count_tokens keeps svc’s session metadata from Anthropic, which refuses unknown metadata keys', async () => {
    const h = await gateway()
    const counted = await h.call('/compat-a/v1/messages/count_tokens', {
      method: 'POST',
      json: { model: 'svc-max', messages: ask, metadata: { user_id: 'u1', session_id: 's1', agent_id: 'a1' } },
      headers: versioned,
    })
    expect(counted.status).toBe(200)
    expect(sim.requests).toHaveLength(1)
    expect(sim.requests[0]!.body).toEqual({ model: 'claude-x-up', messages: ask, metadata: { user_id: 'u1' } })
  })

  test('count_tokens with only Chat upstreams: a real tokenizer count, never 0, growing with the input', async () => {
    const h = await gateway()
    const count = async (content: string) => {
      const res = await h.call('/compat-a/v1/messages/count_tokens', {
        method: 'POST',
        json: { model: 'svc-pro', messages: [{ role: 'user', content }] },
        headers: versioned,
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { input_tokens: number }).input_tokens
    }
    const short = await count('hi')
    const long = await count('The quick brown fox jumps over the lazy dog. '.repeat(20))
    expect(short).toBeGreaterThan(0)
    expect(long).toBeGreaterThan(short + 150)
    expect(sim.requests).toHaveLength(0)
  })

  test('count_tokens falls back to the tokenizer when the anthropic upstream cannot answer', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', {})
    const closed = Bun.serve({ port: 0, fetch: () => new Response() })
    const port = closed.port
    await closed.stop(true)
    const down = await createHarness({
      grantUsd: 5,
      env: { SIM_KEY },
      config: {
        catalog: { builtin: false },
        providers: { anth: { kind: 'anthropic', base_url: `http://127.0.0.1:${port}`, api_key_env: 'SIM_KEY' } },
        models: [claudeX],
      },
    })
    const body = { model: 'svc-max', messages: [question] }
    const res = await down.call('/compat-a/v1/messages/count_tokens', {
      method: 'POST',
      json: body,
      headers: versioned,
    })
    expect(res.status).toBe(200)
    const local = ((await res.json()) as { input_tokens: number }).input_tokens
    expect(local).toBeGreaterThan(0)
    // The same body through a live anthropic upstream gets the upstream's own count instead.
    const live = await sdk(h).messages.countTokens(body)
    expect(live.input_tokens).toBe(countRequestTokens({ ...body, model: 'claude-x-up' }))
  })

  test('count_tokens answered with a count no count can be: the tokenizer counts instead', async () => {
    // 0 too: Claude counts a message's framing, so a stub's 0 is no count.
    const answers = [
      { input_tokens: 0 },
      { input_tokens: -5 },
      { input_tokens: 1.5 },
      { input_tokens: 1e300 },
      { input_tokens: '12' },
    ]
    let next = 0
    const odd = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json(answers[next++]) })
    try {
      const h = await createHarness({
        grantUsd: 5,
        env: { SIM_KEY },
        config: {
          catalog: { builtin: false },
          providers: { anth: { kind: 'anthropic', base_url: `http://127.0.0.1:${odd.port}`, api_key_env: 'SIM_KEY' } },
          models: [claudeX],
        },
      })
      const body = { model: 'svc-max', messages: [question] }
      for (const _ of answers) {
        const res = await h.call('/compat-a/v1/messages/count_tokens', {
          method: 'POST',
          json: body,
          headers: versioned,
        })
        expect(await res.json()).toEqual({
          input_tokens: countLocally(decodeAnthropicRequest({ ...body, max_tokens: 1 })),
        })
      }
      expect(next).toBe(answers.length)
    } finally {
      odd.stop(true)
    }
  })

  test('count_tokens validates like messages', async () => {
    const h = await gateway()
    const post = (json: unknown, headers: Record<string, string> = versioned) =>
      h.call('/compat-a/v1/messages/count_tokens', { method: 'POST', json, headers })
    await expectError(await post({ model: 'nope', messages: ask }), 400, 'invalid_request_error', 'svc-pro')
    await expectError(await post({ model: 'svc-max', messages: [] }), 400, 'invalid_request_error')
    await expectError(
      await post({ model: 'svc-max', messages: ask }, {}),
      400,
      'invalid_request_error',
      'anthropic-version',
    )
    await expectError(
      await post({ model: 'svc-max', messages: ask }, { 'x-compat-version': 'banana' }),
      400,
      'invalid_request_error',
      'x-compat-version',
    )
  })
})

describe('messages: sessions', () => {
  test('session headers and Claude Code’s metadata land on the request, one sessions row per session', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 10, output: 2 } })
    const body = { model: 'svc-max', max_tokens: 10, messages: ask }
    const send = async (extra: Record<string, unknown>, headers: Record<string, string>) => {
      const res = await postMessages(h, { ...body, ...extra }, { ...versioned, ...headers })
      expect(res.status).toBe(200)
      return requestDetail(h, res.headers.get('x-request-id')!)
    }
    const explicit = await send({}, { 'x-session-id': 'sess-1', 'x-agent-id': 'agent-7', 'x-session-source': 'my-cli' })
    expect(explicit).toMatchObject({ session_id: 'sess-1', agent_id: 'agent-7', session_source: 'my-cli' })
    const again = await send({}, { 'x-session-id': 'sess-1' })
    expect(again).toMatchObject({ session_id: 'sess-1' })

    const userId = JSON.stringify({ device_id: 'dev-9', account_uuid: '', session_id: 'cc-sess-2' })
    const fromMetadata = await send({ metadata: { user_id: userId } }, {})
    expect(fromMetadata).toMatchObject({ session_id: 'cc-sess-2', session_source: 'claude-code' })
    expect(fromMetadata.agent_id).toBeUndefined()
    // Passed through untouched to the anthropic upstream.
    expect(sim.requests[2]!.body).toMatchObject({ metadata: { user_id: userId } })

    // Claude Code before 2.1.78 wrote user_id as one string, the session at its end.
    const legacy = `user_${'a'.repeat(64)}_account_0f1e2d3c-aaaa-bbbb-cccc-111122223333_session_cc-sess-4`
    expect(await send({ metadata: { user_id: legacy } }, {})).toMatchObject({
      session_id: 'cc-sess-4',
      session_source: 'claude-code',
    })
    // A plain user id names no session.
    expect((await send({ metadata: { user_id: 'user-42' } }, {})).session_id).toBeUndefined()

    const fromHeader = await send({}, { 'x-claude-code-session-id': 'cc-sess-3' })
    expect(fromHeader).toMatchObject({ session_id: 'cc-sess-3', session_source: 'claude-code' })

    const none = await send({}, {})
    expect(none.session_id).toBeUndefined()

    const sessions = (await (await h.call('/v1/usage/sessions/list')).json()) as { session_id: string }[]
    const bySession = Object.fromEntries(sessions.map((s) => [s.session_id, s]))
    expect(Object.keys(bySession).sort()).toEqual(['cc-sess-2', 'cc-sess-3', 'cc-sess-4', 'sess-1'])
    // 10×3000 + 2×15000 per request
    expect(bySession['sess-1']).toMatchObject({
      request_count: 2,
      total_cost_nanos: 120_000,
      agent_id: 'agent-7',
      session_source: 'my-cli',
    })
    expect(bySession['cc-sess-2']).toMatchObject({
      request_count: 1,
      total_cost_nanos: 60_000,
      session_source: 'claude-code',
    })
  })
})

test('a session that names no source takes it from the user agent, else api', async () => {
  const h = await gateway()
  sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 1, output: 1 } })
  const body = { model: 'svc-max', max_tokens: 10, messages: ask }
  const sourceOf = async (headers: Record<string, string>) => {
    const res = await postMessages(h, body, { ...versioned, ...headers })
    expect(res.status).toBe(200)
    return (await requestDetail(h, res.headers.get('x-request-id')!)).session_source
  }
  expect(await sourceOf({ 'x-session-id': 's-api', 'user-agent': 'my-tool/1.0' })).toBe('api')
  expect(await sourceOf({ 'x-session-id': 's-cc', 'user-agent': 'claude-cli/2.0.14 (external, cli)' })).toBe(
    'claude-code',
  )
  expect(await sourceOf({ 'x-session-id': 's-codex', 'user-agent': 'codex_exec/0.169.0 (Debian 12; x86_64)' })).toBe(
    'codex',
  )
  // A named source still wins, and a request without a session has none.
  expect(
    await sourceOf({ 'x-session-id': 's-named', 'x-session-source': 'my-ide', 'user-agent': 'claude-cli/2' }),
  ).toBe('my-ide')
  expect(await sourceOf({ 'user-agent': 'claude-cli/2.0.14' })).toBeUndefined()

  const sessions = (await (await h.call('/v1/usage/sessions/list')).json()) as Record<string, unknown>[]
  expect(Object.fromEntries(sessions.map((s) => [s.session_id, s.session_source]))).toEqual({
    's-api': 'api',
    's-cc': 'claude-code',
    's-codex': 'codex',
    's-named': 'my-ide',
  })
})

describe('messages: metadata', () => {
  test("metadata.session_id names the session and stays in svc: Anthropic's metadata takes only user_id", async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 1, output: 1 } })
    const withUser = await postMessages(h, {
      model: 'svc-max',
      max_tokens: 100,
      messages: ask,
      metadata: { user_id: 'u-1', session_id: 'sess-meta-1' },
    })
    expect(withUser.status).toBe(200)
    expect(sim.requests[0]!.body).toEqual({
      model: 'claude-x-up',
      max_tokens: 100,
      messages: ask,
      metadata: { user_id: 'u-1' },
    })
    expect((await requestDetail(h, withUser.headers.get('x-request-id')!)).session_id).toBe('sess-meta-1')
    await postMessages(h, { model: 'svc-max', max_tokens: 100, messages: ask, metadata: { session_id: 'sess-meta-2' } })
    expect(sim.requests[1]!.body).toEqual({ model: 'claude-x-up', max_tokens: 100, messages: ask })
  })
})

describe('messages: adaptive thinking to a model that takes budgets', () => {
  // What Claude Code sends whatever model it is routed to (test/agents-cli.test.ts).
  const claudeCodeThinking = {
    thinking: { type: 'adaptive', display: 'summarized' },
    output_config: { effort: 'high', format: { type: 'json_schema', schema: { type: 'object' } } },
  }

  test('passed through as a budget for the effort, the rest of output_config kept', async () => {
    const h = await gateway()
    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 1, output: 1 } })
    const res = await postMessages(h, { model: 'svc-max', max_tokens: 8_000, messages: ask, ...claudeCodeThinking })
    expect(res.status).toBe(200)
    // Above 4,096 tokens of output svc streams from the upstream for a non-streaming client (assembled-answers.test.ts).
    expect(sim.requests[0]!.body).toEqual({
      model: 'claude-x-up',
      max_tokens: 8_000,
      messages: ask,
      stream: true,
      thinking: { type: 'enabled', budget_tokens: 4096, display: 'summarized' },
      output_config: { format: { type: 'json_schema', schema: { type: 'object' } } },
    })
    // A max_tokens at or under the budget is raised past it; no effort means medium's budget.
    await postMessages(h, { model: 'svc-max', max_tokens: 1000, messages: ask, thinking: { type: 'adaptive' } })
    expect(sim.requests[1]!.body).toMatchObject({
      max_tokens: 3048,
      thinking: { type: 'enabled', budget_tokens: 2048 },
    })
    expect(sim.requests[1]!.body).not.toHaveProperty('output_config')
    // An effort the table does not know is medium's too, whatever its name.
    await postMessages(h, {
      model: 'svc-max',
      max_tokens: 8_000,
      messages: ask,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'constructor' },
    })
    expect(sim.requests[2]!.body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } })
  })

  test('sent as the client wrote it to a model configured with adaptive_thinking', async () => {
    const h = await gateway({ models: [{ ...claudeX, adaptive_thinking: true }, gptY] })
    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 1, output: 1 } })
    await postMessages(h, { model: 'svc-max', max_tokens: 8_000, messages: ask, ...claudeCodeThinking })
    expect(sim.requests[0]!.body).toEqual({
      model: 'claude-x-up',
      max_tokens: 8_000,
      messages: ask,
      stream: true,
      ...claudeCodeThinking,
    })
  })
})

describe('messages: max_tokens clamp', () => {
  test('max_tokens above the model’s max output is clamped upstream, and provider_ranks says so', async () => {
    const h = await gateway({
      models: [
        { ...claudeX, max_output_tokens: 1024 },
        { ...gptY, max_output_tokens: 2048 },
      ],
    })
    sim.setScenario('claude-x-up', { text: 'ok', usage: { input: 1, output: 1 } })
    sim.setScenario('gpt-y-up', { text: 'ok', usage: { input: 1, output: 1 } })
    const viaAnthropic = await postMessages(h, { model: 'svc-max', max_tokens: 64_000, messages: ask })
    expect(viaAnthropic.status).toBe(200)
    expect(sim.requests[0]!.body).toMatchObject({ model: 'claude-x-up', max_tokens: 1024 })
    const ranks = (await requestDetail(h, viaAnthropic.headers.get('x-request-id')!)).provider_ranks
    expect(ranks).toEqual([
      expect.objectContaining({
        model_id: 'claude-x',
        status: 'chosen',
        reason: expect.stringContaining('max_tokens clamped from 64000 to 1024'),
      }),
    ])

    const viaChat = await postMessages(h, { model: 'svc-pro', max_tokens: 64_000, stream: true, messages: ask })
    await viaChat.text()
    expect(sim.requests[1]!.body).toMatchObject({ model: 'gpt-y-up', max_tokens: 2048 })
    const chatRanks = (await requestDetail(h, viaChat.headers.get('x-request-id')!)).provider_ranks
    expect(chatRanks[0]).toMatchObject({
      status: 'chosen',
      reason: expect.stringContaining('max_tokens clamped from 64000 to 2048'),
    })

    // Under the limit: sent as asked.
    await postMessages(h, { model: 'svc-max', max_tokens: 500, messages: ask })
    expect(sim.requests[2]!.body).toMatchObject({ max_tokens: 500 })
  })
})

describe('messages: the model an answer names', () => {
  test('a translated answer names the catalog’s upstream model, streamed or not, whatever snapshot the upstream reports', async () => {
    const h = await translationGateway(sim)
    const snapshot = 'gpt-4o-mini-2024-07-18'
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      sseFrame(undefined, {
        id: 'chatcmpl-1',
        object: 'chat.completion.chunk',
        created: 1,
        model: snapshot,
        choices: [{ index: 0, delta, finish_reason: finish }],
      })
    scriptedUpstream(h, () => ({
      json: {
        id: 'chatcmpl-1',
        object: 'chat.completion',
        created: 1,
        model: snapshot,
        choices: [{ index: 0, message: { role: 'assistant', content: 'Hi.' }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      },
      sse: [chunk({ role: 'assistant', content: 'Hi.' }), chunk({}, 'stop'), sseFrame(undefined, '[DONE]')],
    }))
    const ask = (stream: boolean) =>
      h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: {
          model: profileFor['openai-chat'],
          max_tokens: 100,
          stream,
          messages: [{ role: 'user', content: 'hi' }],
        },
      })
    expect((await (await ask(false)).json()).model).toBe(upstreamModelFor['openai-chat'])
    const frames = parseFrames(await (await ask(true)).text())
    expect(frames[0]!.data.message.model).toBe(upstreamModelFor['openai-chat'])
  })
})
