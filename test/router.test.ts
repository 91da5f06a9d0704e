// The profile router end to end: the app in-process, upstreams played by the simulator. What is
// asserted is what a user sees: status codes, provider_ranks and costs in the request record,
// ledger rows. Time moves only on the fake clock.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app'
import { resolveConfig } from '../src/config/load'
import type { ConfigFile } from '../src/config/schema'
import { openDatabase } from '../src/db/open'
import { createDeps, type Deps } from '../src/deps'
import { createLogger } from '../src/lib/log'
import type { RankEntry } from '../src/router/rank'
import type { TestResponse } from './support/harness'
import { type Simulator, startSimulator } from './support/simulator'

const T0 = Date.parse('2026-11-22T10:00:00.000Z')
const iso = (ms: number) => new Date(ms).toISOString()
const SIM_KEY = 'sim-platform-key-0001'
const BYOK_KEY = 'sk-own-account-key-7f3a9c2e5d1b'

let sim: Simulator
/** Serves the provider that has no platform key: it accepts only the account's own key. */
let simOwn: Simulator
beforeAll(() => {
  sim = startSimulator({ apiKey: SIM_KEY })
  simOwn = startSimulator({ apiKey: BYOK_KEY })
})
afterAll(async () => {
  await sim.stop()
  await simOwn.stop()
})
beforeEach(() => {
  sim.reset()
  simOwn.reset()
})

type ModelEntry = NonNullable<ConfigFile['models']>[number]

/**
 * alpha (anthropic, q90, $3/$15) and beta (chat, q88, $1/$5) are in max and pro: max prefers
 * alpha by quality, pro prefers beta (88 − 8·log2 3 = 75.32 over 90 − 8·log2 7 = 67.54).
 */
const alpha: ModelEntry = {
  id: 'alpha',
  provider: 'anth',
  upstream_model: 'alpha-up',
  profiles: ['max', 'pro'],
  quality: 90,
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  cache_read_usd_per_mtok: 0.3,
  cache_write_usd_per_mtok: 3.75,
}
const beta: ModelEntry = {
  id: 'beta',
  provider: 'chat',
  upstream_model: 'beta-up',
  profiles: ['max', 'pro'],
  quality: 88,
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 5,
}
/** Served only through `own`, a provider configured without a platform key. */
const gamma: ModelEntry = {
  id: 'gamma',
  provider: 'own',
  upstream_model: 'gamma-up',
  profiles: ['max'],
  quality: 95,
  input_usd_per_mtok: 3.001,
  output_usd_per_mtok: 15,
  cache_read_usd_per_mtok: 0.3,
  cache_write_usd_per_mtok: 3.75,
}

interface SetupOptions {
  models?: ModelEntry[]
  config?: Partial<ConfigFile>
  grantUsd?: number
  /** A file database (WAL) instead of :memory:. */
  dbPath?: string
  log?: (line: string) => void
}

async function setup(opts: SetupOptions = {}) {
  const file: ConfigFile = {
    catalog: { builtin: false },
    providers: {
      anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
      chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
      own: { kind: 'anthropic', base_url: simOwn.url, api_key_env: 'SVC_TEST_OWN_KEY_NOT_SET' },
    },
    models: opts.models ?? [alpha, beta],
    ...opts.config,
  }
  const config = resolveConfig(file, {
    env: { SIM_KEY, SVC_ADMIN_TOKEN: 'admin-secret', SVC_MASTER_KEY: 'test-master-key' },
    overrides: { database: opts.dbPath ?? ':memory:' },
  })
  config.billing.starterGrant = opts.grantUsd === 0 ? null : { nanos: Math.round((opts.grantUsd ?? 5) * 1e9) }
  const clock = {
    now: T0,
    advance(ms: number) {
      clock.now += ms
    },
  }
  const deps = createDeps(config, {
    db: openDatabase(opts.dbPath ?? ':memory:'),
    clock: () => clock.now,
    log: opts.log ? createLogger('debug', opts.log) : createLogger('silent'),
  })
  const first = await deps.admin.bootstrap()
  if (!first) throw new Error('bootstrap did not run on an empty database')
  return { deps, config, clock, ...clientOf(deps, first.key), key: first.key, accountId: first.account.id }
}

/** The app over `deps`, called with `key` unless a call names another. */
function clientOf(deps: Deps, key: string) {
  const app = createApp(deps)
  const call = (path: string, init: RequestInit & { json?: unknown; key?: string } = {}): Promise<TestResponse> => {
    const headers = new Headers(init.headers)
    headers.set('authorization', `Bearer ${init.key ?? key}`)
    let body = init.body
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json')
      body = JSON.stringify(init.json)
    }
    return app.handle(new Request(`http://localhost${path}`, { ...init, headers, body }))
  }
  /** One Messages request under a profile; returns the response and its request record. */
  const ask = async (
    profile: string,
    o: { session?: string; key?: string; content?: unknown; maxTokens?: number } = {},
  ) => {
    const headers: Record<string, string> = { 'anthropic-version': '2023-06-01' }
    if (o.session) headers['x-session-id'] = o.session
    const res = await call('/compat-a/v1/messages', {
      method: 'POST',
      headers,
      key: o.key,
      json: {
        model: profile,
        max_tokens: o.maxTokens ?? 100,
        messages: [{ role: 'user', content: o.content ?? 'hello' }],
      },
    })
    const requestId = res.headers.get('x-request-id')
    const body = await res.json()
    const record = requestId ? await (await call(`/v1/usage/requests/${requestId}`, { key: o.key })).json() : undefined
    return { status: res.status, body, requestId, record }
  }
  return { call, ask }
}

/** provider_ranks as [model, status, health state]: the order and outcome a user reads. */
const ranksOf = (record: { provider_ranks: RankEntry[] }) =>
  record.provider_ranks.map((r) => [r.model_id, r.status, r.health.state])
const rankOf = (record: { provider_ranks: RankEntry[] }, modelId: string) => {
  const entry = record.provider_ranks.find((r) => r.model_id === modelId)
  if (!entry) throw new Error(`${modelId} is not in provider_ranks`)
  return entry
}
/** Which upstream models the simulator was asked for, in order. */
const upstreamModels = (s: Simulator) => s.requests.map((r) => (r.body as { model: string }).model)
const overloaded = { fault: { kind: 'status' as const, status: 529 } }

describe('failover and the circuit breaker', () => {
  test('529 three times opens the circuit; it ranks last untried; after the cooldown one probe closes it', async () => {
    const h = await setup()
    sim.queue('alpha-up', overloaded, overloaded, overloaded)

    for (let i = 0; i < 3; i++) {
      const r = await h.ask('svc-max')
      // Fallback before the first byte: the client sees a 200 from beta each time.
      expect(r.status).toBe(200)
      expect(r.record.selected_model_id).toBe('beta')
      expect(ranksOf(r.record)).toEqual([
        ['alpha', 'failed', 'closed'],
        ['beta', 'chosen', 'closed'],
      ])
      expect(rankOf(r.record, 'alpha').reason).toBe('overloaded: Overloaded')
      expect(
        r.record.usage_events.map((l: { model_id: string; outcome: string; cost_nanos: number }) => [
          l.model_id,
          l.outcome,
          l.cost_nanos > 0,
        ]),
      ).toEqual([
        ['alpha', 'failed', false],
        ['beta', 'ok', true],
      ])
    }
    expect(upstreamModels(sim)).toEqual(['alpha-up', 'beta-up', 'alpha-up', 'beta-up', 'alpha-up', 'beta-up'])

    // Open: ranked last with its state, and not tried at all.
    sim.reset()
    const open = await h.ask('svc-max')
    expect(open.status).toBe(200)
    expect(ranksOf(open.record)).toEqual([
      ['beta', 'chosen', 'closed'],
      ['alpha', 'not_tried', 'open'],
    ])
    expect(rankOf(open.record, 'alpha').health).toEqual({
      state: 'open',
      ttfb_ms: null,
      error_rate: 0.488,
      until: iso(T0 + 30_000),
    })
    expect(rankOf(open.record, 'alpha').reason).toBe(`eligible; ranked last: circuit open until ${iso(T0 + 30_000)}`)
    expect(upstreamModels(sim)).toEqual(['beta-up'])

    // Still open a millisecond before the cooldown ends.
    h.clock.advance(29_999)
    expect((await h.ask('svc-max')).record.selected_model_id).toBe('beta')

    // Half-open: alpha is back in its ranked place and exactly one probe goes to it.
    h.clock.advance(1)
    sim.reset()
    const probe = await h.ask('svc-max')
    expect(probe.status).toBe(200)
    expect(ranksOf(probe.record)).toEqual([
      ['alpha', 'chosen', 'half_open'],
      ['beta', 'not_tried', 'closed'],
    ])
    expect(upstreamModels(sim)).toEqual(['alpha-up'])
    expect(h.deps.health.view('anth', 'alpha').state).toBe('closed')

    const after = await h.ask('svc-max')
    expect(ranksOf(after.record)).toEqual([
      ['alpha', 'chosen', 'closed'],
      ['beta', 'not_tried', 'closed'],
    ])
  })

  test('a failed probe reopens the circuit for twice the cooldown', async () => {
    const h = await setup()
    sim.queue('alpha-up', overloaded, overloaded, overloaded, overloaded)
    for (let i = 0; i < 3; i++) await h.ask('svc-max')
    h.clock.advance(30_000)
    const probe = await h.ask('svc-max')
    expect(probe.status).toBe(200)
    expect(ranksOf(probe.record)).toEqual([
      ['alpha', 'failed', 'half_open'],
      ['beta', 'chosen', 'closed'],
    ])
    const next = await h.ask('svc-max')
    expect(rankOf(next.record, 'alpha').health).toMatchObject({ state: 'open', until: iso(T0 + 30_000 + 60_000) })
  })

  test('a probe answered with the client’s own error (400) does not leave the circuit stuck open', async () => {
    const h = await setup()
    sim.queue('alpha-up', overloaded, overloaded, overloaded, { fault: { kind: 'status', status: 400 } })
    for (let i = 0; i < 3; i++) await h.ask('svc-max')
    h.clock.advance(30_000)
    const probe = await h.ask('svc-max')
    // Not retryable: the client's request was at fault, and says so.
    expect(probe.status).toBe(400)
    expect(probe.body.type).toBe('error')
    // The upstream answered, so the next request may probe again (it is not "in flight" forever).
    const next = await h.ask('svc-max')
    expect(ranksOf(next.record)).toEqual([
      ['alpha', 'chosen', 'half_open'],
      ['beta', 'not_tried', 'closed'],
    ])
    expect(h.deps.health.view('anth', 'alpha').state).toBe('closed')
  })

  test('429 with retry-after cools the candidate: ranked last until the time passes', async () => {
    const h = await setup()
    sim.queue('alpha-up', { fault: { kind: 'status', status: 429, retryAfter: 20 } })

    const limited = await h.ask('svc-max')
    expect(limited.status).toBe(200)
    expect(ranksOf(limited.record)).toEqual([
      ['alpha', 'failed', 'closed'],
      ['beta', 'chosen', 'closed'],
    ])
    expect(rankOf(limited.record, 'alpha').reason).toMatch(
      /^rate_limit: \w+ is rate-limiting the gateway's own account there/,
    )

    const cooling = await h.ask('svc-max')
    expect(ranksOf(cooling.record)).toEqual([
      ['beta', 'chosen', 'closed'],
      ['alpha', 'not_tried', 'cooling'],
    ])
    expect(rankOf(cooling.record, 'alpha')).toMatchObject({
      health: { state: 'cooling', until: iso(T0 + 20_000) },
      reason: `eligible; ranked last: circuit cooling until ${iso(T0 + 20_000)}`,
    })

    h.clock.advance(19_999)
    expect((await h.ask('svc-max')).record.selected_model_id).toBe('beta')
    h.clock.advance(1)
    sim.reset()
    const back = await h.ask('svc-max')
    expect(ranksOf(back.record)).toEqual([
      ['alpha', 'chosen', 'closed'],
      ['beta', 'not_tried', 'closed'],
    ])
    expect(upstreamModels(sim)).toEqual(['alpha-up'])
  })

  test('streams fall back only before the first byte', async () => {
    const h = await setup()
    const stream = async () => {
      const res = await h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: 'svc-max', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'hello' }] },
      })
      const text = await res.text()
      const record = await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()
      return { status: res.status, text, record }
    }

    // 529 before any byte: beta answers the stream.
    sim.queue('alpha-up', overloaded)
    const before = await stream()
    expect(before.status).toBe(200)
    expect(before.text).toContain('Hello from beta-up')
    expect(ranksOf(before.record)).toEqual([
      ['alpha', 'failed', 'closed'],
      ['beta', 'chosen', 'closed'],
    ])

    // An error after the answer began (its first words out, the next ones paced): the client sees
    // it in the stream, no fallback.
    sim.reset()
    sim.queue('alpha-up', { chunks: 3, chunkDelayMs: 20, fault: { kind: 'error_event', afterFrames: 4 } })
    const after = await stream()
    expect(after.status).toBe(200)
    expect(after.text).toContain('event: error')
    expect(after.record).toMatchObject({ status: 'failed', attempts: 1, selected_model_id: 'alpha' })
    expect(ranksOf(after.record)).toEqual([
      ['alpha', 'chosen', 'closed'],
      ['beta', 'not_tried', 'closed'],
    ])
    expect(upstreamModels(sim)).toEqual(['alpha-up'])
  })

  test('when every candidate fails the client gets the last error, and every leg is recorded', async () => {
    const h = await setup()
    sim.queue('alpha-up', overloaded)
    sim.queue('beta-up', { fault: { kind: 'status', status: 500 } })
    const r = await h.ask('svc-max')
    expect(r.status).toBe(500)
    expect(r.record).toMatchObject({ status: 'failed', http_status: 500, total_cost_nanos: 0, charged_nanos: 0 })
    expect(ranksOf(r.record)).toEqual([
      ['alpha', 'failed', 'closed'],
      ['beta', 'failed', 'closed'],
    ])
  })
})

describe('eligibility through the app', () => {
  test('max_tokens is clamped to the model’s max output, sent clamped and recorded', async () => {
    const h = await setup({ models: [{ ...alpha, max_output_tokens: 50 }] })
    const r = await h.ask('svc-max', { maxTokens: 100 })
    expect(r.status).toBe(200)
    expect(sim.requests.map((q) => (q.body as { max_tokens: number }).max_tokens)).toEqual([50])
    expect(rankOf(r.record, 'alpha').reason).toBe('eligible; max_tokens clamped from 100 to 50')
  })

  test('images to a text-only catalog: 503 naming why, recorded with every skip', async () => {
    const h = await setup()
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }
    const r = await h.ask('svc-max', { content: [image, { type: 'text', text: 'what is this?' }] })
    expect(r.status).toBe(503)
    expect(r.body).toEqual({
      type: 'error',
      error: {
        type: 'api_error',
        message:
          'no model can serve this request under svc-max: alpha via anth: request has images or files; model has no vision; beta via chat: request has images or files; model has no vision',
      },
    })
    expect(r.record).toMatchObject({ status: 'failed', http_status: 503, attempts: 0, total_cost_nanos: 0 })
    expect(ranksOf(r.record)).toEqual([
      ['alpha', 'skipped', 'closed'],
      ['beta', 'skipped', 'closed'],
    ])
    expect(sim.requests).toHaveLength(0)
  })

  test('a prompt larger than every context window: 400 "prompt is too long", against the largest window', async () => {
    const h = await setup({
      models: [
        { ...alpha, context_window: 4000 },
        { ...beta, context_window: 4500 },
      ],
    })
    const r = await h.ask('svc-pro', { content: 'x'.repeat(20_000) })
    expect(r.status).toBe(400)
    expect(r.body).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'prompt is too long: 5000 tokens > 4500 maximum',
      },
    })
    expect(r.record).toMatchObject({ status: 'failed', http_status: 400, attempts: 0, total_cost_nanos: 0 })
    expect(r.record.provider_ranks.map((rank: { reason: string }) => rank.reason)).toEqual([
      '~5000 input tokens do not fit the 4000-token context window',
      '~5000 input tokens do not fit the 4500-token context window',
    ])
    expect(sim.requests).toHaveLength(0)
  })

  test("a prompt that fits only without its max_tokens: Anthropic's words for that, which Claude Code reads", async () => {
    const h = await setup({ models: [{ ...alpha, context_window: 8000 }] })
    const r = await h.ask('svc-pro', { content: 'x'.repeat(20_000), maxTokens: 4000 })
    expect(r.status).toBe(400)
    expect(r.body.error.message).toBe(
      'input length and `max_tokens` exceed context limit: 5000 + 4000 > 8000, decrease input length or `max_tokens` and try again',
    )
  })

  test('a model that fits the prompt but no credit covers: 402, not the context', async () => {
    const h = await setup({ grantUsd: 0, models: [{ ...alpha, context_window: 4000 }, beta] })
    await h.deps.admin.addGrant({ account: 'default', usd: 1, models: ['alpha'] })
    const r = await h.ask('svc-pro', { content: 'x'.repeat(20_000) })
    expect(r.status).toBe(402)
    expect(r.body.error.type).toBe('billing_error')
  })

  test('a model passed over for another reason before the window was asked: still the context', async () => {
    // beta could never serve (no vision); alpha could, once the conversation is compacted.
    const h = await setup({
      models: [
        { ...alpha, context_window: 4000, vision: true },
        { ...beta, vision: false },
      ],
    })
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } }
    const r = await h.ask('svc-pro', { content: [image, { type: 'text', text: 'x'.repeat(20_000) }] })
    expect(r.status).toBe(400)
    expect(r.body.error.message).toStartWith('prompt is too long: ')
  })

  test('only scoped grants, none covering the profile: 402', async () => {
    const h = await setup({ grantUsd: 0 })
    await h.deps.admin.addGrant({ account: 'default', usd: 1, routingModes: ['ultra_saver'] })
    const r = await h.ask('svc-max')
    expect(r.status).toBe(402)
    expect(r.body.error).toEqual({
      type: 'billing_error',
      message: 'no credit applies to this request under svc-max: add a grant that covers it',
    })
    expect(r.record.provider_ranks.map((e: RankEntry) => e.reason)).toEqual([
      'no credit applies to this model (grant scopes or expiry)',
      'no credit applies to this model (grant scopes or expiry)',
    ])
    expect(sim.requests).toHaveLength(0)
  })

  test('a grant scoped to one model makes only that model eligible, and pays for it', async () => {
    const h = await setup({ grantUsd: 0 })
    const g = await h.deps.admin.addGrant({ account: 'default', usd: 1, models: ['beta'] })
    sim.setScenario('beta-up', { text: 'hi', usage: { input: 100, output: 20 } })
    const r = await h.ask('svc-max')
    expect(r.status).toBe(200)
    expect(ranksOf(r.record)).toEqual([
      ['beta', 'chosen', 'closed'],
      ['alpha', 'skipped', 'closed'],
    ])
    // 100 × 1000 + 20 × 5000 nanos
    expect(r.record.grant_charges).toEqual([
      { grant_id: g.id, usage_event_id: r.record.usage_events[0].id, cost_type: 'model_usage', amount_nanos: 200_000 },
    ])
  })
})

describe('BYOK', () => {
  let dir: string
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'svc-router-byok-'))
  })

  test('a provider with no platform key is served with the account’s own key; only the fee is charged', async () => {
    const logs: string[] = []
    const dbPath = join(dir, 'svc.db')
    const h = await setup({
      models: [alpha, gamma],
      config: { billing: { byok_fee_percent: 2.5 } },
      grantUsd: 0,
      dbPath,
      log: (line) => logs.push(line),
    })
    const usage = await h.deps.admin.addGrant({ account: 'default', usd: 1, costType: 'model_usage' })
    const fee = await h.deps.admin.addGrant({ account: 'default', amountNanos: 50_000, costType: 'byok_fee' })
    const general = await h.deps.admin.addGrant({ account: 'default', usd: 1, costType: 'all' })
    const bodies: string[] = []

    // Without a key gamma is skipped, and says so.
    const before = await h.ask('svc-max')
    bodies.push(JSON.stringify(before))
    expect(before.record.selected_model_id).toBe('alpha')
    expect(rankOf(before.record, 'gamma')).toMatchObject({
      status: 'skipped',
      byok: false,
      reason: 'no key for this provider (neither the platform’s nor the account’s own)',
    })

    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: BYOK_KEY })
    simOwn.setScenario('gamma-up', { text: 'served with your key', usage: { input: 1001, output: 7 } })
    const served = await h.ask('svc-max')
    bodies.push(JSON.stringify(served))
    expect(served.status).toBe(200)
    expect(served.body.content).toEqual([{ type: 'text', text: 'served with your key' }])
    expect(simOwn.requests).toHaveLength(1)
    expect(simOwn.requests[0]?.headers['x-api-key']).toBe(BYOK_KEY)
    expect(ranksOf(served.record)).toEqual([
      ['gamma', 'chosen', 'closed'],
      ['alpha', 'not_tried', 'closed'],
    ])
    expect(rankOf(served.record, 'gamma').byok).toBe(true)

    // The full cost is recorded; 2.5 % of it, rounded up to the nano, is charged.
    const cost = 1001 * 3001 + 7 * 15_000 // 3,109,001 nanos
    const charged = Math.ceil((cost * 25) / 1000) // 77,725.025 → 77,726
    expect(charged).toBe(77_726)
    expect(served.record).toMatchObject({ byok: true, total_cost_nanos: cost, charged_nanos: charged })
    expect(served.record.usage_events).toEqual([
      expect.objectContaining({
        model_id: 'gamma',
        provider_id: 'own',
        byok: true,
        cost_nanos: cost,
        charged_nanos: charged,
      }),
    ])
    // The scoped byok_fee grant first, the rest from the `all` grant; never the model_usage grant.
    const legId = served.record.usage_events[0].id
    expect(served.record.grant_charges).toEqual([
      { grant_id: fee.id, usage_event_id: legId, cost_type: 'byok_fee', amount_nanos: 50_000 },
      { grant_id: general.id, usage_event_id: legId, cost_type: 'byok_fee', amount_nanos: charged - 50_000 },
    ])
    const position = await (await h.call('/v1/usage')).json()
    const remaining = Object.fromEntries(
      position.grants.map((g: { id: string; remaining_nanos: number }) => [g.id, g.remaining_nanos]),
    )
    expect(remaining).toEqual({
      [usage.id]: 1_000_000_000 - before.record.total_cost_nanos,
      [fee.id]: 0,
      [general.id]: 1_000_000_000 - (charged - 50_000),
    })

    // A failing BYOK leg: logged, recorded, and an error body for the client — none holding the key.
    simOwn.queue('gamma-up', { fault: { kind: 'status', status: 500 } })
    const fellBack = await h.ask('svc-max')
    bodies.push(JSON.stringify(fellBack))
    expect(fellBack.record.selected_model_id).toBe('alpha')
    simOwn.queue('gamma-up', { fault: { kind: 'status', status: 400 } })
    const rejected = await h.ask('svc-max')
    bodies.push(JSON.stringify(rejected))
    expect(rejected.status).toBe(400)
    bodies.push(await (await h.call('/v1/usage')).text())
    bodies.push(await (await h.call('/v1/usage/requests')).text())

    expect(logs.some((l) => l.includes('upstream leg failed'))).toBe(true)
    for (const line of logs) expect(line).not.toContain(BYOK_KEY)
    for (const body of bodies) expect(body).not.toContain(BYOK_KEY)
    const needle = Buffer.from(BYOK_KEY)
    const files = readdirSync(dir).filter((f) => f.startsWith('svc.db'))
    expect(files).toContain('svc.db-wal')
    for (const f of files) expect(readFileSync(join(dir, f)).includes(needle)).toBe(false)

    // Removing the key takes effect at once: gamma is skipped again, nothing reaches simOwn.
    await h.deps.admin.removeProviderKey({ account: 'default', provider: 'own' })
    simOwn.reset()
    const removed = await h.ask('svc-max')
    expect(removed.record.selected_model_id).toBe('alpha')
    expect(rankOf(removed.record, 'gamma')).toMatchObject({ status: 'skipped', byok: false })
    expect(simOwn.requests).toHaveLength(0)

    h.deps.ledger.close()
    rmSync(dir, { recursive: true, force: true })
  })

  test('BYOK with only a model_usage grant: the fee has no credit, the platform model serves', async () => {
    const h = await setup({ models: [alpha, gamma], grantUsd: 0 })
    await h.deps.admin.addGrant({ account: 'default', usd: 1, costType: 'model_usage' })
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: BYOK_KEY })
    const r = await h.ask('svc-max')
    expect(r.record.selected_model_id).toBe('alpha')
    expect(rankOf(r.record, 'gamma')).toMatchObject({
      byok: true,
      status: 'skipped',
      reason: 'no credit applies to the BYOK fee for this model',
    })
    expect(simOwn.requests).toHaveLength(0)
    rmSync(dir, { recursive: true, force: true })
  })

  test('a 0 % BYOK fee needs no credit and charges nothing', async () => {
    const h = await setup({ models: [gamma], config: { billing: { byok_fee_percent: 0 } }, grantUsd: 0 })
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: BYOK_KEY })
    simOwn.setScenario('gamma-up', { text: 'free', usage: { input: 10, output: 2 } })
    const r = await h.ask('svc-max')
    expect(r.status).toBe(200)
    expect(r.record).toMatchObject({ byok: true, total_cost_nanos: 10 * 3001 + 2 * 15_000, charged_nanos: 0 })
    expect(r.record.grant_charges).toEqual([])
    rmSync(dir, { recursive: true, force: true })
  })
})

describe('session stickiness', () => {
  test('a session keeps its model while new sessions move on; an open circuit moves it, and says why', async () => {
    const h = await setup()
    const first = await h.ask('svc-max', { session: 's1' })
    expect(first.record.selected_model_id).toBe('alpha')

    // Feedback pushes alpha below beta (90 − 4 < 88) for this account's new sessions.
    const fb = await h.call(`/v1/usage/requests/${first.requestId}/feedback`, {
      method: 'POST',
      json: { reason: 'stronger_model_needed' },
    })
    expect(fb.status).toBe(201)
    const fresh = await h.ask('svc-max', { session: 's2' })
    expect(ranksOf(fresh.record)).toEqual([
      ['beta', 'chosen', 'closed'],
      ['alpha', 'not_tried', 'closed'],
    ])
    expect(rankOf(fresh.record, 'alpha')).toMatchObject({ nudge: -4, score: 86, reason: 'eligible; feedback nudge -4' })

    const again = await h.ask('svc-max', { session: 's1' })
    expect(ranksOf(again.record)).toEqual([
      ['alpha', 'chosen', 'closed'],
      ['beta', 'not_tried', 'closed'],
    ])
    expect(rankOf(again.record, 'alpha').reason).toBe(
      'eligible; feedback nudge -4; session sticks to the model that served it',
    )

    // Another account's traffic opens alpha's circuit (health is per provider × model, shared).
    await h.deps.admin.createAccount('other')
    const other = await h.deps.admin.createKey({ account: 'other' })
    await h.deps.admin.addGrant({ account: 'other', usd: 1 })
    sim.queue('alpha-up', overloaded, overloaded, overloaded)
    for (let i = 0; i < 3; i++)
      expect((await h.ask('svc-max', { key: other.key })).record.selected_model_id).toBe('beta')

    const moved = await h.ask('svc-max', { session: 's1' })
    expect(moved.status).toBe(200)
    expect(ranksOf(moved.record)).toEqual([
      ['beta', 'chosen', 'closed'],
      ['alpha', 'not_tried', 'open'],
    ])
    expect(rankOf(moved.record, 'alpha').reason).toBe(
      `eligible; feedback nudge -4; ranked last: circuit open until ${iso(T0 + 30_000)}; session moved off this model`,
    )

    // From here the session sticks to beta, the model that served it last.
    const settled = await h.ask('svc-max', { session: 's1' })
    expect(rankOf(settled.record, 'beta')).toMatchObject({
      status: 'chosen',
      reason: 'eligible; session sticks to the model that served it',
    })
  })

  test('a session sticks per profile: its requests under another profile neither follow nor move it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-router-sticky-'))
    const dbPath = join(dir, 'svc.db')
    const h = await setup({ dbPath })
    const sticks = 'eligible; session sticks to the model that served it'
    // max prefers alpha, pro beta; both models are in both profiles.
    expect((await h.ask('svc-max', { session: 's1' })).record.selected_model_id).toBe('alpha')
    // As Claude Code's background calls on another profile share its session id: pro keeps its own choice.
    const pro = await h.ask('svc-pro', { session: 's1' })
    expect(ranksOf(pro.record)).toEqual([
      ['beta', 'chosen', 'closed'],
      ['alpha', 'not_tried', 'closed'],
    ])
    expect(rankOf(pro.record, 'beta').reason).toBe('eligible')
    // …and max's session is where it was, though beta (in max too) served the session last.
    const max = await h.ask('svc-max', { session: 's1' })
    expect(ranksOf(max.record)).toEqual([
      ['alpha', 'chosen', 'closed'],
      ['beta', 'not_tried', 'closed'],
    ])
    expect(rankOf(max.record, 'alpha').reason).toBe(sticks)
    expect(rankOf((await h.ask('svc-pro', { session: 's1' })).record, 'beta').reason).toBe(sticks)

    // Restarted (nothing in memory), each profile reads its own last model of the session from the ledger.
    h.deps.ledger.close()
    const reopened = createDeps(h.config, {
      db: openDatabase(dbPath),
      clock: () => h.clock.now,
      log: createLogger('silent'),
    })
    const after = clientOf(reopened, h.key)
    const maxAgain = await after.ask('svc-max', { session: 's1' })
    expect(ranksOf(maxAgain.record)).toEqual([
      ['alpha', 'chosen', 'closed'],
      ['beta', 'not_tried', 'closed'],
    ])
    expect(rankOf(maxAgain.record, 'alpha').reason).toBe(sticks)
    const proAgain = await after.ask('svc-pro', { session: 's1' })
    expect(rankOf(proAgain.record, 'beta')).toMatchObject({ status: 'chosen', reason: sticks })
    reopened.ledger.close()
    rmSync(dir, { recursive: true, force: true })
  })
})

// A session found in the ledger but not served (its request refused) was remembered past the cap for
// good: 8,000 such requests from sessions memory had let go added ~24,000 objects that never left.
test('sessions remembered stay within the cap, however they came: the oldest is asked of the ledger again', async () => {
  const h = await setup()
  let asked = 0
  h.deps.ledger.lastServedInSession = async () => {
    asked++
    return { modelId: 'alpha', providerId: 'p' }
  }
  const lane = (i: number) => ({ accountId: 'acct', sessionId: `s${i}`, routingMode: 'max' as const })
  for (let i = 0; i <= 10_000; i++) await h.deps.sessions.lastServed(lane(i))
  expect(asked).toBe(10_001)
  await h.deps.sessions.lastServed(lane(10_000))
  expect(asked).toBe(10_001)
  await h.deps.sessions.lastServed(lane(0))
  expect(asked).toBe(10_002)
})

describe('feedback nudges', () => {
  test('negative feedback nudges the model down for this account and profile, clamped at −10', async () => {
    const h = await setup()
    const [served, second, third] = [await h.ask('svc-max'), await h.ask('svc-max'), await h.ask('svc-max')]
    for (const r of [served, second, third]) expect(r.record.selected_model_id).toBe('alpha')
    const feedback = (json: unknown, on = served) =>
      h.call(`/v1/usage/requests/${on.requestId}/feedback`, { method: 'POST', json })

    // too_expensive: −3 → alpha 87 < beta 88, so the order flips.
    expect((await feedback({ reason: 'too_expensive' })).status).toBe(201)
    const flipped = await h.ask('svc-max')
    expect(ranksOf(flipped.record)).toEqual([
      ['beta', 'chosen', 'closed'],
      ['alpha', 'not_tried', 'closed'],
    ])
    expect(rankOf(flipped.record, 'alpha')).toMatchObject({
      nudge: -3,
      score: 87,
      reason: 'eligible; feedback nudge -3',
    })

    // Rated again, an answer's latest rating replaces its first: −4, not −3 − 4. A comment alone
    // rates nothing and leaves it standing.
    await feedback({ reason: 'stronger_model_needed' })
    await feedback({ comment: 'still wrong' })
    expect(rankOf((await h.ask('svc-max')).record, 'alpha')).toMatchObject({ nudge: -4, score: 86 })

    // Other answers' ratings add theirs: −4 − (4 + 1) − 4 = −13, clamped to −10.
    await feedback({ reason: 'stronger_model_needed', rating: 'down' }, second)
    await feedback({ reason: 'wrong_model' }, third)
    const clamped = await h.ask('svc-max')
    expect(rankOf(clamped.record, 'alpha')).toMatchObject({
      nudge: -10,
      score: 80,
      reason: 'eligible; feedback nudge -10',
    })

    // Only this profile: pro ranks alpha with no nudge.
    const pro = await h.ask('svc-pro')
    expect(rankOf(pro.record, 'alpha').nudge).toBe(0)

    // Only this account.
    await h.deps.admin.createAccount('other')
    const other = await h.deps.admin.createKey({ account: 'other' })
    await h.deps.admin.addGrant({ account: 'other', usd: 1 })
    const theirs = await h.ask('svc-max', { key: other.key })
    expect(rankOf(theirs.record, 'alpha')).toMatchObject({ status: 'chosen', nudge: 0, reason: 'eligible' })
  })

  test('positive feedback lifts a model over a close rival', async () => {
    const h = await setup()
    // max: alpha 90, beta 88. Serve beta once (alpha overloaded), then praise it.
    sim.queue('alpha-up', overloaded)
    const served = await h.ask('svc-max')
    expect(served.record.selected_model_id).toBe('beta')
    await h.call(`/v1/usage/requests/${served.requestId}/feedback`, {
      method: 'POST',
      json: { reason: 'great_value', rating: 'up' },
    })
    const r = await h.ask('svc-max')
    expect(ranksOf(r.record)).toEqual([
      ['beta', 'chosen', 'closed'],
      ['alpha', 'not_tried', 'closed'],
    ])
    expect(rankOf(r.record, 'beta')).toMatchObject({ nudge: 4, score: 92, reason: 'eligible; feedback nudge +4' })
  })
})
