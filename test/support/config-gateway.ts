// A svc.toml text loaded the way `svc serve` loads it (src/cli/serve.ts → loadCliConfig, with
// `--config svc.toml --db :memory:`), then served in-process by createApp on a fresh database,
// its upstream calls held to 127.0.0.1. What such a gateway answers is checked against what its
// config implies (test/support/config-plans.ts) or, for a config the README gives no meaning to,
// against the one rule every config obeys: it answers, in the surface's own error shape if not 200.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../../src/app'
import { loadCliConfig } from '../../src/cli/context'
import type { Config } from '../../src/config/load'
import type { RoutingMode } from '../../src/config/schema'
import { openDatabase } from '../../src/db/open'
import { createDeps } from '../../src/deps'
import { createLogger } from '../../src/lib/log'
import { createHttp1Client } from '../../src/providers/http1/client'
import {
  type ConfigPlan,
  eligible,
  type Implied,
  type ImpliedModel,
  modes,
  profileOf,
  scoreOf,
  windowsOf,
} from './config-plans'
import type { RecordedRequest, Simulator } from './simulator'

/** Loads `text` as `svc serve --config svc.toml --db :memory:` would, in a directory of its own. */
export function loadAsServe(text: string, env: Record<string, string>): Config {
  const dir = mkdtempSync(join(tmpdir(), 'svc-config-'))
  try {
    writeFileSync(join(dir, 'svc.toml'), text)
    const io = { env, cwd: dir, out: () => {}, err: () => {} }
    return loadCliConfig(io, { config: 'svc.toml', db: ':memory:' })
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Upstream calls past 127.0.0.1 are refused before a byte is sent, and remembered as a problem. */
export function loopbackOnly(inner: typeof fetch) {
  const refused: string[] = []
  const guarded = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = input instanceof Request ? input.url : String(input)
    const host = URL.parse(url)?.hostname
    if (host !== undefined && host !== '127.0.0.1') {
      refused.push(url)
      throw new TypeError(`the test refuses a call to ${url}`)
    }
    return inner(input, init)
  }) as typeof fetch
  return { fetch: guarded, refused }
}

const upstream = loopbackOnly(createHttp1Client())

// biome-ignore lint/suspicious/noExplicitAny: the gateway's JSON, checked field by field below
type Json = any

export interface Gateway {
  call(
    path: string,
    json?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Json; requestId: string | null }>
  /** The first account's starter grant as bootstrap made it, nanos (null for none). */
  starterGrantNanos: number | null
}

/** createApp on a fresh in-memory database, at `now`, with a first account holding ample credit. */
export async function startGateway(config: Config, now: number): Promise<Gateway> {
  const deps = createDeps(config, {
    db: openDatabase(':memory:'),
    clock: () => now,
    log: createLogger('silent'),
    fetch: upstream.fetch,
  })
  const first = await deps.admin.bootstrap()
  if (!first) throw new Error('bootstrap did not run on an empty database')
  // Credit is not what these properties are about: enough for any price the plans generate.
  await deps.admin.addGrant({ account: first.account.name, usd: 1_000_000 })
  const app = createApp(deps)
  return {
    starterGrantNanos: first.grant?.amountNanos ?? null,
    async call(path, json, headers = {}) {
      const init: RequestInit = { headers: { authorization: `Bearer ${first.key}`, ...headers } }
      if (json !== undefined) {
        init.method = 'POST'
        init.body = JSON.stringify(json)
        ;(init.headers as Record<string, string>)['content-type'] = 'application/json'
      }
      const res = await app.handle(new Request(`http://localhost${path}`, init))
      const text = await res.text()
      let body: Json = text
      try {
        body = JSON.parse(text)
      } catch {}
      return { status: res.status, body, requestId: res.headers.get('x-request-id') }
    },
  }
}

// ---- the two surfaces --------------------------------------------------------------------------

type Surface = 'messages' | 'responses'

const ask: Record<Surface, (profile: string) => [string, unknown, Record<string, string>]> = {
  messages: (model) => [
    '/compat-a/v1/messages',
    { model, max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] },
    { 'anthropic-version': '2023-06-01' },
  ],
  responses: (model) => ['/compat-b/v1/responses', { model, input: 'Hello', max_output_tokens: 64 }, {}],
}

/** README, "HTTP API": each route's error body; a 500 is the gateway's own failure, never an answer. */
export function errorShapeProblems(surface: Surface, status: number, body: Json): string[] {
  const problems: string[] = []
  if (status === 500) problems.push(`${surface}: 500, the gateway failed: ${JSON.stringify(body)}`)
  const error = surface === 'messages' && body?.type === 'error' ? body.error : body?.error
  const fields = surface === 'messages' ? ['type', 'message'] : ['message', 'type', 'param', 'code']
  if (!error || typeof error !== 'object' || !fields.every((f) => f in error)) {
    problems.push(`${surface}: ${status} is not in the surface's error shape: ${JSON.stringify(body)}`)
  } else if (typeof error.message !== 'string' || /undefined|\[object Object\]/.test(error.message)) {
    problems.push(`${surface}: the error message says nothing: ${JSON.stringify(error.message)}`)
  }
  return problems
}

/** Any config that loads: both models routes list the profiles, every profile answers something. */
export async function answersProblems(g: Gateway): Promise<string[]> {
  const problems: string[] = []
  for (const path of ['/compat-a/v1/models', '/compat-b/v1/models']) {
    const { status, body } = await g.call(path)
    if (status !== 200) problems.push(`GET ${path}: ${status} ${JSON.stringify(body)}`)
  }
  for (const surface of ['messages', 'responses'] as const) {
    for (const mode of modes) {
      const { status, body } = await g.call(...ask[surface](profileOf[mode]))
      if (status !== 200) problems.push(...errorShapeProblems(surface, status, body))
    }
  }
  const refused = upstream.refused.splice(0)
  if (refused.length > 0) problems.push(`svc called past 127.0.0.1: ${refused.join(', ')}`)
  return problems
}

// ---- a config that says what it serves ----------------------------------------------------------

/** What the simulator answers every model: every kind of token, so each price shows in the cost. */
export const simUsage = { input: 1_000, cacheRead: 200, cacheWrite: 30, output: 40 }

/** JSON with every object's keys in order: the models routes list the profiles in an order of their own. */
const canonical = (v: unknown): string =>
  JSON.stringify(v, (_, x) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort()) : x,
  )

const same = (problems: string[], what: string, actual: unknown, expected: unknown) => {
  if (canonical(actual) !== canonical(expected)) {
    problems.push(`${what}: got ${JSON.stringify(actual)}, the config implies ${JSON.stringify(expected)}`)
  }
}

/** README, "Model routes": each profile's largest window and output among the models it can route to. */
async function modelsRouteProblems(g: Gateway, imp: Implied, now: number): Promise<string[]> {
  const problems: string[] = []
  const expected = Object.fromEntries(modes.map((m) => [profileOf[m], windowsOf(imp, m, now)]))
  const a = await g.call('/compat-a/v1/models?limit=100')
  same(
    problems,
    'GET /compat-a/v1/models',
    Object.fromEntries(
      (a.body?.data ?? []).map((m: Json) => [
        m.id,
        { contextWindow: m.max_input_tokens, maxOutputTokens: m.max_tokens },
      ]),
    ),
    expected,
  )
  const b = await g.call('/compat-b/v1/models')
  same(
    problems,
    'GET /compat-b/v1/models',
    Object.fromEntries(
      (b.body?.data ?? []).map((m: Json) => [
        m.id,
        { contextWindow: m.context_window, maxOutputTokens: m.max_output_tokens },
      ]),
    ),
    expected,
  )
  return problems
}

/** The provider a recorded upstream request came from, by the key it carried. */
const keyCarried = (r: RecordedRequest) => r.headers['x-api-key'] ?? r.headers.authorization?.replace(/^Bearer /, '')

/**
 * One request to a profile: served by the best-scored model the config put under it (a tie either
 * way), exactly one upstream call to that model's provider, charged at the config's prices; or,
 * with no model to serve it, the no-model 503 in the surface's shape and nothing sent upstream.
 */
async function profileProblems(
  g: Gateway,
  sim: Simulator,
  ctx: { imp: Implied; now: number; surface: Surface; mode: RoutingMode },
): Promise<string[]> {
  const { imp, now, surface, mode } = ctx
  const problems: string[] = []
  const where = `${surface} ${profileOf[mode]}`
  const candidates = eligible(imp, mode, now)
  const before = sim.requests.length
  const res = await g.call(...ask[surface](profileOf[mode]))
  const calls = sim.requests.slice(before).filter((r) => r.method === 'POST')
  if (candidates.length === 0) {
    // README: 503 on the messages route; on the responses route a 400, which Codex does not retry.
    same(problems, `${where}: status with no model to serve it`, res.status, surface === 'messages' ? 503 : 400)
    problems.push(...errorShapeProblems(surface, res.status, res.body).map((p) => `${where}: ${p}`))
    same(problems, `${where}: upstream calls with no model`, calls.length, 0)
    return problems
  }
  if (res.status !== 200)
    return [`${where}: ${res.status} ${JSON.stringify(res.body)}; candidates ${names(candidates)}`]
  const detail = await g.call(`/v1/usage/requests/${res.requestId}`)
  const leg = detail.body?.usage_events?.[0]
  const served = candidates.find((m) => m.id === leg?.model_id && m.provider === leg?.provider_id)
  if (!served) return [`${where}: served by ${leg?.model_id} (${leg?.provider_id}), not one of ${names(candidates)}`]
  const best = Math.max(...candidates.map((m) => scoreOf(imp, mode, m)))
  // Scores are rounded to 0.01 before they are compared (src/router/rank.ts).
  if (scoreOf(imp, mode, served) < best - 0.011) {
    problems.push(
      `${where}: ${served.id} scores ${scoreOf(imp, mode, served)}, the best ${best} (${names(candidates)})`,
    )
  }
  same(
    problems,
    `${where}: upstream calls`,
    calls.map((r) => ({ key: keyCarried(r), model: (r.body as Json)?.model })),
    [{ key: imp.keys.get(served.provider), model: served.upstreamModel }],
  )
  if (surface === 'messages') same(problems, `${where}: the answer's model`, res.body.model, served.upstreamModel)
  const p = served.price!
  same(
    problems,
    `${where}: the leg's cost (${served.id}, ${served.provider})`,
    [detail.body.usage_events.length, leg.cost_nanos],
    [
      1,
      simUsage.input * p.input +
        simUsage.cacheRead * p.cacheRead +
        simUsage.cacheWrite * p.cacheWrite +
        simUsage.output * p.output,
    ],
  )
  return problems
}

const names = (ms: ImpliedModel[]) => ms.map((m) => `${m.id} (${m.provider})`).join(', ') || '(none)'

/** Everything a loaded plan says: the windows, who serves each profile on each surface, and at what price. */
export async function servesProblems(g: Gateway, sim: Simulator, plan: ConfigPlan, imp: Implied): Promise<string[]> {
  const problems = await modelsRouteProblems(g, imp, plan.now)
  same(problems, "the first account's starter grant", g.starterGrantNanos, imp.starterGrantNanos)
  for (const surface of ['messages', 'responses'] as const) {
    for (const mode of modes) problems.push(...(await profileProblems(g, sim, { imp, now: plan.now, surface, mode })))
  }
  const refused = upstream.refused.splice(0)
  if (refused.length > 0) problems.push(`svc called past 127.0.0.1: ${refused.join(', ')}`)
  return problems
}
