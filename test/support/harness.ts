// Builds an app in-process for a test: its own in-memory database, a controllable clock, a first
// account with a key, and a helper that calls app.handle() with that key.
import Anthropic from '@anthropic-ai/sdk'
import { expect } from 'bun:test'
import type { Database } from 'bun:sqlite'
import OpenAI from 'openai'
import { createApp } from '../../src/app'
import { type Config, resolveConfig } from '../../src/config/load'
import type { ConfigFile } from '../../src/config/schema'
import { openDatabase } from '../../src/db/open'
import { createDeps, type Deps } from '../../src/deps'
import { createLogger } from '../../src/lib/log'

/** Tests read bodies of many shapes; `any` keeps assertions short (the assertions check the shape). */
// biome-ignore lint/suspicious/noExplicitAny: see above
export type TestResponse = Omit<Response, 'json'> & { json(): Promise<any> }

export interface Harness {
  app: ReturnType<typeof createApp>
  deps: Deps
  /** The in-memory database, for the few invariants only its tables show. */
  db: Database
  config: Config
  /** The first account's API key. */
  key: string
  accountId: string
  clock: { now: number; advance(ms: number): void }
  call(path: string, init?: RequestInit & { json?: unknown; key?: string | null }): Promise<TestResponse>
}

export async function createHarness(
  opts: { config?: ConfigFile; env?: Record<string, string>; grantUsd?: number; now?: number } = {},
): Promise<Harness> {
  const config = resolveConfig(opts.config ?? {}, {
    env: { SVC_ADMIN_TOKEN: 'admin-secret', SVC_MASTER_KEY: 'test-master-key', ...opts.env },
    overrides: { database: ':memory:' },
  })
  config.billing.starterGrant = opts.grantUsd === undefined ? null : { nanos: Math.round(opts.grantUsd * 1e9) }
  const clock = {
    now: opts.now ?? Date.parse('2026-11-22T10:00:00.000Z'),
    advance(ms: number) {
      clock.now += ms
    },
  }
  const db = openDatabase(':memory:')
  const deps = createDeps(config, {
    db,
    clock: () => clock.now,
    log: createLogger('silent'),
  })
  const first = await deps.admin.bootstrap()
  if (!first) throw new Error('bootstrap did not run on an empty database')
  const app = createApp(deps)
  const call: Harness['call'] = (path, init = {}) => {
    const headers = new Headers(init.headers)
    const key = init.key === undefined ? first.key : init.key
    if (key !== null && !headers.has('authorization') && !headers.has('x-api-key')) {
      headers.set('authorization', `Bearer ${key}`)
    }
    let body = init.body
    if (init.json !== undefined) {
      headers.set('content-type', 'application/json')
      body = JSON.stringify(init.json)
    }
    return app.handle(new Request(`http://localhost${path}`, { ...init, headers, body }))
  }
  return { app, deps, db: db.$client, config, key: first.key, accountId: first.account.id, clock, call }
}

/** A request's record as GET /v1/usage/requests/{id} shows it (and it must show it). */
// biome-ignore lint/suspicious/noExplicitAny: the usage API's JSON, asserted with toEqual/toMatchObject
export async function requestDetail(h: Harness, id: string): Promise<any> {
  const res = await h.call(`/v1/usage/requests/${id}`)
  expect(res.status).toBe(200)
  return res.json()
}

/**
 * The request's record once it has ended (or the time is up): a stream's is written after its
 * last frame, which the client may read first.
 */
// biome-ignore lint/suspicious/noExplicitAny: the usage API's JSON, as requestDetail's
export async function endedRequestDetail(h: Harness, id: string, timeoutMs = 1_000): Promise<any> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const detail = await requestDetail(h, id)
    if (detail.status !== 'in_progress' || performance.now() > deadline) return detail
    await Bun.sleep(1)
  }
}

/**
 * A Responses stream its client cuts once the first words came (Codex's Esc): sent with `json` and
 * `headers`, read to its first text delta, then aborted. The request's record, once it has ended.
 */
export async function cutResponsesStream(
  h: Harness,
  json: unknown,
  headers: Record<string, string> = {},
): ReturnType<typeof endedRequestDetail> {
  const controller = new AbortController()
  const res = await h.call('/compat-b/v1/responses', { method: 'POST', headers, json, signal: controller.signal })
  expect(res.status).toBe(200)
  const reader = res.body!.getReader()
  let text = ''
  while (!text.includes('response.output_text.delta')) text += new TextDecoder().decode((await reader.read()).value)
  controller.abort()
  await reader.cancel().catch(() => {})
  return endedRequestDetail(h, res.headers.get('x-request-id')!)
}

/**
 * The official SDKs on `h`, each answer's raw body teed off before the SDK reads it: `lastRaw()`
 * is the text of the last answer (the SSE bytes a stream's SDK parsed), for checks the SDK hides.
 */
export function teedSdkClients(h: Harness) {
  let raw: Promise<string> = Promise.resolve('')
  const clients = sdkClients(h, {
    handle: async (request) => {
      const res = await h.app.handle(request)
      if (!res.body) return res
      const [toClient, toTest] = res.body.tee()
      raw = new Response(toTest).text()
      return new Response(toClient, { status: res.status, headers: res.headers })
    },
  })
  return { clients, lastRaw: () => raw, forgetRaw: () => (raw = Promise.resolve('')) }
}

/** The account's remaining credit as GET /v1/usage reports it. */
export const remainingNanos = async (h: Harness): Promise<number> =>
  (await (await h.call('/v1/usage')).json()).remaining_nanos

/**
 * The official SDKs against the in-process app, no sockets: Anthropic's on /compat-a, OpenAI's on
 * /compat-b. `handle` (app.handle by default) lets a test watch or tee what passes.
 */
export function sdkClients(
  h: Harness,
  opts: { maxRetries?: number; handle?: (request: Request) => Promise<Response> } = {},
) {
  const handle = opts.handle ?? ((request: Request) => h.app.handle(request))
  const fetchApp = (url: string | URL | Request, init?: RequestInit) =>
    handle(url instanceof Request ? new Request(url, init) : new Request(String(url), init))
  const maxRetries = opts.maxRetries ?? 0
  return {
    anthropic: new Anthropic({ apiKey: h.key, baseURL: 'http://localhost/compat-a', fetch: fetchApp, maxRetries }),
    openai: new OpenAI({ apiKey: h.key, baseURL: 'http://localhost/compat-b/v1', fetch: fetchApp, maxRetries }),
  }
}
