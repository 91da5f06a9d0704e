// What is measured: two phases (an svc config each, since a profile is the only thing a client
// names), their scenarios, and for every scenario the equivalent request to the upstream
// directly, to svc and to Portkey.
import type { Dialect, HttpRequest } from './answers'

export type TargetKind = 'direct' | 'svc' | 'portkey' | 'floor'
export type Profile = 'svc-max' | 'svc-pro' | 'svc-ultra-saver'

export interface Endpoint {
  key: string
  target: TargetKind
  label: string
  /** The shape the client speaks to this target. */
  dialect: Dialect
  /** A simulator shortcut (direct, Portkey) or a routing profile (svc). */
  model: string
  /** Portkey only: the x-portkey-provider it forwards as. */
  provider?: 'anthropic' | 'openai'
}

export interface Scenario {
  id: string
  title: string
  connections: number
  stream: boolean
  /** Text deltas a streamed answer carries (the simulator's chunk count). */
  chunks?: number
  /** Size of the user message, for large prompts. */
  promptBytes?: number
  /** A coding agent's request instead (agentConversation): Anthropic dialect only. */
  agent?: boolean
  /** Multiplies the plan's measured duration (short for one connection, say). */
  durationScale?: number
  endpoints: Endpoint[]
  /** Why Portkey is not among the endpoints, when it is not. */
  portkeyNote?: string
}

export interface PhaseModel {
  profile: Profile
  provider: 'sim-a' | 'sim-c'
  upstream: string
}

export interface Phase {
  id: string
  title: string
  models: PhaseModel[]
  scenarios: Scenario[]
}

const direct = (dialect: Dialect, model: string, label = 'direct'): Endpoint => ({
  key: 'direct',
  target: 'direct',
  label,
  dialect,
  model,
})
const svc = (dialect: Dialect, model: Profile, label = 'svc'): Endpoint => ({
  key: 'svc',
  target: 'svc',
  label,
  dialect,
  model,
})
/** The bare relay (floor-relay.ts), in front of the simulator like svc and Portkey. */
const floor = (model: string): Endpoint => ({
  key: 'floor',
  target: 'floor',
  label: 'bare relay (floor)',
  dialect: 'anthropic',
  model,
})
const portkey = (dialect: Dialect, model: string, provider: 'anthropic' | 'openai', label = 'Portkey'): Endpoint => ({
  key: 'portkey',
  target: 'portkey',
  label,
  dialect,
  model,
  provider,
})

const passThrough = (
  id: string,
  title: string,
  model: string,
  profile: Profile,
  extra: Partial<Scenario>,
): Scenario => ({
  id,
  title,
  connections: 64,
  stream: false,
  endpoints: [direct('anthropic', model), svc('anthropic', profile), portkey('anthropic', model, 'anthropic')],
  ...extra,
})

/** With the bare relay too: the scenarios the absolute targets (latency, CPU) are judged on. */
const withFloor = (scenario: Scenario): Scenario => ({
  ...scenario,
  endpoints: [...scenario.endpoints, floor(scenario.endpoints[0]!.model)],
})

export interface PlanKnobs {
  /** The slow stream behind the open-streams test, e.g. sim-stream-20x250ms. */
  slowStream: string
  slowStreamChunks: number
}

export function phases(knobs: PlanKnobs): Phase[] {
  const noResponsesInPortkey =
    'Portkey 1.15.2 answers "createModelResponse is not supported by anthropic" to Responses in, Anthropic upstream'
  return [
    {
      id: 'instant',
      title: 'instant upstream (non-streaming)',
      models: [
        { profile: 'svc-max', provider: 'sim-a', upstream: 'sim-bench' },
        { profile: 'svc-pro', provider: 'sim-c', upstream: 'sim-bench' },
        { profile: 'svc-ultra-saver', provider: 'sim-a', upstream: 'sim-wait-50ms' },
      ],
      scenarios: [
        withFloor(
          passThrough(
            'nonstream-c1',
            'non-streaming, 1 connection (Anthropic in, Anthropic upstream)',
            'sim-bench',
            'svc-max',
            {
              connections: 1,
              durationScale: 0.8,
            },
          ),
        ),
        withFloor(
          passThrough(
            'nonstream-c64',
            'non-streaming, 64 connections (Anthropic pass-through)',
            'sim-bench',
            'svc-max',
            {},
          ),
        ),
        {
          id: 'nonstream-c512',
          title: 'non-streaming, 512 connections (Anthropic pass-through)',
          connections: 512,
          stream: false,
          durationScale: 0.8,
          endpoints: [direct('anthropic', 'sim-bench'), svc('anthropic', 'svc-max')],
          portkeyNote: 'left out to keep the run under 10 minutes',
        },
        passThrough(
          'wait50-c64',
          'upstream waits 50 ms, 64 connections (Anthropic pass-through)',
          'sim-wait-50ms',
          'svc-ultra-saver',
          {},
        ),
        passThrough(
          'agent-c64',
          "a coding agent's request (~84 KB: system prompt, 20 tools, a 40-turn tool loop), 64 connections (Anthropic pass-through)",
          'sim-bench',
          'svc-max',
          {
            agent: true,
          },
        ),
        passThrough(
          'body32k-c64',
          '32 KB request bodies, 64 connections (Anthropic pass-through)',
          'sim-bench',
          'svc-max',
          {
            promptBytes: 32 * 1024,
          },
        ),
        {
          id: 'chat-translated-c64',
          title: 'translated: Anthropic in, Chat upstream, 64 connections',
          connections: 64,
          stream: false,
          endpoints: [
            direct('chat', 'sim-bench', 'direct (Chat)'),
            svc('anthropic', 'svc-pro', 'svc (Anthropic → Chat)'),
            portkey('chat', 'sim-bench', 'anthropic', 'Portkey (Chat → Anthropic, its own translation)'),
          ],
          portkeyNote:
            'Portkey 1.15.2 does not translate Anthropic in to Chat ("messages is not supported by openai"); its row is its own translation, Chat in to Anthropic upstream',
        },
        {
          id: 'responses-translated-c64',
          title: 'translated: Responses in, Anthropic upstream, 64 connections',
          connections: 64,
          stream: false,
          endpoints: [
            direct('anthropic', 'sim-bench', 'direct (Anthropic)'),
            svc('responses', 'svc-max', 'svc (Responses → Anthropic)'),
          ],
          portkeyNote: noResponsesInPortkey,
        },
      ],
    },
    {
      id: 'streams',
      title: 'streaming upstream',
      models: [
        { profile: 'svc-max', provider: 'sim-a', upstream: 'sim-stream-20x5ms' },
        { profile: 'svc-pro', provider: 'sim-a', upstream: 'sim-stream-50x5ms' },
        { profile: 'svc-ultra-saver', provider: 'sim-a', upstream: knobs.slowStream },
      ],
      scenarios: [
        // With the floor too: what relaying 64 paced streams costs on this machine today.
        withFloor(
          passThrough(
            'stream20-c64',
            'streaming 20 chunks 5 ms apart, 64 connections (Anthropic pass-through)',
            'sim-stream-20x5ms',
            'svc-max',
            {
              stream: true,
              chunks: 20,
            },
          ),
        ),
        {
          id: 'stream50-c64',
          title: 'streaming 50 chunks 5 ms apart, 64 connections (Anthropic pass-through)',
          connections: 64,
          stream: true,
          chunks: 50,
          endpoints: [direct('anthropic', 'sim-stream-50x5ms'), svc('anthropic', 'svc-pro')],
          portkeyNote: 'left out to keep the run under 10 minutes (Portkey streams in the 20-chunk scenario)',
        },
        {
          id: 'stream20-responses-c64',
          title: 'streaming 20 chunks, translated: Responses in, Anthropic upstream, 64 connections',
          connections: 64,
          stream: true,
          chunks: 20,
          endpoints: [
            direct('anthropic', 'sim-stream-20x5ms', 'direct (Anthropic)'),
            svc('responses', 'svc-max', 'svc (Responses → Anthropic)'),
          ],
          portkeyNote: noResponsesInPortkey,
        },
      ],
    },
  ]
}

/** The streaming probe's endpoints (the 20-chunk stream of the streams phase). */
export const probeEndpoints: Endpoint[] = [
  direct('anthropic', 'sim-stream-20x5ms'),
  svc('anthropic', 'svc-max'),
  { ...svc('responses', 'svc-max', 'svc (Responses → Anthropic)'), key: 'svc-responses' },
  portkey('anthropic', 'sim-stream-20x5ms', 'anthropic'),
  floor('sim-stream-20x5ms'),
]

/** The open-streams test's endpoints (the slow stream of the streams phase). */
export const openStreamEndpoints = (knobs: PlanKnobs): Endpoint[] => [
  direct('anthropic', knobs.slowStream),
  svc('anthropic', 'svc-ultra-saver'),
  portkey('anthropic', knobs.slowStream, 'anthropic'),
]

export interface Urls {
  sim: string
  floor?: string
  svc?: string
  portkey?: string
  svcKey?: string
}

/** A prompt of about `bytes` bytes of ordinary words. */
export function promptOf(bytes: number | undefined): string {
  if (!bytes) return 'Hello'
  const words = 'Summarise the design notes below and list the open questions about the ledger. '
  return words.repeat(Math.ceil(bytes / words.length)).slice(0, bytes)
}

const simKey = 'sim-bench-key'

/**
 * What a coding agent such as Claude Code sends on a busy turn, in shape and size (~84 KB): a long
 * system prompt, 20 tools with JSON schemas, and 20 rounds of a tool call and its output. Parsing,
 * routing and relaying it costs what structure costs, which one long string (body32k) does not.
 */
function agentConversation(): Record<string, unknown> {
  const words = 'Use the tools to read and edit files; keep answers short and cite the paths you change. '
  const tools = Array.from({ length: 20 }, (_, i) => ({
    name: `tool_${i}`,
    description: words.repeat(6),
    input_schema: {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 8 }, (_, k) => [`arg${k}`, { type: 'string', description: `argument ${k}: ${words}` }]),
      ),
      required: ['arg0'],
      additionalProperties: false,
    },
  }))
  const messages: unknown[] = [{ role: 'user', content: 'Fix the failing test in src/app.ts.' }]
  for (let turn = 0; turn < 20; turn++) {
    messages.push({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Reading the file.' },
        { type: 'tool_use', id: `toolu_${turn}`, name: `tool_${turn}`, input: { arg0: `src/file${turn}.ts` } },
      ],
    })
    messages.push({
      role: 'user',
      content: [{ type: 'tool_result', tool_use_id: `toolu_${turn}`, content: `${words}\n`.repeat(16) }],
    })
  }
  return { system: [{ type: 'text', text: words.repeat(160), cache_control: { type: 'ephemeral' } }], tools, messages }
}

/** The HTTP request a client of `endpoint` sends for `scenario`. */
export function buildRequest(
  endpoint: Endpoint,
  scenario: { stream: boolean; promptBytes?: number; agent?: boolean },
  urls: Urls,
): HttpRequest {
  const content = promptOf(scenario.promptBytes)
  const stream = scenario.stream ? { stream: true } : {}
  if (scenario.agent && endpoint.dialect !== 'anthropic') throw new Error('the agent scenario is Anthropic-shaped')
  const body =
    endpoint.dialect === 'responses'
      ? { model: endpoint.model, input: content, max_output_tokens: 64, ...stream }
      : scenario.agent
        ? { model: endpoint.model, max_tokens: 64, ...agentConversation(), ...stream }
        : { model: endpoint.model, max_tokens: 64, messages: [{ role: 'user', content }], ...stream }
  const json = { 'content-type': 'application/json' }
  const anthropicHeaders = (key: string) => ({ ...json, 'x-api-key': key, 'anthropic-version': '2023-06-01' })
  const bearer = (key: string) => ({ ...json, authorization: `Bearer ${key}` })
  const path = { anthropic: '/v1/messages', chat: '/v1/chat/completions', responses: '/v1/responses' }[endpoint.dialect]

  if (endpoint.target === 'direct' || endpoint.target === 'floor') {
    const base = endpoint.target === 'direct' ? urls.sim : urls.floor
    if (!base) throw new Error('the bare relay is not running')
    const headers = endpoint.dialect === 'anthropic' ? anthropicHeaders(simKey) : bearer(simKey)
    return { url: base + path, headers, body: JSON.stringify(body) }
  }
  if (endpoint.target === 'svc') {
    if (!urls.svc || !urls.svcKey) throw new Error('svc is not running')
    if (endpoint.dialect === 'anthropic') {
      return {
        url: `${urls.svc}/compat-a/v1/messages`,
        headers: anthropicHeaders(urls.svcKey),
        body: JSON.stringify(body),
      }
    }
    if (endpoint.dialect === 'responses') {
      return { url: `${urls.svc}/compat-b/v1/responses`, headers: bearer(urls.svcKey), body: JSON.stringify(body) }
    }
    throw new Error('svc takes Anthropic Messages or OpenAI Responses, not Chat')
  }
  if (!urls.portkey) throw new Error('Portkey is not running')
  const viaPortkey = {
    'x-portkey-provider': endpoint.provider ?? 'anthropic',
    'x-portkey-custom-host': `${urls.sim}/v1`,
  }
  const headers = endpoint.dialect === 'anthropic' ? anthropicHeaders(simKey) : bearer(simKey)
  return { url: urls.portkey + path, headers: { ...headers, ...viaPortkey }, body: JSON.stringify(body) }
}

/** The text every answer starts with: the simulator names the upstream model that answered. */
export function expectedText(endpoint: Endpoint, phase: Phase): string {
  if (endpoint.target !== 'svc') return `Hello from ${endpoint.model}`
  const model = phase.models.find((m) => m.profile === endpoint.model)
  return `Hello from ${model?.upstream ?? '?'}`
}

/** svc's config for a phase: only the simulator's models, one per profile, and a big grant. */
export function svcConfigToml(phase: Phase, simUrl: string): string {
  const models = phase.models
    .map(
      (m, i) => `[[models]]
id = "bench-${i}"
provider = "${m.provider}"
upstream_model = "${m.upstream}"
profiles = ["${m.profile.replace('svc-', '').replace('-', '_')}"]
quality = 80
input_usd_per_mtok = 3
output_usd_per_mtok = 15
context_window = 200000
max_output_tokens = 8192
`,
    )
    .join('\n')
  return `# svc for the bench, phase "${phase.id}": written by bench/run.ts
[catalog]
builtin = false

[billing.starter_grant]
usd = 1000000

[providers.sim-a]
kind = "anthropic"
base_url = "${simUrl}"
api_key_env = "SVC_BENCH_SIM_KEY"

[providers.sim-c]
kind = "openai-chat"
base_url = "${simUrl}/v1"
api_key_env = "SVC_BENCH_SIM_KEY"

${models}`
}

export const simKeyEnv = { SVC_BENCH_SIM_KEY: simKey }
