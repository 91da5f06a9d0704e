// The upstream simulator: one Bun.serve that answers as Anthropic Messages, OpenAI Chat
// Completions and OpenAI Responses, scripted per model by Scenarios, for the gateway's tests and
// benchmarks.
//
// Endpoints: POST /v1/messages (also ?beta=true), POST /v1/messages/count_tokens, GET /v1/models
// (Anthropic shape when the request has `anthropic-version` or `x-api-key`, else OpenAI's list),
// GET /v1/models/{id}, POST /v1/chat/completions, POST /v1/responses. Auth, when `apiKey` is set:
// `x-api-key` or `Authorization: Bearer` for Anthropic paths, `Authorization: Bearer` for OpenAI
// paths; otherwise 401 in the dialect's own error body.
//
// Scenario for a request (keyed by the body's `model`): that model's queue, then the '*' queue,
// then that model's sticky scenario, then — merged over the '*' sticky scenario or
// `defaultScenario` — any shortcuts parsed from the model name.
//
// Model-name shortcuts (only for names starting `sim-`; parts joined by '-', in any order):
//   stream-20x5ms  → chunks 20, chunkDelayMs 5      wait-50ms   → firstByteDelayMs 50
//   think          → a thinking block               tool        → a get_weather tool call
//   status-529     → fault status 529               hang        → fault hang
//   cut-3 / reset-3 / error-3 → that stream fault after 3 frames
// e.g. `sim-wait-50ms-stream-20x5ms`, `sim-think-tool`, `sim-status-429`.
//
// Token rule (count_tokens and default usage): ceil(chars / 4) over every string under `system`,
// `instructions`, `messages`, `input` and `tools`, skipping `type` and `role` values. Default
// output usage is ceil(chars / 4) of text + thinking + tool arguments (at least 1).
//
// Requests: each dialect's `validate` refuses, with that provider's status and error body, what the
// real API refuses before generating (missing fields, thinking limits, unpaired tool calls, tool names
// and ids outside the provider's pattern, …; the rules in each dialect file), so a malformed
// upstream request from the gateway fails here as it would at the provider.
//
// Run alone: `bun test/support/simulator.ts --port 8787 [--api-key KEY]`.

import { anthropicCodec } from './simulator-anthropic'
import { chatCodec } from './simulator-chat'
import { openaiErrorBody } from './simulator-openai'
import {
  buildPlan,
  countRequestTokens,
  type DialectCodec,
  newId,
  type Plan,
  type Refusal,
  type Scenario,
} from './simulator-plan'
import { responsesCodec } from './simulator-responses'
import { sleep, sseHeaders, streamFrames, truncatedStream } from './simulator-stream'
import { isObject } from './is-object'

export type { Refusal, Scenario, SimFault, SimSplit, SimUsage } from './simulator-plan'
export { countRequestTokens } from './simulator-plan'

export interface RecordedRequest {
  method: string
  /** Path and query string as received, e.g. `/v1/messages?beta=true`. */
  path: string
  /** Lower-cased header names. */
  headers: Record<string, string>
  /** Parsed JSON, the raw text when it is not JSON, undefined when empty. */
  body: unknown
  /** The client went away before the simulator finished answering. */
  aborted: boolean
  /** The simulator wrote its whole answer: the call can no longer be aborted. */
  finished: boolean
}

export interface Simulator {
  url: string
  port: number
  requests: RecordedRequest[]
  setScenario(model: string, scenario: Scenario): void
  queue(model: string, ...scenarios: Scenario[]): void
  reset(): void
  /** True once request `index` is aborted; false if it finished first or the time ran out. */
  waitForAbort(index: number, timeoutMs?: number): Promise<boolean>
  stop(): Promise<void>
}

export interface SimulatorOptions {
  apiKey?: string
  defaultScenario?: Scenario
  /** 0 (the default) picks a free port. */
  port?: number
  hostname?: string
  /** Ids listed by GET /v1/models after those that have scenarios. */
  models?: string[]
}

const shortcutCache = new Map<string, Scenario | undefined>()

/** Scenario fields encoded in a `sim-…` model name, or undefined when the name has none. */
export function parseModelShortcut(model: string): Scenario | undefined {
  if (shortcutCache.has(model)) return shortcutCache.get(model)
  let found: Scenario | undefined
  if (model.startsWith('sim-')) {
    const s: Scenario = {}
    const part = (re: string) => new RegExp(`(?:^|-)${re}(?=-|$)`).exec(model)
    let m = part('stream-(\\d+)x(\\d+)ms')
    if (m) {
      s.chunks = Number(m[1])
      s.chunkDelayMs = Number(m[2])
    }
    m = part('wait-(\\d+)ms')
    if (m) s.firstByteDelayMs = Number(m[1])
    if (part('think')) s.thinking = 'The user greets me; a short friendly answer fits.'
    if (part('tool')) s.toolCall = { name: 'get_weather', arguments: { city: 'Paris' } }
    m = part('status-(\\d{3})')
    if (m) s.fault = { kind: 'status', status: Number(m[1]) }
    if (part('hang')) s.fault = { kind: 'hang' }
    m = part('(cut|reset|error)-(\\d+)')
    if (m) {
      const afterFrames = Number(m[2])
      s.fault = m[1] === 'error' ? { kind: 'error_event', afterFrames } : { kind: m[1] as 'cut' | 'reset', afterFrames }
    }
    if (Object.keys(s).length > 0) found = s
  }
  shortcutCache.set(model, found)
  return found
}

const statusMessages: Record<number, string> = {
  401: 'invalid x-api-key',
  429: 'Rate limit exceeded (simulated)',
  500: 'Internal server error (simulated)',
  503: 'Service unavailable (simulated)',
  529: 'Overloaded',
}

export function startSimulator(opts: SimulatorOptions = {}): Simulator {
  const requests: RecordedRequest[] = []
  const sticky = new Map<string, Scenario>()
  const queues = new Map<string, Scenario[]>()
  const waiters = new Set<{ index: number; settle: (aborted: boolean) => void }>()

  function markAborted(record: RecordedRequest) {
    if (record.aborted) return
    record.aborted = true
    // Index lookup by identity: a reset() in between makes the record unknown, not misattributed.
    const index = requests.indexOf(record)
    for (const w of waiters) if (w.index === index) w.settle(true)
  }

  function markFinished(record: RecordedRequest) {
    record.finished = true
    const index = requests.indexOf(record)
    for (const w of waiters) if (w.index === index) w.settle(false)
  }

  function takeScenario(model: string): Scenario {
    const own = queues.get(model)
    if (own && own.length > 0) return own.shift()!
    const any = queues.get('*')
    if (any && any.length > 0) return any.shift()!
    const stickyOwn = sticky.get(model)
    if (stickyOwn) return stickyOwn
    const base = sticky.get('*') ?? opts.defaultScenario ?? {}
    const shortcut = parseModelShortcut(model)
    return shortcut ? { ...base, ...shortcut } : base
  }

  function listedModels(): string[] {
    const named = [...sticky.keys(), ...queues.keys()].filter((m) => m !== '*')
    return [...new Set([...named, ...(opts.models ?? ['sim-claude', 'sim-gpt'])])]
  }

  function json(codec: DialectCodec | undefined, body: unknown, status = 200, extra: Record<string, string> = {}) {
    const headers: Record<string, string> = { ...extra }
    if (codec) headers[codec.requestIdHeader] = newId('req_sim')
    return Response.json(body, { status, headers })
  }

  function errorResponse(
    codec: DialectCodec,
    status: number,
    message: string,
    extra: Record<string, string> = {},
    refusal?: Refusal,
  ) {
    const requestId = newId('req_sim')
    return Response.json(codec.errorBody(status, message, requestId, refusal), {
      status,
      headers: { [codec.requestIdHeader]: requestId, ...extra },
    })
  }

  function models(req: Request, url: URL): Response {
    const anthropic = req.headers.has('anthropic-version') || req.headers.has('x-api-key')
    const codec = anthropic ? anthropicCodec : chatCodec
    if (opts.apiKey !== undefined && !codec.authorized(req.headers, opts.apiKey)) {
      return errorResponse(codec, 401, 'invalid api key')
    }
    const ids = listedModels()
    const anthropicInfo = (id: string) => ({
      type: 'model',
      id,
      display_name: id,
      created_at: '2025-01-01T00:00:00Z',
    })
    const openaiInfo = (id: string) => ({ id, object: 'model', created: 1735689600, owned_by: 'sim' })
    const one = /^\/v1\/models\/(.+)$/.exec(url.pathname)
    if (one) {
      const id = decodeURIComponent(one[1]!)
      return json(codec, anthropic ? anthropicInfo(id) : openaiInfo(id))
    }
    if (!anthropic) return json(codec, { object: 'list', data: ids.map(openaiInfo) })
    const limit = Number(url.searchParams.get('limit') ?? 20)
    const after = url.searchParams.get('after_id')
    const before = url.searchParams.get('before_id')
    let from = 0
    let to = ids.length
    if (after !== null) from = ids.indexOf(after) + 1
    if (before !== null) to = Math.max(0, ids.indexOf(before))
    const page = before !== null ? ids.slice(Math.max(from, to - limit), to) : ids.slice(from, from + limit)
    const hasMore = before !== null ? to - limit > from : from + limit < to
    return json(codec, {
      data: page.map(anthropicInfo),
      has_more: hasMore,
      first_id: page[0] ?? null,
      last_id: page.at(-1) ?? null,
    })
  }

  async function generate(
    codec: DialectCodec,
    body: Record<string, unknown>,
    life: { signal: AbortSignal; finish: () => void; cancel: () => void },
  ): Promise<Response> {
    const model = body['model'] as string
    const scenario = takeScenario(model)
    const fault = scenario.fault
    const stream = body['stream'] === true

    await sleep(scenario.firstByteDelayMs ?? 0, life.signal)
    if (life.signal.aborted) return new Response(null, { status: 499 })

    if (fault?.kind === 'hang') {
      await new Promise<void>((resolve) => life.signal.addEventListener('abort', () => resolve(), { once: true }))
      return new Response(null, { status: 499 })
    }
    const status =
      fault?.kind === 'status'
        ? fault.status
        : fault?.kind === 'error_event' && !stream
          ? codec.overloadedStatus
          : undefined
    if (status !== undefined) {
      life.finish()
      const retryAfter = fault?.kind === 'status' ? fault.retryAfter : undefined
      const extra: Record<string, string> = retryAfter !== undefined ? { 'retry-after': String(retryAfter) } : {}
      return errorResponse(codec, status, statusMessages[status] ?? `Simulated ${status} error`, extra)
    }
    if (fault?.kind === 'no_credit') {
      life.finish()
      const requestId = newId('req_sim')
      const refused = codec.noCredit(requestId)
      return Response.json(refused.body, { status: refused.status, headers: { [codec.requestIdHeader]: requestId } })
    }
    const tokens = scenario.contextWindow === undefined ? 0 : countRequestTokens(body)
    if (scenario.contextWindow !== undefined && tokens > scenario.contextWindow) {
      life.finish()
      const requestId = newId('req_sim')
      return Response.json(codec.contextExceededBody(tokens, scenario.contextWindow, requestId), {
        status: 400,
        headers: { [codec.requestIdHeader]: requestId },
      })
    }
    if (fault?.kind === 'wrong_content_type') {
      life.finish()
      return new Response('<!doctype html><html><body><h1>502 Bad Gateway</h1></body></html>', {
        headers: { 'content-type': 'text/html; charset=utf-8' },
      })
    }

    const plan = buildPlan(codec.name, model, scenario, body)
    if (!stream) {
      // A JSON answer comes once the model has written all of it: as long after the first byte's
      // delay as its stream's paced deltas take.
      await sleep((plan.text?.deltas.length ?? 0) * (scenario.chunkDelayMs ?? 0), life.signal)
      if (life.signal.aborted) return new Response(null, { status: 499 })
      const text = JSON.stringify(codec.encodeBody(plan))
      const headers = { 'content-type': 'application/json', [codec.requestIdHeader]: newId('req_sim') }
      // Stream-only faults on a non-streaming request: a body cut mid-JSON (cut, malformed) or a
      // connection reset halfway through the body (reset).
      const broken = fault?.kind === 'truncated_json' || fault?.kind === 'cut' || fault?.kind === 'malformed'
      if (fault?.kind === 'reset') {
        const frames = [{ text: text.slice(0, Math.floor(text.length / 2)), paced: false }]
        return new Response(
          streamFrames(
            frames,
            { fault: { kind: 'reset', afterFrames: 1 } },
            life.signal,
            sseHooks(codec, plan, life),
            life.cancel,
          ),
          { headers },
        )
      }
      life.finish()
      return new Response(broken ? text.slice(0, Math.floor(text.length / 2)) : text, { headers })
    }

    const headers = { ...sseHeaders, [codec.requestIdHeader]: newId('req_sim') }
    const frames = codec.encodeFrames(plan)
    if (fault?.kind === 'truncated_json') {
      life.finish()
      return new Response(truncatedStream(frames), { headers })
    }
    return new Response(streamFrames(frames, scenario, life.signal, sseHooks(codec, plan, life), life.cancel), {
      headers,
    })
  }

  const sseHooks = (codec: DialectCodec, plan: Plan, life: { finish: () => void }) => ({
    errorFrame: (seq: number) => codec.errorFrame(plan, seq),
    malformedFrame: () => codec.malformedFrame(),
    onFinish: life.finish,
  })

  async function handle(req: Request): Promise<Response> {
    const url = new URL(req.url)
    const record: RecordedRequest = {
      method: req.method,
      path: url.pathname + url.search,
      headers: Object.fromEntries(req.headers.entries()),
      body: undefined,
      aborted: false,
      finished: false,
    }
    requests.push(record)

    const controller = new AbortController()
    const cancel = () => {
      if (!record.finished) markAborted(record)
      controller.abort()
    }
    req.signal.addEventListener('abort', cancel, { once: true })
    const life = { signal: controller.signal, finish: () => markFinished(record), cancel }

    const raw = await req.text()
    if (raw !== '') {
      try {
        record.body = JSON.parse(raw)
      } catch {
        record.body = raw
      }
    }

    const path = url.pathname
    if (req.method === 'GET' && (path === '/v1/models' || path.startsWith('/v1/models/'))) {
      life.finish()
      return models(req, url)
    }
    const codec =
      path === '/v1/messages' || path === '/v1/messages/count_tokens'
        ? anthropicCodec
        : path === '/v1/chat/completions'
          ? chatCodec
          : path === '/v1/responses'
            ? responsesCodec
            : undefined
    if (!codec || req.method !== 'POST') {
      life.finish()
      const message = `No route for ${req.method} ${path}`
      return req.headers.has('anthropic-version')
        ? errorResponse(anthropicCodec, 404, message)
        : Response.json(openaiErrorBody(404, message), { status: 404 })
    }
    if (opts.apiKey !== undefined && !codec.authorized(req.headers, opts.apiKey)) {
      life.finish()
      return errorResponse(codec, 401, codec === anthropicCodec ? 'invalid x-api-key' : 'Incorrect API key provided.')
    }
    const body = record.body
    if (!isObject(body)) {
      life.finish()
      return errorResponse(codec, 400, 'The request body is not valid JSON.')
    }
    if (path === '/v1/messages/count_tokens') {
      life.finish()
      // Anthropic asks every call for its version header, count_tokens too (wire-formats §1.1).
      if (!req.headers.has('anthropic-version'))
        return errorResponse(codec, 400, 'anthropic-version: header is required')
      if (typeof body['model'] !== 'string') return errorResponse(codec, 400, 'model: Field required')
      if (!Array.isArray(body['messages'])) return errorResponse(codec, 400, 'messages: Field required')
      return json(codec, { input_tokens: countRequestTokens(body) })
    }
    const refusal = codec.validate(body, req.headers)
    if (refusal) {
      life.finish()
      return errorResponse(codec, refusal.status ?? 400, refusal.message, {}, refusal)
    }
    return generate(codec, body, life)
  }

  const server = Bun.serve({
    port: opts.port ?? 0,
    hostname: opts.hostname ?? '127.0.0.1',
    // Hanging and slow scenarios must outlive Bun's default 10 s idle timeout.
    idleTimeout: 0,
    fetch: handle,
    error: (err) => Response.json(openaiErrorBody(500, `simulator bug: ${err.message}`), { status: 500 }),
  })
  const port = server.port ?? 0

  const settleAll = () => {
    for (const w of waiters) w.settle(false)
  }

  return {
    url: `http://${opts.hostname ?? '127.0.0.1'}:${port}`,
    port,
    requests,
    setScenario: (model, scenario) => void sticky.set(model, scenario),
    queue: (model, ...scenarios) => {
      const q = queues.get(model) ?? []
      q.push(...scenarios)
      queues.set(model, q)
    },
    reset: () => {
      requests.length = 0
      sticky.clear()
      queues.clear()
      settleAll()
    },
    waitForAbort: (index, timeoutMs = 5000) => {
      if (requests[index]?.aborted) return Promise.resolve(true)
      if (requests[index]?.finished) return Promise.resolve(false)
      return new Promise<boolean>((resolve) => {
        const waiter = {
          index,
          settle: (aborted: boolean) => {
            clearTimeout(timer)
            waiters.delete(waiter)
            resolve(aborted)
          },
        }
        const timer = setTimeout(() => waiter.settle(false), timeoutMs)
        waiters.add(waiter)
      })
    },
    stop: async () => {
      settleAll()
      await server.stop(true)
    },
  }
}

if (import.meta.main) {
  const arg = (name: string) => {
    const i = process.argv.indexOf(name)
    return i >= 0 ? process.argv[i + 1] : undefined
  }
  const sim = startSimulator({
    port: Number(arg('--port') ?? 8787),
    hostname: arg('--host') ?? '127.0.0.1',
    apiKey: arg('--api-key'),
  })
  console.log(`upstream simulator listening on ${sim.url}`)
}
