// End to end over the messages route when things go wrong: fallback before the first byte, errors
// that must not fall back, every candidate failing, streams that break after the first byte, and
// clients that go away — each checked on the wire and in the ledger.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import type { ConfigFile, ModelSection } from '../src/config/schema'
import { createHarness, type Harness, remainingNanos, requestDetail } from './support/harness'
import { parseFrames, type SseFrame } from './support/sse-frames'
import { type Scenario, startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const GRANT = 5_000_000_000
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/

/** A port nobody listens on: bound once, then released. */
const closedPort = (() => {
  const server = Bun.serve({ port: 0, fetch: () => new Response() })
  const port = server.port
  server.stop(true)
  return port
})()

// claude-a: 3000 in, 300 cache read, 3750 cache write, 15000 out (nanos/token).
// gpt-b: 1000 in, 100 cache read, 1250 cache write, 2000 out.
const prices = {
  claude: {
    input_usd_per_mtok: 3,
    output_usd_per_mtok: 15,
    cache_read_usd_per_mtok: 0.3,
    cache_write_usd_per_mtok: 3.75,
  },
  gpt: { input_usd_per_mtok: 1, output_usd_per_mtok: 2, cache_read_usd_per_mtok: 0.1, cache_write_usd_per_mtok: 1.25 },
}

type ProviderId = 'anth' | 'chat' | 'dead'

/** Two candidates under svc-max: `primary` (quality 95) first, gpt-b on the Chat provider (80) second. */
function gateway(opts: { primary?: ProviderId; routing?: ConfigFile['routing'] } = {}): Promise<Harness> {
  const primary = opts.primary ?? 'anth'
  const models: ModelSection[] = [
    {
      id: 'claude-a',
      provider: primary,
      upstream_model: 'claude-a-up',
      profiles: ['max'],
      quality: 95,
      ...(primary === 'chat' ? prices.gpt : prices.claude),
    },
    { id: 'gpt-b', provider: 'chat', upstream_model: 'gpt-b-up', profiles: ['max'], quality: 80, ...prices.gpt },
  ]
  return createHarness({
    grantUsd: 5,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      routing: opts.routing,
      providers: {
        anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
        chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
        dead: { kind: 'anthropic', base_url: `http://127.0.0.1:${closedPort}`, api_key_env: 'SIM_KEY' },
      },
      models,
    },
  })
}

const sdk = (h: Harness) =>
  new Anthropic({
    apiKey: h.key,
    baseURL: 'http://localhost/compat-a',
    fetch: (url, init) => h.app.handle(new Request(String(url), init)),
    maxRetries: 0,
  })

const ask = [{ role: 'user' as const, content: 'hello' }]
const versioned = { 'anthropic-version': '2023-06-01' }

const postMessages = (h: Harness, body: Record<string, unknown>) =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    json: { model: 'svc-max', max_tokens: 100, messages: ask, ...body },
    headers: versioned,
  })

/** The backup's answer: 40×1000 + 8×100 + 6×2000 nanos. */
const backupScenario: Scenario = { text: 'Backup here.', usage: { input: 40, cacheRead: 8, output: 6 } }
const backupCost = 40_000 + 800 + 12_000

describe('fallback before the first byte', () => {
  const cases: {
    name: string
    primary: ProviderId
    scenario?: Scenario
    routing?: ConfigFile['routing']
    reason: RegExp
  }[] = [
    {
      name: 'anthropic 529',
      primary: 'anth',
      scenario: { fault: { kind: 'status', status: 529 } },
      reason: /^overloaded: Overloaded/,
    },
    {
      name: 'anthropic 500',
      primary: 'anth',
      scenario: { fault: { kind: 'status', status: 500 } },
      reason: /^api_error: Internal server error/,
    },
    {
      // Cloudflare's own status in front of an origin that did not answer in time.
      name: 'anthropic 524 (a front timed out)',
      primary: 'anth',
      scenario: { fault: { kind: 'status', status: 524 } },
      reason: /^api_error: Simulated 524 error/,
    },
    {
      // This server does not do what the request asks: another may, and the model's health is untouched.
      name: 'chat 501',
      primary: 'chat',
      scenario: { fault: { kind: 'status', status: 501 } },
      reason: /^invalid_request: Simulated 501 error/,
    },
    {
      name: 'anthropic 401 (the platform key is wrong)',
      primary: 'anth',
      scenario: { fault: { kind: 'status', status: 401 } },
      // Anthropic's "invalid x-api-key", said as "invalid API key" (Claude Code reads x-api-key as its own sign-in gone).
      reason: /refused the gateway's own account there .*: invalid API key$/,
    },
    {
      name: 'anthropic 402 (the platform account is out of credit)',
      primary: 'anth',
      scenario: { fault: { kind: 'status', status: 402 } },
      reason:
        /^api_error: anth refused the gateway's own account there \(for the gateway's operator to fix; your svc key is fine\): Simulated 402 error/,
    },
    {
      name: 'chat 429',
      primary: 'chat',
      scenario: { fault: { kind: 'status', status: 429 } },
      reason: /^rate_limit: chat is rate-limiting the gateway's own account there/,
    },
    {
      name: 'chat 503',
      primary: 'chat',
      scenario: { fault: { kind: 'status', status: 503 } },
      reason: /^overloaded: Service unavailable/,
    },
    { name: 'connection refused', primary: 'dead', reason: /^api_error: upstream unreachable/ },
    {
      name: 'no first byte within routing.first_byte_timeout_ms',
      primary: 'anth',
      scenario: { firstByteDelayMs: 5_000, text: 'too late' },
      routing: { first_byte_timeout_ms: 100 },
      reason: /^timeout: upstream sent no response within 100 ms/,
    },
    {
      name: 'a 200 that is not JSON (an HTML error page)',
      primary: 'anth',
      scenario: { fault: { kind: 'wrong_content_type' } },
      reason: /content-type text\/html/,
    },
  ]

  for (const c of cases) {
    test(`${c.name} → the second candidate serves; two legs, charged for the second only`, async () => {
      const h = await gateway({ primary: c.primary, routing: c.routing })
      if (c.scenario) sim.setScenario('claude-a-up', c.scenario)
      sim.setScenario('gpt-b-up', backupScenario)
      const { data: message, response } = await sdk(h)
        .messages.create({ model: 'svc-max', max_tokens: 100, messages: ask })
        .withResponse()
      const requestId = response.headers.get('x-request-id')!
      expect(message).toMatchObject({
        id: `msg_${requestId}`,
        model: 'gpt-b-up',
        content: [{ type: 'text', text: 'Backup here.' }],
        usage: { input_tokens: 40, cache_read_input_tokens: 8, output_tokens: 6 },
      })
      const detail = await requestDetail(h, requestId)
      expect(detail).toMatchObject({
        status: 'completed',
        http_status: 200,
        attempts: 2,
        selected_model_id: 'gpt-b',
        selected_provider_id: 'chat',
        total_cost_nanos: backupCost,
        charged_nanos: backupCost,
        error: null,
      })
      expect(detail.provider_ranks).toEqual([
        expect.objectContaining({
          model_id: 'claude-a',
          provider_id: c.primary,
          status: 'failed',
          reason: expect.stringMatching(c.reason),
        }),
        expect.objectContaining({ model_id: 'gpt-b', provider_id: 'chat', status: 'chosen' }),
      ])
      expect(detail.usage_events).toEqual([
        expect.objectContaining({
          attempt: 1,
          model_id: 'claude-a',
          outcome: 'failed',
          error: expect.any(String),
          input_tokens: 0,
          output_tokens: 0,
          web_search_requests: 0,
          cost_nanos: 0,
          charged_nanos: 0,
        }),
        expect.objectContaining({
          attempt: 2,
          model_id: 'gpt-b',
          outcome: 'ok',
          estimated: false,
          cost_nanos: backupCost,
          charged_nanos: backupCost,
        }),
      ])
      expect(detail.grant_charges).toEqual([
        expect.objectContaining({ usage_event_id: detail.usage_events[1].id, amount_nanos: backupCost }),
      ])
      expect(await remainingNanos(h)).toBe(GRANT - backupCost)
    })
  }

  test('streaming: a 529 before the first byte falls back and the client sees one clean stream', async () => {
    const h = await gateway()
    sim.setScenario('claude-a-up', { fault: { kind: 'status', status: 529 } })
    sim.setScenario('gpt-b-up', backupScenario)
    const stream = sdk(h).messages.stream({ model: 'svc-max', max_tokens: 100, messages: ask })
    const { response } = await stream.withResponse()
    const message = await stream.finalMessage()
    const requestId = response.headers.get('x-request-id')!
    expect(message).toMatchObject({
      id: `msg_${requestId}`,
      model: 'gpt-b-up',
      content: [{ type: 'text', text: 'Backup here.' }],
    })
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({ status: 'completed', attempts: 2, total_cost_nanos: backupCost })
    expect(detail.usage_events.map((l: { outcome: string }) => l.outcome)).toEqual(['failed', 'ok'])
  })

  const emptyStarts: { name: string; primary: ProviderId; scenario: Scenario }[] = [
    {
      name: 'anthropic: an in-band error as the very first frame',
      primary: 'anth',
      scenario: { fault: { kind: 'error_event', afterFrames: 0 } },
    },
    {
      name: 'anthropic: a 200 stream that closes with no frame',
      primary: 'anth',
      scenario: { fault: { kind: 'cut', afterFrames: 0 } },
    },
    {
      name: 'chat: an in-band error as the very first chunk',
      primary: 'chat',
      scenario: { fault: { kind: 'error_event', afterFrames: 0 } },
    },
    {
      name: 'chat: a 200 stream that closes with no chunk',
      primary: 'chat',
      scenario: { fault: { kind: 'cut', afterFrames: 0 } },
    },
  ]
  for (const c of emptyStarts) {
    test(`streaming, ${c.name} → nothing reached the client, so the second candidate serves`, async () => {
      const h = await gateway({ primary: c.primary })
      sim.setScenario('claude-a-up', c.scenario)
      sim.setScenario('gpt-b-up', backupScenario)
      const res = await postMessages(h, { stream: true })
      expect(res.status).toBe(200)
      const frames = parseFrames(await res.text())
      expect(frames.map((f) => f.event)).not.toContain('error')
      expect(frames.at(-1)!.event).toBe('message_stop')
      expect(frames[0]!.data.message.model).toBe('gpt-b-up')
      expect(sim.requests).toHaveLength(2)
      const detail = await requestDetail(h, res.headers.get('x-request-id')!)
      expect(detail).toMatchObject({
        status: 'completed',
        attempts: 2,
        selected_model_id: 'gpt-b',
        total_cost_nanos: backupCost,
      })
      expect(detail.usage_events).toEqual([
        expect.objectContaining({ outcome: 'failed', cost_nanos: 0, charged_nanos: 0 }),
        expect.objectContaining({ outcome: 'ok', cost_nanos: backupCost }),
      ])
    })
  }

  test('routing.max_attempts bounds the candidates tried', async () => {
    const h = await gateway({ routing: { max_attempts: 1 } })
    sim.setScenario('claude-a-up', { fault: { kind: 'status', status: 529 } })
    sim.setScenario('gpt-b-up', backupScenario)
    const res = await postMessages(h, {})
    expect(res.status).toBe(529)
    expect(sim.requests).toHaveLength(1)
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.provider_ranks.map((r: { status: string }) => r.status)).toEqual(['failed', 'not_tried'])
  })
})

describe('errors that end the request', () => {
  test('an upstream 400 is the client’s fault: passed back as 400 invalid_request_error, no fallback', async () => {
    const h = await gateway()
    sim.setScenario('claude-a-up', { fault: { kind: 'status', status: 400 } })
    sim.setScenario('gpt-b-up', backupScenario)
    const res = await postMessages(h, {})
    expect(res.status).toBe(400)
    const requestId = res.headers.get('x-request-id')!
    expect(requestId).toMatch(ULID)
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'invalid_request_error', message: 'Simulated 400 error' },
    })
    expect(sim.requests).toHaveLength(1)
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'failed',
      http_status: 400,
      attempts: 1,
      total_cost_nanos: 0,
      charged_nanos: 0,
      error: { type: 'invalid_request', message: 'Simulated 400 error' },
    })
    expect(detail.provider_ranks.map((r: { status: string }) => r.status)).toEqual(['failed', 'not_tried'])
    expect(await remainingNanos(h)).toBe(GRANT)

    const err = await sdk(h)
      .messages.create({ model: 'svc-max', max_tokens: 100, messages: ask })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.BadRequestError)
  })

  test('every candidate fails: the last error in Anthropic’s shape, with X-Request-Id; recorded as failed', async () => {
    const h = await gateway()
    sim.setScenario('claude-a-up', { fault: { kind: 'status', status: 529 } })
    sim.setScenario('gpt-b-up', { fault: { kind: 'status', status: 503 } })
    for (const stream of [false, true]) {
      const res = await postMessages(h, { stream })
      // An upstream's 503 is an overload, which Anthropic's clients know as 529 (wire-formats §4.12).
      expect(res.status).toBe(529)
      expect(res.headers.get('content-type')).toContain('application/json')
      // A retry may find a candidate free again: the SDK's own rule decides.
      expect(res.headers.get('x-should-retry')).toBeNull()
      const requestId = res.headers.get('x-request-id')!
      expect(requestId).toMatch(ULID)
      expect(await res.json()).toEqual({
        type: 'error',
        error: { type: 'overloaded_error', message: 'Service unavailable (simulated)' },
      })
      const detail = await requestDetail(h, requestId)
      expect(detail).toMatchObject({
        status: 'failed',
        http_status: 529,
        attempts: 2,
        selected_model_id: null,
        total_cost_nanos: 0,
        charged_nanos: 0,
        error: { type: 'overloaded' },
      })
      expect(
        detail.usage_events.map((l: { outcome: string; cost_nanos: number }) => [l.outcome, l.cost_nanos]),
      ).toEqual([
        ['failed', 0],
        ['failed', 0],
      ])
      expect(detail.provider_ranks.map((r: { status: string }) => r.status)).toEqual(['failed', 'failed'])
    }
    expect(await remainingNanos(h)).toBe(GRANT)
    const err = await sdk(h)
      .messages.create({ model: 'svc-max', max_tokens: 100, messages: ask })
      .catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.APIError)
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(529)
  })
})

// 'aaaa bbbb cccc dddd' in four deltas ('aaaa', ' bbbb', ' cccc', ' dddd'), paced so the frames
// before a fault are on the wire before it strikes (a reset drops what is still unflushed).
const fourDeltas = { text: 'aaaa bbbb cccc dddd', chunks: 4, chunkDelayMs: 5 }

/** The text the client received in content_block_delta frames. */
const streamedText = (frames: SseFrame[]) =>
  frames
    .filter((f) => f.event === 'content_block_delta')
    .map((f) => f.data.delta.text)
    .join('')

describe('mid-stream failures after the first byte', () => {
  // Chat frames: the role chunk, then the deltas; a fault after 3 frames lets 'aaaa bbbb' through
  // (a reset may lose the last one in flight).
  const chatFaults: Scenario['fault'][] = [
    { kind: 'cut', afterFrames: 3 },
    { kind: 'reset', afterFrames: 3 },
    { kind: 'malformed', afterFrames: 3 },
    { kind: 'error_event', afterFrames: 3 },
  ]
  for (const fault of chatFaults) {
    test(`chat upstream, ${fault!.kind} after the first deltas → error event, no message_stop, estimated leg charged`, async () => {
      const h = await gateway({ primary: 'chat' })
      sim.setScenario('claude-a-up', { ...fourDeltas, usage: { input: 50, output: 30 }, fault })
      sim.setScenario('gpt-b-up', backupScenario)
      const res = await postMessages(h, { stream: true })
      expect(res.status).toBe(200)
      const requestId = res.headers.get('x-request-id')!
      const frames = parseFrames(await res.text())
      const text = streamedText(frames)
      if (fault!.kind === 'reset') expect(['aaaa', 'aaaa bbbb']).toContain(text)
      else expect(text).toBe('aaaa bbbb')
      const deltas = frames.filter((f) => f.event === 'content_block_delta').map((f) => f.event)
      expect(frames.map((f) => f.event)).toEqual(['message_start', 'content_block_start', ...deltas, 'error'])
      expect(frames.at(-1)!.data).toEqual({
        type: 'error',
        error: { type: expect.any(String), message: expect.any(String) },
      })
      // No fallback once a byte went out.
      expect(sim.requests).toHaveLength(1)
      const detail = await requestDetail(h, requestId)
      const leg = detail.usage_events[0]
      // The Chat usage chunk never came: input from the tokenizer, output from the characters that flowed.
      const output = Math.ceil(text.length / 4)
      expect(leg).toMatchObject({ outcome: 'failed', estimated: true, output_tokens: output, cached_input_tokens: 0 })
      expect(leg.input_tokens).toBeGreaterThan(0)
      const cost = leg.input_tokens * 1000 + output * 2000
      expect(leg.cost_nanos).toBe(cost)
      expect(leg.charged_nanos).toBe(cost)
      expect(detail).toMatchObject({
        status: 'failed',
        attempts: 1,
        total_cost_nanos: cost,
        charged_nanos: cost,
        selected_model_id: 'claude-a',
        error: expect.objectContaining({ message: expect.any(String) }),
      })
      expect(await remainingNanos(h)).toBe(GRANT - cost)
    })
  }

  // Anthropic frames: message_start, ping, content_block_start, then deltas; after 5 frames two deltas went out.
  const anthropicFaults: Scenario['fault'][] = [
    { kind: 'cut', afterFrames: 5 },
    { kind: 'reset', afterFrames: 5 },
    { kind: 'malformed', afterFrames: 5 },
    { kind: 'error_event', afterFrames: 5 },
  ]
  for (const fault of anthropicFaults) {
    test(`anthropic upstream, ${fault!.kind} after the first deltas → one error event, no message_stop, leg charged for what flowed`, async () => {
      const h = await gateway()
      sim.setScenario('claude-a-up', { ...fourDeltas, usage: { input: 50, cacheRead: 20, output: 30 }, fault })
      sim.setScenario('gpt-b-up', backupScenario)
      const res = await postMessages(h, { stream: true })
      expect(res.status).toBe(200)
      const requestId = res.headers.get('x-request-id')!
      const frames = parseFrames(await res.text())
      const text = streamedText(frames)
      if (fault!.kind === 'reset') expect(['aaaa', 'aaaa bbbb']).toContain(text)
      else expect(text).toBe('aaaa bbbb')
      const deltas = frames.filter((f) => f.event === 'content_block_delta').map((f) => f.event)
      expect(frames.map((f) => f.event)).toEqual(['message_start', 'content_block_start', 'ping', ...deltas, 'error'])
      // Every frame the client got is valid JSON: a malformed upstream frame is not relayed.
      for (const f of frames) expect(f.data.unparseable).toBeUndefined()
      // The upstream's own in-band error is relayed as sent; otherwise the gateway adds one.
      if (fault!.kind === 'error_event')
        expect(frames.at(-1)!.data.error).toEqual({ type: 'overloaded_error', message: 'Overloaded' })
      else expect(frames.at(-1)!.data.error).toEqual({ type: 'api_error', message: expect.any(String) })
      expect(sim.requests).toHaveLength(1)
      const detail = await requestDetail(h, requestId)
      const leg = detail.usage_events[0]
      // message_start reported the prompt (input 50, cache read 20); output is estimated.
      expect(leg).toMatchObject({ outcome: 'failed', estimated: true, input_tokens: 50, cached_input_tokens: 20 })
      expect(leg.output_tokens).toBeGreaterThan(0)
      expect(leg.output_tokens).toBeLessThan(30)
      const cost = 50 * 3000 + 20 * 300 + leg.output_tokens * 15000
      expect(leg.cost_nanos).toBe(cost)
      expect(leg.charged_nanos).toBe(cost)
      expect(detail).toMatchObject({ status: 'failed', attempts: 1, total_cost_nanos: cost, charged_nanos: cost })
      expect(await remainingNanos(h)).toBe(GRANT - cost)
    })
  }

  test('the SDK rejects a stream that broke mid-way', async () => {
    const h = await gateway({ primary: 'chat' })
    sim.setScenario('claude-a-up', { ...fourDeltas, fault: { kind: 'cut', afterFrames: 3 } })
    const stream = sdk(h).messages.stream({ model: 'svc-max', max_tokens: 100, messages: ask })
    const err = await stream.finalMessage().catch((e: unknown) => e)
    expect(err).toBeInstanceOf(Anthropic.APIError)
  })
})

describe('client disconnects mid-stream', () => {
  for (const primary of ['anth', 'chat'] as const) {
    test(`${primary} upstream: the upstream call is aborted and the leg is recorded as aborted`, async () => {
      const h = await gateway({ primary })
      sim.setScenario('claude-a-up', {
        text: 'slow '.repeat(60).trim(),
        chunks: 60,
        chunkDelayMs: 20,
        usage: { input: 50, output: 60 },
      })
      await using server = Bun.serve({ port: 0, fetch: (request) => h.app.handle(request) })
      const controller = new AbortController()
      const res = await fetch(`${server.url}compat-a/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json', ...versioned },
        body: JSON.stringify({ model: 'svc-max', max_tokens: 100, stream: true, messages: ask }),
        signal: controller.signal,
      })
      expect(res.status).toBe(200)
      const requestId = res.headers.get('x-request-id')!
      expect(requestId).toMatch(ULID)
      const reader = res.body!.getReader()
      const first = await reader.read()
      expect(new TextDecoder().decode(first.value)).toContain('event: message_start')
      controller.abort()
      await reader.cancel().catch(() => {})

      expect(await sim.waitForAbort(0)).toBe(true)
      // The ledger write follows the abort; wait for it, bounded.
      let detail: { status?: string } = {}
      for (let i = 0; i < 200 && detail.status !== 'aborted'; i++) {
        const r = await h.call(`/v1/usage/requests/${requestId}`)
        if (r.status === 200) detail = await r.json()
        if (detail.status !== 'aborted') await new Promise((resolve) => setTimeout(resolve, 5))
      }
      expect(detail).toMatchObject({ status: 'aborted', http_status: 499, attempts: 1, selected_model_id: 'claude-a' })
      const leg = (detail as { usage_events: Record<string, unknown>[] }).usage_events[0]!
      expect(leg).toMatchObject({ outcome: 'aborted', estimated: true })
      expect(leg.input_tokens as number).toBeGreaterThan(0)
      expect(leg.output_tokens as number).toBeLessThan(60)
      expect(sim.requests).toHaveLength(1)
    })
  }

  /** Posts, waits until the gateway's upstream call number `calls` is in flight, then goes away. */
  async function abortWhilePending(h: Harness, stream: boolean, calls: number) {
    await using server = Bun.serve({ port: 0, fetch: (request) => h.app.handle(request) })
    const controller = new AbortController()
    const pending = fetch(`${server.url}compat-a/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${h.key}`, 'content-type': 'application/json', ...versioned },
      body: JSON.stringify({ model: 'svc-max', max_tokens: 100, stream, messages: ask }),
      signal: controller.signal,
    }).catch((e: unknown) => e)
    for (let i = 0; i < 400 && sim.requests.length < calls; i++) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(sim.requests).toHaveLength(calls)
    controller.abort()
    expect(await pending).toBeInstanceOf(Error)
    expect(await sim.waitForAbort(calls - 1)).toBe(true)

    let item: { request_id: string; status: string } | undefined
    for (let i = 0; i < 200 && item?.status !== 'aborted'; i++) {
      item = (await (await h.call('/v1/usage/requests')).json()).items[0]
      if (item?.status !== 'aborted') await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect(item).toMatchObject({ status: 'aborted', http_status: 499, attempts: calls, total_cost_nanos: 0 })
    return requestDetail(h, item!.request_id)
  }

  for (const stream of [true, false]) {
    test(`before the first byte (${stream ? 'streaming' : 'non-streaming'}): the pending upstream call is aborted and the request recorded as aborted`, async () => {
      const h = await gateway()
      sim.setScenario('claude-a-up', { firstByteDelayMs: 5_000, text: 'never sent' })
      const detail = await abortWhilePending(h, stream, 1)
      expect(detail.usage_events).toEqual([
        expect.objectContaining({ outcome: 'aborted', cost_nanos: 0, charged_nanos: 0 }),
      ])
      // The ranking says the client left, not that the candidate failed.
      expect(detail.provider_ranks[0]).toMatchObject({ model_id: 'claude-a', status: 'aborted' })
      // The client went away: the second candidate is never tried.
      expect(sim.requests).toHaveLength(1)
    })
  }

  test('during the fallback: the call to the second candidate is the one aborted', async () => {
    const h = await gateway()
    sim.setScenario('claude-a-up', { fault: { kind: 'status', status: 500 } })
    sim.setScenario('gpt-b-up', { firstByteDelayMs: 5_000, text: 'never sent' })
    const detail = await abortWhilePending(h, false, 2)
    expect(detail.usage_events).toEqual([
      expect.objectContaining({ model_id: 'claude-a', outcome: 'failed' }),
      expect.objectContaining({ model_id: 'gpt-b', outcome: 'aborted', cost_nanos: 0 }),
    ])
    expect(detail.provider_ranks.map((r: { status: string }) => r.status)).toEqual(['failed', 'aborted'])
  })
})
