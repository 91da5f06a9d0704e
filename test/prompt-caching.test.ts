// A Responses client (Codex) cannot mark cache breakpoints, and Anthropic caches nothing unmarked:
// translated to a Claude model that caches, its request carries the breakpoints an agent would set,
// so each turn of a tool loop reads the one before from the cache, and is charged cache prices.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type OpenAI from 'openai'
import type { ConfigFile, ModelSection } from '../src/config/schema'
import { createHarness, requestDetail, sdkClients } from './support/harness'
import { simClaude } from './support/sim-models'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-cache'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const claude = (promptCaching: boolean) => simClaude({ prompt_caching: promptCaching })

/** A gateway with only these providers and models, on the simulator. */
const gatewayWith = (providers: ConfigFile['providers'], models: ModelSection[]) =>
  createHarness({ grantUsd: 5, env: { SIM_KEY }, config: { catalog: { builtin: false }, providers, models } })

const gateway = (promptCaching: boolean) =>
  gatewayWith({ anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } }, [claude(promptCaching)])

const tools: OpenAI.Responses.Tool[] = [
  { type: 'function', name: 'exec_command', strict: false, parameters: { type: 'object', properties: {} } },
]
/** The second turn of a tool loop, as Codex sends it. */
const secondTurn: OpenAI.Responses.ResponseInput = [
  { role: 'developer', content: 'You are a coding agent.' },
  { role: 'user', content: 'run the tests' },
  { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"make test"}' },
  { type: 'function_call_output', call_id: 'call_1', output: '1 failed' },
]

interface AnthropicBody {
  system: Record<string, unknown>[]
  messages: { role: string; content: Record<string, unknown>[] }[]
}

describe('prompt caching for a Responses client on a Claude model', () => {
  test('breakpoints at the system prompt and the last two user turns; cache reads charged as such', async () => {
    const h = await gateway(true)
    sim.setScenario('claude-c-up', {
      text: 'One test fails.',
      usage: { input: 50, cacheRead: 2000, cacheWrite: 100, output: 10 },
    })
    const response = await sdkClients(h).openai.responses.create({ model: 'svc-max', input: secondTurn, tools })
    const body = sim.requests[0]!.body as AnthropicBody
    const ephemeral = { type: 'ephemeral' }
    expect(body.system.at(-1)?.cache_control).toEqual(ephemeral)
    expect(body.messages.map((m) => m.content.at(-1)?.cache_control)).toEqual([ephemeral, undefined, ephemeral])

    // The client sees its cached tokens as OpenAI reports them; the ledger prices them as cache reads.
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(2000)
    const leg = (await requestDetail(h, response.id.replace(/^resp_/, ''))).usage_events[0]
    expect(leg).toMatchObject({ input_tokens: 50, cached_input_tokens: 2000, cache_creation_input_tokens: 100 })
    expect(leg.cost_nanos).toBe(50 * 3000 + 2000 * 300 + 100 * 3750 + 10 * 15000)
  })

  test('a model without prompt caching gets none', async () => {
    const h = await gateway(false)
    await sdkClients(h).openai.responses.create({ model: 'svc-max', input: secondTurn, tools })
    expect(JSON.stringify(sim.requests[0]!.body)).not.toContain('cache_control')
  })
})

describe('prompt caching for Claude through a router that serves it on Chat (OpenRouter)', () => {
  const routed = (id: string, upstream: string) =>
    simClaude({
      id,
      provider: 'router',
      upstream_model: upstream,
      quality: id === 'claude-r' ? 90 : 80,
      prompt_caching: true,
    })
  const routerGateway = (anthropicCacheControl: boolean) =>
    gatewayWith(
      {
        router: {
          kind: 'openai-chat',
          base_url: `${sim.url}/v1`,
          api_key_env: 'SIM_KEY',
          anthropic_cache_control: anthropicCacheControl,
        },
      },
      [routed('claude-r', 'anthropic/claude-r'), routed('gpt-r', 'openai/gpt-r')],
    )

  test("Claude models get Anthropic's top-level cache_control; others, or a provider without the option, none", async () => {
    const h = await routerGateway(true)
    const { anthropic } = sdkClients(h)
    const ask = { max_tokens: 64, messages: [{ role: 'user' as const, content: 'hi' }] }
    await anthropic.messages.create({ model: 'svc-max', ...ask })
    expect(sim.requests[0]!.body).toMatchObject({ model: 'anthropic/claude-r', cache_control: { type: 'ephemeral' } })

    // The Claude model unhealthy for a moment: the next request goes to the other model.
    sim.reset()
    sim.setScenario('anthropic/claude-r', { fault: { kind: 'status', status: 500 } })
    await anthropic.messages.create({ model: 'svc-max', ...ask })
    const gpt = sim.requests.find((r) => (r.body as { model: string }).model === 'openai/gpt-r')!
    expect(gpt.body).not.toHaveProperty('cache_control')

    sim.reset()
    await sdkClients(await routerGateway(false)).anthropic.messages.create({ model: 'svc-max', ...ask })
    expect(sim.requests[0]!.body).not.toHaveProperty('cache_control')
  })
})
