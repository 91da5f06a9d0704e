// A prompt over an upstream model's context window, refused by the upstream in its own words (the
// router's estimate let it through): the client hears it as its own dialect says it, which is what
// agents compact on — Anthropic's "prompt is too long" (Claude Code), OpenAI's code
// `context_length_exceeded` (Codex) — and a model with room for it serves instead where there is one,
// without the refusal counting against the first model's health. The router's own refusal, when
// no model's window fits its estimate, is in router.test.ts and should-retry.test.ts.
import { describe, expect, test } from 'bun:test'
import type { ProviderKind } from '../src/config/schema'
import { createHarness, requestDetail, sdkClients } from './support/harness'
import { simClaude, simProviders } from './support/sim-models'
import {
  profileFor,
  rankedProGateway,
  simKey,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()
const kinds: ProviderKind[] = ['anthropic', 'openai-chat', 'openai-responses']
const longPrompt = 'Summarise the repository. '.repeat(20)

/** What an upstream of each kind says when the prompt does not fit (the simulator speaks as they do). */
const upstreamWords: Record<ProviderKind, RegExp> = {
  anthropic: /^prompt is too long: \d+ tokens > 50 maximum$/,
  'openai-chat': /^prompt is too long: This model's maximum context length is 50 tokens\. However/,
  'openai-responses': /^prompt is too long: Your input exceeds the context window of this model\./,
}

describe.each(kinds)('an upstream of kind %s refuses a prompt over its context window', (kind) => {
  test('an Anthropic client gets a 400 invalid_request_error in Anthropic words', async () => {
    const h = await translationGateway(sim)
    sim.setScenario(upstreamModelFor[kind], { contextWindow: 50 })
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: profileFor[kind], max_tokens: 100, messages: [{ role: 'user', content: longPrompt }] },
    })
    expect(res.status).toBe(400)
    // As svc's own refusal of a prompt no window fits: every candidate refused it, a retry would too.
    expect(res.headers.get('x-should-retry')).toBe('false')
    const body = await res.json()
    expect(body.type).toBe('error')
    expect(body.error.type).toBe('invalid_request_error')
    expect(body.error.message).toMatch(upstreamWords[kind])
    const record = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(record).toMatchObject({ status: 'failed', http_status: 400, total_cost_nanos: 0, charged_nanos: 0 })
  })

  test('a Responses client gets a 400 with code context_length_exceeded', async () => {
    const h = await translationGateway(sim)
    sim.setScenario(upstreamModelFor[kind], { contextWindow: 50 })
    const { openai } = sdkClients(h)
    const err = await openai.responses.create({ model: profileFor[kind], input: longPrompt }).then(
      () => {
        throw new Error('expected a 400')
      },
      (e: unknown) => e as { status: number; error: Record<string, unknown> },
    )
    expect(err.status).toBe(400)
    expect(err.error).toMatchObject({ type: 'invalid_request_error', code: 'context_length_exceeded' })
  })
})

// Words of the compatible servers, and a 400 of the same servers that is the request's own fault.
test.each([
  ['GLM', 'Prompt exceeds max length', true],
  ['Kimi', 'Invalid request: Your request exceeded model token limit: 262144', true],
  ['DashScope', 'Range of input length should be [1, 129024]', true],
  // llama.cpp's server, as an HTTP 400 or its stream's `error:` field.
  ['llama.cpp', 'the request exceeds the available context size, try increasing it', true],
  ['DashScope, of max_tokens', 'Range of max_tokens should be [1, 8192]', false],
])('%s: "%s" is a context overflow: %p', async (_, words, overflow) => {
  const h = await translationGateway(sim)
  h.deps.fetch = (async () =>
    Response.json(
      { type: 'error', error: { type: 'invalid_request_error', message: words } },
      { status: 400 },
    )) as unknown as typeof fetch
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: profileFor.anthropic, max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
  })
  expect(res.status).toBe(400)
  expect((await res.json()).error.message).toBe(overflow ? `prompt is too long: ${words}` : words)
})

test('a model with room for the prompt serves after one without; the refusal is not held against the first', async () => {
  const h = await rankedProGateway(sim, [
    { id: 'small-window', kind: 'anthropic', quality: 90 },
    { id: 'large-window', kind: 'openai-chat', quality: 80 },
  ])
  sim.setScenario(upstreamModelFor.anthropic, { contextWindow: 50 })
  const { anthropic } = sdkClients(h)
  const message = await anthropic.messages.create({
    model: 'svc-pro',
    max_tokens: 100,
    messages: [{ role: 'user', content: longPrompt }],
  })
  expect(message.content[0]).toMatchObject({ type: 'text' })
  expect(sim.requests.map((r) => (r.body as { model: string }).model)).toEqual([
    upstreamModelFor.anthropic,
    upstreamModelFor['openai-chat'],
  ])
  const record = await requestDetail(h, message.id.replace(/^msg_/, ''))
  const legs = record.usage_events.map((leg: { model_id: string; outcome: string; charged_nanos: number }) => [
    leg.model_id,
    leg.outcome,
    leg.charged_nanos > 0,
  ])
  expect(legs).toEqual([
    ['small-window', 'failed', false],
    ['large-window', 'ok', true],
  ])
  expect(h.deps.health.view('anthropic', 'small-window')).toEqual({ state: 'closed', ttfb_ms: null, error_rate: 0 })
})

// Codex sets no output limit. Asked for the model's whole output, a long conversation would be
// turned away with most of the window free; it gets what room the window leaves instead.
describe('a Responses request without max_output_tokens', () => {
  const gateway = () =>
    createHarness({
      grantUsd: 5,
      env: { SIM_KEY: simKey },
      config: {
        catalog: { builtin: false },
        providers: simProviders(sim.url),
        models: [simClaude({ profiles: ['pro'], context_window: 20_000, max_output_tokens: 16_000 })],
      },
    })
  // ~8,000 tokens by svc's estimate (4 characters a token).
  const input = 'x'.repeat(32_000)

  test('is served with the room the window leaves (5 % held back for the estimate)', async () => {
    const { openai } = sdkClients(await gateway())
    const response = await openai.responses.create({ model: 'svc-pro', input })
    expect(response.status).toBe('completed')
    expect((sim.requests[0]!.body as { max_tokens: number }).max_tokens).toBe(19_000 - 8_000)
  })

  test('records no clamp of a limit the client never set; a limit it set over the model’s is clamped, and says so', async () => {
    const h = await gateway()
    const reasonFor = async (limit: Record<string, number>) => {
      const res = await h.call('/compat-b/v1/responses', {
        method: 'POST',
        json: { model: 'svc-pro', input: 'hi', ...limit },
      })
      expect(res.status).toBe(200)
      const detail = await requestDetail(h, res.headers.get('x-request-id')!)
      return [(sim.requests.at(-1)!.body as { max_tokens: number }).max_tokens, detail.provider_ranks[0].reason]
    }
    expect(await reasonFor({})).toEqual([16_000, 'eligible'])
    expect(await reasonFor({ max_output_tokens: 64_000 })).toEqual([
      16_000,
      'eligible; max_tokens clamped from 64000 to 16000',
    ])
  })

  test('with its own limit, that limit stands and the prompt does not fit', async () => {
    const { openai } = sdkClients(await gateway())
    const err = await openai.responses.create({ model: 'svc-pro', input, max_output_tokens: 16_000 }).then(
      () => {
        throw new Error('expected a 400')
      },
      (e: unknown) => e as { status: number; error: Record<string, unknown> },
    )
    expect(err.status).toBe(400)
    expect(err.error).toMatchObject({ code: 'context_length_exceeded' })
    expect(sim.requests).toHaveLength(0)
  })
})
