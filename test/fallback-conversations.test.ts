// Whole conversations that the router, not the client, moves between models: svc-pro holds two
// or three models of different dialects, the client asks svc-pro every turn under one session id
// (Claude Code's or Codex's header), and before a turn some models fail before answering (429
// with or without retry-after, 500, 529, a connection reset) while the clock moves on past
// cool-downs, and other clients' requests (no session) move the models' health too. fast-check
// generates them with a fixed seed; each turn's history is what the SDK assembled from svc's last
// answer (as in conversation-properties.test.ts). Per turn:
//   1. the client gets 200 and a whole answer in its own shape whenever some candidate answers,
//      and when every one fails an error in its own shape with the last failure's status [errors];
//   2. every upstream body, failed attempts' too, would be taken by that upstream, replaying only
//      the thinking and reasoning that very upstream issued (test/support/wire-invariants.ts);
//   3. the ledger has the turn as one request with one leg per attempt, in order: failed legs
//      uncharged, the serving leg at its model's prices, the grants as the reference ledger
//      (test/support/ledger-invariants.ts) replays them [ledger];
//   4. the usage API's session view counts every turn once, under the session's id [sessions];
//   5. the candidates tried, and their order, are those the README's routing rules give
//      (test/support/fallback-router.ts): ranking, stickiness after a fallback, cool-downs, breaker.
//
// Sources, cited by key below:
//   [errors]    README, Model routes: Anthropic's `{"type":"error","error":{"type","message"}}` (429,
//               5xx api_error, 503/529 overloaded_error), OpenAI's `{"error":{"message","type",
//               "param","code"}}` on the responses route (529 sent as 503); x-should-retry: false
//               only for what a retry cannot fix
//   [ledger]    README, Money and credit and Usage routes: GET /v1/usage/requests/{id}
//   [sessions]  README, Sessions and Usage routes: GET /v1/usage/sessions?ids=…, the history's
//               session_id filter; Claude Code's header gives source claude-code, Codex's codex
import { describe, expect, test } from 'bun:test'
import type { ProviderKind } from '../src/config/schema'
import { anthropicStreamProblems, parseSse, responsesStreamProblems } from './support/answer-invariants'
import { same } from './support/conversation-answers'
import { type Issued, issueFor, scenarioFor, type Surface, type Turn } from './support/conversation-plans'
import { anthropicThinking, conversationTexts, missingInOrder, responsesBlobs } from './support/conversation-texts'
import { type AgentClient, messagesClient, responsesClient } from './support/agent-clients'
import {
  type FallbackPlan,
  type FallbackTurn,
  fallbackPlans,
  kindOf,
  modelIdOf,
  turnOn,
} from './support/fallback-plans'
import { type Dispatch, type Fault, maxAttempts, ReferenceRouter, type RankedModel } from './support/fallback-router'
import { endedRequestDetail, type Harness, sdkClients } from './support/harness'
import {
  type Catalog,
  creditPosition,
  type GrantState,
  legCostNanos,
  type RequestView,
  type RunEvent,
  replay,
  sum,
} from './support/ledger-invariants'
import { assertNoProblems, propertyRuns } from './support/property-runs'
import type { Scenario, SimUsage } from './support/simulator'
import { rankedProGateway, translationSimulator, upstreamModelFor } from './support/translation-gateway'
import { anthropicProblems, chatProblems, responsesProblems } from './support/wire-invariants'

const { options } = propertyRuns(20261127)

const sim = translationSimulator()

type Json = Record<string, unknown>

const admin = { authorization: 'Bearer admin-secret' }

/** The dialect a client's surface speaks, as an upstream of that kind would. */
const dialectOf: Record<Surface, ProviderKind> = { messages: 'anthropic', responses: 'openai-responses' }
const kindOfPath: Record<string, ProviderKind> = {
  '/v1/messages': 'anthropic',
  '/v1/chat/completions': 'openai-chat',
  '/v1/responses': 'openai-responses',
}

// ---- one gateway per conversation: the router's health is the process's --------------------------

/** A conversation's gateway, its SDKs, and the raw text and headers of the last answer svc gave. */
interface Gateway {
  h: Harness
  clients: ReturnType<typeof sdkClients>
  last: { text: Promise<string>; headers: Headers }
}

async function gatewayFor(models: RankedModel[]): Promise<Gateway> {
  const h = await rankedProGateway(sim, models)
  const gateway: Gateway = { h, clients: sdkClients(h), last: { text: Promise.resolve(''), headers: new Headers() } }
  gateway.clients = sdkClients(h, {
    handle: async (request) => {
      const res = await h.app.handle(request)
      gateway.last.headers = res.headers
      if (!res.body) return res
      const [toClient, toTest] = res.body.tee()
      gateway.last.text = new Response(toTest).text()
      return new Response(toClient, { status: res.status, headers: res.headers })
    },
  })
  return gateway
}

/** The reference ledger's view of the plan's models: their prices in nanos a token, all under pro. */
function catalogOf(models: RankedModel[]): Catalog {
  const prices = Object.fromEntries(
    models.map((m) => {
      const input = m.prices.input * 1000
      // svc's catalog prices cache reads and writes as input where a model names no price of its own.
      return [
        m.id,
        {
          provider: m.kind,
          input,
          output: m.prices.output * 1000,
          cacheRead: input,
          cacheWrite: input,
          webSearch: 1e7,
        },
      ]
    }),
  )
  return { prices, modes: { pro: models.map((m) => m.id) }, byokProviders: [], feePercent: 0 }
}

/** The starter grant the gateway opened with, as the reference ledger holds a grant. */
async function starterGrant(h: Harness): Promise<GrantState> {
  const res = await h.call('/v1/admin/grants?account=default', { headers: admin, key: null })
  const [grant] = (await res.json()) as { id: string; amount_nanos: number; created_at: string }[]
  return {
    id: grant!.id,
    amount: grant!.amount_nanos,
    costType: 'all',
    expiresAt: null,
    createdAt: Date.parse(grant!.created_at),
    order: 0,
    remaining: grant!.amount_nanos,
  }
}

// ---- a turn's faults as the simulator plays them ---------------------------------------------------

/** A reset comes before the first frame of a stream, and halfway through a JSON body: no byte reached the client. */
const faultScenario = (fault: Fault): Scenario =>
  fault.kind === 'reset'
    ? { fault: { kind: 'reset', afterFrames: 0 }, firstByteDelayMs: fault.afterMs }
    : { fault: { kind: 'status', status: fault.status, ...(fault.retryAfter ? { retryAfter: fault.retryAfter } : {}) } }

/** [errors]: the status of the failure that spoke last, as the client's surface sends it. */
function statusFor(surface: Surface, fault: Fault): number {
  if (fault.kind === 'reset') return 502
  return fault.status === 529 && surface === 'responses' ? 503 : fault.status
}

const anthropicErrorType = (status: number) =>
  status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : 'api_error'

/** [errors]: every candidate failed; the error is the surface's own, and a retry may serve. */
function errorProblems(surface: Surface, status: number, raw: string, headers: Headers): string[] {
  const problems: string[] = []
  let body: Json | undefined
  try {
    body = JSON.parse(raw)
  } catch {
    return [`the error is not JSON [errors]: ${JSON.stringify(raw.slice(0, 200))}`]
  }
  const error = (body?.error ?? {}) as Json
  if (surface === 'messages') {
    same(
      problems,
      'error envelope [errors]',
      { type: body?.type, keys: Object.keys(body ?? {}).toSorted() },
      {
        type: 'error',
        keys: ['error', 'type'],
      },
    )
    same(problems, 'error type [errors]', error.type, anthropicErrorType(status))
  } else {
    same(problems, 'error fields [errors]', Object.keys(body ?? {}), ['error'])
    same(problems, 'error.* [errors]', Object.keys(error).toSorted(), ['code', 'message', 'param', 'type'])
  }
  if (typeof error.message !== 'string' || error.message === '') problems.push('error.message: a sentence [errors]')
  if (headers.get('x-should-retry') === 'false')
    problems.push('x-should-retry: false on a failure a retry may fix [errors]')
  return problems
}

// ---- 2. what each upstream received ----------------------------------------------------------------

/** What the upstreams issued so far: Anthropic's signatures (with the thinking each signs) and OpenAI's blobs. */
interface IssuedSoFar {
  signatures: Map<string, string>
  blobs: Set<string>
}

/** The body would be taken, replays only what this upstream issued, and holds all the client said. */
function upstreamProblems(kind: ProviderKind, surface: Surface, clientBody: Json, body: Json, issued: IssuedSoFar) {
  const problems = wireProblems(kind, body, issued)
  const lost = missingInOrder(conversationTexts(dialectOf[surface], clientBody), conversationTexts(kind, body))
  if (lost.length > 0) problems.push(`texts the client sent, lost or out of order: ${JSON.stringify(lost)}`)
  if (kind === 'anthropic') {
    const sent = new Set(anthropicThinking(body).map((b) => b.signature))
    const dropped = [...issued.signatures.keys()].filter((signature) => !sent.has(signature))
    if (dropped.length > 0) problems.push(`thinking Anthropic issued earlier, not sent back: ${dropped.join(', ')}`)
  }
  if (kind === 'openai-responses') {
    const sent = new Set(responsesBlobs(body))
    const dropped = [...issued.blobs].filter((blob) => !sent.has(blob))
    if (dropped.length > 0) problems.push(`reasoning OpenAI issued earlier, not sent back: ${dropped.join(', ')}`)
  }
  return problems
}

function wireProblems(kind: ProviderKind, body: Json, issued: IssuedSoFar): string[] {
  switch (kind) {
    case 'anthropic': {
      const problems = anthropicProblems(body, { clientSignatures: new Set(issued.signatures.keys()) })
      for (const block of anthropicThinking(body)) {
        const signed = issued.signatures.get(block.signature as string)
        if (signed !== undefined && signed !== block.thinking)
          problems.push(`thinking signed ${String(block.signature)} sent modified: ${JSON.stringify(block.thinking)}`)
      }
      return problems
    }
    case 'openai-chat':
      return chatProblems(body)
    case 'openai-responses':
      return responsesProblems(body, { issuedBlobs: issued.blobs })
  }
}

// ---- 3 and 5. the request's record --------------------------------------------------------------

/** What a request did, as the client and the simulator saw it. */
interface Played {
  id: string
  at: number
  status: number
  /** The models svc sent the request to, in order. */
  attempts: string[]
  served?: string
  /** What the serving model reported. */
  usage?: Required<Omit<SimUsage, 'webSearches' | 'cacheWrite1h'>>
}

/** The session a request carries, as the ledger records it: none for other clients' requests. */
type SessionRecord = { session_id?: string; session_source?: string }

const zeroCharge = { cost_nanos: 0, charged_nanos: 0 }

/** [ledger]: one request, a leg an attempt in order, failed legs uncharged, the serving one at its prices. */
function recordProblems(detail: RequestView, played: Played, session: SessionRecord, catalog: Catalog): string[] {
  const problems: string[] = []
  same(
    problems,
    'request [ledger]',
    {
      status: detail.status,
      http_status: detail.http_status,
      attempts: detail.attempts,
      session_id: detail.session_id,
      session_source: (detail as unknown as Json).session_source,
      created_at: detail.created_at,
    },
    {
      status: played.served ? 'completed' : 'failed',
      http_status: played.status,
      attempts: played.attempts.length,
      ...session,
      created_at: new Date(played.at).toISOString(),
    },
  )
  same(
    problems,
    'legs, one an attempt in order [ledger]',
    detail.usage_events.map((leg) => ({ attempt: leg.attempt, model_id: leg.model_id, outcome: leg.outcome })),
    played.attempts.map((id, i) => ({ attempt: i + 1, model_id: id, outcome: id === played.served ? 'ok' : 'failed' })),
  )
  for (const leg of detail.usage_events) {
    if (leg.outcome !== 'ok') {
      same(problems, `failed leg ${leg.attempt}, no charge [ledger]`, { ...leg, ...zeroCharge }, leg)
      continue
    }
    const usage = played.usage!
    const cost = legCostNanos(leg, catalog.prices[leg.model_id]!)
    same(problems, 'serving leg, as reported and at its model’s prices [ledger]', leg, {
      ...leg,
      estimated: false,
      input_tokens: usage.input,
      cached_input_tokens: usage.cacheRead,
      cache_creation_input_tokens: usage.cacheWrite,
      output_tokens: usage.output,
      cost_nanos: cost,
      charged_nanos: cost,
    })
  }
  same(
    problems,
    'request totals [ledger]',
    { total_cost_nanos: detail.total_cost_nanos, charged_nanos: detail.charged_nanos },
    {
      total_cost_nanos: sum(detail.usage_events, (l) => l.cost_nanos),
      charged_nanos: sum(detail.grant_charges, (c) => c.amount_nanos),
    },
  )
  return problems
}

/** 5: the ranking svc recorded and the candidates it tried are the reference router's. */
function routingProblems(detail: RequestView, played: Played, predicted: Dispatch): string[] {
  const problems: string[] = []
  const ranks = detail.provider_ranks as {
    model_id: string
    status: string
    health: { state: string }
    reason: string
  }[]
  same(problems, 'candidates tried, in order (README, Routing)', played.attempts, predicted.attempts)
  same(
    problems,
    'ranking (README, Routing: score, open and cooling last, sessions stick)',
    ranks.map((r) => r.model_id),
    predicted.order,
  )
  same(
    problems,
    'provider_ranks statuses [ledger]',
    ranks.map((r) => r.status),
    ranks.map((r) =>
      r.model_id === played.served ? 'chosen' : played.attempts.includes(r.model_id) ? 'failed' : 'not_tried',
    ),
  )
  if (problems.length > 0) {
    problems.push(`  reference health: ${JSON.stringify(predicted.states)}`)
    problems.push(`  svc's ranks: ${JSON.stringify(ranks.map((r) => [r.model_id, r.health.state, r.reason]))}`)
  }
  return problems
}

// ---- playing a conversation ------------------------------------------------------------------------

/** A conversation in play: its gateway, its client, and what the upstreams and router did so far. */
interface Play {
  plan: FallbackPlan
  session: { header: string; id: string }
  gateway: Gateway
  client: AgentClient
  router: ReferenceRouter
  catalog: Catalog
  issued: IssuedSoFar
  /** The model that served the session last, and its answer. */
  sticky?: { model: string; turn: Turn }
  /** The conversation's turns. */
  turns: Played[]
  /** Every request, other clients' too, in the order sent, with its record. */
  requests: Played[]
  details: Map<string, RequestView>
}

/** Faults by the failing model's id, as the reference router takes them. */
const faultsById = (faults: Partial<Record<ProviderKind, Fault>>): Partial<Record<string, Fault>> =>
  Object.fromEntries(Object.entries(faults).map(([kind, f]) => [modelIdOf[kind as ProviderKind], f]))

/** The models svc sent the request to, in order, as the simulator saw them. */
const attemptsSeen = () => sim.requests.map((r) => modelIdOf[kindOfPath[r.path.split('?')[0]!]!])

/** Reads the request's record, and checks it and its routing. */
async function recordedProblems(play: Play, played: Played, session: SessionRecord, predicted: Dispatch) {
  play.requests.push(played)
  if (played.id === '') return ['no x-request-id']
  const detail = (await endedRequestDetail(play.gateway.h, played.id)) as RequestView
  play.details.set(played.id, detail)
  return [...recordProblems(detail, played, session, play.catalog), ...routingProblems(detail, played, predicted)]
}

const otherUsage = { input: 12, cacheRead: 0, cacheWrite: 0, output: 7, reasoning: 0 }

/** Another client's request, with no session: served whenever a model answers, as the README ranks them. */
async function otherProblems(play: Play, faults: Partial<Record<ProviderKind, Fault>>): Promise<string[]> {
  const { h } = play.gateway
  sim.reset()
  for (const m of play.plan.models) {
    const fault = faults[m.kind]
    sim.queue(upstreamModelFor[m.kind], fault ? faultScenario(fault) : { text: 'Another answer.', usage: otherUsage })
  }
  const predicted = play.router.dispatch(h.clock.now, undefined, faultsById(faults))
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', max_tokens: 256, messages: [{ role: 'user', content: 'Another client asks.' }] },
  })
  await res.text()
  const attempts = attemptsSeen()
  const served = res.status === 200 ? attempts.at(-1) : undefined
  const played: Played = {
    id: res.headers.get('x-request-id') ?? '',
    at: h.clock.now,
    status: res.status,
    attempts,
    ...(served ? { served, usage: otherUsage } : {}),
  }
  const problems: string[] = []
  const answering = play.plan.models.some((m) => !faults[m.kind])
  if (answering !== (res.status === 200))
    problems.push(`status ${res.status}, though a candidate answers: ${answering}`)
  problems.push(...(await recordedProblems(play, played, {}, predicted)))
  return problems
}

/** Queues each model's part of the turn: its fault, or the answer as its dialect gives it. */
function queueTurn(play: Play, t: FallbackTurn, index: number, thinking: boolean, mint: Issued) {
  sim.reset()
  for (const m of play.plan.models) {
    const fault = t.faults[m.kind]
    const answer = turnOn(m.kind, play.plan, t, thinking)
    sim.queue(upstreamModelFor[m.kind], fault ? faultScenario(fault) : scenarioFor(answer, index, mint))
  }
}

/** Plays the turn, other clients' requests first; returns what broke in it. */
async function turnProblems(play: Play, t: FallbackTurn, index: number): Promise<string[]> {
  play.gateway.h.clock.advance(t.advanceMs)
  for (const [k, faults] of t.others.entries()) {
    const problems = await otherProblems(play, faults)
    if (problems.length > 0) return [`turn ${index}, other client's request ${k}:`, ...problems]
  }
  return ownTurnProblems(play, t, index)
}

/** The conversation's own request of the turn. */
async function ownTurnProblems(play: Play, t: FallbackTurn, index: number): Promise<string[]> {
  const { plan, gateway, client } = play
  // A tool loop keeps the thinking it had; otherwise the turn asks as generated.
  const last = play.sticky?.turn
  const thinking = last && last.calls.length > 0 ? last.thinking : t.answer.thinking
  const mint = issueFor()
  queueTurn(play, t, index, thinking, mint)
  const predicted = play.router.dispatch(gateway.h.clock.now, play.sticky?.model, faultsById(t.faults))

  const asked = turnOn(plan.models[0]!.kind, plan, t, thinking)
  const body = client.request(asked)
  gateway.last.text = Promise.resolve('')
  const sent = await client.send(asked, body)
  const attempts = attemptsSeen()
  const raw = await gateway.last.text
  const served = sent.answered ? attempts.at(-1) : undefined
  const turn = served ? turnOn(kindOf(served), plan, t, thinking) : undefined
  const played: Played = {
    id: gateway.last.headers.get('x-request-id') ?? '',
    at: gateway.h.clock.now,
    status: sent.answered ? 200 : (sent.status ?? 0),
    attempts,
    ...(served && turn ? { served, usage: turn.usage } : {}),
  }
  play.turns.push(played)

  const problems: string[] = []
  // 1. Every candidate is tried (max_attempts covers them all), so one that answers serves.
  const answering = plan.models.filter((m) => !t.faults[m.kind]).map((m) => m.id)
  if (answering.length > 0 !== sent.answered)
    problems.push(`answered: ${sent.answered}, though ${answering.length} candidate(s) answer: ${JSON.stringify(sent)}`)
  if (new Set(attempts).size !== attempts.length) problems.push(`a model tried twice: ${attempts.join(', ')}`)
  if (served && turn) {
    if (!answering.includes(served)) problems.push(`served by ${served}, which failed`)
    problems.push(...client.accept(turn, upstreamModelFor[kindOf(served)]))
    if (asked.stream) {
      const frames = parseSse(raw)
      problems.push(
        ...(plan.surface === 'messages' ? anthropicStreamProblems(frames) : responsesStreamProblems(frames)),
      )
    }
  } else if (!sent.answered && attempts.length > 0) {
    const lastFault = t.faults[kindOf(attempts.at(-1)!)]
    if (lastFault)
      same(problems, 'status, the last failure’s [errors]', sent.status, statusFor(plan.surface, lastFault))
    problems.push(...errorProblems(plan.surface, sent.status ?? 0, raw, gateway.last.headers))
  }
  // 2. Every attempt's body, failed ones too.
  for (const [i, request] of sim.requests.entries())
    for (const p of upstreamProblems(kindOf(attempts[i]!), plan.surface, body, request.body as Json, play.issued))
      problems.push(`attempt ${i + 1} (${attempts[i]}): ${p}`)
  // 3 and 5.
  problems.push(...(await recordedProblems(play, played, sessionRecordOf(play), predicted)))
  if (problems.length > 0) {
    const how = `${asked.stream ? 'streamed' : 'JSON'}${thinking ? ', thinking' : ''}`
    const outcome = served ? `served by ${served}` : `answered ${played.status}`
    return [`turn ${index} (${how}), tried ${attempts.join(' → ') || 'nothing'}, ${outcome}:`, ...problems]
  }
  if (served && turn) {
    if (turn.thought !== undefined && kindOf(served) === 'anthropic')
      play.issued.signatures.set(mint.signature, turn.thought)
    if (turn.thought !== undefined && kindOf(served) === 'openai-responses') play.issued.blobs.add(mint.blob)
    play.sticky = { model: served, turn }
  }
  return []
}

/** [sessions]: Claude Code's header makes a session of source claude-code, Codex's of source codex. */
const sessionRecordOf = (play: Play): SessionRecord => ({
  session_id: play.session.id,
  session_source: play.plan.surface === 'messages' ? 'claude-code' : 'codex',
})

interface SessionView {
  session_id: string
  session_source: string
  request_count: number
  total_cost_nanos: number
  first_at: string
  latest_at: string
}

/** 4: the session's totals count each turn once; its history filter lists exactly the turns. */
async function sessionProblems(play: Play): Promise<string[]> {
  const { h } = play.gateway
  const problems: string[] = []
  const { id } = play.session
  const times = play.turns.map((p) => p.at)
  const want = {
    ...sessionRecordOf(play),
    request_count: play.turns.length,
    total_cost_nanos: sum(play.turns, (p) => play.details.get(p.id)!.total_cost_nanos),
    first_at: new Date(Math.min(...times)).toISOString(),
    latest_at: new Date(Math.max(...times)).toISOString(),
  }
  const facts = (s: SessionView) => ({
    session_id: s.session_id,
    session_source: s.session_source,
    request_count: s.request_count,
    total_cost_nanos: s.total_cost_nanos,
    first_at: s.first_at,
    latest_at: s.latest_at,
  })
  const byIds = (await (await h.call(`/v1/usage/sessions?ids=${id}`)).json()) as { items: SessionView[] }
  same(problems, 'GET /v1/usage/sessions?ids= [sessions]', byIds.items.map(facts), [want])
  // Other clients' requests carry no session: the conversation's is the only one.
  const listed = (await (await h.call('/v1/usage/sessions/list')).json()) as SessionView[]
  same(problems, 'GET /v1/usage/sessions/list [sessions]', listed.map(facts), [want])
  const history = (await (await h.call(`/v1/usage/requests?session_id=${id}&limit=200`)).json()) as {
    items: { request_id: string }[]
  }
  same(
    problems,
    'GET /v1/usage/requests?session_id= [sessions]',
    history.items.map((r) => r.request_id).toSorted(),
    play.turns.map((p) => p.id).toSorted(),
  )
  return problems
}

/**
 * 3: the history holds one row a request, each request once; the reference ledger's replay
 * explains every charge; the credit position is what it leaves.
 */
async function ledgerProblems(play: Play, starter: GrantState): Promise<string[]> {
  const { h } = play.gateway
  const events: RunEvent[] = [
    { kind: 'grant', grant: starter },
    ...play.requests.map((p): RunEvent => ({ kind: 'requests', at: p.at, ids: [p.id] })),
  ]
  const problems: string[] = []
  const history = (await (await h.call('/v1/usage/requests?limit=200')).json()) as { items: { request_id: string }[] }
  same(
    problems,
    'GET /v1/usage/requests, a row a request [ledger]',
    history.items.map((r) => r.request_id).toSorted(),
    play.requests.map((p) => p.id).toSorted(),
  )
  try {
    const grants = replay(play.catalog, events, play.details)
    const usage = await (await h.call('/v1/usage')).json()
    same(
      problems,
      'credit position [ledger]',
      {
        limit_nanos: usage.limit_nanos,
        used_nanos: usage.used_nanos,
        remaining_nanos: usage.remaining_nanos,
        grants: usage.grants.map((g: { id: string; remaining_nanos: number }) => [g.id, g.remaining_nanos]),
      },
      creditPosition(grants, h.clock.now),
    )
  } catch (err) {
    problems.push(`grant charges [ledger]: ${err instanceof Error ? err.message : String(err)}`)
  }
  return problems
}

let sessions = 0

/** Plays the conversation turn by turn; stops at the first turn that breaks and says what broke there. */
async function playProblems(plan: FallbackPlan): Promise<string[]> {
  sim.reset()
  const gateway = await gatewayFor(plan.models)
  try {
    const session = { header: plan.sessionHeader, id: `fallback-${plan.surface}-${++sessions}` }
    const reach = { clients: gateway.clients, profileOf: () => 'svc-pro', session }
    const play: Play = {
      plan,
      session,
      gateway,
      client: plan.surface === 'messages' ? messagesClient(plan, reach) : responsesClient(plan, reach),
      router: new ReferenceRouter(plan.models),
      catalog: catalogOf(plan.models),
      issued: { signatures: new Map(), blobs: new Set() },
      turns: [],
      requests: [],
      details: new Map(),
    }
    const starter = await starterGrant(gateway.h)
    for (const [index, t] of plan.turns.entries()) {
      const problems = await turnProblems(play, t, index)
      if (problems.length > 0) return problems
    }
    return [...(await sessionProblems(play)), ...(await ledgerProblems(play, starter))]
  } finally {
    gateway.h.deps.ledger.close()
  }
}

/** Every request's faults: other clients' first, then the turn's own, turn by turn. */
const faultsInOrder = (plan: FallbackPlan) => plan.turns.flatMap((t) => [...t.others, t.faults])

// Left out on purpose, not modelled: an upstream that resets a kept-alive connection within 50 ms
// of a request, before any byte of its answer, is taken to have closed it while idle (its FIN
// crossing the request), and svc's HTTP client sends the request once more on a new connection
// to the same model, as the official SDKs resend after a connection error (README, "Operating
// it"). The reference router would have to know which connection a request went out on; a reset
// later than that is in the plans, and falls back as a failure.
const resetsAtOnce = (plan: FallbackPlan) =>
  faultsInOrder(plan).some((faults) => Object.values(faults).some((f) => f.kind === 'reset' && f.afterMs < 50))

/** The plans the suite plays: all but those with a reset the HTTP client resends. */
const playable = (surface: Surface) => fallbackPlans(surface).filter((plan) => !resetsAtOnce(plan))

describe('conversations the router moves between models under svc-pro (fast-check, fixed seed)', () => {
  test('Anthropic Messages client (Claude Code, x-claude-code-session-id)', async () => {
    await assertNoProblems(playable('messages'), playProblems, options(16))
  })

  test('Responses client (Codex, session_id / session-id)', async () => {
    await assertNoProblems(playable('responses'), playProblems, options(16))
  })
})

// ---- the reference router itself ----------------------------------------------------------------

const three: RankedModel[] = [
  { id: 'a', kind: 'anthropic', quality: 90, prices: { input: 1, output: 2 } },
  { id: 'b', kind: 'openai-chat', quality: 85, prices: { input: 1, output: 2 } },
  { id: 'c', kind: 'openai-responses', quality: 80, prices: { input: 1, output: 2 } },
]
const rateLimited = (retryAfter?: number): Fault => ({
  kind: 'status',
  status: 429,
  ...(retryAfter ? { retryAfter } : {}),
})

describe('the reference router follows the README', () => {
  test('best score first; price can outrank quality under pro', () => {
    expect(new ReferenceRouter(three).ranked(0)).toEqual(['a', 'b', 'c'])
    const dear = three.map((m) => (m.id === 'a' ? { ...m, prices: { input: 3, output: 8 } } : m))
    expect(new ReferenceRouter(dear).ranked(0)).toEqual(['b', 'a', 'c'])
  })

  test('a session sticks to the model that served it while it is healthy', () => {
    const router = new ReferenceRouter(three)
    expect(router.dispatch(0, undefined, { a: rateLimited() })).toMatchObject({ attempts: ['a', 'b'], served: 'b' })
    expect(router.ranked(0, 'b')).toEqual(['b', 'a', 'c'])
  })

  test('a retry-after cools the model until then (at most an hour), ranked last', () => {
    const router = new ReferenceRouter(three)
    router.dispatch(0, undefined, { a: rateLimited(7200) })
    expect(router.ranked(3_599_999)).toEqual(['b', 'c', 'a'])
    expect(router.ranked(3_600_000)).toEqual(['a', 'b', 'c'])
  })

  test('three failures open the breaker; a failed probe doubles the wait; a success closes it', () => {
    const router = new ReferenceRouter(three)
    for (let i = 0; i < 3; i++) router.dispatch(0, undefined, { a: { kind: 'reset', afterMs: 0 } })
    expect(router.state('a', 29_999)).toBe('open')
    expect(router.state('a', 30_000)).toBe('half_open')
    expect(router.dispatch(30_000, undefined, { a: { kind: 'reset', afterMs: 0 } }).attempts).toEqual(['a', 'b'])
    expect(router.state('a', 89_999)).toBe('open')
    expect(router.dispatch(90_000, undefined, {})).toMatchObject({ attempts: ['a'], served: 'a' })
    expect(router.state('a', 90_000)).toBe('closed')
  })

  test('at most max_attempts candidates are tried', () => {
    const four = [...three, { id: 'd', kind: 'openai-chat' as const, quality: 70, prices: { input: 1, output: 2 } }]
    const all = { a: rateLimited(), b: rateLimited(), c: rateLimited(), d: rateLimited() }
    expect(new ReferenceRouter(four).dispatch(0, undefined, all).attempts).toHaveLength(maxAttempts)
  })
})
