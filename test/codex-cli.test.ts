// The real Codex CLI against svc on a loopback port, with the simulator behind svc: what Codex
// sends, that it prints the simulated answer, runs a shell tool call and sends its output back,
// and that every turn lands in the ledger under Codex's session id.
//
// Codex is configured as a custom provider in a throwaway HOME/CODEX_HOME; nothing of the user's
// own configuration is read or written. Analytics, feedback, update checks and plugin sync are
// switched off: with those off, Codex opens no connection beyond 127.0.0.1 (checked under strace).
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { codexLaunch } from '../src/cli/agents'
import type { ConfigFile } from '../src/config/schema'
import { codexLoopbackOnly, ensureNpmAgent, type Inbound, runBounded, serveRecording } from './support/agents'
import { createHarness, type Harness } from './support/harness'
import { type Simulator, startSimulator } from './support/simulator'

const CODEX_VERSION = '0.171.0'
const codex = await ensureNpmAgent({ pkg: '@openai/codex', version: CODEX_VERSION, bin: 'codex', timeoutMs: 60_000 })
if (!codex.ok) console.warn(`codex-cli.test.ts skipped: ${codex.skip}`)

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const UPSTREAM_MODEL = 'up-model'
/** Nanos per token for the one model under svc-pro. */
const price = { input: 1000, output: 2000, cacheRead: 100, cacheWrite: 1250 }
const usage = { input: 50, cacheRead: 20, output: 5 }
const cost = usage.input * price.input + usage.cacheRead * price.cacheRead + usage.output * price.output

type Kind = 'openai-responses' | 'anthropic' | 'openai-chat'

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

/**
 * `contextWindow`: the one model's, when a test needs Codex's prompt not to fit it. `openaiItself`:
 * false plays a Responses-compatible server (vLLM, llama.cpp), which svc translates for.
 */
function config(kind: Kind, contextWindow?: number, openaiItself = true): ConfigFile {
  return {
    catalog: { builtin: false },
    providers: {
      up: {
        kind,
        base_url: kind === 'anthropic' ? sim.url : `${sim.url}/v1`,
        api_key_env: 'SIM_KEY',
        // The simulator plays OpenAI itself, which takes Codex's body as it comes.
        ...(kind === 'openai-responses' ? { openai_itself: openaiItself } : {}),
      },
    },
    models: [
      {
        id: 'm1',
        provider: 'up',
        upstream_model: UPSTREAM_MODEL,
        profiles: ['pro'],
        quality: 80,
        max_output_tokens: 32_000,
        ...(contextWindow === undefined ? {} : { context_window: contextWindow }),
        input_usd_per_mtok: price.input / 1000,
        output_usd_per_mtok: price.output / 1000,
        cache_read_usd_per_mtok: price.cacheRead / 1000,
        cache_write_usd_per_mtok: price.cacheWrite / 1000,
      },
    ],
  }
}

/** svc on a real loopback port, recording what arrives at its edge (Codex's own bytes). */
async function startSvc(kind: Kind, contextWindow?: number, openaiItself = true) {
  const h = await createHarness({
    config: config(kind, contextWindow, openaiItself),
    env: { SIM_KEY: 'sim-key' },
    grantUsd: 5,
  })
  const { server, inbound } = serveRecording(h.app)
  return { h, inbound, server, port: server.port! }
}

/** `settings`: config.toml lines of the test's own (Codex's `web_search` mode, say). */
function codexHome(port: number, settings = '') {
  const home = mkdtempSync(join(tmpdir(), 'svc-codex-home-'))
  const dir = join(home, '.codex')
  const work = join(home, 'work')
  mkdirSync(dir)
  mkdirSync(work)
  writeFileSync(
    join(dir, 'config.toml'),
    `model = "svc-pro"
model_provider = "svc"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false
${settings}

[model_providers.svc]
name = "svc"
base_url = "http://127.0.0.1:${port}/compat-b/v1"
env_key = "SVC_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

${codexLoopbackOnly}`,
  )
  return { home, dir, work, cleanup: () => rmSync(home, { recursive: true, force: true }) }
}

async function runCodex(port: number, key: string, args: string[], settings = '') {
  const home = codexHome(port, settings)
  try {
    const bin = codex.ok ? codex.bin : 'codex'
    const result = await runBounded(
      [bin, 'exec', '--skip-git-repo-check', '--strict-config', '--color', 'never', ...args],
      {
        cwd: home.work,
        timeoutMs: 12_000,
        // Only what Codex needs: no proxies, no real HOME, no keys but svc's.
        env: {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          HOME: home.home,
          CODEX_HOME: home.dir,
          SVC_API_KEY: key,
          LANG: 'C.UTF-8',
          TERM: 'dumb',
          NO_COLOR: '1',
        },
      },
    )
    if (result.exitCode !== 0) console.error(`codex exec failed:\n${result.stderr}\n${result.stdout}`)
    return result
  } finally {
    home.cleanup()
  }
}

/**
 * `codex exec ARGS…` as `svc codex` launches it (its `-c` overrides, its catalog of the profile
 * made from this Codex's own), in the same throwaway home as runCodex. The launcher's one request,
 * for the profile's window, is svc's first inbound.
 */
async function runLaunched(port: number, key: string, args: string[], settings = '') {
  const home = codexHome(port, settings)
  try {
    const env = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home.home,
      CODEX_HOME: home.dir,
      SVC_URL: `http://127.0.0.1:${port}`,
      SVC_API_KEY: key,
      SVC_CODEX_BIN: codex.ok ? codex.bin : 'codex',
      LANG: 'C.UTF-8',
      TERM: 'dumb',
      NO_COLOR: '1',
    }
    const err: string[] = []
    const io = { env: { ...env }, cwd: home.work, out: () => {}, err: (t: string) => err.push(t) }
    const launch = await codexLaunch(io, [
      'exec',
      '--skip-git-repo-check',
      '--strict-config',
      '--color',
      'never',
      ...args,
    ])
    // Nothing said at launch: a catalog made or not is no news to the user.
    expect(err).toEqual([])
    const launchEnv = Object.fromEntries(
      Object.entries(launch.env).filter((e): e is [string, string] => e[1] !== undefined),
    )
    const result = await runBounded([launch.command, ...launch.args], {
      cwd: home.work,
      timeoutMs: 12_000,
      env: launchEnv,
    })
    if (result.exitCode !== 0) console.error(`codex exec failed:\n${result.stderr}\n${result.stdout}`)
    return { ...result, args: launch.args }
  } finally {
    home.cleanup()
  }
}

async function json<T = Record<string, unknown>>(h: Harness, path: string): Promise<T> {
  const res = await h.call(path)
  expect(res.status).toBe(200)
  return res.json() as Promise<T>
}

/** What Codex 0.171 sends on every turn, whatever the upstream behind svc. */
function expectCodexRequest(req: Inbound, key: string) {
  expect(req.method).toBe('POST')
  expect(req.path).toBe('/compat-b/v1/responses')
  expect(req.status).toBe(200)
  expect(req.requestId).toMatch(ULID)
  const sessionId = req.headers['session-id']!
  expect(sessionId).toMatch(UUID)
  expect(req.headers).toMatchObject({
    authorization: `Bearer ${key}`,
    accept: 'text/event-stream',
    'content-type': 'application/json',
    originator: 'codex_exec',
    'thread-id': sessionId,
    'user-agent': expect.stringContaining(`codex_exec/${CODEX_VERSION}`),
  })
  // Codex names the session in a hyphenated header, not `session_id`.
  expect(req.headers['session_id']).toBeUndefined()
  const body = req.body
  expect(body).toMatchObject({
    model: 'svc-pro',
    stream: true,
    store: false,
    include: ['reasoning.encrypted_content'],
    reasoning: { summary: 'auto' },
    tool_choice: 'auto',
    parallel_tool_calls: true,
    prompt_cache_key: sessionId,
    client_metadata: expect.objectContaining({ session_id: sessionId, thread_id: sessionId }),
  })
  // The system prompt travels as developer messages in input, not in `instructions`.
  expect(body.instructions).toBeUndefined()
  expect(body.max_output_tokens).toBeUndefined()
  const input = body.input as { type: string; role?: string }[]
  expect(input[0]).toMatchObject({ type: 'message', role: 'developer' })
  const tools = body.tools as { type: string; name?: string; parameters?: { required?: string[] } }[]
  const shell = tools.find((t) => t.name === 'exec_command')
  expect(shell).toMatchObject({ type: 'function', strict: false, parameters: { type: 'object', required: ['cmd'] } })
  // Besides function tools Codex sends a tool namespace and the hosted web_search tool.
  expect(tools.map((t) => t.type)).toEqual(expect.arrayContaining(['function', 'namespace', 'web_search']))
  return { sessionId, body }
}

describe.skipIf(!codex.ok).each(['openai-responses', 'anthropic', 'openai-chat'] as const)(
  'codex exec through svc (%s upstream)',
  (kind) => {
    test('says hi: prints the simulated text; one ledger row under its session', { timeout: 30_000 }, async () => {
      const svc = await startSvc(kind)
      try {
        sim.setScenario(UPSTREAM_MODEL, { text: 'Hello from the simulator', usage })
        const run = await runCodex(svc.port, svc.h.key, ['say hi'])
        expect(run.timedOut).toBe(false)
        expect(run.exitCode).toBe(0)
        expect(run.stdout).toContain('Hello from the simulator')

        expect(svc.inbound).toHaveLength(1)
        const req = svc.inbound[0]!
        const { sessionId, body } = expectCodexRequest(req, svc.h.key)
        const input = body.input as { role?: string; content?: { text?: string }[] }[]
        expect(input.at(-1)).toMatchObject({ role: 'user', content: [{ type: 'input_text', text: 'say hi' }] })

        expect(sim.requests).toHaveLength(1)
        const upstream = sim.requests[0]!
        if (kind === 'openai-responses') {
          // Pass-through: Codex's body as sent, with the upstream model and the model's output limit.
          expect(upstream.path).toBe('/v1/responses')
          expect(upstream.body).toEqual({ ...body, model: UPSTREAM_MODEL, max_output_tokens: 32_000 })
        } else if (kind === 'openai-chat') {
          // Codex's instructions as the system message, its tools as functions (the namespaced
          // ones under joined names), the user's words last.
          expect(upstream.path).toBe('/v1/chat/completions')
          const chat = upstream.body as {
            model: string
            stream: boolean
            messages: { role: string; content: unknown }[]
            tools: { type: string; function: { name: string } }[]
          }
          expect(chat).toMatchObject({ model: UPSTREAM_MODEL, stream: true })
          expect(chat.messages[0]!.role).toBe('system')
          expect(chat.messages.at(-1)).toMatchObject({ role: 'user' })
          expect(JSON.stringify(chat.messages.at(-1)!.content)).toContain('say hi')
          expect(chat.tools.map((t) => t.function.name)).toEqual(
            expect.arrayContaining(['exec_command', 'multi_agent_v1__spawn_agent']),
          )
        } else {
          expect(upstream.path).toBe('/v1/messages')
          const anthropic = upstream.body as {
            model: string
            max_tokens: number
            stream: boolean
            system: { type: string; text: string }[]
            tools: { name: string; input_schema: unknown }[]
            messages: { role: string; content: { type: string; text?: string }[] }[]
          }
          expect(anthropic).toMatchObject({
            model: UPSTREAM_MODEL,
            max_tokens: 32_000,
            stream: true,
            tool_choice: { type: 'auto' },
          })
          // Developer messages become the system prompt; function tools, namespaced ones included,
          // survive translation; Codex's default web search, of OpenAI's cached pages only, does not.
          expect(anthropic.system[0]!.text).toStartWith('You are a coding agent running in the Codex CLI')
          expect(anthropic.tools.map((t) => t.name)).toContain('exec_command')
          expect(anthropic.tools.map((t) => t.name)).not.toContain('web_search')
          expect(anthropic.messages.at(-1)!.content.at(-1)).toEqual({ type: 'text', text: 'say hi' })
        }

        const list = await json<{ items: Record<string, unknown>[] }>(svc.h, '/v1/usage/requests')
        expect(list.items).toHaveLength(1)
        expect(list.items[0]).toMatchObject({
          request_id: req.requestId,
          status: 'completed',
          http_status: 200,
          surface: 'responses',
          routing_mode: 'pro',
          stream: true,
          selected_model_id: 'm1',
          session_id: sessionId,
          session_source: 'codex',
          total_input_tokens: usage.input,
          total_cached_input_tokens: usage.cacheRead,
          total_output_tokens: usage.output,
          total_cost_nanos: cost,
          charged_nanos: cost,
        })
      } finally {
        await svc.server.stop(true)
      }
    })

    test('runs a shell tool call and sends its output back', { timeout: 30_000 }, async () => {
      const svc = await startSvc(kind)
      try {
        sim.queue(
          UPSTREAM_MODEL,
          { toolCall: { name: 'exec_command', arguments: { cmd: 'echo svc-tool-ok' } }, usage },
          { text: 'The command printed svc-tool-ok.', usage },
        )
        const run = await runCodex(svc.port, svc.h.key, ['--json', 'run echo svc-tool-ok'])
        expect(run.timedOut).toBe(false)
        expect(run.exitCode).toBe(0)
        const events = run.stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { type: string; item?: Record<string, unknown> })
        const completed = events.filter((e) => e.type === 'item.completed').map((e) => e.item!)
        expect(completed).toContainEqual(
          expect.objectContaining({
            type: 'command_execution',
            aggregated_output: 'svc-tool-ok\n',
            exit_code: 0,
            status: 'completed',
          }),
        )
        expect(completed).toContainEqual(
          expect.objectContaining({ type: 'agent_message', text: 'The command printed svc-tool-ok.' }),
        )
        expect(events.at(-1)).toMatchObject({ type: 'turn.completed' })

        // Two turns on the wire: the call, then its output.
        expect(svc.inbound).toHaveLength(2)
        const first = expectCodexRequest(svc.inbound[0]!, svc.h.key)
        const second = expectCodexRequest(svc.inbound[1]!, svc.h.key)
        expect(second.sessionId).toBe(first.sessionId)
        const items = second.body.input as {
          type: string
          call_id?: string
          name?: string
          arguments?: string
          output?: unknown
        }[]
        const call = items.find((i) => i.type === 'function_call')!
        expect(call).toMatchObject({ name: 'exec_command', arguments: '{"cmd":"echo svc-tool-ok"}' })
        expect(call.call_id).toMatch(kind === 'anthropic' ? /^toolu_sim/ : /^call_sim/)
        const output = items.find((i) => i.type === 'function_call_output')!
        expect(output.call_id).toBe(call.call_id!)
        expect(JSON.stringify(output.output)).toContain('svc-tool-ok')

        expect(sim.requests).toHaveLength(2)
        if (kind === 'anthropic') {
          const messages = (
            sim.requests[1]!.body as { messages: { role: string; content: Record<string, unknown>[] }[] }
          ).messages
          expect(messages.at(-2)).toEqual({
            role: 'assistant',
            content: [{ type: 'tool_use', id: call.call_id, name: 'exec_command', input: { cmd: 'echo svc-tool-ok' } }],
          })
          const result = messages.at(-1)!
          expect(result.role).toBe('user')
          expect(result.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: call.call_id })
          expect(JSON.stringify(result.content[0])).toContain('svc-tool-ok')
        } else if (kind === 'openai-chat') {
          const messages = (sim.requests[1]!.body as { messages: Record<string, unknown>[] }).messages
          expect(messages.at(-2)).toMatchObject({
            role: 'assistant',
            tool_calls: [
              {
                id: call.call_id,
                type: 'function',
                function: { name: 'exec_command', arguments: '{"cmd":"echo svc-tool-ok"}' },
              },
            ],
          })
          expect(messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: call.call_id })
          expect(JSON.stringify(messages.at(-1)!.content)).toContain('svc-tool-ok')
        } else {
          expect(sim.requests[1]!.body).toEqual({ ...second.body, model: UPSTREAM_MODEL, max_output_tokens: 32_000 })
        }

        const list = await json<{ items: Record<string, unknown>[] }>(
          svc.h,
          `/v1/usage/requests?session_id=${encodeURIComponent(first.sessionId)}`,
        )
        expect(list.items.map((r) => r.request_id).sort()).toEqual(svc.inbound.map((r) => r.requestId).sort())
        for (const row of list.items) {
          expect(row).toMatchObject({
            status: 'completed',
            surface: 'responses',
            routing_mode: 'pro',
            session_source: 'codex',
            total_cost_nanos: cost,
          })
        }
        const sessions = await json<{ items: Record<string, unknown>[] }>(
          svc.h,
          `/v1/usage/sessions?ids=${first.sessionId}`,
        )
        expect(sessions.items).toEqual([
          expect.objectContaining({
            session_id: first.sessionId,
            session_source: 'codex',
            request_count: 2,
            total_cost_nanos: 2 * cost,
          }),
        ])
      } finally {
        await svc.server.stop(true)
      }
    })
  },
)

// OpenAI's models take tool namespaces; Anthropic's are offered each namespaced tool by a
// qualified name, and Codex must get the call back under the namespace to run it.
describe.skipIf(!codex.ok)('codex exec through svc (anthropic upstream): a namespaced tool', () => {
  test('runs a call to a namespaced tool (its sub-agent tools) made by a Claude model', {
    timeout: 30_000,
  }, async () => {
    const svc = await startSvc('anthropic')
    try {
      sim.queue(
        UPSTREAM_MODEL,
        { toolCall: { name: 'multi_agent_v1__close_agent', arguments: { target: 'no-such-agent' } }, usage },
        { text: 'There was no such agent.', usage },
      )
      const run = await runCodex(svc.port, svc.h.key, ['--json', 'close the agent no-such-agent'])
      expect(run.timedOut).toBe(false)
      expect(run.exitCode).toBe(0)
      expect(run.stdout).toContain('There was no such agent.')

      type Tools = { tools: { name: string }[] }
      expect((sim.requests[0]!.body as Tools).tools.map((t) => t.name)).toEqual(
        expect.arrayContaining(['multi_agent_v1__spawn_agent', 'multi_agent_v1__close_agent', 'exec_command']),
      )
      // Codex ran the call as its sub-agent tool (its own check of the id answered), and sent
      // it back under the namespace; before, it answered "unsupported call".
      expect(svc.inbound).toHaveLength(2)
      const items = expectCodexRequest(svc.inbound[1]!, svc.h.key).body.input as Record<string, unknown>[]
      const call = items.find((i) => i.type === 'function_call')!
      expect(call).toMatchObject({ namespace: 'multi_agent_v1', name: 'close_agent' })
      const output = items.find((i) => i.type === 'function_call_output')!
      expect(output.call_id).toBe(call.call_id)
      expect(String(output.output)).toContain('invalid agent id no-such-agent')
      // Claude sees its own call again under the name it used.
      const messages = (sim.requests[1]!.body as { messages: { content: Record<string, unknown>[] }[] }).messages
      expect(messages.at(-2)!.content).toEqual([
        expect.objectContaining({ type: 'tool_use', id: call.call_id, name: 'multi_agent_v1__close_agent' }),
      ])
    } finally {
      await svc.server.stop(true)
    }
  })
})

// Codex's live web search (`web_search = "live"`) is Anthropic's web search on a Claude model;
// its default, OpenAI's cached pages only, is not (the live web was not asked for).
describe.skipIf(!codex.ok)('codex exec through svc (anthropic upstream): live web search', () => {
  test('Claude searches with its own tool, and Codex reads the search back as its web_search_call', {
    timeout: 30_000,
  }, async () => {
    const svc = await startSvc('anthropic')
    try {
      sim.setScenario(UPSTREAM_MODEL, { text: 'Bun 1.4 is out.', usage: { ...usage, webSearches: 1 } })
      const run = await runCodex(svc.port, svc.h.key, ['--json', 'what is the latest bun?'], 'web_search = "live"')
      expect(run.timedOut).toBe(false)
      expect(run.exitCode).toBe(0)
      expect(run.stdout).toContain('Bun 1.4 is out.')
      // Codex shows the search it read back: an item of its own, with the query Claude searched for.
      const events = run.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { type: string; item?: { type: string; query?: string } })
      const searches = events.filter((e) => e.type === 'item.completed' && e.item?.type === 'web_search')
      expect(searches.map((e) => e.item!.query)).toEqual(['simulated search 1'])

      const { body } = expectCodexRequest(svc.inbound[0]!, svc.h.key)
      expect(body.tools).toEqual(expect.arrayContaining([{ type: 'web_search', external_web_access: true }]))
      const upstreamTools = (sim.requests[0]!.body as { tools: Record<string, unknown>[] }).tools
      expect(upstreamTools.filter((t) => String(t.type).startsWith('web_search'))).toEqual([
        { type: 'web_search_20250305', name: 'web_search' },
      ])
    } finally {
      await svc.server.stop(true)
    }
  })
})

// Codex's own prompt (instructions and tools, ~10,000 tokens) over the only model's window: svc
// answers OpenAI's context_length_exceeded, on which Codex ends the turn and says the context is
// full. Before, the 503 it got was retried (30 requests over 24 s with Codex's default retries).
describe.skipIf(!codex.ok)('codex exec through svc: a prompt too long for every model', () => {
  test('Codex stops at once and says its context is full; nothing goes upstream', { timeout: 30_000 }, async () => {
    const svc = await startSvc('openai-responses', 4000)
    try {
      const run = await runCodex(svc.port, svc.h.key, ['say hi'])
      expect(run.timedOut).toBe(false)
      expect(run.exitCode).not.toBe(0)
      expect(run.stdout + run.stderr).toContain("ran out of room in the model's context window")
      expect(svc.inbound).toHaveLength(1)
      expect(svc.inbound[0]!.status).toBe(400)
      expect(sim.requests).toHaveLength(0)
      const list = await json<{ items: Record<string, unknown>[] }>(svc.h, '/v1/usage/requests')
      expect(list.items).toEqual([expect.objectContaining({ status: 'failed', http_status: 400 })])
    } finally {
      await svc.server.stop(true)
    }
  })
})

// Codex compacts a long conversation by sending it with `tools: []` and a request for a summary.
// Anthropic refuses tool history in a request that defines no tools, so the Claude model behind
// svc gets the tools the history called defined again, bare, with a tool choice of none. Codex
// configured by hand and Codex as `svc codex` starts it (with the profile's catalog entry) alike:
// through /responses, no OpenAI-only compaction call.
describe.skipIf(!codex.ok).each([
  ['configured by hand', runCodex, 0],
  ["launched by svc codex, with the profile's catalog", runLaunched, 1],
] as const)('codex exec through svc (anthropic upstream): compaction, %s', (_how, run, windowAsks) => {
  test('Codex compacts mid-turn; Claude is asked for the summary in a request Anthropic takes', {
    timeout: 30_000,
  }, async () => {
    const svc = await startSvc('anthropic')
    try {
      // Usage past the auto-compact limit below, so that Codex compacts after the tool's output.
      const big = { ...usage, input: 9000 }
      sim.queue(
        UPSTREAM_MODEL,
        { toolCall: { name: 'exec_command', arguments: { cmd: 'echo svc-tool-ok' } }, usage: big },
        { text: 'Summary: echo ran and printed svc-tool-ok.', usage },
        { text: 'The command printed svc-tool-ok.', usage },
      )
      const result = await run(svc.port, svc.h.key, ['run echo svc-tool-ok'], 'model_auto_compact_token_limit = 5000')
      expect(result.timedOut).toBe(false)
      expect(result.exitCode).toBe(0)
      expect(result.stdout + result.stderr).toContain('context compacted')
      expect(result.stdout).toContain('The command printed svc-tool-ok.')

      // What Codex sent (after the launcher's one ask for the window): three turns, the summary's
      // with its history and no tools.
      const turns = svc.inbound.slice(windowAsks)
      expect(turns.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual(
        Array(3).fill('POST /compat-b/v1/responses 200'),
      )
      expect(turns[1]!.body.tools).toEqual([])
      expect(sim.requests).toHaveLength(3)
      const compaction = sim.requests[1]!.body as { tools: unknown[]; tool_choice: unknown; messages: unknown[] }
      expect(JSON.stringify(compaction.messages)).toContain('"type":"tool_use"')
      expect(compaction.tools).toEqual([
        {
          name: 'exec_command',
          description: 'Called earlier in this conversation; not offered now.',
          input_schema: { type: 'object' },
        },
      ])
      expect(compaction.tool_choice).toEqual({ type: 'none' })
    } finally {
      await svc.server.stop(true)
    }
  })
})

// svc gives a request without an output limit (Codex's) 8,192 tokens of room beside its prompt:
// on a 40K window it refused a prompt past ~31.8K, while Codex, told the window alone, compacted
// only at 90 % of it (36K): "ran out of room", the turn lost. The launcher's catalog entry says
// where to compact (codex-catalog.ts, compactionLimit: 29,808 on 40K).
describe.skipIf(!codex.ok)('svc codex on a small window (anthropic upstream)', () => {
  test('Codex compacts before svc would turn its prompt away', { timeout: 30_000 }, async () => {
    const svc = await startSvc('anthropic', 40_000)
    try {
      // Past the launcher's threshold, short of Codex's own 90 %.
      const near = { ...usage, input: 31_000 }
      sim.queue(
        UPSTREAM_MODEL,
        { toolCall: { name: 'exec_command', arguments: { cmd: 'echo svc-tool-ok' } }, usage: near },
        { text: 'Summary: echo ran and printed svc-tool-ok.', usage },
        { text: 'The command printed svc-tool-ok.', usage },
      )
      const result = await runLaunched(svc.port, svc.h.key, ['run echo svc-tool-ok'])
      expect(result.exitCode).toBe(0)
      expect(result.stdout + result.stderr).toContain('context compacted')
      expect(result.stdout).toContain('The command printed svc-tool-ok.')
    } finally {
      await svc.server.stop(true)
    }
  })
})

// Claude thinks before a tool call; Codex keeps the thinking as a reasoning item whose
// encrypted_content is svc's blob of the signed block, and sends it back with the tool's output.
// Anthropic requires a tool loop's last assistant turn, with thinking on, to open with that very
// block, signature and all; so the second request to Claude must carry it as Claude made it.
describe.skipIf(!codex.ok)('codex exec through svc (anthropic upstream): thinking in a tool loop', () => {
  test('the signed thinking block goes back to Claude with the tool result', { timeout: 30_000 }, async () => {
    const svc = await startSvc('anthropic')
    try {
      sim.queue(
        UPSTREAM_MODEL,
        {
          thinking: 'The user wants a command run; exec_command does that.',
          toolCall: { name: 'exec_command', arguments: { cmd: 'echo svc-tool-ok' } },
          usage,
        },
        { text: 'The command printed svc-tool-ok.', usage },
      )
      const run = await runCodex(svc.port, svc.h.key, ['-c', 'model_reasoning_effort="high"', 'run echo svc-tool-ok'])
      expect(run.timedOut).toBe(false)
      expect(run.exitCode).toBe(0)
      expect(run.stdout).toContain('The command printed svc-tool-ok.')

      expect(sim.requests).toHaveLength(2)
      type Block = { type: string; thinking?: string; signature?: string }
      const second = sim.requests[1]!.body as { messages: { role: string; content: Block[] }[]; thinking?: unknown }
      expect(second.thinking).toBeDefined()
      const loop = second.messages.at(-2)!
      expect(loop.role).toBe('assistant')
      expect(loop.content.map((b) => b.type)).toEqual(['thinking', 'tool_use'])
      expect(loop.content[0]!.thinking).toBe('The user wants a command run; exec_command does that.')
      // The simulator signs a block with its token count: the one it made, come back whole.
      expect(Buffer.from(loop.content[0]!.signature!, 'base64').toString()).toMatch(/^sim-signature:\d+$/)
    } finally {
      await svc.server.stop(true)
    }
  })
})

// `svc codex` gives Codex a catalog entry for the profile, made at launch from the installed
// Codex's own catalog (`codex debug models`). Without it Codex has no metadata for `svc-pro`: an
// error item on every run ("Model metadata for `svc-pro` not found"), no apply_patch tool, and
// `model_verbosity` ignored ("set but ignored").
describe.skipIf(!codex.ok).each(['openai-responses', 'anthropic', 'openai-chat'] as const)(
  'svc codex: Codex knows the profile from its catalog (%s upstream)',
  (kind) => {
    test('no error item; the upstream is offered apply_patch, and the verbosity asked for', {
      timeout: 30_000,
    }, async () => {
      const svc = await startSvc(kind)
      try {
        sim.setScenario(UPSTREAM_MODEL, { text: 'Hello from the simulator', usage })
        const run = await runLaunched(svc.port, svc.h.key, ['--json', 'say hi'], 'model_verbosity = "high"')
        expect(run.timedOut).toBe(false)
        expect(run.exitCode).toBe(0)
        const events = run.stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as { type: string; item?: { type: string; text?: string; message?: string } })
        expect(events.filter((e) => e.item?.type === 'error')).toEqual([])
        expect(events).toContainEqual({
          type: 'item.completed',
          item: expect.objectContaining({ type: 'agent_message', text: 'Hello from the simulator' }),
        })
        expect(run.stderr).not.toContain('model_verbosity is set but ignored')
        expect(run.args.filter((a) => a.startsWith('model_catalog_json='))).toHaveLength(1)

        // The launcher's request for the window, then Codex's one turn, as the profile.
        expect(svc.inbound.map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
          'GET /compat-a/v1/models/svc-pro 200',
          'POST /compat-b/v1/responses 200',
        ])
        const body = svc.inbound[1]!.body
        expect(body.model).toBe('svc-pro')
        const tools = body.tools as { type: string; name?: string }[]
        expect(tools).toContainEqual(expect.objectContaining({ type: 'custom', name: 'apply_patch' }))
        expect(body.text).toMatchObject({ verbosity: 'high' })
        // Summaries asked for, as without the catalog (the base model's default may be none).
        expect(body.reasoning).toMatchObject({ summary: 'auto' })

        expect(sim.requests).toHaveLength(1)
        const upstream = sim.requests[0]!.body as Record<string, unknown>
        if (kind === 'openai-responses') {
          // Pass-through: the custom tool as Codex offered it, and the verbosity.
          expect(upstream.tools).toContainEqual(expect.objectContaining({ type: 'custom', name: 'apply_patch' }))
          expect(upstream.text).toMatchObject({ verbosity: 'high' })
        } else if (kind === 'openai-chat') {
          // A custom tool as a function of its one text argument (client-tools.ts).
          const names = (upstream.tools as { function: { name: string } }[]).map((t) => t.function.name)
          expect(names).toContain('apply_patch')
        } else {
          const names = (upstream.tools as { name: string }[]).map((t) => t.name)
          expect(names).toContain('apply_patch')
        }
      } finally {
        await svc.server.stop(true)
      }
    })
  },
)

// A Responses-compatible server (vLLM, llama.cpp, Ollama) takes function tools only: svc translates
// Codex's request for it, as for an Anthropic or a Chat model, Responses to Responses.
describe.skipIf(!codex.ok)('codex exec through svc (a Responses-compatible server)', () => {
  test('a shell tool call round trip: the server sees functions only, Codex runs the call', {
    timeout: 30_000,
  }, async () => {
    const svc = await startSvc('openai-responses', undefined, false)
    try {
      sim.queue(
        UPSTREAM_MODEL,
        { toolCall: { name: 'exec_command', arguments: { cmd: 'echo svc-tool-ok' } }, usage },
        { text: 'The command printed svc-tool-ok.', usage },
      )
      const run = await runCodex(svc.port, svc.h.key, ['--json', 'run echo svc-tool-ok'])
      expect(run.timedOut).toBe(false)
      expect(run.exitCode).toBe(0)
      const completed = run.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { type: string; item?: Record<string, unknown> })
        .filter((e) => e.type === 'item.completed')
        .map((e) => e.item!)
      expect(completed).toContainEqual(
        expect.objectContaining({ type: 'command_execution', aggregated_output: 'svc-tool-ok\n', exit_code: 0 }),
      )
      expect(completed).toContainEqual(
        expect.objectContaining({ type: 'agent_message', text: 'The command printed svc-tool-ok.' }),
      )

      expect(sim.requests).toHaveLength(2)
      // Codex offered a namespace, a freeform tool and OpenAI's search: the server gets functions.
      for (const { body } of sim.requests) {
        const tools = (body as { tools: { type: string }[] }).tools
        expect(new Set(tools.map((t) => t.type))).toEqual(new Set(['function']))
      }
      const input = (sim.requests[1]!.body as { input: { type: string; call_id?: string; output?: unknown }[] }).input
      const call = input.find((i) => i.type === 'function_call')!
      expect(call).toMatchObject({ name: 'exec_command', arguments: '{"cmd":"echo svc-tool-ok"}' })
      const output = input.find((i) => i.type === 'function_call_output')!
      expect(output.call_id).toBe(call.call_id!)
      expect(JSON.stringify(output.output)).toContain('svc-tool-ok')
    } finally {
      await svc.server.stop(true)
    }
  })
})
