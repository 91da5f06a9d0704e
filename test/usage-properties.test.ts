// The usage routes held to a reference (test/support/usage-reference.ts) computed from what this
// test sent and what the simulator answered, never from svc's database. Random histories of three
// accounts (keys, grants, requests on both surfaces under every profile, sessions, fallbacks,
// total failures, streams, requests at once, feedback, the clock moved across hours and UTC days,
// even between a fallback's attempts), read back with random queries: history pages through the
// keyset cursor (with requests arriving between pages), each request's record, sessions, spend
// windows up to and over their bounds, the credit position; and nothing of one account in another's
// answers. A second property sends invalid parameters: each is a 400 in the documented shape.
import { afterAll, describe, test } from 'bun:test'
import fc from 'fast-check'
import type { ConfigFile, ModelSection } from '../src/config/schema'
import { createHarness, type Harness, type TestResponse } from './support/harness'
import type { ModelPrice } from './support/ledger-invariants'
import { assertNoProblems, propertyRuns } from './support/property-runs'
import { simUsage } from './support/sim-usage-arbitrary'
import { simProviders } from './support/sim-models'
import { type SimUsage, startSimulator } from './support/simulator'
import {
  chargeLegs,
  type Cursor,
  newestFirst,
  pageAfter,
  type RefGrant,
  type RefLeg,
  type RefRequest,
  requestDetail,
  requestSummary,
  sessionsOf,
  spendBounds,
  spendOf,
  spendWindow,
  usageOf,
} from './support/usage-reference'

const { options } = propertyRuns(20261201)

const sim = startSimulator()
afterAll(() => sim.stop())

const admin = { authorization: 'Bearer admin-secret' }
const hourMs = 3_600_000
const dayMs = 24 * hourMs
/** Two minutes before a UTC midnight: the first advances cross an hour and a day. */
const T0 = Date.parse('2026-11-22T23:58:00.000Z')

// ---- the gateway ----------------------------------------------------------------------------------

/** Three providers, one per upstream dialect; every profile has two or three, so a failure falls back. */
const models: ModelSection[] = [
  {
    id: 'claude-a',
    provider: 'anth',
    upstream_model: 'claude-a-up',
    profiles: ['max', 'pro'],
    quality: 90,
    input_usd_per_mtok: 3,
    output_usd_per_mtok: 15,
    cache_read_usd_per_mtok: 0.3,
    cache_write_usd_per_mtok: 3.75,
    cache_write_1h_usd_per_mtok: 6,
  },
  {
    id: 'gpt-b',
    provider: 'chat',
    upstream_model: 'gpt-b-up',
    profiles: ['max', 'pro', 'ultra_saver'],
    quality: 85,
    input_usd_per_mtok: 1,
    output_usd_per_mtok: 2,
    cache_read_usd_per_mtok: 0.5,
    cache_write_usd_per_mtok: 1.25,
  },
  {
    id: 'resp-d',
    provider: 'resp',
    upstream_model: 'resp-d-up',
    profiles: ['max', 'ultra_saver'],
    quality: 80,
    input_usd_per_mtok: 0.5,
    output_usd_per_mtok: 4,
    cache_read_usd_per_mtok: 0.05,
    cache_write_usd_per_mtok: 0.625,
    web_search_usd_per_1k: 25,
  },
]

/** The same prices in nanos (USD/Mtok × 1,000 a token; USD/1k × 1,000,000 a search). */
const prices: Record<string, ModelPrice> = {
  'claude-a': {
    provider: 'anth',
    input: 3000,
    output: 15000,
    cacheRead: 300,
    cacheWrite: 3750,
    cacheWrite1h: 6000,
    webSearch: 10_000_000,
  },
  'gpt-b': { provider: 'chat', input: 1000, output: 2000, cacheRead: 500, cacheWrite: 1250, webSearch: 10_000_000 },
  'resp-d': { provider: 'resp', input: 500, output: 4000, cacheRead: 50, cacheWrite: 625, webSearch: 25_000_000 },
}
const byUpstream = new Map(models.map((m) => [m.upstream_model!, m]))

/** Chat Completions has no web search of its own: a Chat upstream never reports one. */
const searchesReported = new Set(['anth', 'resp'])
/** Only Anthropic splits its cache writes by TTL. */
const hourWritesReported = new Set(['anth'])

const config: ConfigFile = { catalog: { builtin: false }, providers: simProviders(sim.url), models }

// ---- what happens -------------------------------------------------------------------------------

/**
 * The sessions every account may use (the same ids in each, so a leak between accounts merges
 * them): by header, padded (stored trimmed), and by body metadata with a name a URL must escape.
 */
const sessions = [
  { id: 's-alpha', via: 'header', raw: 's-alpha', source: 'claude-code', agent: 'agent-1' },
  { id: 's-beta', via: 'header', raw: '  s-beta  ', source: null, agent: null },
  { id: 'Ström 7/b?&', via: 'metadata', raw: 'Ström 7/b?&', source: 'codex', agent: 'sub 2' },
  { id: 's-delta', via: 'metadata', raw: 's-delta', source: null, agent: 'agent-9' },
] as const

interface Ask {
  who: number
  key: number
  surface: 'messages' | 'responses'
  profile: 'svc-pro' | 'svc-max' | 'svc-ultra-saver'
  stream: boolean
  session?: number
  /** An agent id on a request outside any session. */
  agent?: boolean
}

type Fault = 'none' | 'first' | 'all'
type Usage = Required<SimUsage>

interface SpendAsk {
  who: number
  bucket?: 'hour' | 'day'
  groupBy?: 'model' | 'provider' | 'routing_mode'
  form: 'default' | 'since' | 'until' | 'both'
  anchor: number
  shift: number
  span: 'max' | 'over' | 'zero' | 'negative' | number
  zone: number
  lower: boolean
  micro: boolean
}

type Query =
  | {
      kind: 'pages'
      who: number
      limit?: number
      session?: number
      newcomer?: { afterPage: number; ask: Ask }
      /** The zone the cursor's `before` is written in (minutes east of UTC): the same instant. */
      zone?: number
    }
  | { kind: 'sessions'; who: number; picks: number[]; unknown: number; padded: boolean }
  | { kind: 'sessionPages'; who: number; limit?: number }
  | ({ kind: 'spend' } & SpendAsk)
  | { kind: 'usage'; who: number; limit?: number }

type Op =
  | { kind: 'request'; ask: Ask; usage: Usage; fault: Fault; status: 429 | 500; midwayMs?: number }
  | { kind: 'together'; asks: Ask[]; usage: Usage }
  | { kind: 'advance'; ms: number }
  | { kind: 'boundary'; unit: 'hour' | 'day'; early: number }
  | {
      kind: 'feedback'
      who: number
      pick: number
      rating: 'up' | 'down'
      reason?: string
      comment?: string | LongComment
    }
  | { kind: 'grant'; who: number; usd: number; expiresInMs?: number }
  | { kind: 'query'; query: Query }

const who = fc.nat({ max: 2 })

const ask: fc.Arbitrary<Ask> = fc.record(
  {
    who,
    key: fc.nat({ max: 1 }),
    surface: fc.constantFrom('messages' as const, 'responses' as const),
    profile: fc.constantFrom('svc-pro' as const, 'svc-max' as const, 'svc-ultra-saver' as const),
    stream: fc.boolean(),
    session: fc.nat({ max: sessions.length - 1 }),
    agent: fc.boolean(),
  },
  { requiredKeys: ['who', 'key', 'surface', 'profile', 'stream'] },
)

/** Every answer has some text: at least one output token. */
const usage = simUsage(1)

const smallLimit = (max: number) =>
  fc.option(fc.oneof(fc.constantFrom(1, 2, 3, 5), fc.integer({ min: 1, max })), { nil: undefined, freq: 5 })

const spendAsk: fc.Arbitrary<SpendAsk> = fc.record({
  who,
  bucket: fc.option(fc.constantFrom('hour' as const, 'day' as const), { nil: undefined, freq: 4 }),
  groupBy: fc.option(fc.constantFrom('model' as const, 'provider' as const, 'routing_mode' as const), {
    nil: undefined,
    freq: 4,
  }),
  form: fc.constantFrom('default' as const, 'since' as const, 'until' as const, 'both' as const, 'both' as const),
  anchor: fc.nat(),
  shift: fc.oneof(fc.constantFrom(0, 0, 1, -1, hourMs, -hourMs), fc.integer({ min: -2 * dayMs, max: 2 * dayMs })),
  span: fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom('max' as const, 'over' as const, 'zero' as const, 'negative' as const) },
    { weight: 2, arbitrary: fc.double({ min: 0, max: 1, noNaN: true }) },
  ),
  zone: fc.constantFrom(0, 0, 0, 120, -330, 840),
  lower: fc.boolean(),
  micro: fc.boolean(),
})

const query: fc.Arbitrary<Query> = fc.oneof(
  fc.record(
    {
      kind: fc.constant('pages' as const),
      who,
      limit: smallLimit(200),
      session: fc.nat({ max: sessions.length - 1 }),
      newcomer: fc.record({ afterPage: fc.integer({ min: 1, max: 2 }), ask }),
      zone: fc.constantFrom(0, 330, -480),
    },
    { requiredKeys: ['kind', 'who', 'limit'] },
  ),
  fc.record({
    kind: fc.constant('sessions' as const),
    who,
    picks: fc.array(fc.nat({ max: sessions.length - 1 }), { maxLength: 5 }),
    unknown: fc.nat({ max: 2 }),
    padded: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('sessionPages' as const), who, limit: smallLimit(100) }),
  spendAsk.map((s) => ({ kind: 'spend' as const, ...s })),
  spendAsk.map((s) => ({ kind: 'spend' as const, ...s })),
  fc.record({ kind: fc.constant('usage' as const), who, limit: smallLimit(200) }),
)

/**
 * A comment at the README's bound (≤ 4,000 characters), of characters that take one UTF-16 unit
 * and some (`wide`) that take two; kept as its recipe so that a failing plan reads short.
 */
interface LongComment {
  chars: number
  wide: number
}

const longComment: fc.Arbitrary<LongComment> = fc.record({
  chars: fc.integer({ min: 3995, max: 4002 }),
  wide: fc.nat({ max: 12 }),
})

const commentText = (c: string | LongComment | undefined) =>
  c === undefined || typeof c === 'string'
    ? c
    : '😀'.repeat(Math.min(c.wide, c.chars)) + 'é'.repeat(c.chars - Math.min(c.wide, c.chars))

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        kind: fc.constant('request' as const),
        ask,
        usage,
        fault: fc.constantFrom<Fault>('none', 'none', 'none', 'first', 'first', 'all'),
        status: fc.constantFrom(429 as const, 500 as const),
        midwayMs: fc.constantFrom(1, 59_000, hourMs, dayMs),
      },
      { requiredKeys: ['kind', 'ask', 'usage', 'fault', 'status'] },
    ),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('together' as const),
      asks: fc.array(ask, { minLength: 2, maxLength: 4 }),
      usage,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.constantFrom(1, 7, 60_000, 3_599_999, hourMs, 5 * hourMs, dayMs),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('boundary' as const),
      unit: fc.constantFrom('hour' as const, 'day' as const),
      early: fc.constantFrom(0, 1),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record(
      {
        kind: fc.constant('feedback' as const),
        who,
        pick: fc.nat(),
        rating: fc.constantFrom('up' as const, 'down' as const),
        reason: fc.constantFrom('too_expensive', 'too_slow', 'great_value', 'stronger_model_needed', 'wrong_model'),
        comment: fc.oneof(
          { weight: 4, arbitrary: fc.string({ maxLength: 30, unit: 'binary' }) },
          { weight: 1, arbitrary: longComment },
        ),
      },
      { requiredKeys: ['kind', 'who', 'pick', 'rating'] },
    ),
  },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        kind: fc.constant('grant' as const),
        who,
        usd: fc.integer({ min: 20, max: 200 }),
        expiresInMs: fc.constantFrom(1, hourMs, 3 * dayMs),
      },
      { requiredKeys: ['kind', 'who', 'usd'] },
    ),
  },
  { weight: 3, arbitrary: query.map((q) => ({ kind: 'query' as const, query: q })) },
)

// ---- living it ----------------------------------------------------------------------------------

interface Account {
  name: string
  keys: string[]
  grants: RefGrant[]
  requests: RefRequest[]
}

interface World {
  h: Harness
  accounts: Account[]
  asked: number
  problems: string[]
}

/** Records a problem when `actual` is not `expected`; long bodies are cut, the plan says the rest. */
function same(w: World, label: string, actual: unknown, expected: unknown) {
  if (Bun.deepEquals(actual, expected)) return
  const show = (x: unknown) => JSON.stringify(x).slice(0, 3000)
  w.problems.push(`${label}:\n    got  ${show(actual)}\n    want ${show(expected)}`)
}

const postAdmin = (h: Harness, path: string, json: unknown) =>
  h.call(path, { method: 'POST', headers: admin, key: null, json })

async function addGrant(w: World, a: Account, usd: number, expiresInMs?: number) {
  const expiresAt = expiresInMs === undefined ? null : w.h.clock.now + expiresInMs
  const source = `gift-${w.accounts.indexOf(a)}-${a.grants.length}`
  const res = await postAdmin(w.h, '/v1/admin/grants', {
    account: a.name,
    usd,
    source,
    ...(expiresAt !== null ? { expires_at: new Date(expiresAt).toISOString() } : {}),
  })
  if (res.status !== 201) throw new Error(`grant: ${res.status} ${await res.text()}`)
  const { id } = await res.json()
  const amount = usd * 1e9
  a.grants.push({
    id,
    amount,
    remaining: amount,
    costType: 'all',
    expiresAt,
    createdAt: w.h.clock.now,
    order: 0,
    source,
  })
}

/** Three accounts, the first the harness's own; two keys each; a lasting grant each, ample for any life. */
async function world(): Promise<World> {
  const h = await createHarness({ config, env: { SIM_KEY: 'sim' }, now: T0 })
  const w: World = { h, accounts: [], asked: 0, problems: [] }
  for (const name of ['default', 'acct-b', 'acct-c']) {
    if (name !== 'default') await postAdmin(h, '/v1/admin/accounts', { name })
    const keys = name === 'default' ? [h.key] : []
    while (keys.length < 2) {
      keys.push((await (await postAdmin(h, '/v1/admin/keys', { account: name, name: `k${keys.length}` })).json()).key)
    }
    const account: Account = { name, keys, grants: [], requests: [] }
    w.accounts.push(account)
    await addGrant(w, account, 100)
  }
  return w
}

/** Every upstream answers with `u`; the first `faults` attempts fail, the first after a pause when the clock moves then. */
function script(u: Usage, faults: number, status: number, pauseFirst: boolean) {
  sim.reset()
  for (const m of models) sim.setScenario(m.upstream_model!, { text: 'An answer.', usage: u, chunks: 3 })
  for (let i = 0; i < faults; i++) {
    sim.queue('*', { fault: { kind: 'status', status }, firstByteDelayMs: pauseFirst && i === 0 ? 30 : 0 })
  }
}

function bodyOf(a: Ask, tag: string) {
  const s = a.session === undefined ? undefined : sessions[a.session]!
  const metadata =
    s?.via === 'metadata'
      ? {
          session_id: s.raw,
          ...(s.source ? { session_source: s.source } : {}),
          ...(s.agent ? { agent_id: s.agent } : {}),
        }
      : undefined
  const text = `What did this cost? ${tag}`
  const common = { model: a.profile, stream: a.stream, ...(metadata ? { metadata } : {}) }
  return a.surface === 'messages'
    ? { ...common, max_tokens: 64, messages: [{ role: 'user', content: text }] }
    : { ...common, max_output_tokens: 64, input: text }
}

function headersOf(a: Ask): Record<string, string> {
  const headers: Record<string, string> = { 'anthropic-version': '2023-06-01' }
  const s = a.session === undefined ? undefined : sessions[a.session]!
  if (s?.via === 'header') {
    headers['x-session-id'] = s.raw
    if (s.source) headers['x-session-source'] = s.source
    if (s.agent) headers['x-agent-id'] = s.agent
  } else if (!s && a.agent) {
    headers['x-agent-id'] = 'lone-agent'
  }
  return headers
}

/** What the request is on record as, from what was sent (session rules of the README's "Sessions"). */
function sessionOf(a: Ask) {
  const s = a.session === undefined ? undefined : sessions[a.session]!
  if (!s) return { sessionId: null, agentId: a.agent ? 'lone-agent' : null, sessionSource: null }
  // No User-Agent here: a session that names no source is `api`.
  return { sessionId: s.id, agentId: s.agent, sessionSource: s.source ?? 'api' }
}

interface Sent {
  a: Ask
  tag: string
  res: Promise<{ id: string; status: number }>
}

function send(w: World, a: Ask): Sent {
  const tag = `[ask:${++w.asked}]`
  const account = w.accounts[a.who]!
  const path = a.surface === 'messages' ? '/compat-a/v1/messages' : '/compat-b/v1/responses'
  const res = w.h
    .call(path, { method: 'POST', key: account.keys[a.key]!, headers: headersOf(a), json: bodyOf(a, tag) })
    .then(async (r) => {
      // The whole answer, so that a stream has ended (and its record is queued) when this resolves.
      await r.text()
      return { id: r.headers.get('x-request-id') ?? '', status: r.status }
    })
  return { a, tag, res }
}

/**
 * The request as the reference records it: its legs are the simulator's calls that carry its tag,
 * in order; the first `faults` were answered with an error, the next with `u`.
 */
function recordSent(
  w: World,
  s: Sent,
  got: { id: string; status: number },
  t: { u: Usage; faults: number; at: number; end: number },
) {
  const calls = sim.requests.filter((r) => JSON.stringify(r.body).includes(s.tag))
  const legs: RefLeg[] = calls.map((call, i) => {
    const m = byUpstream.get((call.body as { model: string }).model)!
    const ok = i >= t.faults
    const price = prices[m.id]!
    const searches = ok && searchesReported.has(m.provider) ? t.u.webSearches : 0
    const hourWrites = ok && hourWritesReported.has(m.provider) ? t.u.cacheWrite1h : 0
    const counts = ok
      ? { input: t.u.input, cached: t.u.cacheRead, cacheWrite: t.u.cacheWrite, output: t.u.output }
      : { input: 0, cached: 0, cacheWrite: 0, output: 0 }
    return {
      attempt: i + 1,
      modelId: m.id,
      providerId: m.provider,
      upstreamModel: m.upstream_model!,
      outcome: ok ? 'ok' : 'failed',
      ...counts,
      cacheWrite1h: hourWrites,
      webSearches: searches,
      // README: the 1-hour cache writes at the 1-hour price, the model's cache-write price where it has none.
      costNanos:
        counts.input * price.input +
        counts.cached * price.cacheRead +
        (counts.cacheWrite - hourWrites) * price.cacheWrite +
        hourWrites * (price.cacheWrite1h ?? price.cacheWrite) +
        counts.output * price.output +
        searches * price.webSearch,
      chargedNanos: 0,
      createdAt: i === 0 ? t.at : t.end,
      endedAt: t.end,
      charges: [],
    }
  })
  if (legs.filter((l) => l.outcome === 'ok').length > 1) w.problems.push(`${s.tag}: the simulator served it twice`)
  if ((got.status === 200) !== (legs.at(-1)?.outcome === 'ok')) {
    w.problems.push(`${s.tag}: answered ${got.status} after attempts ${legs.map((l) => l.outcome)}`)
  }
  const account = w.accounts[s.a.who]!
  const request: RefRequest = {
    id: got.id,
    account: s.a.who,
    surface: s.a.surface,
    routingMode: { 'svc-pro': 'pro', 'svc-max': 'max', 'svc-ultra-saver': 'ultra_saver' }[s.a.profile],
    stream: s.a.stream,
    httpStatus: got.status,
    ...sessionOf(s.a),
    createdAt: t.at,
    endedAt: t.end,
    legs,
    feedback: [],
  }
  chargeLegs(account.grants, request.routingMode, legs)
  account.requests.push(request)
  return request
}

async function requestOnce(w: World, o: Extract<Op, { kind: 'request' }>) {
  const faults = { none: 0, first: 1, all: 3 }[o.fault]
  const midway = faults > 0 ? o.midwayMs : undefined
  script(o.usage, faults, o.status, midway !== undefined)
  const at = w.h.clock.now
  const s = send(w, o.ask)
  if (midway !== undefined) {
    // The first attempt has reached the upstream, which answers its error in 30 ms: the next
    // attempt starts after the clock moved (a fallback whose legs fall in different buckets).
    for (let waited = 0; !sim.requests.some((r) => JSON.stringify(r.body).includes(s.tag)); waited++) {
      if (waited > 2000) throw new Error(`${s.tag} never reached the simulator`)
      await Bun.sleep(1)
    }
    w.h.clock.advance(midway)
  }
  recordSent(w, s, await s.res, { u: o.usage, faults, at, end: w.h.clock.now })
}

/** Requests at once, in one millisecond of the clock: their commit order is svc's. */
async function requestTogether(w: World, o: Extract<Op, { kind: 'together' }>) {
  script(o.usage, 0, 200, false)
  const at = w.h.clock.now
  const sent = o.asks.map((a) => send(w, a))
  for (const s of sent) recordSent(w, s, await s.res, { u: o.usage, faults: 0, at, end: at })
}

async function giveFeedback(w: World, o: Extract<Op, { kind: 'feedback' }>) {
  const account = w.accounts[o.who]!
  if (account.requests.length === 0) return
  const r = account.requests[o.pick % account.requests.length]!
  const comment = commentText(o.comment)
  const json = {
    rating: o.rating,
    ...(o.reason ? { reason: o.reason } : {}),
    ...(comment !== undefined ? { comment } : {}),
  }
  // Another account cannot rate it (README: 404 for another account's id).
  const stranger = w.accounts[(o.who + 1 + (o.pick % 2)) % 3]!
  const refused = await w.h.call(`/v1/usage/requests/${r.id}/feedback`, {
    method: 'POST',
    key: stranger.keys[0]!,
    json: { rating: o.rating },
  })
  await expectError(w, `feedback on ${r.id} as ${stranger.name}`, refused, 404, 'not_found_error', r.id)
  const res = await w.h.call(`/v1/usage/requests/${r.id}/feedback`, { method: 'POST', key: account.keys[0]!, json })
  if ([...(comment ?? '')].length > 4000) {
    return expectError(w, `feedback on ${r.id} over 4,000 characters`, res, 400, 'invalid_request_error', 'comment')
  }
  const body = await res.json()
  same(w, `feedback on ${r.id}: status`, res.status, 201)
  r.feedback.push({
    id: body.id,
    rating: o.rating,
    reason: o.reason ?? null,
    comment: comment ?? null,
    createdAt: w.h.clock.now,
  })
}

async function live(w: World, ops: Op[]) {
  for (const o of ops) {
    if (o.kind === 'request') await requestOnce(w, o)
    else if (o.kind === 'together') await requestTogether(w, o)
    else if (o.kind === 'advance') w.h.clock.advance(o.ms)
    else if (o.kind === 'boundary') {
      const width = o.unit === 'hour' ? hourMs : dayMs
      const now = w.h.clock.now
      w.h.clock.advance(now - (now % width) + width - o.early - now)
    } else if (o.kind === 'feedback') await giveFeedback(w, o)
    else if (o.kind === 'grant') await addGrant(w, w.accounts[o.who]!, o.usd, o.expiresInMs)
    else await runQuery(w, o.query)
  }
}

// ---- reading it back ----------------------------------------------------------------------------

/** The README's error shape, exactly: `{type: "error", error: {type, message}}`, the message naming `mentions`. */
async function expectError(w: World, label: string, res: TestResponse, status: number, type: string, mentions: string) {
  const body = await res.json().catch(() => undefined)
  const shape =
    body && typeof body.error?.message === 'string'
      ? { status: res.status, keys: Object.keys(body).sort(), errorKeys: Object.keys(body.error).sort() }
      : { status: res.status, body }
  same(w, `${label}: error shape`, shape, { status, keys: ['error', 'type'], errorKeys: ['message', 'type'] })
  if (shape.status !== status || !body?.error) return
  same(w, `${label}: error type`, [body.type, body.error.type], ['error', type])
  if (!String(body.error.message).includes(mentions)) {
    w.problems.push(`${label}: the message does not name ${mentions}: ${body.error.message}`)
  }
}

async function getOk(w: World, label: string, path: string, key: string) {
  const res = await w.h.call(path, { key })
  if (res.status === 200) return res.json()
  w.problems.push(`${label}: GET ${path} answered ${res.status} ${await res.text()}`)
  return undefined
}

/** An error message is svc's or the upstream's words: the reference says only that there is one. */
// biome-ignore lint/suspicious/noExplicitAny: the usage API's JSON
const errorPresence = (row: any) => ({ ...row, error: row.error === null ? null : 'present' })

// biome-ignore lint/suspicious/noExplicitAny: the usage API's JSON
function detailShown(body: any) {
  const { provider_ranks: _ranks, ...rest } = body
  return { ...errorPresence(rest), usage_events: rest.usage_events.map(errorPresence) }
}

const requestsOf = (w: World, who: number) => [...w.accounts[who]!.requests].sort(newestFirst)

/** What a request sent between two page fetches is answered with. */
const newcomerUsage: Usage = {
  input: 3,
  cacheRead: 0,
  cacheWrite: 0,
  cacheWrite1h: 0,
  output: 2,
  reasoning: 0,
  webSearches: 0,
}

/** 1: paged with `limit`, every page is the keyset's next slice; a request sent between pages shows in none. */
async function checkPages(w: World, q: Extract<Query, { kind: 'pages' }>) {
  const account = w.accounts[q.who]!
  const session = q.session === undefined ? undefined : sessions[q.session]!.id
  const before = requestsOf(w, q.who).filter((r) => session === undefined || r.sessionId === session)
  const limit = q.limit ?? 50
  const label = `pages of ${account.name} (limit ${q.limit}, session ${session})`
  const seen: string[] = []
  let cursor: Cursor | undefined
  for (let page = 1; page <= before.length + 2; page++) {
    const params = new URLSearchParams()
    if (q.limit !== undefined) params.set('limit', String(q.limit))
    if (session !== undefined) params.set('session_id', session)
    if (cursor) {
      params.set('before', rfc3339(cursor.at, q.zone ?? 0, false, false))
      params.set('before_id', cursor.id)
    }
    const got = await getOk(w, label, `/v1/usage/requests?${params}`, account.keys[page % 2]!)
    if (!got) return
    const want = pageAfter(before, cursor, limit)
    same(
      w,
      `${label}, page ${page}`,
      { items: got.items.map(errorPresence), has_more: got.has_more },
      {
        items: want.items.map(requestSummary),
        has_more: want.hasMore,
      },
    )
    seen.push(...got.items.map((i: { request_id: string }) => i.request_id))
    if (q.newcomer && page === q.newcomer.afterPage) {
      // Newer than every page: keyset paging must neither show it later nor shift what follows.
      const a = { ...q.newcomer.ask, who: q.who, ...(q.session !== undefined ? { session: q.session } : {}) }
      await requestOnce(w, { kind: 'request', ask: a, usage: newcomerUsage, fault: 'none', status: 500 })
    }
    if (!got.has_more || got.items.length === 0) break
    const last = got.items.at(-1)
    cursor = { at: Date.parse(last.created_at), id: last.request_id }
  }
  same(
    w,
    `${label}: each request once, newest first`,
    seen,
    before.map((r) => r.id),
  )
}

/** 3: sessions looked up by id: each of the account's with its totals; unknown ids (and others') left out. */
async function checkSessions(w: World, q: Extract<Query, { kind: 'sessions' }>) {
  const account = w.accounts[q.who]!
  const ids = [...q.picks.map((i) => sessions[i]!.id), ...Array.from({ length: q.unknown }, (_, i) => `nope-${i}`)]
  const raw = ids.map((id) => encodeURIComponent(q.padded ? ` ${id} ` : id)).join(',')
  const res = await w.h.call(`/v1/usage/sessions?ids=${raw}`, { key: account.keys[0]! })
  const label = `sessions?ids=${ids.join(',')} of ${account.name}`
  if (ids.length === 0) return expectError(w, label, res, 400, 'invalid_request_error', 'ids')
  if (res.status !== 200) return void w.problems.push(`${label}: ${res.status} ${await res.text()}`)
  const byId = (x: { session_id: string }, y: { session_id: string }) => (x.session_id < y.session_id ? -1 : 1)
  const want = sessionsOf(account.requests)
    .filter((s) => ids.includes(s.id))
    .map((s) => s.view)
  // The README gives no order for a lookup by ids: compared as a set.
  same(w, label, (await res.json()).items.toSorted(byId), want.toSorted(byId))
}

/** 3: the sessions list, paged by (latest_at, session_id): latest activity first, each once. */
async function checkSessionPages(w: World, q: Extract<Query, { kind: 'sessionPages' }>) {
  const account = w.accounts[q.who]!
  const all = sessionsOf(account.requests)
  const limit = q.limit ?? 30
  const label = `sessions list of ${account.name} (limit ${q.limit})`
  let cursor: Cursor | undefined
  for (let page = 1; page <= all.length + 2; page++) {
    const params = new URLSearchParams()
    if (q.limit !== undefined) params.set('limit', String(q.limit))
    if (cursor) {
      params.set('before', new Date(cursor.at).toISOString())
      params.set('before_id', cursor.id)
    }
    const got = await getOk(w, label, `/v1/usage/sessions/list?${params}`, account.keys[1]!)
    if (!got) return
    const want = pageAfter(all, cursor, limit).items.map((s) => s.view)
    same(w, `${label}, page ${page}`, got, want)
    if (got.length < limit) return
    cursor = { at: Date.parse(got.at(-1).latest_at), id: got.at(-1).session_id }
  }
  w.problems.push(`${label}: never ended`)
}

/** A time as RFC 3339 in the zone `minutes` east of UTC, optionally lower-case and with microseconds. */
function rfc3339(ms: number, minutes: number, lower: boolean, micro: boolean): string {
  const local = new Date(ms + minutes * 60_000).toISOString().slice(0, 23) + (micro ? '000' : '')
  const sign = minutes < 0 ? '-' : '+'
  const abs = Math.abs(minutes)
  const zone =
    minutes === 0 ? 'Z' : `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`
  const text = local + zone
  return lower ? text.replace('T', 't').replace('Z', 'z') : text
}

/** 4: spend over a random window: every point and total as the reference sums the legs, or the 400 that names the bound. */
async function checkSpend(w: World, q: SpendAsk) {
  const account = w.accounts[q.who]!
  const now = w.h.clock.now
  const b = spendBounds[q.bucket ?? 'day']
  const anchors = [
    T0,
    now,
    now - (now % b.width) + b.width,
    ...w.accounts.flatMap((a) => a.requests.flatMap((r) => r.legs.map((l) => l.createdAt))),
  ]
  const end = anchors[q.anchor % anchors.length]! + q.shift
  const span =
    q.span === 'max'
      ? b.max
      : q.span === 'over'
        ? b.max + 1
        : q.span === 'zero'
          ? 0
          : q.span === 'negative'
            ? -hourMs
            : Math.max(1, Math.ceil(q.span * b.max))
  const sent = new Map<string, number>()
  const stamp = (ms: number) => {
    const text = rfc3339(ms, q.zone, q.lower, q.micro)
    sent.set(text, ms)
    return text
  }
  const params: Record<string, string> = {}
  if (q.bucket) params.bucket = q.bucket
  if (q.groupBy) params.group_by = q.groupBy
  if (q.form === 'both' || q.form === 'until') params.until = stamp(end)
  if (q.form === 'both') params.since = stamp(end - span)
  if (q.form === 'since') params.since = stamp(now - (now % b.width) + b.width - span)
  const path = `/v1/usage/spend?${new URLSearchParams(params)}`
  const label = `spend ${JSON.stringify(params)} of ${account.name}`
  const window = spendWindow(params, now, (raw) => sent.get(raw))
  const res = await w.h.call(path, { key: account.keys[0]! })
  if (!window.ok) return expectError(w, label, res, 400, 'invalid_request_error', window.mentions)
  if (res.status !== 200) return void w.problems.push(`${label}: ${res.status} ${await res.text()}`)
  const got = await res.json()
  const want = spendOf(account.requests, window, prices)
  // The README lists series without an order: compared as a map from key to points.
  const series = Object.fromEntries(got.series.map((s: { key: string; points: unknown[] }) => [s.key, s.points]))
  same(w, label, { ...got, series }, want)
}

/** 5: the credit position over unexpired grants, and the newest legs. */
async function checkUsage(w: World, q: Extract<Query, { kind: 'usage' }>) {
  const account = w.accounts[q.who]!
  const got = await getOk(
    w,
    `usage of ${account.name}`,
    `/v1/usage${q.limit === undefined ? '' : `?limit=${q.limit}`}`,
    account.keys[1]!,
  )
  if (!got) return
  const want = usageOf(account.grants, account.requests, w.h.clock.now, q.limit ?? 20)
  const grants = got.grants.toSorted((a: { id: string }, b: { id: string }) => (a.id < b.id ? -1 : 1))
  same(
    w,
    `usage of ${account.name} (limit ${q.limit})`,
    { ...got, grants, recent_events: got.recent_events.map(errorPresence) },
    want,
  )
}

async function runQuery(w: World, q: Query) {
  if (q.kind === 'pages') await checkPages(w, q)
  else if (q.kind === 'sessions') await checkSessions(w, q)
  else if (q.kind === 'sessionPages') await checkSessionPages(w, q)
  else if (q.kind === 'spend') await checkSpend(w, q)
  else await checkUsage(w, q)
}

/** 2 and 6: every request's record to its own account, a 404 to each other account, and unknown ids 404. */
async function checkRecords(w: World) {
  for (const [i, account] of w.accounts.entries()) {
    for (const r of account.requests) {
      const got = await getOk(w, `record ${r.id}`, `/v1/usage/requests/${r.id}`, account.keys[r.createdAt % 2]!)
      if (got) same(w, `record ${r.id} of ${account.name}`, detailShown(got), requestDetail(r))
      const other = w.accounts[(i + 1 + (r.createdAt % 2)) % 3]!
      const res = await w.h.call(`/v1/usage/requests/${r.id}`, { key: other.keys[0]! })
      await expectError(w, `record ${r.id} as ${other.name}`, res, 404, 'not_found_error', r.id)
    }
    const unknown = await w.h.call('/v1/usage/requests/req_unknown', { key: account.keys[0]! })
    await expectError(w, `unknown record as ${account.name}`, unknown, 404, 'not_found_error', 'req_unknown')
  }
}

/** After the life, each account's whole history, sessions, a default spend and usage, once more. */
async function checkEnd(w: World) {
  await checkRecords(w)
  for (const who of [0, 1, 2]) {
    await checkPages(w, { kind: 'pages', who, limit: 4 })
    await checkSessionPages(w, { kind: 'sessionPages', who, limit: 2 })
    await checkUsage(w, { kind: 'usage', who, limit: 200 })
  }
}

// ---- invalid parameters -------------------------------------------------------------------------

/** Timestamps RFC 3339 does not allow, each of which svc must refuse rather than read as some instant. */
const malformedTimes = fc.oneof(
  fc.constantFrom(
    'yesterday',
    '2026-11-22',
    '2026-11-22 10:00:00Z',
    '2026-11-22T10:00:00',
    '2026-13-01T00:00:00Z',
    '2026-11-22T10:61:00Z',
    '2026-11-22T25:00:00Z',
    '1795341600000',
    '2026-11-22T10:00:00.Z',
    '2026-11-22T24:00:00Z',
    '',
  ),
  // A day the month does not have.
  fc
    .record({ month: fc.integer({ min: 1, max: 12 }), day: fc.integer({ min: 29, max: 31 }) })
    .filter(({ month, day }) => day > new Date(Date.UTC(2026, month, 0)).getUTCDate())
    .map(({ month, day }) => `2026-${String(month).padStart(2, '0')}-${day}T10:00:00Z`),
)

const badLimit = (max: number) =>
  fc.oneof(
    fc.constantFrom('0', '-1', 'x', '1.5', '1e2', ' 7', '0x10', String(max + 1), '99999999999999999999'),
    fc.integer({ min: max + 1, max: 1_000_000 }).map(String),
  )

interface Invalid {
  path: string
  mentions: string
}

const limitRoutes = [
  { path: '/v1/usage', max: 200 },
  { path: '/v1/usage/requests', max: 200 },
  { path: '/v1/usage/sessions/list', max: 100 },
] as const

const invalid: fc.Arbitrary<Invalid> = fc.oneof(
  fc.constantFrom(...limitRoutes).chain((route) =>
    badLimit(route.max).map((limit) => ({
      path: `${route.path}?limit=${encodeURIComponent(limit)}`,
      mentions: 'limit',
    })),
  ),
  fc
    .record({ path: fc.constantFrom('/v1/usage/requests', '/v1/usage/sessions/list'), before: malformedTimes })
    .filter(({ before }) => before !== '')
    .map(({ path, before }) => ({
      path: `${path}?before=${encodeURIComponent(before)}&before_id=x`,
      mentions: 'before',
    })),
  fc
    .record({ path: fc.constantFrom('/v1/usage/requests', '/v1/usage/sessions/list'), alone: fc.boolean() })
    .map(({ path, alone }) => ({
      path: `${path}?${alone ? 'before=2026-11-22T10:00:00.000Z' : 'before_id=req_x'}`,
      mentions: 'before',
    })),
  fc
    .record({
      name: fc.constantFrom('bucket', 'group_by'),
      value: fc.constantFrom('week', 'account', 'HOUR', 'Model', ' day'),
    })
    .map(({ name, value }) => ({
      path: `/v1/usage/spend?${name}=${encodeURIComponent(value)}`,
      mentions: name,
    })),
  fc
    .record({ name: fc.constantFrom('since', 'until'), value: malformedTimes })
    .filter(({ value }) => value !== '')
    .map(({ name, value }) => ({ path: `/v1/usage/spend?${name}=${encodeURIComponent(value)}`, mentions: name })),
  fc.record({ gapMs: fc.integer({ min: 0, max: 10 * dayMs }) }).map(({ gapMs }) => ({
    path: `/v1/usage/spend?since=${new Date(T0 + gapMs).toISOString()}&until=${new Date(T0).toISOString()}`,
    mentions: 'since',
  })),
  fc.record({ count: fc.integer({ min: 101, max: 150 }) }).map(({ count }) => ({
    path: `/v1/usage/sessions?ids=${Array.from({ length: count }, (_, i) => `s${i}`).join(',')}`,
    mentions: 'ids',
  })),
  fc.constantFrom(
    { path: '/v1/usage/sessions', mentions: 'ids' },
    { path: '/v1/usage/sessions?ids=,%20,', mentions: 'ids' },
  ),
)

// ---- the properties -----------------------------------------------------------------------------

describe('usage properties', () => {
  test('every usage route answers what the reference computed from the traffic, to its own account only', async () => {
    await assertNoProblems(
      fc.array(op, { minLength: 4, maxLength: 30 }),
      async (ops) => {
        const w = await world()
        try {
          await live(w, ops)
          await checkEnd(w)
        } finally {
          w.h.deps.ledger.close()
        }
        return w.problems.slice(0, 6)
      },
      options(25),
    )
  })

  test('invalid parameters are 400s in the documented shape that name the parameter', async () => {
    const w = await world()
    await assertNoProblems(
      invalid,
      async (bad) => {
        w.problems = []
        const res = await w.h.call(bad.path)
        await expectError(w, `GET ${bad.path}`, res, 400, 'invalid_request_error', bad.mentions)
        return w.problems
      },
      options(200),
    )
    w.h.deps.ledger.close()
  })
})
