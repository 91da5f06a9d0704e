// Claude's 5.x generation and OpenAI's reasoning models answer with a 400 what clients send
// whatever model svc routes them to: a thinking budget, `disabled` thinking, sampling parameters,
// a forced tool choice, an assistant prefill. The body each upstream receives is asserted, and
// which model served: a request the first model would refuse goes to one that takes it.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { APIError } from '@anthropic-ai/sdk'
import type { ConfigFile, ModelSection } from '../src/config/schema'
import type { RankEntry } from '../src/router/rank'
import { createHarness, requestDetail, sdkClients } from './support/harness'
import { claude55Rules, simClaude } from './support/sim-models'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-model-rules'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

/** Sonnet 5.5's rules (the built-in row's), ranked first in `max`. */
const claudeNew = simClaude({ id: 'claude-new', upstream_model: 'claude-new-up', quality: 95, ...claude55Rules })
/** The 4.5 generation's rules: takes all of it. */
const claudeOld = simClaude({ id: 'claude-old', upstream_model: 'claude-old-up', quality: 90 })

const providers: ConfigFile['providers'] = {
  anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
  chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
  resp: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY', openai_itself: true },
}
const gateway = (models: ModelSection[], now?: number) =>
  createHarness({ grantUsd: 5, env: { SIM_KEY }, now, config: { catalog: { builtin: false }, providers, models } })

const user = (text: string): Anthropic.MessageParam => ({ role: 'user', content: text })
/**
 * A request with sampling parameters. The SDK's own types dropped them (1.x), but the API of the
 * older models takes them, and older SDKs, scripts and agents still send them: the SDK sends what
 * it is given.
 */
const withSampling = (
  params: Omit<Anthropic.MessageCreateParamsNonStreaming, 'model'> & {
    temperature?: number
    top_p?: number
    top_k?: number
  },
) => ({ model: 'svc-max', ...params }) as Anthropic.MessageCreateParamsNonStreaming
/** A Responses request with the sampling parameters a reasoning model refuses. */
const responsesWithSampling = {
  model: 'svc-max',
  input: 'hi',
  temperature: 0.3,
  top_p: 0.5,
  reasoning: { effort: 'low' as const },
}
const upstreamBody = (i = 0) => sim.requests[i]!.body as Record<string, unknown>
const ranksOf = async (h: Awaited<ReturnType<typeof gateway>>, messageId: string): Promise<RankEntry[]> =>
  (await requestDetail(h, messageId.replace(/^msg_/, ''))).provider_ranks

describe('an Anthropic client on a Claude 5.x model (pass-through)', () => {
  test('a thinking budget goes as adaptive with its effort; temperature and top_k are left out', async () => {
    const h = await gateway([claudeNew, claudeOld])
    const message = await sdkClients(h).anthropic.messages.create(
      withSampling({
        max_tokens: 20_000,
        temperature: 0.2,
        top_k: 5,
        thinking: { type: 'enabled', budget_tokens: 16_000 },
        messages: [user('refactor the parser')],
      }),
    )
    expect(message.type).toBe('message')
    const body = upstreamBody()
    expect(body).toMatchObject({
      model: 'claude-new-up',
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
    })
    expect(body).not.toHaveProperty('temperature')
    expect(body).not.toHaveProperty('top_k')
    expect(JSON.stringify(body)).not.toContain('budget_tokens')
  })

  test('thinking turned off goes as between_tools, the lightest setting the model takes', async () => {
    const h = await gateway([claudeNew])
    await sdkClients(h).anthropic.messages.create({
      model: 'svc-max',
      max_tokens: 256,
      thinking: { type: 'disabled' },
      messages: [user('hi')],
    })
    expect(upstreamBody().thinking).toEqual({ type: 'between_tools' })
  })

  test("the client's own adaptive thinking and effort reach the model as sent", async () => {
    const h = await gateway([claudeNew])
    const request = {
      model: 'svc-max',
      max_tokens: 256,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'medium' },
      messages: [user('hi')],
    }
    await sdkClients(h).anthropic.messages.create(request as unknown as Anthropic.MessageCreateParamsNonStreaming)
    expect(upstreamBody()).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'medium' } })
  })

  test("Claude Code's effort is left out for a model that takes none (the 4.5 generation answers it with a 400)", async () => {
    const h = await gateway([simClaude({ id: 'claude-45', upstream_model: 'claude-45-up', reasoning_efforts: [] })])
    const request = {
      model: 'svc-max',
      max_tokens: 256,
      output_config: { effort: 'high' },
      messages: [user('name this session')],
    }
    await sdkClients(h).anthropic.messages.create(request as unknown as Anthropic.MessageCreateParamsNonStreaming)
    expect(upstreamBody()).toMatchObject({ model: 'claude-45-up', max_tokens: 256 })
    expect(upstreamBody()).not.toHaveProperty('output_config')
  })

  test('a forced tool choice goes to a model that takes it, and the ranking says why', async () => {
    const h = await gateway([claudeNew, claudeOld])
    const message = await sdkClients(h).anthropic.messages.create({
      model: 'svc-max',
      max_tokens: 256,
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [user('weather in Paris?')],
    })
    expect(upstreamBody()).toMatchObject({ model: 'claude-old-up', tool_choice: { type: 'tool', name: 'get_weather' } })
    const skipped = (await ranksOf(h, message.id)).find((r) => r.model_id === 'claude-new')
    expect(skipped).toMatchObject({
      status: 'skipped',
      reason: 'request forces a tool call; model refuses forced tool choice',
    })
  })

  test('an assistant prefill goes to a model that takes it', async () => {
    const h = await gateway([claudeNew, claudeOld])
    const message = await sdkClients(h).anthropic.messages.create({
      model: 'svc-max',
      max_tokens: 256,
      messages: [user('a JSON object with a name'), { role: 'assistant', content: '{"name":' }],
    })
    expect(upstreamBody().model).toBe('claude-old-up')
    const skipped = (await ranksOf(h, message.id)).find((r) => r.model_id === 'claude-new')
    expect(skipped?.reason).toContain('prefill')
  })

  // Anthropic's docs: a turn that stopped with pause_turn is continued by sending its content back
  // as the last assistant turn; that resumes the server tools' loop, and is no prefill.
  test('a turn paused in its server tools, sent back to continue, goes to the model ranked first', async () => {
    // Anthropic itself resumes it; to a server speaking its dialect it would be a prefill (rank.ts).
    const h = await createHarness({
      grantUsd: 5,
      env: { SIM_KEY },
      config: {
        catalog: { builtin: false },
        providers: { ...providers, anth: { ...providers!.anth!, anthropic_signatures: true } },
        models: [claudeNew, claudeOld],
      },
    })
    const paused: Anthropic.MessageParam = {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Searching.' },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'bun release' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: [{ type: 'web_search_result', url: 'https://bun.sh/blog', title: 'Bun', encrypted_content: 'e' }],
        },
      ],
    }
    await sdkClients(h).anthropic.messages.create({
      model: 'svc-max',
      max_tokens: 256,
      tools: [{ type: 'web_search_20250305', name: 'web_search' }],
      messages: [user('research bun releases'), paused],
    })
    expect(upstreamBody().model).toBe('claude-new-up')
    expect((upstreamBody().messages as unknown[]).at(-1)).toEqual(paused)
  })

  // As for any request no model of the profile can serve (svc's 503, not retried): never sent upstream.
  test('with no model that takes a forced tool choice, the answer says so; nothing goes upstream', async () => {
    const h = await gateway([claudeNew])
    const error = await sdkClients(h, { maxRetries: 0 })
      .anthropic.messages.create({
        model: 'svc-max',
        max_tokens: 64,
        tools: [{ name: 't', input_schema: { type: 'object' } }],
        tool_choice: { type: 'any' },
        messages: [user('go')],
      })
      .catch((err: unknown) => err)
    expect(sim.requests).toHaveLength(0)
    expect(error).toBeInstanceOf(APIError)
    expect((error as APIError).status).toBe(503)
    expect((error as APIError).headers?.get('x-should-retry')).toBe('false')
    expect((error as APIError).message).toContain('claude-new via anth: request forces a tool call')
  })
})

// Anthropic refuses a budget at or above max_tokens ("`max_tokens` must be greater than
// `thinking.budget_tokens`"), a 400 passed back without fallback: max_tokens clamped to the model's
// output, or raised over a budget past it, must leave the budget below it.
describe('a thinking budget beside a max_tokens the model caps (Claude 4.5 generation)', () => {
  const capped = (maxOutputTokens: number) =>
    gateway([{ ...claudeOld, max_output_tokens: maxOutputTokens, thinking: true }])

  test('a budget above the clamped max_tokens goes just under it, and the ranking says so', async () => {
    const h = await capped(32_000)
    // Over the HTTP API: the SDK asks for a stream past 21,333 max_tokens.
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: {
        model: 'svc-max',
        max_tokens: 64_000,
        thinking: { type: 'enabled', budget_tokens: 40_000 },
        messages: [user('plan the migration')],
      },
    })
    expect(res.status).toBe(200)
    expect(upstreamBody()).toMatchObject({ max_tokens: 32_000, thinking: { type: 'enabled', budget_tokens: 31_999 } })
    expect((await ranksOf(h, res.headers.get('x-request-id')!))[0]).toMatchObject({
      status: 'chosen',
      reason:
        'eligible; max_tokens clamped from 64000 to 32000; thinking budget lowered from 40000 to 31999, under max_tokens',
    })
  })

  test('no room for the least budget (1,024): the model answers without thinking, and the ranking says so', async () => {
    const h = await capped(32_000)
    const message = await sdkClients(h).anthropic.messages.create({
      model: 'svc-max',
      max_tokens: 1000,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [user('one line, please')],
    })
    expect(upstreamBody().max_tokens).toBe(1000)
    expect(upstreamBody()).not.toHaveProperty('thinking')
    expect((await ranksOf(h, message.id))[0]?.reason).toBe(
      'eligible; thinking off: max_tokens 1000 leaves no room for the least thinking budget, 1024',
    )
  })

  test('max_tokens raised over a budget stops at the model’s limit, adaptive and translated alike', async () => {
    const h = await capped(4000)
    await sdkClients(h).anthropic.messages.create({
      model: 'svc-max',
      max_tokens: 1000,
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high' },
      messages: [user('think it through')],
    } as Anthropic.MessageCreateParamsNonStreaming)
    expect(upstreamBody()).toMatchObject({ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 3999 } })

    sim.reset()
    await sdkClients(h).openai.responses.create({
      model: 'svc-max',
      input: 'think it through',
      max_output_tokens: 1000,
      reasoning: { effort: 'high' },
    })
    expect(upstreamBody()).toMatchObject({ max_tokens: 4000, thinking: { type: 'enabled', budget_tokens: 3999 } })
  })
})

describe('count_tokens', () => {
  test("is asked of a model that has not retired, with the body fitted as the model's requests are", async () => {
    const retired = simClaude({ id: 'claude-gone', upstream_model: 'claude-gone-up', retires_on: '2026-01-01' })
    const h = await gateway([retired, claudeNew])
    const request: Anthropic.MessageCountTokensParams = {
      model: 'svc-max',
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [user('how long is this?')],
    }
    const counted = await sdkClients(h).anthropic.messages.countTokens(request)
    expect(counted.input_tokens).toBeGreaterThan(0)
    expect(sim.requests[0]!.path).toBe('/v1/messages/count_tokens')
    expect(upstreamBody()).toEqual({
      model: 'claude-new-up',
      thinking: { type: 'adaptive' },
      output_config: { effort: 'medium' },
      messages: request.messages,
    })
  })
})

describe('a Responses client on a reasoning model of a Responses upstream (pass-through)', () => {
  test('temperature and top_p are left out; everything else goes as sent', async () => {
    const reasoner = simClaude({
      id: 'gpt-x',
      provider: 'resp',
      upstream_model: 'gpt-x-up',
      sampling_parameters: false,
    })
    const h = await gateway([reasoner])
    await sdkClients(h).openai.responses.create(responsesWithSampling)
    const body = upstreamBody()
    expect(body).toMatchObject({ model: 'gpt-x-up', input: 'hi', reasoning: { effort: 'low' } })
    expect(body).not.toHaveProperty('temperature')
    expect(body).not.toHaveProperty('top_p')
  })
})

describe('translated requests', () => {
  // The Responses API has no prefill. Codex resends a turn whose stream broke with its finished
  // reasoning and message last: refused as a prefill by Claude 5.x (Codex printed the refusal and
  // exited), and by any Claude under thinking. Left out, the turn is answered again, by the first model.
  test('a Responses client’s turn resent with its broken answer’s items last is answered again, by the first model', async () => {
    const h = await gateway([claudeNew, claudeOld])
    const response = await sdkClients(h).openai.responses.create({
      model: 'svc-max',
      reasoning: { effort: 'high' },
      input: [
        { role: 'user', content: 'fix the failing test' },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Reading the test.' }] },
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Looking.', annotations: [] }],
        },
      ],
    })
    expect(response.status).toBe('completed')
    const body = upstreamBody()
    expect(body.model).toBe('claude-new-up')
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'fix the failing test' }] }])
  })

  test('a conversation that ends on a user message of blank text goes to a model that answers it', async () => {
    // Claude would be sent the conversation without it (blank text is a 400 there): ending on the
    // assistant's turn, which Claude 4.5 continues as a prefill instead of answering.
    const gpt = simClaude({ id: 'gpt-x', provider: 'resp', upstream_model: 'gpt-x-up', quality: 80 })
    const h = await gateway([claudeOld, gpt])
    const response = await sdkClients(h).openai.responses.create({
      model: 'svc-max',
      input: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'Hello! What shall we do?' },
        { role: 'user', content: '  ' },
      ],
    })
    expect(upstreamBody().model).toBe('gpt-x-up')
    const skipped = (await ranksOf(h, response.id.replace(/^resp_/, ''))).find((r) => r.model_id === 'claude-old')
    expect(skipped?.reason).toBe('request ends with a user message of blank text, which Anthropic refuses')
  })

  test('a Responses client on a Claude 5.x model: temperature left out, reasoning as adaptive', async () => {
    const h = await gateway([claudeNew])
    await sdkClients(h).openai.responses.create(responsesWithSampling)
    const body = upstreamBody()
    expect(body).toMatchObject({
      model: 'claude-new-up',
      thinking: { type: 'adaptive' },
      output_config: { effort: 'low' },
    })
    expect(body).not.toHaveProperty('temperature')
    expect(body).not.toHaveProperty('top_p')
  })

  // Claude's newer models return empty thinking blocks unless asked; Codex shows the reasoning
  // summaries it asks for (its progress notes between tool calls come back as thinking there).
  test('a Responses client that asks for reasoning summaries gets them from a Claude 5.x model', async () => {
    const ask = { model: 'svc-max', input: 'hi', reasoning: { effort: 'high' as const, summary: 'auto' as const } }
    await sdkClients(await gateway([claudeNew])).openai.responses.create(ask)
    expect(upstreamBody().thinking).toEqual({ type: 'adaptive', display: 'summarized' })

    // Without a summary asked for, the model's default; a 4.5 model gets its budget, as before.
    sim.reset()
    await sdkClients(await gateway([claudeNew])).openai.responses.create({ ...ask, reasoning: { effort: 'high' } })
    expect(upstreamBody().thinking).toEqual({ type: 'adaptive' })
    sim.reset()
    await sdkClients(await gateway([claudeOld])).openai.responses.create(ask)
    expect(upstreamBody().thinking).toEqual({ type: 'enabled', budget_tokens: 4096 })
  })

  test('an Anthropic client on a reasoning model served over Chat: temperature and top_p left out', async () => {
    const reasoner: ModelSection = {
      ...simClaude({ id: 'gpt-r', provider: 'chat', upstream_model: 'gpt-r-up' }),
      sampling_parameters: false,
    }
    const h = await gateway([reasoner])
    await sdkClients(h).anthropic.messages.create(
      withSampling({ max_tokens: 64, temperature: 0.2, top_p: 0.9, messages: [user('hi')] }),
    )
    const body = upstreamBody()
    expect(body.model).toBe('gpt-r-up')
    expect(body).not.toHaveProperty('temperature')
    expect(body).not.toHaveProperty('top_p')

    // A model that takes them still gets them.
    sim.reset()
    const plain = await gateway([simClaude({ id: 'gpt-p', provider: 'chat', upstream_model: 'gpt-p-up' })])
    await sdkClients(plain).anthropic.messages.create(
      withSampling({ max_tokens: 64, temperature: 0.2, messages: [user('hi')] }),
    )
    expect(upstreamBody()).toMatchObject({ model: 'gpt-p-up', temperature: 0.2 })
  })

  // OpenAI and Mistral refuse an unknown `top_k`; vLLM, llama.cpp and OpenRouter take it.
  test('an Anthropic client’s top_k reaches a Chat server that takes it, and no other', async () => {
    const served = async (chat: NonNullable<ConfigFile['providers']>[string]) => {
      sim.reset()
      const h = await createHarness({
        grantUsd: 5,
        env: { SIM_KEY },
        config: {
          catalog: { builtin: false },
          providers: { chat },
          models: [simClaude({ id: 'open-model', provider: 'chat', upstream_model: 'open-up' })],
        },
      })
      await sdkClients(h).anthropic.messages.create(
        withSampling({ max_tokens: 64, temperature: 0.7, top_k: 40, messages: [user('hi')] }),
      )
      return upstreamBody()
    }
    const vllm = { kind: 'openai-chat' as const, base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY', top_k: true }
    expect(await served(vllm)).toMatchObject({ model: 'open-up', temperature: 0.7, top_k: 40 })
    const strict = await served({ ...vllm, top_k: undefined })
    expect(strict).toMatchObject({ model: 'open-up', temperature: 0.7 })
    expect(strict).not.toHaveProperty('top_k')
  })
})

describe('retirement', () => {
  const retiring = simClaude({
    id: 'claude-retiring',
    upstream_model: 'claude-retiring-up',
    quality: 99,
    retires_on: '2026-11-30',
  })

  test('a model is served until its retirement date and skipped from that day on', async () => {
    const before = await gateway([retiring, claudeOld], Date.parse('2026-11-29T23:59:00Z'))
    const ask = { model: 'svc-max', max_tokens: 64, messages: [user('hi')] }
    await sdkClients(before).anthropic.messages.create(ask)
    expect(upstreamBody().model).toBe('claude-retiring-up')

    sim.reset()
    const after = await gateway([retiring, claudeOld], Date.parse('2026-11-30T00:00:00Z'))
    const message = await sdkClients(after).anthropic.messages.create(ask)
    expect(sim.requests).toHaveLength(1)
    expect(upstreamBody().model).toBe('claude-old-up')
    const skipped = (await ranksOf(after, message.id)).find((r) => r.model_id === 'claude-retiring')
    expect(skipped).toMatchObject({ status: 'skipped', reason: 'retired by its provider on 2026-11-30' })
  })
})
