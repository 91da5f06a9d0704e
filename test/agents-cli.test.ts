// The real Claude Code and Codex CLIs launched through `svc claude` and `svc codex` (each a child
// `bun src/main.ts …` process) against svc on a loopback port, with the simulator behind svc: what
// the agents send, that they print the simulated answer and run a tool round trip, that their exit
// codes pass back through svc, and that every request lands in the ledger under the agent's session.
//
// Loopback only: each agent runs with a throwaway HOME, an environment that holds only what is set
// here (no proxies, no keys but svc's), and its telemetry, update checks and other background
// traffic switched off. Under strace, a run of this file opened no socket beyond 127.0.0.1 (and nscd).
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { compactionLimit } from '../src/cli/codex-catalog'
import type { ConfigFile } from '../src/config/schema'
import {
  codexLoopbackOnly,
  ensureNpmAgent,
  type Inbound,
  runBounded,
  type RunResult,
  serveRecording,
} from './support/agents'
import { createHarness, type Harness } from './support/harness'
import { type Simulator, startSimulator } from './support/simulator'

const CLAUDE_VERSION = '2.1.332'
const CODEX_VERSION = '0.171.0'
// One after the other: both install into the same npm prefix.
const claude = await ensureNpmAgent({
  pkg: '@anthropic-ai/claude-code',
  version: CLAUDE_VERSION,
  bin: 'claude',
  timeoutMs: 120_000,
})
if (!claude.ok) console.warn(`agents-cli.test.ts: Claude Code cases skipped: ${claude.skip}`)
const codex = await ensureNpmAgent({ pkg: '@openai/codex', version: CODEX_VERSION, bin: 'codex', timeoutMs: 90_000 })
if (!codex.ok) console.warn(`agents-cli.test.ts: Codex cases skipped: ${codex.skip}`)

const svcMain = resolve(import.meta.dir, '../src/main.ts')
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const UPSTREAM_MODEL = 'up-model'
/** Claude Code's background calls (titles, summaries) would go to svc-ultra-saver: a model of its own. */
const SMALL_MODEL = 'up-small'
/** Nanos per token for both models. */
const price = { input: 1000, output: 2000, cacheRead: 100, cacheWrite: 1250 }
const usage = { input: 1200, cacheRead: 300, output: 8 }
const cost = usage.input * price.input + usage.cacheRead * price.cacheRead + usage.output * price.output
/** Codex is a node program; Claude Code is a native binary, but its Bash tool needs a shell. */
const PATH = [...new Set([dirname(Bun.which('node') ?? '/usr/bin/node'), '/usr/bin', '/bin'])].join(':')
const agentId = (agent: string) => `${agent}@${hostname()}`
/** Both models': the profile's window, which `svc claude` and `svc codex` tell the agent. */
const CONTEXT_WINDOW = 150_000

/**
 * The launcher's one request before the agent starts: the profile's model object, for its window.
 * Taken off `inbound`, so that what is left is the agent's own.
 */
function expectWindowAsked(inbound: Inbound[]) {
  const asked = inbound.shift()!
  expect(`${asked.method} ${asked.path} ${asked.status}`).toBe('GET /compat-a/v1/models/svc-pro 200')
}

type Kind = 'anthropic' | 'openai-chat' | 'openai-responses'

let sim: Simulator
beforeAll(() => {
  sim = startSimulator({ apiKey: 'sim-key' })
})
afterAll(async () => {
  await sim?.stop()
})
beforeEach(() => {
  sim?.reset()
})

const cleanups: (() => void | Promise<void>)[] = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** `contextWindow`: both models', CONTEXT_WINDOW unless a test needs Claude Code's prompt not to fit. */
function config(kind: Kind, contextWindow = CONTEXT_WINDOW): ConfigFile {
  const model = (id: string, upstream: string, profile: 'pro' | 'ultra_saver') => ({
    id,
    provider: 'up',
    upstream_model: upstream,
    profiles: [profile],
    quality: 80,
    max_output_tokens: 32_000,
    context_window: contextWindow,
    // A model that takes Claude Code's adaptive thinking as sent, so that the Anthropic upstream
    // gets its body byte for byte (the rewrite for older models: messages.test.ts).
    adaptive_thinking: true,
    input_usd_per_mtok: price.input / 1000,
    output_usd_per_mtok: price.output / 1000,
    cache_read_usd_per_mtok: price.cacheRead / 1000,
    cache_write_usd_per_mtok: price.cacheWrite / 1000,
  })
  return {
    catalog: { builtin: false },
    // The simulator plays Anthropic itself there: Claude Code's body goes as sent (its billing line
    // included, which only Anthropic reads).
    providers: {
      up:
        kind === 'anthropic'
          ? { kind, base_url: sim.url, api_key_env: 'SIM_KEY', anthropic_signatures: true }
          : { kind, base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
    },
    models: [model('m1', UPSTREAM_MODEL, 'pro'), model('m2', SMALL_MODEL, 'ultra_saver')],
  }
}

/** svc on a real loopback port (what `svc serve` does), recording what arrives at its edge. */
async function startSvc(kind: Kind, contextWindow?: number) {
  const h = await createHarness({ config: config(kind, contextWindow), env: { SIM_KEY: 'sim-key' }, grantUsd: 5 })
  const { server, inbound } = serveRecording(h.app)
  cleanups.push(() => server.stop(true))
  return { h, inbound, gateway: `http://127.0.0.1:${server.port}` }
}

/** A throwaway HOME with an empty working directory, so no repository or CLAUDE.md leaks in. */
function tempHome() {
  const home = mkdtempSync(join(tmpdir(), 'svc-agent-home-'))
  const work = join(home, 'work')
  mkdirSync(work)
  cleanups.push(() => rmSync(home, { recursive: true, force: true }))
  return { home, work }
}

/** `svc ARGS…` as a child process, in an environment that holds only `env` and the basics. */
async function svc(
  args: string[],
  opts: { home: { home: string; work: string }; env?: Record<string, string>; stdin?: string },
) {
  const result = await runBounded([process.execPath, svcMain, ...args], {
    cwd: opts.home.work,
    timeoutMs: 45_000,
    stdin: opts.stdin,
    env: { PATH, HOME: opts.home.home, LANG: 'C.UTF-8', TERM: 'dumb', NO_COLOR: '1', ...opts.env },
  })
  expect(result.timedOut).toBe(false)
  return result
}

const showFailure = (what: string, run: RunResult) => {
  if (run.exitCode !== 0) console.error(`${what} exited ${run.exitCode}:\n${run.stderr}\n${run.stdout}`)
}

/** What Claude Code needs to stay on loopback and to fail loudly instead of retrying. */
const claudeEnv = () => ({
  SVC_CLAUDE_BIN: claude.ok ? claude.bin : 'claude',
  DISABLE_TELEMETRY: '1',
  DISABLE_AUTOUPDATER: '1',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  // A broken stream fails the run instead of being retried silently without streaming.
  CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK: '1',
  CLAUDE_CODE_MAX_RETRIES: '0',
})

async function json<T = Record<string, unknown>>(h: Harness, path: string): Promise<T> {
  const res = await h.call(path)
  expect(res.status).toBe(200)
  return res.json() as Promise<T>
}

/** What Claude Code 2.1.332 sends on every turn of `-p`, whatever the upstream behind svc. */
function expectClaudeCodeRequest(req: Inbound, key: string) {
  expect(req).toMatchObject({ method: 'POST', path: '/compat-a/v1/messages', search: '?beta=true', status: 200 })
  const sessionId = req.headers['x-claude-code-session-id']!
  expect(sessionId).toMatch(UUID)
  // A copy: bun's toMatchObject writes the asymmetric matchers back into the object it checks.
  expect({ ...req.headers }).toMatchObject({
    authorization: `Bearer ${key}`,
    'anthropic-version': '2023-06-01',
    'anthropic-beta': expect.stringContaining('claude-code-20250219'),
    'user-agent': expect.stringContaining(`claude-cli/${CLAUDE_VERSION}`),
    // From ANTHROPIC_CUSTOM_HEADERS, set by `svc claude`.
    'x-session-source': 'claude-code',
    'x-agent-id': agentId('claude-code'),
  })
  expect(req.headers['x-api-key']).toBeUndefined()
  const body = req.body
  expect({ ...body }).toMatchObject({
    model: 'svc-pro',
    stream: true,
    max_tokens: 32_000,
    thinking: { type: 'adaptive' },
    context_management: expect.any(Object),
    output_config: { effort: 'high' },
  })
  // The session id also rides in metadata.user_id, a JSON string.
  const userId = JSON.parse((body.metadata as { user_id: string }).user_id) as { session_id: string }
  expect(userId.session_id).toBe(sessionId)
  // The system prompt opens with a billing line, stable within one session.
  const system = body.system as { type: string; text: string }[]
  expect(system[0]!.text).toStartWith('x-anthropic-billing-header: ')
  const tools = body.tools as { name: string; defer_loading?: boolean }[]
  expect(tools.map((t) => t.name)).toContain('Bash')
  expect(tools.filter((t) => t.defer_loading).map((t) => t.name)).toEqual(['DeferredToolPlaceholder'])
  // The environment section travels as a `role: "system"` message after the first user message.
  const messages = body.messages as { role: string }[]
  expect(messages.slice(0, 2).map((m) => m.role)).toEqual(['user', 'system'])
  return { sessionId, body }
}

describe.skipIf(!claude.ok)(`svc claude (Claude Code ${CLAUDE_VERSION})`, () => {
  test('newcomer: svc login --with-token, svc claude -p answers, and the request, its cost and its session show in the usage API', {
    timeout: 60_000,
  }, async () => {
    const { h, inbound, gateway } = await startSvc('anthropic')
    const home = tempHome()
    const login = await svc(['login', gateway, '--with-token'], { home, stdin: `${h.key}\n` })
    expect(login.exitCode).toBe(0)
    const stored = JSON.parse(readFileSync(join(home.home, '.config', 'svc', 'credentials.json'), 'utf8'))
    expect(stored).toMatchObject({ gateway, api_key: h.key })
    // `svc login` checked the key once.
    expect(inbound.splice(0).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(['GET /v1/auth/whoami 200'])

    sim.setScenario(UPSTREAM_MODEL, { thinking: 'A greeting.', text: 'Hello from the simulator', usage })
    // No SVC_URL or SVC_API_KEY: `svc claude` reads the stored sign-in.
    const run = await svc(['claude', '-p', 'say hi'], { home, env: claudeEnv() })
    showFailure('svc claude', run)
    expect(run.exitCode).toBe(0)
    expect(run.stdout).toBe('Hello from the simulator\n')
    // Told the profile's window, Claude Code no longer warns that it assumes one of a million tokens.
    expect(run.stderr).not.toContain('recognize the model')

    // One turn, no background calls, no count_tokens, no HEAD probe.
    expectWindowAsked(inbound)
    expect(inbound).toHaveLength(1)
    const req = inbound[0]!
    const { sessionId, body } = expectClaudeCodeRequest(req, h.key)
    const first = (body.messages as { content: { type: string; text: string }[] }[])[0]!
    expect(first.content.at(-1)).toEqual({ type: 'text', text: 'say hi' })

    // Pass-through: Claude Code's body as sent but for the model; its beta flags, not its key.
    expect(sim.requests).toHaveLength(1)
    const upstream = sim.requests[0]!
    expect(upstream.path).toBe('/v1/messages')
    expect(upstream.body).toEqual({ ...body, model: UPSTREAM_MODEL })
    expect(upstream.headers['anthropic-beta']).toBe(req.headers['anthropic-beta']!)
    expect(upstream.headers['x-api-key']).toBe('sim-key')
    expect(upstream.headers.authorization).toBeUndefined()

    const list = await json<{ items: Record<string, unknown>[] }>(h, '/v1/usage/requests')
    expect(list.items).toEqual([
      expect.objectContaining({
        request_id: req.requestId,
        status: 'completed',
        http_status: 200,
        surface: 'messages',
        routing_mode: 'pro',
        stream: true,
        selected_model_id: 'm1',
        session_id: sessionId,
        session_source: 'claude-code',
        agent_id: agentId('claude-code'),
        total_input_tokens: usage.input,
        total_cached_input_tokens: usage.cacheRead,
        total_output_tokens: usage.output,
        total_cost_nanos: cost,
        charged_nanos: cost,
      }),
    ])
    // What the newcomer runs next, with the key `svc login` stored.
    const sessions = await fetch(`${gateway}/v1/usage/sessions/list`, {
      headers: { authorization: `Bearer ${stored.api_key}` },
    })
    expect(sessions.status).toBe(200)
    expect(await sessions.json()).toEqual([
      expect.objectContaining({
        session_id: sessionId,
        session_source: 'claude-code',
        agent_id: agentId('claude-code'),
        request_count: 1,
        total_cost_nanos: cost,
      }),
    ])
  })

  test.each(['anthropic', 'openai-chat', 'openai-responses'] as const)(
    'tool round trip (%s upstream): Claude Code runs Bash and sends its output back',
    { timeout: 60_000 },
    async (kind) => {
      const { h, inbound, gateway } = await startSvc(kind)
      const home = tempHome()
      // Through the chat upstream svc synthesizes the Anthropic stream: thinking, text and tool_use.
      sim.queue(
        UPSTREAM_MODEL,
        {
          thinking: 'The user wants the command run.',
          text: 'Running it.',
          toolCall: { name: 'Bash', arguments: { command: 'echo svc-tool-ok', description: 'Print a marker' } },
          usage,
        },
        { text: 'The command printed svc-tool-ok.', usage },
      )
      // SVC_URL and SVC_API_KEY instead of a stored sign-in, as in CI.
      const run = await svc(['claude', '--allowedTools', 'Bash', '-p', 'run echo svc-tool-ok'], {
        home,
        env: { ...claudeEnv(), SVC_URL: gateway, SVC_API_KEY: h.key },
      })
      showFailure('svc claude', run)
      expect(run.exitCode).toBe(0)
      expect(run.stdout).toBe('The command printed svc-tool-ok.\n')

      expectWindowAsked(inbound)
      expect(inbound).toHaveLength(2)
      const first = expectClaudeCodeRequest(inbound[0]!, h.key)
      const second = expectClaudeCodeRequest(inbound[1]!, h.key)
      expect(second.sessionId).toBe(first.sessionId)
      // Claude Code read every block of svc's stream and echoes the turn back, then the tool's output.
      const messages = second.body.messages as { role: string; content: Record<string, unknown>[] }[]
      const call = messages.at(-2)!
      expect(call.role).toBe('assistant')
      expect(call.content.map((b) => b.type)).toEqual(['thinking', 'text', 'tool_use'])
      expect(call.content[0]).toMatchObject({ thinking: 'The user wants the command run.' })
      expect(call.content[1]).toMatchObject({ text: 'Running it.' })
      const toolUse = call.content[2] as { id: string }
      expect(toolUse).toMatchObject({
        name: 'Bash',
        input: { command: 'echo svc-tool-ok', description: 'Print a marker' },
      })
      expect(toolUse.id).toMatch(kind === 'anthropic' ? /^toolu_sim/ : /^call_sim/)
      const result = messages.at(-1)!
      expect(result.role).toBe('user')
      expect(result.content[0]).toMatchObject({
        type: 'tool_result',
        tool_use_id: toolUse.id,
        content: 'svc-tool-ok',
        is_error: false,
      })

      expect(sim.requests).toHaveLength(2)
      if (kind === 'anthropic') {
        expect(sim.requests[1]!.body).toEqual({ ...second.body, model: UPSTREAM_MODEL })
      } else if (kind === 'openai-chat') {
        const chat = sim.requests[1]!.body as { messages: Record<string, unknown>[] }
        expect(chat.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: toolUse.id, content: 'svc-tool-ok' })
      } else {
        const responses = sim.requests[1]!.body as { input: Record<string, unknown>[] }
        const output = responses.input.find((item) => item.type === 'function_call_output')
        expect(output).toMatchObject({ call_id: toolUse.id, output: 'svc-tool-ok' })
      }

      const list = await json<{ items: Record<string, unknown>[] }>(
        h,
        `/v1/usage/requests?session_id=${encodeURIComponent(first.sessionId)}`,
      )
      expect(list.items.map((r) => r.request_id).sort()).toEqual(inbound.map((r) => r.requestId).sort())
      for (const row of list.items) {
        expect(row).toMatchObject({
          status: 'completed',
          surface: 'messages',
          session_source: 'claude-code',
          total_cost_nanos: cost,
        })
      }
      const sessions = await json<Record<string, unknown>[]>(h, '/v1/usage/sessions/list')
      expect(sessions).toEqual([
        expect.objectContaining({
          session_id: first.sessionId,
          session_source: 'claude-code',
          request_count: 2,
          total_cost_nanos: 2 * cost,
        }),
      ])
    },
  )

  test('a refused run exits non-zero: no credit, the gateway answers 402', { timeout: 60_000 }, async () => {
    const { h, inbound, gateway } = await startSvc('anthropic')
    await h.deps.admin.createAccount('broke')
    const { key } = await h.deps.admin.createKey({ account: 'broke' })
    const home = tempHome()
    const run = await svc(['claude', '-p', 'say hi'], {
      home,
      env: { ...claudeEnv(), SVC_URL: gateway, SVC_API_KEY: key },
    })
    // Claude Code exits 1 on an API error; `svc claude` passes that back.
    expect(run.exitCode).toBe(1)
    expect(run.stdout).toBe(
      'API Error: 402 no credit applies to this request under svc-pro: add a grant that covers it\n',
    )
    // Claude Code asked once (no retries) and nothing reached the upstream.
    expectWindowAsked(inbound)
    expect(inbound.map((r) => [r.path, r.status])).toEqual([['/compat-a/v1/messages', 402]])
    expect(sim.requests).toHaveLength(0)
    // The refusal is in the ledger too, under the session, at no cost.
    const list = await (await h.call('/v1/usage/requests', { key })).json()
    expect(list.items).toEqual([
      expect.objectContaining({
        status: 'failed',
        http_status: 402,
        session_id: inbound[0]!.headers['x-claude-code-session-id'],
        session_source: 'claude-code',
        total_cost_nanos: 0,
        error: { type: 'billing', message: expect.stringContaining('no credit') },
      }),
    ])
  })

  test('a request no model can serve: Claude Code asks once and stops, though its retries are on', {
    timeout: 60_000,
  }, async () => {
    // The profile's only model retired: no resend can help.
    const retired = config('anthropic')
    retired.models = retired.models!.map((m) => ({ ...m, retires_on: '2026-01-01' }))
    const h = await createHarness({ config: retired, env: { SIM_KEY: 'sim-key' }, grantUsd: 5 })
    const { server, inbound } = serveRecording(h.app)
    cleanups.push(() => server.stop(true))
    const { CLAUDE_CODE_MAX_RETRIES: _retriesOff, ...withRetries } = claudeEnv()
    const run = await svc(['claude', '-p', 'say hi'], {
      home: tempHome(),
      env: { ...withRetries, SVC_URL: `http://127.0.0.1:${server.port}`, SVC_API_KEY: h.key },
    })
    expect(run.exitCode).toBe(1)
    expect(run.stdout).toContain('no model can serve this request under svc-pro')
    // An overloaded_error here was retried for minutes whatever x-should-retry said.
    expect(inbound.filter((r) => r.path === '/compat-a/v1/messages').map((r) => r.status)).toEqual([503])
    expect(sim.requests).toHaveLength(0)
  })

  test('a stream that breaks: Claude Code asks again without streaming, and a long answer arrives though it outlasts first_byte_timeout_ms', {
    timeout: 60_000,
  }, async () => {
    const slowStart = { ...config('anthropic'), routing: { first_byte_timeout_ms: 500 } }
    const h = await createHarness({ config: slowStart, env: { SIM_KEY: 'sim-key' }, grantUsd: 5 })
    const { server, inbound } = serveRecording(h.app)
    cleanups.push(() => server.stop(true))
    sim.queue(
      UPSTREAM_MODEL,
      { text: 'one two three four five six', chunks: 6, fault: { kind: 'cut', afterFrames: 4 }, usage },
      // ~0.9 s of writing: as JSON its first byte would come after all of it, past the 500 ms limit.
      { text: 'The whole answer, written slowly.', chunks: 6, chunkDelayMs: 150, usage },
    )
    const { CLAUDE_CODE_DISABLE_NONSTREAMING_FALLBACK: _fallbackOn, ...withFallback } = claudeEnv()
    const run = await svc(['claude', '-p', 'say hi'], {
      home: tempHome(),
      env: { ...withFallback, SVC_URL: `http://127.0.0.1:${server.port}`, SVC_API_KEY: h.key },
    })
    showFailure('svc claude', run)
    expect(run.exitCode).toBe(0)
    expect(run.stdout).toBe('The whole answer, written slowly.\n')
    // The broken stream, then Claude Code's own resend without streaming (its max_tokens, 32,000).
    const turns = inbound.filter((r) => r.path === '/compat-a/v1/messages')
    expect(turns.map((r) => [r.status, r.body.stream, r.body.max_tokens])).toEqual([
      [200, true, 32_000],
      [200, false, 32_000],
    ])
    // svc asked the upstream for a stream both times, and gathered the second into JSON.
    expect(sim.requests.map((r) => (r.body as { stream?: boolean }).stream)).toEqual([true, true])
    const list = await json<{ items: Record<string, unknown>[] }>(h, '/v1/usage/requests')
    expect(list.items.map((r) => [r.stream, r.status])).toEqual([
      [false, 'completed'],
      [true, 'failed'],
    ])
  })

  test("settings files (the user's, a repository's) cannot send svc claude elsewhere; a --settings of the user's own applies with svc's", {
    timeout: 60_000,
  }, async () => {
    const { h, inbound, gateway } = await startSvc('anthropic')
    const home = tempHome()
    expect((await svc(['login', gateway, '--with-token'], { home, stdin: `${h.key}\n` })).exitCode).toBe(0)
    // Another server each file points at, recording what reaches it.
    const elsewhere: string[] = []
    const other = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (r) => {
        elsewhere.push(`${r.method} ${r.url} ${r.headers.get('authorization')}`)
        return Response.json({ type: 'error', error: { type: 'api_error', message: 'elsewhere' } }, { status: 500 })
      },
    })
    cleanups.push(() => other.stop(true))
    const settings = (dir: string, env: Record<string, string>) => {
      mkdirSync(join(dir, '.claude'), { recursive: true })
      writeFileSync(join(dir, '.claude', 'settings.json'), JSON.stringify({ env }))
    }
    settings(home.home, {
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${other.port}/user`,
      ANTHROPIC_MODEL: 'claude-sonnet-4-5',
      ANTHROPIC_API_KEY: 'sk-ant-users-own-key',
    })
    settings(home.work, { ANTHROPIC_BASE_URL: `http://127.0.0.1:${other.port}/repository` })
    sim.setScenario(UPSTREAM_MODEL, { text: 'Hello from the simulator', usage })
    inbound.length = 0

    const run = await svc(['claude', '-p', 'say hi'], { home, env: claudeEnv() })
    showFailure('svc claude', run)
    expect(run.exitCode).toBe(0)
    expect(run.stdout).toBe('Hello from the simulator\n')
    expect(elsewhere).toEqual([])
    expectWindowAsked(inbound)
    expect(inbound).toHaveLength(1)
    // svc's key, svc's profile, no x-api-key: the files' key and model did not apply either.
    expectClaudeCodeRequest(inbound[0]!, h.key)
    expect(`${run.stdout}${run.stderr}`).not.toContain(h.key)

    // The user's own --settings: Claude Code reads only the last one given, so svc merges it with
    // its own. Both apply: the user's output limit, svc's gateway.
    inbound.length = 0
    const mine = JSON.stringify({
      env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: '1234', ANTHROPIC_BASE_URL: 'http://127.0.0.1:9' },
    })
    const own = await svc(['claude', '--settings', mine, '-p', 'say hi'], { home, env: claudeEnv() })
    showFailure('svc claude --settings', own)
    expect(own.exitCode).toBe(0)
    expect(own.stdout).toBe('Hello from the simulator\n')
    expectWindowAsked(inbound)
    expect(inbound.map((r) => [r.path, r.body.model, r.body.max_tokens, r.headers.authorization])).toEqual([
      ['/compat-a/v1/messages', 'svc-pro', 1234, `Bearer ${h.key}`],
    ])
    expect(elsewhere).toEqual([])
  })

  // Claude Code's own prompt (system prompt and tools, ~15,000 tokens) over the profile's window.
  test('a prompt no model takes: Claude Code says the prompt is too long, told by svc or knowing it', {
    timeout: 60_000,
  }, async () => {
    const { h, inbound, gateway } = await startSvc('anthropic', 8000)
    const home = tempHome()
    const env = { ...claudeEnv(), SVC_URL: gateway, SVC_API_KEY: h.key }
    // Told a window larger than the profile's (the user's own wins over svc's): it sends, and
    // svc answers Anthropic's words for it (before, "API Error: 503 no model can serve…").
    const told = await svc(['claude', '-p', 'say hi'], {
      home,
      env: { ...env, CLAUDE_CODE_MAX_CONTEXT_TOKENS: '1000000' },
    })
    expect(told.exitCode).toBe(1)
    // It read the counts in svc's message: the estimate, and the profile's window.
    expect(told.stdout).toMatch(/^Prompt is too long · the request is ~\d+ tokens \(limit 8000\)/)
    expectWindowAsked(inbound)
    expect(inbound.splice(0).map((r) => [r.path, r.status])).toEqual([['/compat-a/v1/messages', 400]])
    // Given the profile's window by `svc claude`, it knows before sending anything.
    const knowing = await svc(['claude', '-p', 'say hi'], { home, env })
    expect(knowing.exitCode).toBe(1)
    expect(knowing.stdout).toBe('Prompt is too long\n')
    expectWindowAsked(inbound)
    expect(inbound).toEqual([])
    expect(sim.requests).toHaveLength(0)
  })
})

/** Codex's own switches that keep it on loopback; the provider comes from `svc codex`'s `-c` flags. */
function writeCodexConfig(home: string) {
  const dir = join(home, '.codex')
  mkdirSync(dir)
  writeFileSync(
    join(dir, 'config.toml'),
    `approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

${codexLoopbackOnly}`,
  )
  return dir
}

describe.skipIf(!claude.ok)(`svc claude (Claude Code ${CLAUDE_VERSION}) across a fallback`, () => {
  test('a tool loop that falls back to a Chat model for a turn and comes back to Claude: every body Anthropic takes', {
    timeout: 90_000,
  }, async () => {
    // Claude first (quality 90), a Chat model behind it (70), both under svc-pro.
    const model = (
      id: string,
      provider: string,
      upstream: string,
      quality: number,
      profile: 'pro' | 'ultra_saver',
    ) => ({
      id,
      provider,
      upstream_model: upstream,
      profiles: [profile],
      quality,
      max_output_tokens: 32_000,
      context_window: CONTEXT_WINDOW,
      adaptive_thinking: true,
      input_usd_per_mtok: price.input / 1000,
      output_usd_per_mtok: price.output / 1000,
    })
    const h = await createHarness({
      env: { SIM_KEY: 'sim-key' },
      grantUsd: 5,
      config: {
        catalog: { builtin: false },
        providers: {
          a: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY', anthropic_signatures: true },
          c: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
        },
        models: [
          model('claude', 'a', 'up-claude', 90, 'pro'),
          model('chat', 'c', 'up-chat', 70, 'pro'),
          model('small', 'a', SMALL_MODEL, 80, 'ultra_saver'),
        ],
      },
    })
    const { server, inbound } = serveRecording(h.app)
    cleanups.push(() => server.stop(true))
    /** The one thinking signature an upstream issues here: Claude's, in turn 1. */
    const claudeSignature = 'EqQBClaudeTurnOne'
    const bash = (marker: string) => ({ name: 'Bash', arguments: { command: `echo ${marker}`, description: 'Print' } })
    // Turn 1: Claude thinks and calls Bash. Turn 2: Claude is overloaded (529), the Chat model
    // reasons and calls Bash. Turn 3: the session sticks to the Chat model, which fails (500), and
    // Claude answers a conversation whose last tool call another provider made.
    sim.queue(
      'up-claude',
      { thinking: 'Run the first command.', signature: claudeSignature, toolCall: bash('one'), usage },
      { fault: { kind: 'status', status: 529 } },
      { text: 'Both commands ran.', usage },
    )
    sim.queue(
      'up-chat',
      { thinking: 'Now the second one.', toolCall: bash('two'), usage },
      { fault: { kind: 'status', status: 500 } },
    )
    const run = await svc(['claude', '--allowedTools', 'Bash', '-p', 'run echo one, then echo two'], {
      home: tempHome(),
      env: { ...claudeEnv(), SVC_URL: `http://127.0.0.1:${server.port}`, SVC_API_KEY: h.key },
    })
    showFailure('svc claude', run)
    expect(run.exitCode).toBe(0)
    expect(run.stdout).toBe('Both commands ran.\n')

    const models = sim.requests.map((r) => (r.body as { model: string }).model)
    expect(models).toEqual(['up-claude', 'up-claude', 'up-chat', 'up-chat', 'up-claude'])
    // Claude Code sent back both thinking blocks it was shown, Claude's signed and the Chat
    // model's with none; Claude got only its own (Anthropic refuses another's). Its adaptive
    // thinking stays on, though the loop's last turn (the Chat model's) now opens without thinking,
    // as Claude's own do when it calls a tool without thinking first, and with it Claude Code's
    // clear_thinking edit: a thinking setting changed for one turn would cost the conversation its
    // cache (thinking-signature.ts).
    const thinkingIn = (body: Record<string, unknown>) =>
      (body.messages as { role: string; content: unknown }[]).flatMap((m) =>
        m.role === 'assistant' && Array.isArray(m.content)
          ? (m.content as { type: string; signature?: string }[]).filter((b) => b.type === 'thinking')
          : [],
      )
    expect(thinkingIn(inbound.at(-1)!.body).map((b) => b.signature)).toEqual([claudeSignature, ''])
    const last = sim.requests[4]!.body as Record<string, unknown>
    expect(thinkingIn(last).map((b) => b.signature)).toEqual([claudeSignature])
    const sent = inbound.at(-1)!.body as Record<string, unknown>
    expect(sent.thinking).toMatchObject({ type: 'adaptive' })
    expect(last.thinking).toEqual(sent.thinking)
    expect(sent.context_management).toEqual({ edits: [expect.objectContaining({ type: 'clear_thinking_20251015' })] })
    // Otherwise Claude Code's body as it sent it (its `role: "system"` turn included).
    expect(last.messages).not.toEqual(sent.messages)
    const received: Record<string, unknown> = { ...last, messages: sent.messages }
    expect(received).toEqual({ ...sent, model: 'up-claude' })

    // Three requests, the two fallbacks' failed legs recorded, charged only what served.
    const sessionId = inbound.at(-1)!.headers['x-claude-code-session-id']!
    const list = await json<{ items: { request_id: string; attempts: number; status: string }[] }>(
      h,
      `/v1/usage/requests?session_id=${encodeURIComponent(sessionId)}`,
    )
    expect(list.items.map((r) => [r.status, r.attempts]).reverse()).toEqual([
      ['completed', 1],
      ['completed', 2],
      ['completed', 2],
    ])
  })
})

describe.skipIf(!codex.ok)(`svc codex (Codex ${CODEX_VERSION})`, () => {
  test('svc codex exec answers; one ledger row under its session, source codex', { timeout: 60_000 }, async () => {
    const { h, inbound, gateway } = await startSvc('anthropic')
    const home = tempHome()
    const login = await svc(['login', gateway, '--with-token'], { home, stdin: `${h.key}\n` })
    expect(login.exitCode).toBe(0)
    inbound.length = 0
    const codexHome = writeCodexConfig(home.home)

    sim.setScenario(UPSTREAM_MODEL, { text: 'Hello from the simulator', usage })
    // --strict-config: Codex rejects any `-c` key it does not know, so svc's provider table is checked.
    const run = await svc(['codex', 'exec', '--skip-git-repo-check', '--strict-config', '--color', 'never', 'say hi'], {
      home,
      env: { SVC_CODEX_BIN: codex.ok ? codex.bin : 'codex', CODEX_HOME: codexHome },
    })
    showFailure('svc codex', run)
    expect(run.exitCode).toBe(0)
    expect(run.stdout).toContain('Hello from the simulator')
    expect(run.stderr).toContain('provider: svc')
    // Codex takes the profile's window for its own (it keeps 95 % of a window for the prompt).
    const rollouts = [...new Bun.Glob('sessions/**/rollout-*.jsonl').scanSync(codexHome)]
    expect(rollouts).toHaveLength(1)
    const rollout = readFileSync(join(codexHome, rollouts[0]!), 'utf8')
    const windows = new Set([...rollout.matchAll(/"model_context_window":(\d+)/g)].map((m) => Number(m[1])))
    expect([...windows]).toEqual([CONTEXT_WINDOW * 0.95])

    expectWindowAsked(inbound)
    expect(inbound).toHaveLength(1)
    const req = inbound[0]!
    expect(req).toMatchObject({ method: 'POST', path: '/compat-b/v1/responses', status: 200 })
    const sessionId = req.headers['session-id']!
    expect(sessionId).toMatch(UUID)
    expect({ ...req.headers }).toMatchObject({
      authorization: `Bearer ${h.key}`,
      'user-agent': expect.stringContaining(`codex_exec/${CODEX_VERSION}`),
      // From svc's `http_headers` in the provider table.
      'x-session-source': 'codex',
      'x-agent-id': agentId('codex'),
    })
    expect(req.body).toMatchObject({ model: 'svc-pro', stream: true })
    expect(sim.requests).toHaveLength(1)

    const list = await json<{ items: Record<string, unknown>[] }>(h, '/v1/usage/requests')
    expect(list.items).toEqual([
      expect.objectContaining({
        request_id: req.requestId,
        status: 'completed',
        surface: 'responses',
        routing_mode: 'pro',
        session_id: sessionId,
        session_source: 'codex',
        agent_id: agentId('codex'),
        total_cost_nanos: cost,
      }),
    ])
  })

  test('no credit: Codex asks once and stops, saying the quota is exceeded', { timeout: 60_000 }, async () => {
    const { h, inbound, gateway } = await startSvc('anthropic')
    await h.deps.admin.createAccount('broke')
    const { key } = await h.deps.admin.createKey({ account: 'broke' })
    const home = tempHome()
    expect((await svc(['login', gateway, '--with-token'], { home, stdin: `${key}\n` })).exitCode).toBe(0)
    inbound.length = 0
    const codexHome = writeCodexConfig(home.home)
    const run = await svc(['codex', 'exec', '--skip-git-repo-check', '--color', 'never', 'say hi'], {
      home,
      env: { SVC_CODEX_BIN: codex.ok ? codex.bin : 'codex', CODEX_HOME: codexHome },
    })
    expect(run.exitCode).not.toBe(0)
    expect(run.stderr).toContain('Quota exceeded')
    // OpenAI's own answer for no credit (429 insufficient_quota): Codex retried a 402 five times.
    const asked = inbound.filter((r) => r.path === '/compat-b/v1/responses')
    expect(asked.map((r) => r.status)).toEqual([429])
    expect(sim.requests).toHaveLength(0)
  })
})

/**
 * A fake Codex: `debug models --bundled` prints `catalog` (or fails, exit 2, when there is none);
 * anything else is a launch, whose arguments it writes to $HOME/codex-args.txt, one a line.
 */
function fakeCodex(home: string, catalog?: unknown) {
  const bin = join(home, 'fake-codex.sh')
  const debug =
    catalog === undefined
      ? 'echo "error: unrecognized subcommand debug" >&2; exit 2'
      : `cat <<'EOF'\n${JSON.stringify(catalog)}\nEOF\nexit 0`
  writeFileSync(
    bin,
    `#!/bin/sh\nif [ "$1" = debug ]; then\n[ "$*" = "debug models --bundled" ] || exit 9\n${debug}\nfi\nprintf '%s\\n' "$@" > "$HOME/codex-args.txt"\n`,
  )
  chmodSync(bin, 0o755)
  return { bin, args: () => readFileSync(join(home, 'codex-args.txt'), 'utf8').trimEnd().split('\n') }
}

/** Codex's catalog as 0.169 prints it, in brief: a lite model first, a hidden one, the full one. */
const codexModel = (slug: string, over: Record<string, unknown>) => ({
  slug,
  display_name: slug.toUpperCase(),
  description: 'Legacy coding model.',
  visibility: 'list',
  priority: 13,
  base_instructions: `You are Codex, on ${slug}.`,
  shell_type: 'unified_exec',
  apply_patch_tool_type: 'freeform',
  support_verbosity: true,
  default_verbosity: 'low',
  default_reasoning_summary: 'none',
  context_window: 272_000,
  max_context_window: 272_000,
  effective_context_window_percent: 95,
  supports_search_tool: true,
  use_responses_lite: false,
  service_tiers: [{ id: 'priority', name: 'Fast', description: '1.5x speed, increased usage' }],
  additional_speed_tiers: ['fast'],
  upgrade: { model: 'gpt-6-sol', migration_markdown: 'Meet GPT-6 Sol' },
  availability_nux: null,
  ...over,
})
const codexCatalog = {
  models: [
    codexModel('gpt-6-sol', { priority: 1, use_responses_lite: true, max_context_window: 872_000 }),
    codexModel('auto-review', { priority: 0, visibility: 'hide' }),
    codexModel('gpt-5.5', {}),
  ],
}

describe(`svc codex: the profile's model catalog, from the installed Codex's own (a fake Codex)`, () => {
  test("the entry of Codex's first full-Responses model under the profile's name, in svc's config directory", {
    timeout: 30_000,
  }, async () => {
    const { h, inbound, gateway } = await startSvc('anthropic')
    const home = tempHome()
    const codex = fakeCodex(home.home, codexCatalog)
    const run = await svc(['codex', 'exec', 'hi', '-c', 'model_verbosity="high"'], {
      home,
      env: { SVC_CODEX_BIN: codex.bin, SVC_URL: gateway, SVC_API_KEY: h.key },
    })
    showFailure('svc codex', run)
    expect(run.exitCode).toBe(0)
    // Nothing said: the catalog is no news to the user.
    expect(run.stderr).toBe('')
    expectWindowAsked(inbound)

    const path = join(home.home, '.config', 'svc', 'codex', 'svc-pro.models.json')
    const args = codex.args()
    // svc's overrides first, the catalog and the window among them; the user's own after, to win.
    expect(args.slice(2)).toEqual([
      '-c',
      'model_provider="svc"',
      '-c',
      'model="svc-pro"',
      '-c',
      `model_catalog_json=${JSON.stringify(path)}`,
      '-c',
      `model_context_window=${CONTEXT_WINDOW}`,
      'exec',
      'hi',
      '-c',
      'model_verbosity="high"',
    ])
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const { models } = JSON.parse(readFileSync(path, 'utf8')) as { models: Record<string, unknown>[] }
    expect(models).toHaveLength(1)
    const base = codexCatalog.models[2]!
    expect(models[0]).toEqual({
      ...base,
      slug: 'svc-pro',
      display_name: 'svc-pro',
      description: 'svc routing profile svc-pro: the gateway picks a model for each request',
      // What only OpenAI's own service does, off.
      prefer_websockets: false,
      use_responses_lite: false,
      supports_search_tool: false,
      service_tiers: [],
      additional_speed_tiers: [],
      upgrade: null,
      availability_nux: null,
      default_reasoning_summary: 'auto',
      // The profile's window, as `model_context_window` says, and compaction before svc would
      // turn the prompt away (codex-catalog.ts, compactionLimit).
      context_window: CONTEXT_WINDOW,
      max_context_window: CONTEXT_WINDOW,
      auto_compact_token_limit: compactionLimit(CONTEXT_WINDOW),
    })
    expect(models[0]!.base_instructions).toBe('You are Codex, on gpt-5.5.')

    // Another profile, another file; the gateway knows no window for svc-max here: the base's stands.
    inbound.length = 0
    const max = await svc(['codex', '--profile', 'max', 'exec', 'hi'], {
      home,
      env: { SVC_CODEX_BIN: codex.bin, SVC_URL: gateway, SVC_API_KEY: h.key },
    })
    expect(max.exitCode).toBe(0)
    const maxPath = join(home.home, '.config', 'svc', 'codex', 'svc-max.models.json')
    expect(codex.args()).toContain(`model_catalog_json=${JSON.stringify(maxPath)}`)
    expect(codex.args().some((a) => a.startsWith('model_context_window='))).toBe(false)
    const [maxEntry] = (JSON.parse(readFileSync(maxPath, 'utf8')) as { models: Record<string, unknown>[] }).models
    expect(maxEntry).toMatchObject({ slug: 'svc-max', context_window: 272_000, max_context_window: 272_000 })
    expect(existsSync(path)).toBe(true)
  })

  test('a Codex that cannot print its catalog (older, or failing) still launches, without one, and nothing is said', {
    timeout: 30_000,
  }, async () => {
    const { h, inbound, gateway } = await startSvc('anthropic')
    const home = tempHome()
    const codex = fakeCodex(home.home)
    const env = { SVC_CODEX_BIN: codex.bin, SVC_URL: gateway, SVC_API_KEY: h.key }
    const run = await svc(['codex', 'exec', 'hi'], { home, env })
    expect(run.exitCode).toBe(0)
    expect(run.stderr).toBe('')
    expectWindowAsked(inbound)
    expect(codex.args().slice(2)).toEqual([
      '-c',
      'model_provider="svc"',
      '-c',
      'model="svc-pro"',
      '-c',
      `model_context_window=${CONTEXT_WINDOW}`,
      'exec',
      'hi',
    ])
    expect(existsSync(join(home.home, '.config', 'svc', 'codex'))).toBe(false)
    // At debug level, why.
    const debug = await svc(['codex', 'exec', 'hi'], { home, env: { ...env, SVC_LOG_LEVEL: 'debug' } })
    expect(debug.exitCode).toBe(0)
    expect(debug.stderr).toBe(
      `svc: Codex starts without a model catalog: \`${codex.bin} debug models --bundled\` gave no catalog\n`,
    )
  })
})
