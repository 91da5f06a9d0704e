// The built-in OpenAI rows end to end, on the simulator standing in for api.openai.com: which model
// a profile picks before and after GPT-5 mini and nano retire, the body the Responses endpoint
// receives for a Claude Code request (tools with reasoning, which OpenAI's Chat endpoint refuses
// for the GPT-6 generation), and what a leg costs with cache writes and above 272,000 input tokens.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { createHarness, remainingNanos, requestDetail, sdkClients } from './support/harness'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-openai-catalog'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const beforeRetirement = Date.parse('2026-12-10T12:00:00Z')
const afterRetirement = Date.parse('2026-12-11T00:00:00Z')

/** The built-in catalog, with the `openai` provider as svc configures it from OPENAI_API_KEY, on the simulator. */
const gateway = (now: number) =>
  createHarness({
    grantUsd: 5,
    now,
    env: { SIM_KEY },
    config: { providers: { openai: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' } } },
  })

/** A Claude Code turn: tools, adaptive thinking with an effort, and its temperature. */
const claudeCodeTurn = (profile: string) =>
  ({
    model: profile,
    max_tokens: 16_000,
    temperature: 1,
    thinking: { type: 'adaptive' },
    output_config: { effort: 'high' },
    tools: [{ name: 'Bash', description: 'Run a command', input_schema: { type: 'object', properties: {} } }],
    messages: [{ role: 'user', content: 'run the tests' }],
  }) as unknown as Anthropic.MessageCreateParamsNonStreaming

const servedModel = () => (sim.requests[0]!.body as { model: string }).model

describe('the built-in OpenAI rows', () => {
  test('GPT-5 nano serves ultra_saver until it retires on 2026-12-11; GPT-6 Luna from that day', async () => {
    await sdkClients(await gateway(beforeRetirement)).anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'))
    expect(servedModel()).toBe('gpt-5-nano')

    sim.reset()
    const h = await gateway(afterRetirement)
    const message = await sdkClients(h).anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'))
    expect(sim.requests[0]!.path).toBe('/v1/responses')
    const body = sim.requests[0]!.body as Record<string, unknown>
    // Tools and reasoning together, as only the Responses endpoint takes them; no temperature.
    expect(body).toMatchObject({
      model: 'gpt-6-luna',
      reasoning: { effort: 'high' },
      tools: [{ type: 'function', name: 'Bash' }],
      store: false,
    })
    expect(body).not.toHaveProperty('temperature')
    const ranks = (await requestDetail(h, message.id.replace(/^msg_/, ''))).provider_ranks
    expect(ranks.find((r: { model_id: string }) => r.model_id === 'gpt-5-nano')).toMatchObject({
      status: 'skipped',
      reason: 'retired by its provider on 2026-12-11',
    })
  })

  // pro's quality per cost (README, Routing): Sol 96 − 8·log2(1 + 4) = 77.42, Terra 90 − 8·log2(1 + 2)
  // = 77.32, GPT-5.1 93 − 8·log2(1 + 3.4375) = 75.80.
  test('pro with only an OpenAI key after the retirements: GPT-6 Sol, then GPT-6.1 Terra, then GPT-5.1', async () => {
    const h = await gateway(afterRetirement)
    const message = await sdkClients(h).anthropic.messages.create(claudeCodeTurn('svc-pro'))
    expect(servedModel()).toBe('gpt-6-sol')
    const ranks = (await requestDetail(h, message.id.replace(/^msg_/, ''))).provider_ranks
    const candidates = ranks
      .filter((r: { status: string }) => r.status !== 'skipped')
      .map((r: { model_id: string }) => r.model_id)
    expect(candidates).toEqual(['gpt-6-sol', 'gpt-6.1-terra', 'gpt-5.1'])
  })

  test("Claude Code's max effort reaches GPT-5.1 as high, the most it takes; Codex's minimal reaches GPT-6 Luna as low", async () => {
    // GPT-5.1 alone in max once the GPT-6 rows are disabled (a gateway that keeps to the older model).
    const h = await createHarness({
      grantUsd: 5,
      now: afterRetirement,
      env: { SIM_KEY },
      config: {
        providers: { openai: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' } },
        models: [{ id: 'gpt-6-sol', provider: 'openai', enabled: false }],
      },
    })
    const turn = claudeCodeTurn('svc-max') as unknown as { output_config: { effort: string } }
    turn.output_config.effort = 'max'
    await sdkClients(h).anthropic.messages.create(turn as unknown as Anthropic.MessageCreateParamsNonStreaming)
    expect(sim.requests[0]!.body).toMatchObject({ model: 'gpt-5.1', reasoning: { effort: 'high' } })

    // Codex speaks Responses: passed through, with only the effort brought within the model's list.
    sim.reset()
    await sdkClients(h).openai.responses.create({
      model: 'svc-ultra-saver',
      input: 'hi',
      reasoning: { effort: 'minimal', summary: 'auto' },
    })
    expect(sim.requests[0]!.body).toMatchObject({
      model: 'gpt-6-luna',
      input: 'hi',
      reasoning: { effort: 'low', summary: 'auto' },
    })
  })

  test('thinking turned off reaches GPT-6 as reasoning effort none, and GPT-5 nano as minimal, the least it takes', async () => {
    const off = { ...claudeCodeTurn('svc-ultra-saver'), thinking: { type: 'disabled' as const } }
    delete (off as { output_config?: unknown }).output_config
    for (const [now, model, effort] of [
      [afterRetirement, 'gpt-6-luna', 'none'],
      [beforeRetirement, 'gpt-5-nano', 'minimal'],
    ] as const) {
      sim.reset()
      const h = await gateway(now)
      await sdkClients(h).anthropic.messages.create(off)
      expect(sim.requests[0]!.body).toMatchObject({ model, reasoning: { effort } })
      // Nothing to replay from a turn that did not reason.
      expect(sim.requests[0]!.body).not.toHaveProperty('include')
    }

    // Codex's none passes through to GPT-5 nano, which refuses it, as minimal.
    sim.reset()
    const h = await gateway(beforeRetirement)
    await sdkClients(h).openai.responses.create({
      model: 'svc-ultra-saver',
      input: 'hi',
      reasoning: { effort: 'none' },
    })
    expect(sim.requests[0]!.body).toMatchObject({ model: 'gpt-5-nano', reasoning: { effort: 'minimal' } })
  })

  test("Claude Code's one-token probe reaches the Responses endpoint with the 16 tokens it allows at least", async () => {
    const h = await gateway(afterRetirement)
    const message = await sdkClients(h).anthropic.messages.create({
      model: 'svc-ultra-saver',
      max_tokens: 1,
      messages: [{ role: 'user', content: 'quota' }],
    })
    expect(message.type).toBe('message')
    expect(sim.requests[0]!.body).toMatchObject({ model: 'gpt-6-luna', max_output_tokens: 16 })
  })

  test("a Claude Code session's requests share one prompt_cache_key; another session's differ; none without a session", async () => {
    const h = await gateway(afterRetirement)
    const { anthropic } = sdkClients(h)
    const inSession = (id: string) => ({ headers: { 'x-claude-code-session-id': id } })
    await anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'), inSession('session-a'))
    await anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'), inSession('session-a'))
    await anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'), inSession('session-b'))
    await anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'))
    const keys = sim.requests.map((r) => (r.body as { prompt_cache_key?: string }).prompt_cache_key)
    expect(keys[0]).toMatch(/^svc-[0-9a-z]+$/)
    expect(keys[1]).toBe(keys[0])
    expect(keys[2]).not.toBe(keys[0])
    expect(keys[3]).toBeUndefined()
    // The client's own session id never leaves svc.
    expect(JSON.stringify(sim.requests.map((r) => r.body))).not.toContain('session-a')
  })

  test("another account's session of the same id has a prompt_cache_key of its own", async () => {
    const h = await gateway(afterRetirement)
    await h.deps.admin.createAccount('bob')
    const { key } = await h.deps.admin.createKey({ account: 'bob' })
    await h.deps.admin.addGrant({ account: 'bob', usd: 5 })
    const inSession = { headers: { 'x-claude-code-session-id': 'session-a' } }
    await sdkClients(h).anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'), inSession)
    await sdkClients({ ...h, key }).anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'), inSession)
    const keys = sim.requests.map((r) => (r.body as { prompt_cache_key?: string }).prompt_cache_key)
    expect(keys).toEqual([expect.stringMatching(/^svc-[0-9a-z]+$/), expect.stringMatching(/^svc-[0-9a-z]+$/)])
    expect(keys[1]).not.toBe(keys[0])
  })

  test.each([
    // USD/Mtok 0.1 in, 0.01 cache read, 0.125 cache write, 0.5 out: 100 / 10 / 125 / 500 nanos a token.
    [
      'cache writes at 1.25 × input',
      { input: 1_000, cacheRead: 5_000, cacheWrite: 2_000, output: 100 },
      [100, 10, 125, 500],
    ],
    // Over 272,000 input tokens (cached and written included): 2 × input and cache, 1.5 × output.
    [
      'over 272,000 input tokens',
      { input: 200_000, cacheRead: 72_000, cacheWrite: 1, output: 100 },
      [200, 20, 250, 750],
    ],
  ])('GPT-6 Luna: %s', async (_name, usage, [input, cacheRead, cacheWrite, output]) => {
    const h = await gateway(afterRetirement)
    const before = await remainingNanos(h)
    sim.setScenario('gpt-6-luna', { text: 'done', usage })
    const message = await sdkClients(h).anthropic.messages.create(claudeCodeTurn('svc-ultra-saver'))
    const expected =
      usage.input * input! + usage.cacheRead * cacheRead! + usage.cacheWrite * cacheWrite! + usage.output * output!
    // The client sees Anthropic's usage: reads and writes apart from plain input.
    expect(message.usage).toMatchObject({
      input_tokens: usage.input,
      cache_read_input_tokens: usage.cacheRead,
      cache_creation_input_tokens: usage.cacheWrite,
      output_tokens: usage.output,
    })
    const leg = (await requestDetail(h, message.id.replace(/^msg_/, ''))).usage_events[0]
    expect(leg).toMatchObject({ model_id: 'gpt-6-luna', cost_nanos: expected, charged_nanos: expected })
    expect(await remainingNanos(h)).toBe(before - expected)
  })
})
