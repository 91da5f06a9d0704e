// `x-should-retry: false`: the official SDKs (and Claude Code) obey it over their status rule, which
// retries every 5xx. svc sends it on answers a retry of the same request cannot change (no model
// fits, no credit, the provider accounts failing), and never where a retry may succeed.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { ConfigFile } from '../src/config/schema'
import { createHarness, type Harness, requestDetail, sdkClients } from './support/harness'
import { type Scenario, startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-should-retry'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

/** claude-a on the Anthropic provider first (quality 95), gpt-b on the Chat provider second (80). */
function gateway(
  opts: { contextWindow?: number; grantUsd?: number | null; routing?: ConfigFile['routing'] } = {},
): Promise<Harness> {
  const window = opts.contextWindow === undefined ? {} : { context_window: opts.contextWindow }
  const price = { input_usd_per_mtok: 1, output_usd_per_mtok: 2 }
  return createHarness({
    grantUsd: opts.grantUsd === null ? undefined : (opts.grantUsd ?? 5),
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      routing: opts.routing,
      providers: {
        anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
        chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
      },
      models: [
        {
          id: 'claude-a',
          provider: 'anth',
          upstream_model: 'claude-a-up',
          profiles: ['max'],
          quality: 95,
          ...price,
          ...window,
        },
        {
          id: 'gpt-b',
          provider: 'chat',
          upstream_model: 'gpt-b-up',
          profiles: ['max'],
          quality: 80,
          ...price,
          ...window,
        },
      ],
    },
  })
}

/** The official SDKs against the in-process app, retrying as they do by default; `sent` counts their requests. */
function clients(h: Harness, maxRetries: number) {
  const sent: string[] = []
  const handle = (request: Request) => {
    sent.push(new URL(request.url).pathname)
    return h.app.handle(request)
  }
  return { sent, ...sdkClients(h, { maxRetries, handle }) }
}

const ask = [{ role: 'user' as const, content: 'hello' }]
/** ~5,000 tokens by the router's estimate: more than a 4,000-token window. */
const longPrompt = 'x'.repeat(20_000)
const status = (s: number): Scenario => ({ fault: { kind: 'status', status: s } })

const postMessages = (h: Harness) =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    json: { model: 'svc-max', max_tokens: 100, messages: ask },
    headers: { 'anthropic-version': '2023-06-01' },
  })

type ApiError = InstanceType<typeof Anthropic.APIError>
const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected the request to fail')
    },
    (e: unknown) => e as ApiError,
  )

/** The chat provider's 402, told as the gateway's account's failure, not the client's. */
const gatewayAccountRefused =
  "chat refused the gateway's own account there (for the gateway's operator to fix; your svc key is fine): Simulated 402 error"

describe('x-should-retry: false where a retry cannot help', () => {
  test('no model fits the context window: a 400 the Anthropic SDK (maxRetries 2) sends once', async () => {
    const h = await gateway({ contextWindow: 4000 })
    const { anthropic, sent } = clients(h, 2)
    const err = await failure(
      anthropic.messages.create({
        model: 'svc-max',
        max_tokens: 100,
        messages: [{ role: 'user', content: longPrompt }],
      }),
    )
    expect(err).toBeInstanceOf(Anthropic.BadRequestError)
    expect(err.status).toBe(400)
    expect(err.headers?.get('x-should-retry')).toBe('false')
    expect((err.error as { error: { message: string } }).error.message).toStartWith(
      'prompt is too long: 5000 tokens > 4000 maximum',
    )
    expect(sent).toEqual(['/compat-a/v1/messages'])
    expect(sim.requests).toHaveLength(0)
  })

  test('the same on the responses route, with the code Codex stops on: the OpenAI SDK sends it once', async () => {
    const h = await gateway({ contextWindow: 4000 })
    const { openai, sent } = clients(h, 2)
    const err = await failure(openai.responses.create({ model: 'svc-max', input: longPrompt }))
    expect(err).toBeInstanceOf(OpenAI.BadRequestError)
    expect(err.status).toBe(400)
    expect(err.error).toEqual({
      message: 'prompt is too long: 5000 tokens > 4000 maximum',
      type: 'invalid_request_error',
      param: null,
      code: 'context_length_exceeded',
    })
    expect(err.headers?.get('x-should-retry')).toBe('false')
    expect(sent).toEqual(['/compat-b/v1/responses'])
  })

  test('every candidate’s provider account fails (401, then 402): a 502 api_error, sent once', async () => {
    const h = await gateway()
    sim.setScenario('claude-a-up', status(401))
    sim.setScenario('gpt-b-up', status(402))
    const { anthropic, sent } = clients(h, 2)
    const err = await failure(anthropic.messages.create({ model: 'svc-max', max_tokens: 100, messages: ask }))
    expect(err.status).toBe(502)
    expect(err.error).toEqual({ type: 'error', error: { type: 'api_error', message: gatewayAccountRefused } })
    expect(err.headers?.get('x-should-retry')).toBe('false')
    expect(sent).toHaveLength(1)
    expect(sim.requests).toHaveLength(2)
    const detail = await requestDetail(h, err.headers!.get('x-request-id')!)
    expect(detail).toMatchObject({ status: 'failed', http_status: 502, attempts: 2, error: { type: 'api_error' } })
  })

  test('no credit (the quota gate): 402 billing_error', async () => {
    const h = await gateway({ grantUsd: null })
    const res = await postMessages(h)
    expect(res.status).toBe(402)
    expect((await res.json()).error.type).toBe('billing_error')
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(sim.requests).toHaveLength(0)
  })
})

describe('no x-should-retry where a retry may succeed', () => {
  test('every candidate overloaded (529, 503): the SDK’s own rule retries', async () => {
    const h = await gateway()
    sim.setScenario('claude-a-up', status(529))
    sim.setScenario('gpt-b-up', status(503))
    const { anthropic, sent } = clients(h, 1)
    const err = await failure(anthropic.messages.create({ model: 'svc-max', max_tokens: 100, messages: ask }))
    // The last candidate's 503, as Anthropic says an overload.
    expect(err.status).toBe(529)
    expect(err.headers?.get('x-should-retry')).toBeNull()
    expect(sent).toHaveLength(2)
  })

  test('a 429 alone: rate_limit_error with retry-after, no x-should-retry', async () => {
    const h = await gateway({ routing: { max_attempts: 1 } })
    sim.setScenario('claude-a-up', { fault: { kind: 'status', status: 429, retryAfter: 3 } })
    const res = await postMessages(h)
    expect(res.status).toBe(429)
    expect(res.headers.get('retry-after')).toBe('3')
    expect(res.headers.get('x-should-retry')).toBeNull()
  })

  test('a 429, then a provider account out of credit: the 502 may clear once the 429 does', async () => {
    const h = await gateway()
    sim.setScenario('claude-a-up', status(429))
    sim.setScenario('gpt-b-up', status(402))
    const res = await postMessages(h)
    expect(res.status).toBe(502)
    expect((await res.json()).error).toEqual({ type: 'api_error', message: gatewayAccountRefused })
    expect(res.headers.get('x-should-retry')).toBeNull()
  })

  test('a provider account out of credit with a candidate left untried (max_attempts 1)', async () => {
    const h = await gateway({ routing: { max_attempts: 1 } })
    sim.setScenario('claude-a-up', status(402))
    const res = await postMessages(h)
    expect(res.status).toBe(502)
    expect(res.headers.get('x-should-retry')).toBeNull()
    expect(sim.requests).toHaveLength(1)
  })
})
