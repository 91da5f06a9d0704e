// The upstream fault matrix: every fault the simulator can play (and a body held back after its
// headers, which it cannot) × how the answer is delivered (streamed; not streamed; not streamed to
// the client but gathered from an upstream stream, as svc does for a long output limit) × the four
// ways a request crosses the gateway (same-shape pass-through and translated, on both surfaces).
// For each, what the client receives — the second candidate's answer, an error status in the
// surface's shape, or an error event after the first byte — and the ledger row with its legs and
// charges, exactly.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { ConfigFile } from '../../src/config/schema'
import { createHarness, endedRequestDetail, type Harness, sdkClients } from '../support/harness'
import {
  anthropicEvent,
  anthropicMessageStart,
  scriptedPair,
  scriptedUpstream,
  sseFrame,
} from '../support/scripted-upstream'
import { type Scenario, startSimulator } from '../support/simulator'
import { closedPort, expectNoLeaks, parseFrames, requestDetail, ULID } from './helpers'
import {
  bodyFor,
  deltaEvent,
  deltaText,
  providerFor,
  type Route,
  responsesCleanEvents,
  routes,
  send,
  tokenizerCount,
} from './routes'

const SIM_KEY = 'sim-key-faults'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const deadPort = closedPort()
const GRANT = 5_000_000_000
/** Both first-byte bounds; the slow upstream waits far longer. */
const TIMEOUT_MS = 200

interface ErrorAnswer {
  status: number
  anthropicType: string
  openai: { type: string; code: string }
  /** The ledger's error kind. */
  kind: string
  message: string | RegExp
  retryAfter?: string
  /** `x-should-retry`: 'false' where a retry cannot help; absent elsewhere. */
  shouldRetry?: 'false'
}

interface Fault {
  name: string
  /** Undefined, and no `upstream` either: the provider's port is closed (connection refused). */
  scenario?: (route: Route) => Scenario
  /** What the simulator cannot play: the harness's upstream fetch changed. */
  upstream?: (h: Harness) => void
  /** Strikes before the first byte even when streamed (else only a non-streaming body breaks before it). */
  beforeFirstByte: boolean
  /** The deliveries it is played on (all three unless given). */
  deliveries?: readonly Delivery[]
  /** What a client gets when this was the only candidate. */
  alone: (delivery: Delivery, route: Route) => ErrorAnswer
}

/** JSON from a JSON call; a stream relayed; JSON gathered from an upstream stream. */
type Delivery = 'json' | 'stream' | 'gathered'

const apiError = (message: string | RegExp): ErrorAnswer => ({
  status: 502,
  anthropicType: 'api_error',
  openai: { type: 'server_error', code: 'server_error' },
  kind: 'api_error',
  message,
})

const notJson = 'upstream answered 200 with a body that is not valid JSON'
/** A stream cut mid-frame: its last frame unreadable, or the message left unfinished. */
const TRUNCATED_STREAM = /^upstream (sent (a )?malformed|stream ended before the message was complete)/

const faults: Fault[] = [
  { name: 'connection refused', beforeFirstByte: true, alone: () => apiError(/^upstream unreachable: .*ECONNREFUSED/) },
  {
    name: '500',
    scenario: () => ({ fault: { kind: 'status', status: 500 } }),
    beforeFirstByte: true,
    alone: () => ({ ...apiError('Internal server error (simulated)'), status: 500 }),
  },
  {
    // The gateway's provider account is out of credit: not the client's billing problem.
    name: '402',
    scenario: () => ({ fault: { kind: 'status', status: 402 } }),
    beforeFirstByte: true,
    alone: () => ({
      ...apiError(
        "live refused the gateway's own account there (for the gateway's operator to fix; your svc key is fine): Simulated 402 error",
      ),
      shouldRetry: 'false',
    }),
  },
  {
    name: '429 with retry-after',
    scenario: () => ({ fault: { kind: 'status', status: 429, retryAfter: 7 } }),
    beforeFirstByte: true,
    alone: () => ({
      status: 429,
      anthropicType: 'rate_limit_error',
      openai: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
      kind: 'rate_limit',
      // The platform key's limit in svc's words: the provider's name the gateway's organization.
      message: /^\w+ is rate-limiting the gateway's own account there/,
      retryAfter: '7',
    }),
  },
  {
    name: '529',
    scenario: () => ({ fault: { kind: 'status', status: 529 } }),
    beforeFirstByte: true,
    alone: () => ({
      status: 529,
      anthropicType: 'overloaded_error',
      openai: { type: 'server_error', code: 'server_overloaded' },
      kind: 'overloaded',
      message: 'Overloaded',
    }),
  },
  {
    name: 'slow first byte past the timeout',
    scenario: () => ({ firstByteDelayMs: 10_000 }),
    beforeFirstByte: true,
    alone: () => ({
      status: 504,
      anthropicType: 'timeout_error',
      openai: { type: 'server_error', code: 'timeout' },
      kind: 'timeout',
      message: `upstream sent no response within ${TIMEOUT_MS} ms`,
    }),
  },
  {
    name: 'reset mid-stream',
    scenario: (r) => ({ fault: { kind: 'reset', afterFrames: r.afterFrames } }),
    beforeFirstByte: false,
    // Without a stream the body is cut halfway by a reset: Bun's fetch or the JSON read fails.
    // Gathered, the stream's next read fails (or, before its headers, the fetch).
    alone: (d) =>
      apiError(
        d === 'gathered' ? /ECONNRESET|closed the connection before the body ended/ : /ECONNRESET|not valid JSON/,
      ),
  },
  {
    name: 'malformed SSE frame',
    scenario: (r) => ({ fault: { kind: 'malformed', afterFrames: r.afterFrames } }),
    beforeFirstByte: false,
    // Gathered: the relay's check of a same-shape frame, or the translating decoder's.
    alone: (d) => apiError(d === 'gathered' ? /^upstream sent (a )?malformed/ : notJson),
  },
  {
    name: 'truncated JSON',
    scenario: () => ({ fault: { kind: 'truncated_json' } }),
    beforeFirstByte: false,
    alone: (d) => apiError(d === 'gathered' ? TRUNCATED_STREAM : notJson),
  },
  {
    name: 'wrong content type (an HTML error page)',
    scenario: () => ({ fault: { kind: 'wrong_content_type' } }),
    beforeFirstByte: true,
    alone: (d) =>
      apiError(
        `upstream answered 200 with content-type text/html; charset=utf-8, expected ${d === 'json' ? 'json' : 'text/event-stream'}`,
      ),
  },
  {
    // The simulator's slow first byte holds the headers, which only connect_timeout_ms bounds for a
    // stream: here they come at once, and the first event (a JSON call: the whole answer) never.
    name: 'headers at once, the first event past the timeout',
    upstream: (h) => holdBody(h, 'primary-up'),
    beforeFirstByte: true,
    alone: (d) => ({
      status: 504,
      anthropicType: 'timeout_error',
      openai: { type: 'server_error', code: 'timeout' },
      kind: 'timeout',
      message: `upstream sent no ${d === 'json' ? 'whole answer' : 'event'} within ${TIMEOUT_MS} ms`,
    }),
  },
  // A stream that breaks right after its opening, before any content: the opening is held until
  // the answer begins, so nothing has reached the client and the stream falls back.
  {
    // Written at once with the opening, the reset beats Bun's write of the headers.
    name: 'reset right after the opening',
    scenario: (r) => ({ fault: { kind: 'reset', afterFrames: r.openingFrames } }),
    beforeFirstByte: true,
    deliveries: ['stream'],
    alone: () => apiError(/^upstream unreachable: upstream closed the connection before answering \(ECONNRESET/),
  },
  {
    name: 'malformed frame right after the opening',
    scenario: (r) => ({ fault: { kind: 'malformed', afterFrames: r.openingFrames } }),
    beforeFirstByte: true,
    deliveries: ['stream'],
    // The frame the simulator garbles is the first content frame after the opening.
    alone: (_, r) =>
      apiError(
        {
          'messages → anthropic (pass-through)': 'upstream sent a malformed content_block_delta frame',
          'messages → openai-chat (translated)': 'upstream sent a malformed JSON chunk',
          'responses → openai-responses (pass-through)': 'upstream sent a malformed response.output_text.delta frame',
          'responses → anthropic (translated)': 'upstream sent malformed JSON in a content_block_delta event',
        }[r.name]!,
      ),
  },
  {
    name: 'in-band error right after the opening',
    scenario: (r) => ({ fault: { kind: 'error_event', afterFrames: r.openingFrames } }),
    beforeFirstByte: true,
    deliveries: ['stream'],
    // Anthropic's overloaded_error keeps its type; the OpenAI kinds' error event is a 500.
    alone: (_, r) =>
      r.kind === 'anthropic'
        ? {
            status: 529,
            anthropicType: 'overloaded_error',
            openai: { type: 'server_error', code: 'server_overloaded' },
            kind: 'overloaded',
            message: 'Overloaded',
          }
        : { ...apiError('The server is overloaded.'), status: 500 },
  },
  {
    name: 'cut right after the opening',
    scenario: (r) => ({ fault: { kind: 'cut', afterFrames: r.openingFrames } }),
    beforeFirstByte: true,
    deliveries: ['stream'],
    alone: () => apiError('upstream stream ended before its answer began'),
  },
]

/** The connection is refused: the primary's provider is the closed port. */
const refused = (fault: Fault) => !fault.scenario && !fault.upstream

/**
 * The harness's upstream fetch with `model`'s body held back once its headers came, until the
 * call is aborted.
 */
function holdBody(h: Harness, model: string) {
  const upstream = h.deps.fetch
  h.deps.fetch = (async (url: string, init: RequestInit) => {
    const res = await upstream(url, init)
    if ((JSON.parse(String(init.body)) as { model: string }).model !== model || !res.body) return res
    const held = new ReadableStream<Uint8Array>({
      start(controller) {
        init.signal?.addEventListener('abort', () => {
          res.body?.cancel().catch(() => {})
          controller.error(new DOMException('aborted', 'AbortError'))
        })
      },
    })
    return new Response(held, { status: res.status, headers: res.headers })
  }) as unknown as typeof fetch
}

// primary: 3000 nanos/input token, 15000/output. backup: 1000 and 2000.
const PRIMARY = { input: 3000, output: 15000 }
const backupScenario: Scenario = { text: 'Backup here.', usage: { input: 40, output: 6 } }
const BACKUP_COST = 40 * 1000 + 6 * 2000
/** 'aaaa', ' bbbb', ' cccc', ' dddd', paced so the frames before a fault are on the wire before it strikes. */
const primaryScenario: Scenario = {
  text: 'aaaa bbbb cccc dddd',
  chunks: 4,
  chunkDelayMs: 5,
  usage: { input: 50, output: 30 },
}

function gateway(
  route: Route,
  opts: {
    /** The primary on a provider that fails: the closed port, or this upstream. */
    dead: boolean
    deadUrl?: string
    alone: boolean
    delivery?: Delivery
  },
): Promise<Harness> {
  const config: ConfigFile = {
    catalog: { builtin: false },
    routing: {
      first_byte_timeout_ms: TIMEOUT_MS,
      connect_timeout_ms: TIMEOUT_MS,
      // Every non-streaming request's answer gathered from a stream.
      ...(opts.delivery === 'gathered' ? { stream_upstream_above_max_tokens: 0 } : {}),
    },
    providers: {
      live: providerFor(route, sim.url),
      dead: providerFor(route, opts.deadUrl ?? `http://127.0.0.1:${deadPort}`),
    },
    models: [
      {
        id: 'primary',
        provider: opts.dead ? 'dead' : 'live',
        upstream_model: 'primary-up',
        profiles: ['max'],
        quality: 95,
        input_usd_per_mtok: 3,
        output_usd_per_mtok: 15,
      },
      ...(opts.alone
        ? []
        : [
            {
              id: 'backup',
              provider: 'live',
              upstream_model: 'backup-up',
              profiles: ['max' as const],
              quality: 80,
              input_usd_per_mtok: 1,
              output_usd_per_mtok: 2,
            },
          ]),
    ],
  }
  return createHarness({ grantUsd: 5, env: { SIM_KEY }, config })
}

const cleanEvents = (route: Route) =>
  route.surface === 'messages'
    ? [...route.prelude, 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']
    : responsesCleanEvents

/** One leg as GET /v1/usage/requests/{id} shows it. */
const legView = (requestId: string, leg: Record<string, unknown>) => ({
  id: expect.stringMatching(/^leg/),
  request_id: requestId,
  committed: true,
  cached_input_tokens: 0,
  cache_creation_input_tokens: 0,
  cache_creation_1h_input_tokens: 0,
  byok: false,
  created_at: expect.any(String),
  ended_at: expect.any(String),
  ...leg,
})

async function grantId(h: Harness): Promise<string> {
  const usage = await (await h.call('/v1/usage')).json()
  expect(usage.grants).toHaveLength(1)
  return usage.grants[0].id
}

const deliveries = ['json', 'stream', 'gathered'] as const
type Row = { route: Route; fault: Fault; delivery: Delivery; stream: boolean; label: string }
const deliveryName: Record<Delivery, string> = {
  json: 'not streamed',
  stream: 'streamed',
  gathered: 'not streamed, gathered from a stream',
}
const rows: Row[] = routes.flatMap((route) =>
  faults.flatMap((fault) =>
    (fault.deliveries ?? deliveries).map((delivery) => ({
      route,
      fault,
      delivery,
      stream: delivery === 'stream',
      label: `${route.name}, ${fault.name}, ${deliveryName[delivery]}`,
    })),
  ),
)
/** A gathered answer reaches the client only whole: every fault strikes before its first byte. */
const beforeFirstByte = (r: Row) => r.fault.beforeFirstByte || r.delivery !== 'stream'

describe('before the first byte: the second candidate serves', () => {
  test.each(rows.filter(beforeFirstByte))('$label', async ({ route, fault, delivery, stream }) => {
    const h = await gateway(route, { dead: refused(fault), alone: false, delivery })
    fault.upstream?.(h)
    sim.setScenario('primary-up', { ...primaryScenario, ...fault.scenario?.(route) })
    sim.setScenario('backup-up', backupScenario)
    const res = await send(h, route, bodyFor(route, stream))
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    expect(requestId).toMatch(ULID)

    if (stream) {
      expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8')
      const frames = parseFrames(await res.text())
      expect(frames.map((f) => f.event)).toEqual(cleanEvents(route))
      expect(frames.filter((f) => f.event === deltaEvent(route)).map((f) => deltaText(route, f))).toEqual([
        'Backup here.',
      ])
      if (route.surface === 'messages') {
        expect(frames[0]!.data.message).toMatchObject({ id: `msg_${requestId}`, model: 'backup-up' })
      } else {
        expect(frames.at(-1)!.data.response).toMatchObject({
          id: `resp_${requestId}`,
          model: 'svc-max',
          status: 'completed',
          usage: { input_tokens: 40, output_tokens: 6 },
        })
      }
    } else if (route.surface === 'messages') {
      expect(await res.json()).toMatchObject({
        id: `msg_${requestId}`,
        type: 'message',
        model: 'backup-up',
        content: [{ type: 'text', text: 'Backup here.' }],
        usage: { input_tokens: 40, output_tokens: 6 },
      })
    } else {
      expect(await res.json()).toMatchObject({
        id: `resp_${requestId}`,
        object: 'response',
        status: 'completed',
        model: 'svc-max',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Backup here.' }] }],
        usage: { input_tokens: 40, output_tokens: 6 },
      })
    }

    // The refused connection never reached the simulator.
    expect(sim.requests.map((r) => (r.body as { model: string }).model)).toEqual(
      refused(fault) ? ['backup-up'] : ['primary-up', 'backup-up'],
    )
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'completed',
      http_status: 200,
      stream,
      attempts: 2,
      selected_model_id: 'backup',
      selected_provider_id: 'live',
      total_cost_nanos: BACKUP_COST,
      charged_nanos: BACKUP_COST,
      total_input_tokens: 40,
      total_output_tokens: 6,
      error: null,
    })
    expect(detail.provider_ranks.map((r: { model_id: string; status: string }) => [r.model_id, r.status])).toEqual([
      ['primary', 'failed'],
      ['backup', 'chosen'],
    ])
    const message = fault.alone(delivery, route).message
    expect(detail.usage_events).toEqual([
      legView(requestId, {
        attempt: 1,
        model_id: 'primary',
        provider_id: refused(fault) ? 'dead' : 'live',
        upstream_model: 'primary-up',
        estimated: false,
        outcome: 'failed',
        error: typeof message === 'string' ? message : expect.stringMatching(message),
        input_tokens: 0,
        output_tokens: 0,
        web_search_requests: 0,
        cost_nanos: 0,
        charged_nanos: 0,
      }),
      legView(requestId, {
        attempt: 2,
        model_id: 'backup',
        provider_id: 'live',
        upstream_model: 'backup-up',
        estimated: false,
        outcome: 'ok',
        error: null,
        input_tokens: 40,
        output_tokens: 6,
        web_search_requests: 0,
        cost_nanos: BACKUP_COST,
        charged_nanos: BACKUP_COST,
      }),
    ])
    const grant = await grantId(h)
    expect(detail.grant_charges).toEqual([
      {
        grant_id: grant,
        usage_event_id: detail.usage_events[1].id,
        cost_type: 'model_usage',
        amount_nanos: BACKUP_COST,
      },
    ])
    const usage = await (await h.call('/v1/usage')).json()
    expect(usage).toMatchObject({ limit_nanos: GRANT, used_nanos: BACKUP_COST, remaining_nanos: GRANT - BACKUP_COST })
  })
})

describe('before the first byte with no other candidate: an error status in the surface’s shape', () => {
  test.each(rows.filter(beforeFirstByte))('$label', async ({ route, fault, delivery, stream }) => {
    const h = await gateway(route, { dead: refused(fault), alone: true, delivery })
    fault.upstream?.(h)
    sim.setScenario('primary-up', { ...primaryScenario, ...fault.scenario?.(route) })
    const res = await send(h, route, bodyFor(route, stream))
    const want = fault.alone(delivery, route)
    // OpenAI clients do not know 529; they retry 503. An error no resend can fix is a 400 there:
    // Codex retries every 5xx whatever x-should-retry says (README).
    const status =
      route.surface === 'responses' && want.status === 529
        ? 503
        : route.surface === 'responses' && want.shouldRetry === 'false'
          ? 400
          : want.status
    expect(res.status).toBe(status)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(res.headers.get('retry-after')).toBe(want.retryAfter ?? null)
    expect(res.headers.get('x-should-retry')).toBe(want.shouldRetry ?? null)
    const requestId = res.headers.get('x-request-id')!
    expect(requestId).toMatch(ULID)
    const text = await res.text()
    expectNoLeaks(text)
    const message = typeof want.message === 'string' ? want.message : expect.stringMatching(want.message)
    if (route.surface === 'messages') {
      expect(JSON.parse(text)).toEqual({ type: 'error', error: { type: want.anthropicType, message } })
    } else {
      expect(JSON.parse(text)).toEqual({
        error: { message, type: want.openai.type, param: null, code: want.openai.code },
      })
    }

    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'failed',
      // The status the client received.
      http_status: status,
      stream,
      attempts: 1,
      selected_model_id: null,
      total_cost_nanos: 0,
      charged_nanos: 0,
      error: { type: want.kind, message },
    })
    expect(detail.usage_events).toEqual([
      legView(requestId, {
        attempt: 1,
        model_id: 'primary',
        provider_id: refused(fault) ? 'dead' : 'live',
        upstream_model: 'primary-up',
        estimated: false,
        outcome: 'failed',
        error: message,
        input_tokens: 0,
        output_tokens: 0,
        web_search_requests: 0,
        cost_nanos: 0,
        charged_nanos: 0,
      }),
    ])
    expect(detail.grant_charges).toEqual([])
    expect((await (await h.call('/v1/usage')).json()).remaining_nanos).toBe(GRANT)
  })
})

describe('after the first byte: an error event, no fallback, the estimated leg charged for what flowed', () => {
  test.each(rows.filter((r) => !beforeFirstByte(r)))('$label', async ({ route, fault, stream }) => {
    const h = await gateway(route, { dead: false, alone: false })
    sim.setScenario('primary-up', { ...primaryScenario, ...fault.scenario!(route) })
    sim.setScenario('backup-up', backupScenario)
    const body = bodyFor(route, stream)
    const res = await send(h, route, body)
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    const text = await res.text()
    expectNoLeaks(text)
    const frames = parseFrames(text)
    // Every frame the client got is JSON: a malformed upstream frame is never relayed.
    for (const f of frames) expect(f.data.unparseable).toBeUndefined()
    const deltas = frames.filter((f) => f.event === deltaEvent(route))
    const received = deltas.map((f) => deltaText(route, f)).join('')
    // A reset may drop the frame still in flight; a truncated body ends where it was cut.
    if (fault.name === 'malformed SSE frame') expect(received).toBe('aaaa bbbb')
    else expect(['aaaa', 'aaaa bbbb']).toContain(received)

    const terminal = route.brokenStreamEnd
    expect(frames.map((f) => f.event)).toEqual([...route.prelude, ...deltas.map(() => deltaEvent(route)), terminal])
    const last = frames.at(-1)!.data
    if (route.surface === 'messages') {
      expect(last).toEqual({ type: 'error', error: { type: 'api_error', message: expect.any(String) } })
    } else if (terminal === 'error') {
      expect(last).toEqual({
        type: 'error',
        code: 'server_error',
        message: expect.any(String),
        param: null,
        sequence_number: frames.length - 1,
      })
    } else {
      expect(last).toMatchObject({
        type: 'response.failed',
        sequence_number: frames.length - 1,
        response: {
          id: `resp_${requestId}`,
          model: 'svc-max',
          status: 'failed',
          error: { code: 'server_error', message: expect.any(String) },
        },
      })
    }
    // No fallback once a byte went out.
    expect(sim.requests).toHaveLength(1)

    // The upstream never reported its final usage: the prompt as reported at the start (or counted
    // with the tokenizer), the output at ≈ 4 characters a token of what flowed.
    const input = route.reportsPrompt ? 50 : tokenizerCount(route, body)
    const output = Math.ceil(received.length / 4)
    const cost = input * PRIMARY.input + output * PRIMARY.output
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'failed',
      http_status: 200,
      stream: true,
      attempts: 1,
      selected_model_id: 'primary',
      selected_provider_id: 'live',
      total_cost_nanos: cost,
      charged_nanos: cost,
      total_input_tokens: input,
      total_output_tokens: output,
      error: { type: 'api_error', message: expect.any(String) },
    })
    expect(detail.provider_ranks.map((r: { status: string }) => r.status)).toEqual(['chosen', 'not_tried'])
    expect(detail.usage_events).toEqual([
      legView(requestId, {
        attempt: 1,
        model_id: 'primary',
        provider_id: 'live',
        upstream_model: 'primary-up',
        estimated: true,
        outcome: 'failed',
        error: detail.error.message,
        input_tokens: input,
        output_tokens: output,
        web_search_requests: 0,
        cost_nanos: cost,
        charged_nanos: cost,
      }),
    ])
    expect(detail.grant_charges).toEqual([
      {
        grant_id: await grantId(h),
        usage_event_id: detail.usage_events[0].id,
        cost_type: 'model_usage',
        amount_nanos: cost,
      },
    ])
    expect((await (await h.call('/v1/usage')).json()).remaining_nanos).toBe(GRANT - cost)
  })
})

describe('429 retry-after is honoured', () => {
  test.each(routes.flatMap((route) => deliveries.map((delivery) => ({ route, delivery }))))(
    '$route.name, $delivery: the candidate cools for retry-after seconds: later requests go to the backup first, then it returns',
    async ({ route, delivery }) => {
      const h = await gateway(route, { dead: false, alone: false, delivery })
      const body = bodyFor(route, delivery === 'stream')
      sim.queue('primary-up', { fault: { kind: 'status', status: 429, retryAfter: 7 } })
      sim.setScenario('backup-up', backupScenario)
      const first = await send(h, route, body)
      expect(first.status).toBe(200)
      // Served: the wait is the model's, not the client's.
      expect(first.headers.get('retry-after')).toBeNull()
      await first.text()
      expect(await requestDetail(h, first.headers.get('x-request-id')!)).toMatchObject({
        attempts: 2,
        charged_nanos: BACKUP_COST,
      })

      const second = await send(h, route, body)
      expect(second.status).toBe(200)
      await second.text()
      const detail = await requestDetail(h, second.headers.get('x-request-id')!)
      const until = new Date(h.clock.now + 7_000).toISOString()
      expect(detail).toMatchObject({ attempts: 1, selected_model_id: 'backup', charged_nanos: BACKUP_COST })
      expect(detail.provider_ranks).toEqual([
        expect.objectContaining({ model_id: 'backup', status: 'chosen' }),
        expect.objectContaining({
          model_id: 'primary',
          status: 'not_tried',
          health: expect.objectContaining({ state: 'cooling', until }),
          reason: expect.stringContaining(`ranked last: circuit cooling until ${until}`),
        }),
      ])

      h.clock.advance(7_001)
      sim.setScenario('primary-up', { text: 'Primary again.', usage: { input: 10, output: 2 } })
      const third = await send(h, route, body)
      expect(third.status).toBe(200)
      await third.text()
      expect(await requestDetail(h, third.headers.get('x-request-id')!)).toMatchObject({
        attempts: 1,
        selected_model_id: 'primary',
        charged_nanos: 10 * PRIMARY.input + 2 * PRIMARY.output,
      })
      expect(sim.requests.map((r) => (r.body as { model: string }).model)).toEqual([
        'primary-up',
        'backup-up',
        'backup-up',
        'primary-up',
      ])
    },
  )
})

describe('an upstream’s long retry-after', () => {
  test('cools the model for it, but is not passed on: the SDKs retry on their own backoff, on both routes', async () => {
    for (const route of routes.filter((r) => r.kind !== 'openai-chat')) {
      const h = await gateway(route, { dead: false, alone: true })
      sim.queue('primary-up', { fault: { kind: 'status', status: 429, retryAfter: 3600 } })
      const res = await send(h, route, bodyFor(route, false))
      // The Anthropic SDK sleeps whatever it is told: an hour before each of its two retries; the
      // openai SDK would obey a minute. Told nothing, both back off for a second or so.
      expect({ status: res.status, retryAfter: res.headers.get('retry-after') }).toEqual({
        status: 429,
        retryAfter: null,
      })
      const again = await send(h, route, bodyFor(route, false))
      const detail = await requestDetail(h, again.headers.get('x-request-id')!)
      expect(detail.provider_ranks).toEqual([
        expect.objectContaining({
          model_id: 'primary',
          health: expect.objectContaining({ state: 'cooling', until: new Date(h.clock.now + 3_600_000).toISOString() }),
        }),
      ])
      sim.reset()
    }
  })
})

describe('streams that break after the first byte count against the model’s health', () => {
  const streamFaults: [string, (route: Route) => Scenario][] = [
    ['an in-band overloaded error', (r) => ({ fault: { kind: 'error_event', afterFrames: r.afterFrames } })],
    ['a reset', (r) => ({ fault: { kind: 'reset', afterFrames: r.afterFrames } })],
  ]
  for (const [faultName, fault] of streamFaults) {
    test.each(routes)(
      `${faultName}, $name: three open the circuit; a probe's stream closes it only once it ends whole`,
      async (route) => {
        const h = await gateway(route, { dead: false, alone: false })
        sim.setScenario('primary-up', { ...primaryScenario, ...fault(route) })
        sim.setScenario('backup-up', backupScenario)
        const stream = async () => {
          const res = await send(h, route, bodyFor(route, true))
          expect(res.status).toBe(200)
          await res.text()
          return requestDetail(h, res.headers.get('x-request-id')!)
        }
        for (let i = 0; i < 3; i++)
          expect(await stream()).toMatchObject({ status: 'failed', selected_model_id: 'primary' })
        // The circuit is open: the backup serves first, the primary ranked last.
        const fourth = await stream()
        expect(fourth).toMatchObject({ status: 'completed', selected_model_id: 'backup', attempts: 1 })
        expect(fourth.provider_ranks[1]).toMatchObject({ model_id: 'primary', health: { state: 'open' } })

        // After the cool-down one probe goes to the primary; while its stream runs, the circuit
        // stays shut to everyone else, and a whole stream closes it.
        h.clock.advance(30_000)
        sim.setScenario('primary-up', { ...primaryScenario, chunkDelayMs: 40 })
        const probe = await send(h, route, bodyFor(route, true))
        expect(probe.status).toBe(200)
        const during = await stream()
        expect(during).toMatchObject({ selected_model_id: 'backup' })
        expect(during.provider_ranks[1]).toMatchObject({
          model_id: 'primary',
          health: { state: 'open', until: 'after the probe in flight' },
        })
        await probe.text()
        const after = await stream()
        expect(after).toMatchObject({ status: 'completed', selected_model_id: 'primary' })
        expect(after.provider_ranks[0]).toMatchObject({ model_id: 'primary', health: { state: 'closed' } })
      },
    )
  }
})

describe('a connection that dies after its headers, before a whole first event', () => {
  // A raw socket: 200 and SSE headers, half a frame, then the connection closes. The simulator's
  // resets strike before Bun has sent any headers.
  const dying = Bun.listen({
    hostname: '127.0.0.1',
    port: 0,
    socket: {
      data(socket) {
        const half = 'event: message_start\ndata: {"type":"mess'
        socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n')
        socket.write(`${half.length.toString(16)}\r\n${half}\r\n`)
        setTimeout(() => socket.end(), 10)
      },
    },
  })
  afterAll(() => dying.stop(true))

  const deliveries = ['stream', 'gathered'] as const
  test.each(routes.flatMap((route) => deliveries.map((delivery) => ({ route, delivery }))))(
    '$route.name, $delivery: the second candidate serves; the leg says the stream failed, uncharged',
    async ({ route, delivery }) => {
      const h = await gateway(route, { dead: true, deadUrl: `http://127.0.0.1:${dying.port}`, alone: false, delivery })
      sim.setScenario('backup-up', backupScenario)
      const res = await send(h, route, bodyFor(route, delivery === 'stream'))
      expect(res.status).toBe(200)
      const text = await res.text()
      expect(text).toContain('Backup here.')
      const detail = await requestDetail(h, res.headers.get('x-request-id')!)
      expect(detail).toMatchObject({ status: 'completed', selected_model_id: 'backup', charged_nanos: BACKUP_COST })
      expect(detail.usage_events.map((e: Record<string, unknown>) => [e.model_id, e.outcome, e.cost_nanos])).toEqual([
        ['primary', 'failed', 0],
        ['backup', 'ok', BACKUP_COST],
      ])
      expect(detail.usage_events[0].error).toMatch(/^upstream stream failed: .*before the body ended/)
    },
  )
})

describe('an upstream error sent as no SSE event, after content, on a pass-through stream', () => {
  // llama.cpp's `error:` field and a proxy's bare JSON error object, which svc reads as a failure.
  // Relayed as they came, no client parser read them: the OpenAI SDK's finalResponse() returned a
  // response still in_progress with half its text, the Anthropic SDK never heard the message.
  const tails = [
    ["llama.cpp's `error:` field", 'error: {"code":500,"message":"the slot died","type":"server_error"}\n\n'],
    ['a bare JSON error object', '{"error":{"message":"the slot died","type":"server_error"}}\n\n'],
  ] as const
  const words = 'Half an answer. '.repeat(8)
  const responsesHead = () => {
    const item = { id: 'msg_up', type: 'message', role: 'assistant', status: 'in_progress', content: [] }
    const at = { item_id: 'msg_up', output_index: 0, content_index: 0 }
    const events: [string, Record<string, unknown>][] = [
      ['response.created', { response: { id: 'resp_up', object: 'response', status: 'in_progress', output: [] } }],
      ['response.output_item.added', { output_index: 0, item }],
      ['response.content_part.added', { ...at, part: { type: 'output_text', text: '' } }],
      ['response.output_text.delta', { ...at, delta: words }],
    ]
    return events.map(([type, data], sequence) => sseFrame(type, { type, sequence_number: sequence, ...data }))
  }
  const anthropicHead = () => [
    anthropicMessageStart('first-up'),
    anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: words } }),
  ]

  test.each(tails)('responses → openai-responses, %s: the SDK throws the upstream’s message', async (_, tail) => {
    const h = await scriptedPair('openai-responses', {}, 5, { openai_itself: true })
    scriptedUpstream(h, () => ({ sse: [...responsesHead(), tail] }))
    const { openai } = sdkClients(h)
    const stream = openai.responses.stream({ model: 'svc-pro', input: 'hi' })
    expect(await stream.finalResponse().catch((e: Error) => e.message)).toBe('the slot died')
    await expectFailedWith(h, 'the slot died')
  })

  test.each(tails)('messages → anthropic, %s: the SDK throws the upstream’s message', async (_, tail) => {
    const h = await scriptedPair('anthropic')
    scriptedUpstream(h, () => ({ sse: [...anthropicHead(), tail] }))
    const { anthropic } = sdkClients(h)
    const params = { model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] }
    const error = await anthropic.messages
      .stream(params)
      .finalMessage()
      .catch((e: unknown) => e)
    expect(error).toMatchObject({ error: { type: 'error', error: { type: 'api_error', message: 'the slot died' } } })
    await expectFailedWith(h, 'the slot died')
  })

  async function expectFailedWith(h: Harness, message: string) {
    const [row] = (await (await h.call('/v1/usage/requests')).json()).items
    const detail = await endedRequestDetail(h, row.request_id)
    expect(detail).toMatchObject({ status: 'failed', error: { message } })
    expect(detail.usage_events).toEqual([
      expect.objectContaining({ outcome: 'failed', estimated: true, error: message }),
    ])
  }
})
