// A client that goes away mid-stream, over a real socket, on each of the four routes: the upstream
// call is aborted, the leg is recorded as aborted and estimated, and the charge is the cost of the
// estimated tokens — the prompt and what flowed, never the whole answer the upstream would have sent.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { createHarness, type Harness } from '../support/harness'
import { anthropicMessageStart, scriptedPair, sseFrame } from '../support/scripted-upstream'
import { startSimulator } from '../support/simulator'
import { parseFrames, requestDetail, ULID, waitFor } from './helpers'
import { bodyFor, deltaEvent, pathFor, providerFor, routes, tokenizerCount } from './routes'

const SIM_KEY = 'sim-key-abort'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const GRANT = 5_000_000_000
/** 60 deltas of exactly 4 bytes (one token each at ≈ 4 bytes of UTF-8 a token), 20 ms apart. */
const DELTAS = 60
const slowAnswer = { text: 'abcd'.repeat(DELTAS), chunks: DELTAS, chunkDelayMs: 20, usage: { input: 50, output: 60 } }
/**
 * The same in Chinese: a character of 3 bytes and a letter a delta, about a token. Counted in
 * characters, a cut Chinese answer was billed half of that here, and a quarter of it in pure CJK.
 */
const slowChineseAnswer = { ...slowAnswer, text: '中a'.repeat(DELTAS) }
/** Deltas the client reads before it goes away. */
const READ = 3

/** A leg's outcome, whether estimated, its tokens in and out, its cost and charge. */
const legFigures = (e: Record<string, unknown>) => [
  e.outcome,
  e.estimated,
  e.input_tokens,
  e.output_tokens,
  e.cost_nanos,
  e.charged_nanos,
]

/** The one model, on the route's provider: 3 and 15 USD per Mtok. */
const primary = {
  id: 'primary',
  provider: 'live',
  upstream_model: 'primary-up',
  profiles: ['max' as const],
  quality: 90,
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
}

describe('client aborts mid-stream', () => {
  const cases = routes.flatMap((route) => [
    { ...route, answer: slowAnswer, language: 'English' },
    { ...route, answer: slowChineseAnswer, language: 'Chinese' },
  ])
  test.each(cases)(
    '$name, $language: upstream aborted, leg aborted and estimated, charged only for what flowed',
    async ({ answer, ...route }) => {
      const h = await createHarness({
        grantUsd: 5,
        env: { SIM_KEY },
        config: {
          catalog: { builtin: false },
          providers: { live: providerFor(route, sim.url) },
          models: [primary],
        },
      })
      sim.setScenario('primary-up', answer)
      await using server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => h.app.handle(request) })
      const controller = new AbortController()
      const body = bodyFor(route, true)
      const res = await fetch(`${server.url}${pathFor(route).slice(1)}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${h.key}`,
          'content-type': 'application/json',
          'anthropic-version': '2023-06-01',
        },
        body: JSON.stringify(body),
        signal: controller.signal,
      })
      expect(res.status).toBe(200)
      const requestId = res.headers.get('x-request-id')!
      expect(requestId).toMatch(ULID)

      // Read whole frames until READ deltas arrived, then go away.
      const reader = res.body!.getReader()
      const decoder = new TextDecoder()
      let text = ''
      const deltasSeen = () =>
        parseFrames(text.slice(0, text.lastIndexOf('\n\n') + 2)).filter((f) => f.event === deltaEvent(route)).length
      while (deltasSeen() < READ) {
        const { value, done } = await reader.read()
        if (done) throw new Error('the stream ended before the client went away')
        text += decoder.decode(value, { stream: true })
      }
      const received = deltasSeen()
      controller.abort()
      await reader.cancel().catch(() => {})

      expect(await sim.waitForAbort(0)).toBe(true)
      const detail = await waitFor('the aborted request in the ledger', async () => {
        const r = await h.call(`/v1/usage/requests/${requestId}`)
        if (r.status !== 200) return undefined
        const d = await r.json()
        return d.status === 'aborted' ? d : undefined
      })
      const leg = detail.usage_events[0]
      // The gateway may have relayed a delta or two more than the client read before its abort landed.
      expect(leg.output_tokens).toBeGreaterThanOrEqual(received)
      expect(leg.output_tokens).toBeLessThanOrEqual(received + 2)
      const input = route.reportsPrompt ? 50 : tokenizerCount(route, body)
      const cost = input * 3000 + leg.output_tokens * 15000
      expect(detail).toMatchObject({
        status: 'aborted',
        http_status: 499,
        attempts: 1,
        selected_model_id: 'primary',
        total_input_tokens: input,
        total_cost_nanos: cost,
        charged_nanos: cost,
      })
      expect(detail.usage_events).toEqual([
        expect.objectContaining({
          attempt: 1,
          model_id: 'primary',
          outcome: 'aborted',
          estimated: true,
          input_tokens: input,
          cached_input_tokens: 0,
          cache_creation_input_tokens: 0,
          cost_nanos: cost,
          charged_nanos: cost,
        }),
      ])
      expect(detail.grant_charges).toEqual([expect.objectContaining({ usage_event_id: leg.id, amount_nanos: cost })])
      // Far below what the whole answer would have cost (60 output tokens as reported).
      expect(cost).toBeLessThan(50 * 3000 + 60 * 15000)
      expect((await (await h.call('/v1/usage')).json()).remaining_nanos).toBe(GRANT - cost)
      // Exactly one upstream call: no fallback after the client left.
      expect(sim.requests).toHaveLength(1)
      // And its hold on the account's credit went with it: the quota gate sees the grants as they are.
      const grants = await h.deps.credit.get(h.accountId)
      expect(h.deps.holds.available(grants)).toBe(grants)
      expect((await requestDetail(h, requestId)).request_id).toBe(requestId)
    },
  )
})

describe('client leaves a non-streamed request while the upstream works', () => {
  const backup = { ...primary, id: 'backup', upstream_model: 'backup-up', quality: 80 }
  const cells = routes.flatMap((route) => (['json', 'gathered'] as const).map((delivery) => ({ route, delivery })))

  test.each(cells)(
    '$route.name, $delivery: upstream aborted, no fallback, recorded aborted and charged what reached svc',
    async ({ route, delivery }) => {
      const h = await createHarness({
        grantUsd: 5,
        env: { SIM_KEY },
        config: {
          catalog: { builtin: false },
          // Gathered: the JSON answer read from an upstream stream (every request over 0 tokens).
          routing: delivery === 'gathered' ? { stream_upstream_above_max_tokens: 0 } : {},
          providers: { live: providerFor(route, sim.url) },
          models: [primary, backup],
        },
      })
      // 1.2 s of writing: a JSON answer comes only then, a gathered one is read as it streams.
      sim.setScenario('primary-up', slowAnswer)
      const firstBytes = upstreamFirstBytes(h)
      const client = new AbortController()
      const pending = h
        .call(pathFor(route), {
          method: 'POST',
          headers: { 'anthropic-version': '2023-06-01' },
          signal: client.signal,
          json: bodyFor(route, false),
        })
        .catch(() => undefined)
      await waitFor('the upstream call', () => (sim.requests.length > 0 ? true : undefined))
      // Gathered, left once the upstream's first bytes (its opening) reached svc.
      if (delivery === 'gathered') {
        await firstBytes
        await Bun.sleep(100)
      }
      client.abort()
      await pending

      expect(await sim.waitForAbort(0)).toBe(true)
      const requestId = await waitFor('the request recorded', async () => {
        const items: { request_id: string; status: string }[] = (await (await h.call('/v1/usage/requests')).json())
          .items
        return items.find((item) => item.status !== 'in_progress')?.request_id
      })
      const detail = await requestDetail(h, requestId)
      // A JSON answer had sent svc nothing. A gathered one is charged what the upstream had sent, as
      // a cut stream is: the prompt and the output so far (the provider bills them).
      const input = delivery === 'json' ? 0 : route.reportsPrompt ? 50 : tokenizerCount(route, bodyFor(route, false))
      const output = detail.usage_events[0].output_tokens
      const cost = input * 3000 + output * 15000
      expect(output).toBeLessThanOrEqual(delivery === 'json' ? 0 : DELTAS)
      expect(detail).toMatchObject({
        status: 'aborted',
        http_status: 499,
        stream: false,
        attempts: 1,
        total_cost_nanos: cost,
        charged_nanos: cost,
        error: { type: 'api_error', message: 'client went away' },
      })
      expect(detail.provider_ranks.map((r: { status: string }) => r.status)).toEqual(['aborted', 'not_tried'])
      expect(detail.usage_events.map(legFigures)).toEqual([
        ['aborted', delivery === 'gathered', input, output, cost, cost],
      ])
      // No fallback once the client left, and its hold on the account's credit went with it.
      expect(sim.requests).toHaveLength(1)
      const grants = await h.deps.credit.get(h.accountId)
      expect(h.deps.holds.available(grants)).toBe(grants)
      expect((await (await h.call('/v1/usage')).json()).remaining_nanos).toBe(GRANT - cost)
    },
  )
})

/** Settles when the first bytes of h's first upstream answer reach svc. */
function upstreamFirstBytes(h: Harness): Promise<void> {
  const came = Promise.withResolvers<void>()
  const upstream = h.deps.fetch
  h.deps.fetch = (async (url: string, init: RequestInit) => {
    const res = await upstream(url, init)
    const seen = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        came.resolve()
        controller.enqueue(chunk)
      },
    })
    return new Response(res.body!.pipeThrough(seen), res)
  }) as typeof fetch
  return came.promise
}

describe('a client that goes away once it has read the whole answer', () => {
  // An upstream that keeps its connection open a while after the message's end: the simulator's
  // bytes relayed, then a pause before the body closes. The client reads to the answer's last
  // event and goes away inside that pause, as an SDK that stops at the terminal event may.
  const lingerMs = 1_500
  const lingering = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(request) {
      const url = new URL(request.url)
      const upstream = await fetch(`${sim.url}${url.pathname}`, {
        method: 'POST',
        headers: request.headers,
        body: await request.text(),
      })
      const source = upstream.body!.getReader()
      const body = new ReadableStream({
        async pull(controller) {
          const { value, done } = await source.read()
          if (!done) return controller.enqueue(value)
          await new Promise((resolve) => setTimeout(resolve, lingerMs))
          controller.close()
        },
      })
      return new Response(body, { status: upstream.status, headers: upstream.headers })
    },
  })
  afterAll(() => lingering.stop(true))

  const terminalEvent = (surface: string) => (surface === 'messages' ? 'message_stop' : 'response.completed')

  test.each(routes)('$name: recorded as completed and charged as reported, not aborted', async (route) => {
    const h = await createHarness({
      grantUsd: 5,
      env: { SIM_KEY },
      config: {
        catalog: { builtin: false },
        providers: { live: providerFor(route, lingering.url.href.replace(/\/$/, '')) },
        models: [primary],
      },
    })
    sim.setScenario('primary-up', { text: 'The whole answer.', usage: { input: 50, output: 60 } })
    await using server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (request) => h.app.handle(request) })
    const controller = new AbortController()
    const res = await fetch(`${server.url}${pathFor(route).slice(1)}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${h.key}`,
        'content-type': 'application/json',
        'anthropic-version': '2023-06-01',
      },
      body: JSON.stringify(bodyFor(route, true)),
      signal: controller.signal,
    })
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    const reader = res.body!.getReader()
    const decoder = new TextDecoder()
    let text = ''
    const sawEnd = () =>
      parseFrames(text.slice(0, text.lastIndexOf('\n\n') + 2)).some((f) => f.event === terminalEvent(route.surface))
    while (!sawEnd()) {
      const { value, done } = await reader.read()
      if (done) throw new Error('the stream ended before its terminal event')
      text += decoder.decode(value, { stream: true })
    }
    controller.abort()
    await reader.cancel().catch(() => {})

    const detail = await waitFor('the request in the ledger, ended', async () => {
      const d = await requestDetail(h, requestId)
      return d.ended_at ? d : undefined
    })
    const cost = 50 * 3000 + 60 * 15000
    expect(detail).toMatchObject({ status: 'completed', http_status: 200, total_cost_nanos: cost, charged_nanos: cost })
    expect(detail.usage_events).toEqual([
      expect.objectContaining({ outcome: 'ok', estimated: false, cost_nanos: cost }),
    ])
  })
})

describe('a client that goes away while svc holds the stream’s opening (before its first byte)', () => {
  /** Whether the upstream call was aborted (the silent upstream's connection closed by svc). */
  let upstreamAborted = false
  /** An upstream that sends its opening, then thinks in silence until aborted. */
  const silentAfter = (opening: string) =>
    (async (_url: string, init: RequestInit) => {
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(opening))
          init.signal?.addEventListener('abort', () => {
            upstreamAborted = true
            controller.error(new DOMException('aborted', 'AbortError'))
          })
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    }) as unknown as typeof fetch
  /** Anthropic's message_start, with the prompt it read (null: a compatible server's, with no usage). */
  const openingThenSilence = (inputTokens: number | null) => silentAfter(anthropicMessageStart('first-up', inputTokens))

  /** A streamed request of 500 tokens at most, on each surface (scriptedPair's profile). */
  const streamed: Record<'messages' | 'responses', { path: string; json: Record<string, unknown> }> = {
    messages: {
      path: '/compat-a/v1/messages',
      json: { model: 'svc-pro', max_tokens: 500, stream: true, messages: [{ role: 'user', content: 'hi' }] },
    },
    responses: {
      path: '/compat-b/v1/responses',
      json: { model: 'svc-pro', input: 'hi', stream: true, max_output_tokens: 500 },
    },
  }

  const leave = async (h: Harness, request = streamed.messages) => {
    upstreamAborted = false
    const controller = new AbortController()
    const pending = h
      .call(request.path, {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        signal: controller.signal,
        json: request.json,
      })
      .catch(() => undefined)
    await Bun.sleep(100)
    controller.abort()
    await pending
    const id = await waitFor('the request recorded', async () => {
      const items: { request_id: string; status: string }[] = (await (await h.call('/v1/usage/requests')).json()).items
      return items.find((item) => item.status !== 'in_progress')?.request_id
    })
    return requestDetail(h, id)
  }

  test('the prompt its opening counted is billed: the upstream read it', async () => {
    const h = await scriptedPair('anthropic')
    h.deps.fetch = openingThenSilence(150_000)
    const d = await leave(h)
    // 150,000 tokens at 1 USD/Mtok, and the opening's one output token.
    expect(d).toMatchObject({ status: 'aborted', total_cost_nanos: 150_001_000, charged_nanos: 150_001_000 })
    expect(d.usage_events).toEqual([
      expect.objectContaining({
        outcome: 'aborted',
        input_tokens: 150_000,
        estimated: true,
        charged_nanos: 150_001_000,
      }),
    ])
  })

  test('an opening that counted no prompt (a compatible server) bills the estimated prompt, as a stream cut just after does', async () => {
    const h = await scriptedPair('anthropic')
    h.deps.fetch = openingThenSilence(null)
    const d = await leave(h)
    expect(d.status).toBe('aborted')
    const [leg] = d.usage_events
    expect(leg).toMatchObject({ outcome: 'aborted', estimated: true })
    expect(leg.input_tokens).toBeGreaterThan(0)
    expect(d.charged_nanos).toBe(leg.cost_nanos)
    expect(leg.cost_nanos).toBe((leg.input_tokens + leg.output_tokens) * 1000)
  })

  test('a Responses client, translated for Anthropic: the prompt its opening counted is billed', async () => {
    const h = await scriptedPair('anthropic')
    h.deps.fetch = openingThenSilence(150_000)
    const d = await leave(h, streamed.responses)
    expect(upstreamAborted).toBe(true)
    expect(d).toMatchObject({ status: 'aborted', http_status: 499, attempts: 1, charged_nanos: 150_001_000 })
    expect(d.usage_events.map(legFigures)).toEqual([['aborted', true, 150_000, 1, 150_001_000, 150_001_000]])
  })

  test('a Responses client on OpenAI itself: response.created and in_progress count no prompt, the estimated one is billed', async () => {
    const h = await scriptedPair('openai-responses', {}, 5, { openai_itself: true })
    const created = (sequence: number, type: string) =>
      sseFrame(type, {
        type,
        sequence_number: sequence,
        response: {
          id: 'resp_up',
          object: 'response',
          created_at: 1,
          model: 'first-up',
          status: 'in_progress',
          output: [],
        },
      })
    h.deps.fetch = silentAfter(created(0, 'response.created') + created(1, 'response.in_progress'))
    const d = await leave(h, streamed.responses)
    expect(upstreamAborted).toBe(true)
    const route = routes.find((r) => r.surface === 'responses' && r.kind === 'openai-responses')!
    const input = tokenizerCount(route, streamed.responses.json)
    expect(d).toMatchObject({ status: 'aborted', http_status: 499, attempts: 1, charged_nanos: input * 1000 })
    expect(d.usage_events.map(legFigures)).toEqual([['aborted', true, input, 0, input * 1000, input * 1000]])
  })

  test('a Chat upstream’s role chunk counts no prompt either: the estimated prompt is billed', async () => {
    const h = await scriptedPair('openai-chat')
    const roleChunk = {
      id: 'c',
      object: 'chat.completion.chunk',
      model: 'first-up',
      choices: [{ index: 0, delta: { role: 'assistant' }, finish_reason: null }],
    }
    h.deps.fetch = silentAfter(sseFrame(undefined, roleChunk))
    const d = await leave(h)
    const [leg] = d.usage_events
    expect(leg).toMatchObject({ outcome: 'aborted', estimated: true })
    expect(leg.input_tokens).toBeGreaterThan(0)
    expect(d.charged_nanos).toBe(leg.cost_nanos)
  })
})

test('a client that has left before the first attempt (while svc read its credit) is neither served nor charged', async () => {
  const h = await scriptedPair('anthropic')
  let upstreamCalls = 0
  h.deps.fetch = (async () => {
    upstreamCalls++
    return Response.json({})
  }) as unknown as typeof fetch
  const client = new AbortController()
  const readCredit = h.deps.credit.get.bind(h.deps.credit)
  h.deps.credit.get = async (accountId: string) => {
    const grants = await readCredit(accountId)
    client.abort()
    return grants
  }
  await h
    .call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      signal: client.signal,
      json: { model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
    })
    .catch(() => undefined)
  expect(upstreamCalls).toBe(0)
  const [row] = (await (await h.call('/v1/usage/requests')).json()).items
  expect(await requestDetail(h, row.request_id)).toMatchObject({
    status: 'aborted',
    http_status: 499,
    attempts: 0,
    charged_nanos: 0,
  })
})
