// Four things real upstreams do that the simulator plays (test/support/simulator-plan.ts): a
// Responses answer that fails right after its opening (`failure`), a provider account out of
// credit (`no_credit`), Anthropic's redacted_thinking blocks (`redactedThinking`) and a model's
// refusal on both OpenAI dialects (`refusal`). Each is driven through svc with the official SDKs on
// every client surface it can reach, and checked as a user sees it: status, error body, the SDK's
// assembled answer, fallback, and the request's ledger record.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { ModelSection } from '../src/config/schema'
import { createHarness, endedRequestDetail, type Harness, remainingNanos, sdkClients } from './support/harness'
import { type Scenario, startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'k' })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const GRANT = 5_000_000_000
const price = { input_usd_per_mtok: 1, output_usd_per_mtok: 2 }

/**
 * anth: Anthropic; chat: OpenAI Chat; oai: OpenAI's own Responses API (passed through to a Responses
 * client); compat: a compatible Responses server (openai_itself off: translated for every client).
 */
type Upstream = 'anth' | 'chat' | 'oai' | 'compat'
const upstreams = ['anth', 'chat', 'oai'] as const

/** `first` (quality 95) on `primary`, then `backup` (80) on `backup` when given, both under svc-max. */
function gateway(primary: Upstream, backup?: Upstream): Promise<Harness> {
  const models: ModelSection[] = [
    { id: 'first', provider: primary, upstream_model: 'first-up', profiles: ['max'], quality: 95, ...price },
  ]
  if (backup)
    models.push({
      id: 'backup',
      provider: backup,
      upstream_model: 'backup-up',
      profiles: ['max'],
      quality: 80,
      ...price,
    })
  return createHarness({
    grantUsd: 5,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      providers: {
        anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'K' },
        chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'K' },
        oai: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'K', openai_itself: true },
        compat: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'K', openai_itself: false },
      },
      models,
    },
  })
}

/** Another dialect than `upstream`'s, for the backup. */
const otherThan = (upstream: Upstream): Upstream => (upstream === 'chat' ? 'anth' : 'chat')

const ask = [{ role: 'user' as const, content: 'hello' }]

/** One Messages call through the Anthropic SDK: the assembled message (or the error) and the request id. */
async function viaAnthropic(h: Harness, stream: boolean, extra: Partial<Anthropic.MessageCreateParams> = {}) {
  const client = sdkClients(h).anthropic
  const params = {
    model: 'svc-max',
    max_tokens: 2000,
    messages: ask,
    ...extra,
  } as Anthropic.MessageCreateParamsNonStreaming
  try {
    if (stream) {
      const s = client.messages.stream(params)
      const { response } = await s.withResponse()
      const id = response.headers.get('x-request-id')!
      return { message: await s.finalMessage(), id, error: undefined }
    }
    const { data, response } = await client.messages.create(params).withResponse()
    return { message: data, id: response.headers.get('x-request-id')!, error: undefined }
  } catch (error) {
    const id = error instanceof Anthropic.APIError ? (error.headers?.get('x-request-id') ?? null) : null
    return { message: undefined, id, error: error as InstanceType<typeof Anthropic.APIError> }
  }
}

/** The words of a streamed refusal, from its refusal deltas. */
const refusalWords = (events: OpenAI.Responses.ResponseStreamEvent[]) =>
  events.flatMap((e) => (e.type === 'response.refusal.delta' ? [e.delta] : [])).join('')

/** One Responses call through the openai SDK: the final response (a stream's terminal event's), every event, the id. */
async function viaResponses(h: Harness, stream: boolean, extra: Partial<OpenAI.Responses.ResponseCreateParams> = {}) {
  const client = sdkClients(h).openai
  const params = { model: 'svc-max', input: 'hello', ...extra }
  try {
    if (stream) {
      const { data, response } = await client.responses
        .create({ ...params, stream: true } as OpenAI.Responses.ResponseCreateParamsStreaming)
        .withResponse()
      const events: OpenAI.Responses.ResponseStreamEvent[] = []
      for await (const event of data) events.push(event)
      const terminal = events.at(-1) as { response?: OpenAI.Responses.Response }
      return { response: terminal.response, events, id: response.headers.get('x-request-id')!, error: undefined }
    }
    const { data, response } = await client.responses
      .create(params as OpenAI.Responses.ResponseCreateParamsNonStreaming)
      .withResponse()
    return { response: data, events: [], id: response.headers.get('x-request-id')!, error: undefined }
  } catch (error) {
    const id = error instanceof OpenAI.APIError ? (error.headers?.get('x-request-id') ?? null) : null
    return { response: undefined, events: [], id, error: error as InstanceType<typeof OpenAI.APIError> }
  }
}

type Leg = { model_id: string; outcome: string; cost_nanos: number; charged_nanos: number; error: string | null }
const legsOf = (detail: { usage_events: Leg[] }) =>
  detail.usage_events.map((l) => [l.model_id, l.outcome, l.cost_nanos, l.charged_nanos])

/** A fallback's record: the first leg failed and cost nothing, the backup's answer paid for the request. */
async function expectFellBack(h: Harness, id: string, firstLegError: RegExp) {
  const detail = await endedRequestDetail(h, id)
  expect(detail).toMatchObject({ status: 'completed', http_status: 200, attempts: 2, selected_model_id: 'backup' })
  const backupCost = detail.usage_events[1].cost_nanos
  expect(backupCost).toBeGreaterThan(0)
  expect(legsOf(detail)).toEqual([
    ['first', 'failed', 0, 0],
    ['backup', 'ok', backupCost, backupCost],
  ])
  expect(detail.usage_events[0].error).toMatch(firstLegError)
  expect(detail).toMatchObject({ total_cost_nanos: backupCost, charged_nanos: backupCost })
  expect(await remainingNanos(h)).toBe(GRANT - backupCost)
}

/** A request every candidate failed: recorded failed, nothing charged. */
async function expectFailedUncharged(h: Harness, id: string, status: number) {
  const detail = await endedRequestDetail(h, id)
  expect(detail).toMatchObject({ status: 'failed', http_status: status, total_cost_nanos: 0, charged_nanos: 0 })
  expect(detail.usage_events.every((l: Leg) => l.outcome === 'failed' && l.cost_nanos === 0)).toBe(true)
  expect(await remainingNanos(h)).toBe(GRANT)
}

const backupText = 'Backup here.'
const modes = [false, true].map((stream) => ({ stream, name: stream ? 'streamed' : 'not streamed' }))

describe('a Responses answer that fails right after its opening (response.failed)', () => {
  const failure = { code: 'server_error', message: 'An error occurred while processing your request.' }

  for (const { stream, name } of modes) {
    test(`${name}: nothing reached either client, so the next candidate serves; the failed leg costs nothing`, async () => {
      for (const client of ['anthropic', 'responses'] as const) {
        sim.reset()
        const h = await gateway('oai', 'chat')
        sim.setScenario('first-up', { failure })
        sim.setScenario('backup-up', { text: backupText })
        if (client === 'anthropic') {
          const { message, id, error } = await viaAnthropic(h, stream)
          expect(error).toBeUndefined()
          expect(message).toMatchObject({ model: 'backup-up', content: [{ type: 'text', text: backupText }] })
          await expectFellBack(h, id!, /An error occurred while processing your request/)
        } else {
          const { response, events, id, error } = await viaResponses(h, stream)
          expect(error).toBeUndefined()
          expect(response?.status).toBe('completed')
          expect(response?.output).toMatchObject([{ type: 'message', content: [{ text: backupText }] }])
          // One answer, not a failed one followed by another.
          expect(events.filter((e) => e.type === 'response.failed')).toEqual([])
          expect(events.filter((e) => e.type === 'response.created')).toHaveLength(stream ? 1 : 0)
          await expectFellBack(h, id!, /An error occurred while processing your request/)
        }
        expect(sim.requests.map((r) => (r.body as { model: string }).model)).toEqual(['first-up', 'backup-up'])
      }
    })

    test(`${name}, no candidate left: a server error in each client's own shape, recorded failed, uncharged`, async () => {
      const h = await gateway('oai')
      sim.setScenario('first-up', { failure })
      const a = await viaAnthropic(h, stream)
      expect(a.error).toBeInstanceOf(Anthropic.InternalServerError)
      expect(a.error).toMatchObject({
        status: 500,
        error: { type: 'error', error: { type: 'api_error', message: failure.message } },
      })
      await expectFailedUncharged(h, a.id!, 500)

      const r = await viaResponses(h, stream)
      expect(r.error).toBeInstanceOf(OpenAI.InternalServerError)
      expect(r.error).toMatchObject({
        status: 500,
        code: 'server_error',
        type: 'server_error',
        message: expect.stringContaining(failure.message),
      })
      await expectFailedUncharged(h, r.id!, 500)
    })

    test(`${name}, a rate limit met mid-generation: said as the gateway's account's, never the client's own`, async () => {
      const h = await gateway('oai')
      sim.setScenario('first-up', {
        failure: {
          code: 'rate_limit_exceeded',
          message: 'Rate limit reached for gpt in organization org-sim on tokens per min (TPM).',
        },
      })
      const a = await viaAnthropic(h, stream)
      expect(a.error).toBeInstanceOf(Anthropic.RateLimitError)
      expect(a.error?.message).toContain("gateway's own account")
      expect(a.error?.message).not.toContain('org-sim')
      await expectFailedUncharged(h, a.id!, 429)
      const r = await viaResponses(h, stream)
      expect(r.error).toBeInstanceOf(OpenAI.RateLimitError)
      expect(r.error?.message).toContain("gateway's own account")
      expect(r.error?.code).not.toBe('insufficient_quota')
      await expectFailedUncharged(h, r.id!, 429)
    })
  }
})

describe('a provider account out of credit (OpenAI 429 insufficient_quota, Anthropic 400 credit balance)', () => {
  const noCredit: Scenario = { fault: { kind: 'no_credit' } }
  const providerWords: Record<(typeof upstreams)[number], RegExp> = {
    anth: /credit balance ran too low/,
    chat: /You exceeded your current quota/,
    oai: /You exceeded your current quota/,
  }

  for (const upstream of upstreams) {
    for (const { stream, name } of modes) {
      test(`${upstream}, ${name}: a billing failure falls back to the next candidate on both clients`, async () => {
        for (const client of ['anthropic', 'responses'] as const) {
          sim.reset()
          const h = await gateway(upstream, otherThan(upstream))
          sim.setScenario('first-up', noCredit)
          sim.setScenario('backup-up', { text: backupText })
          const result = client === 'anthropic' ? await viaAnthropic(h, stream) : await viaResponses(h, stream)
          expect(result.error).toBeUndefined()
          if (client === 'anthropic')
            expect(JSON.stringify((result as { message: unknown }).message)).toContain(backupText)
          else expect((result as { response: OpenAI.Responses.Response }).response.status).toBe('completed')
          await expectFellBack(h, result.id!, providerWords[upstream])
        }
      })
    }

    test(`${upstream}, no candidate left: the gateway's account failed (502 / 400), never the client's own credit or rate limit`, async () => {
      const h = await gateway(upstream)
      sim.setScenario('first-up', noCredit)
      for (const { stream } of modes) {
        const a = await viaAnthropic(h, stream)
        // Not a 429 (the client's own rate limit, which the SDK and Claude Code retry) nor a 402 (its own credit).
        expect(a.error).toBeInstanceOf(Anthropic.APIError)
        expect(a.error).toMatchObject({ status: 502, error: { type: 'error', error: { type: 'api_error' } } })
        expect(a.error?.headers?.get('x-should-retry')).toBe('false')
        expect(a.error?.message).toContain("refused the gateway's own account there")
        expect(a.error?.message).toContain('your svc key is fine')
        expect(a.error?.message).toMatch(providerWords[upstream])
        await expectFailedUncharged(h, a.id!, 502)

        const r = await viaResponses(h, stream)
        // Not OpenAI's 429 insufficient_quota, which would tell Codex its own quota is spent.
        expect(r.error).toBeInstanceOf(OpenAI.BadRequestError)
        expect(r.error?.status).toBe(400)
        expect(r.error?.code).not.toBe('insufficient_quota')
        expect(r.error?.headers?.get('x-should-retry')).toBe('false')
        expect(r.error?.message).toContain("refused the gateway's own account there")
        await expectFailedUncharged(h, r.id!, 400)
      }
    })
  }
})

describe("Anthropic's redacted_thinking blocks", () => {
  const data = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP'
  const thinking = 'Let me think about the weather.'
  const answer: Scenario = { thinking, redactedThinking: data, text: 'Sunny.' }
  const weatherTool = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object' as const } }

  for (const { stream, name } of modes) {
    test(`${name}, Anthropic client: the block arrives whole and in place; the answer is charged`, async () => {
      const h = await gateway('anth')
      sim.setScenario('first-up', answer)
      const { message, id, error } = await viaAnthropic(h, stream, {
        thinking: { type: 'enabled', budget_tokens: 1024 },
      })
      expect(error).toBeUndefined()
      expect(message?.content).toEqual([
        { type: 'thinking', thinking, signature: expect.any(String) },
        { type: 'redacted_thinking', data },
        expect.objectContaining({ type: 'text', text: 'Sunny.' }),
      ])
      const detail = await endedRequestDetail(h, id!)
      expect(detail.status).toBe('completed')
      expect(detail.usage_events[0]).toMatchObject({ outcome: 'ok', charged_nanos: detail.usage_events[0].cost_nanos })
      expect(detail.usage_events[0].cost_nanos).toBeGreaterThan(0)
    })

    test(`${name}, Anthropic client: a tool loop's replay gives Claude the redacted block back unchanged`, async () => {
      const h = await gateway('anth')
      sim.setScenario('first-up', {
        ...answer,
        text: undefined,
        toolCall: { id: 'toolu_1', name: 'get_weather', arguments: {} },
      })
      const first = await viaAnthropic(h, stream, {
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [weatherTool],
      })
      expect(first.message?.content.map((b) => b.type)).toEqual(['thinking', 'redacted_thinking', 'tool_use'])
      sim.setScenario('first-up', { text: 'Sunny.' })
      const second = await viaAnthropic(h, stream, {
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: [weatherTool],
        messages: [
          ...ask,
          { role: 'assistant', content: first.message!.content as Anthropic.ContentBlockParam[] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' }] },
        ],
      })
      expect(second.error).toBeUndefined()
      const sent = (sim.requests[1]!.body as { messages: { content: unknown }[] }).messages[1]!.content
      expect(sent).toEqual([
        expect.objectContaining({ type: 'thinking', thinking }),
        { type: 'redacted_thinking', data },
        expect.objectContaining({ type: 'tool_use', id: 'toolu_1' }),
      ])
    })

    test(`${name}, Responses client asking for encrypted reasoning: the block rides in a reasoning item and goes back to Claude as it came`, async () => {
      const h = await gateway('anth')
      sim.setScenario('first-up', answer)
      const include = ['reasoning.encrypted_content' as const]
      const first = await viaResponses(h, stream, { include, reasoning: { effort: 'low' } })
      expect(first.error).toBeUndefined()
      const output = first.response!.output
      expect(output.map((item) => item.type)).toEqual(['reasoning', 'reasoning', 'message'])
      const blobs = output
        .filter((i) => i.type === 'reasoning')
        .map((i) => (i as { encrypted_content?: string }).encrypted_content)
      expect(blobs.every((b) => typeof b === 'string' && b.length > 0)).toBe(true)
      await expect(endedRequestDetail(h, first.id!)).resolves.toMatchObject({ status: 'completed' })

      sim.setScenario('first-up', { text: 'Still sunny.' })
      const second = await viaResponses(h, stream, {
        include,
        reasoning: { effort: 'low' },
        input: [
          { role: 'user', content: 'hello' },
          ...(output as OpenAI.Responses.ResponseInputItem[]),
          { role: 'user', content: 'and tomorrow?' },
        ],
      })
      expect(second.error).toBeUndefined()
      const history = (sim.requests[1]!.body as { messages: { role: string; content: unknown }[] }).messages
      const assistant = history.find((m) => m.role === 'assistant')!
      expect(assistant.content).toEqual([
        expect.objectContaining({ type: 'thinking', thinking, signature: expect.any(String) }),
        { type: 'redacted_thinking', data },
        expect.objectContaining({ type: 'text', text: 'Sunny.' }),
      ])
    })
  }

  test('history with a redacted block, served by a Chat model after Claude failed: left out, the words kept, no 400', async () => {
    for (const { stream } of modes) {
      sim.reset()
      const h = await gateway('anth', 'chat')
      sim.setScenario('first-up', { fault: { kind: 'status', status: 529 } })
      sim.setScenario('backup-up', { text: backupText })
      const { message, id, error } = await viaAnthropic(h, stream, {
        messages: [
          ...ask,
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking, signature: 'c2ln' },
              { type: 'redacted_thinking', data },
              { type: 'text', text: 'Sunny.' },
            ],
          },
          { role: 'user', content: 'and tomorrow?' },
        ],
      })
      expect(error).toBeUndefined()
      expect(message?.model).toBe('backup-up')
      const body = JSON.stringify(sim.requests[1]?.body)
      expect(body).not.toContain(data)
      expect(body).toContain('Sunny.')
      await expectFellBack(h, id!, /Overloaded/)
    }
  })

  test('a Responses client that did not ask for encrypted reasoning gets the answer without the opaque block', async () => {
    const h = await gateway('anth')
    sim.setScenario('first-up', answer)
    for (const { stream } of modes) {
      const { response, error } = await viaResponses(h, stream, { reasoning: { effort: 'low' } })
      expect(error).toBeUndefined()
      expect(response!.status).toBe('completed')
      expect(JSON.stringify(response)).not.toContain(data)
      expect(response!.output.at(-1)).toMatchObject({ type: 'message', content: [{ text: 'Sunny.' }] })
    }
  })
})

describe("a model's refusal (Chat delta.refusal / message.refusal, Responses refusal parts)", () => {
  const refusal = "I'm sorry, but I can't help with that request."

  for (const upstream of ['chat', 'oai', 'compat'] as const) {
    for (const { stream, name } of modes) {
      test(`${upstream} → Anthropic client, ${name}: the refusal's words as text, stop_reason refusal; charged as an answer`, async () => {
        const h = await gateway(upstream)
        sim.setScenario('first-up', { refusal })
        const { message, id, error } = await viaAnthropic(h, stream)
        expect(error).toBeUndefined()
        expect(message).toMatchObject({ stop_reason: 'refusal', content: [{ type: 'text', text: refusal }] })
        expect(message!.content).toHaveLength(1)
        const detail = await endedRequestDetail(h, id!)
        expect(detail).toMatchObject({ status: 'completed', attempts: 1 })
        expect(detail.usage_events[0]).toMatchObject({ outcome: 'ok', estimated: false })
        expect(detail.usage_events[0].charged_nanos).toBe(detail.usage_events[0].cost_nanos)
        expect(detail.usage_events[0].cost_nanos).toBeGreaterThan(0)
      })
    }
  }

  for (const { stream, name } of modes) {
    test(`OpenAI's Responses → Responses client, ${name}: the refusal part passes through as OpenAI sent it`, async () => {
      const h = await gateway('oai')
      sim.setScenario('first-up', { refusal })
      const { response, events, id, error } = await viaResponses(h, stream)
      expect(error).toBeUndefined()
      expect(response).toMatchObject({
        status: 'completed',
        output: [{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal }] }],
      })
      if (stream) {
        expect(refusalWords(events)).toBe(refusal)
        expect(events.find((e) => e.type === 'response.refusal.done')).toMatchObject({ refusal })
      }
      await expect(endedRequestDetail(h, id!)).resolves.toMatchObject({ status: 'completed' })
    })

    // OpenAI's own Responses API answers a model's refusal as a message whose content part is
    // `{type: "refusal"}` and a response `completed`: a client that checks for a refusal part
    // (OpenAI's structured-output guide) finds it whichever upstream declined.
    for (const upstream of ['chat', 'compat'] as const) {
      test(`${upstream} → Responses client, ${name}: a refusal is a \`refusal\` content part in a completed response, as OpenAI answers it`, async () => {
        const h = await gateway(upstream)
        sim.setScenario('first-up', { refusal })
        const { response, events, id, error } = await viaResponses(h, stream)
        expect(error).toBeUndefined()
        expect(response).toMatchObject({
          status: 'completed',
          incomplete_details: null,
          output: [
            { type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'refusal', refusal }] },
          ],
        })
        expect(response!.output).toHaveLength(1)
        expect(JSON.stringify(response!.output)).not.toContain('output_text')
        if (stream) {
          const types = events.map((e) => e.type)
          expect(types).toEqual([
            'response.created',
            'response.in_progress',
            'response.output_item.added',
            'response.content_part.added',
            ...types.filter((t) => t === 'response.refusal.delta'),
            'response.refusal.done',
            'response.content_part.done',
            'response.output_item.done',
            'response.completed',
          ])
          expect(events[3]).toMatchObject({ part: { type: 'refusal', refusal: '' } })
          expect(refusalWords(events)).toBe(refusal)
          expect(events.find((e) => e.type === 'response.refusal.done')).toMatchObject({ refusal })
          expect(events.find((e) => e.type === 'response.content_part.done')).toMatchObject({
            part: { type: 'refusal', refusal },
          })
        }
        // Charged as an answer, as before.
        const detail = await endedRequestDetail(h, id!)
        expect(detail).toMatchObject({ status: 'completed', attempts: 1 })
        expect(detail.usage_events[0]).toMatchObject({ outcome: 'ok', estimated: false })
        expect(detail.usage_events[0].charged_nanos).toBe(detail.usage_events[0].cost_nanos)
        expect(detail.usage_events[0].cost_nanos).toBeGreaterThan(0)
      })

      test(`${upstream}, ${name}: a Responses client's history with the refusal part goes back upstream as its words`, async () => {
        const h = await gateway(upstream)
        sim.setScenario('first-up', { text: 'Fine.' })
        const declined: OpenAI.Responses.ResponseOutputMessage = {
          id: 'msg_1',
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'refusal', refusal }],
        }
        const { response, error } = await viaResponses(h, stream, {
          input: [{ role: 'user', content: 'hello' }, declined, { role: 'user', content: 'something else, then' }],
        })
        expect(error).toBeUndefined()
        expect(response).toMatchObject({ status: 'completed', output: [{ content: [{ type: 'output_text' }] }] })
        const body = sim.requests[0]!.body as { messages?: { role: string; content: unknown }[]; input?: unknown[] }
        if (upstream === 'chat') expect(body.messages![1]).toMatchObject({ role: 'assistant', content: refusal })
        else
          expect(body.input![1]).toMatchObject({
            type: 'message',
            role: 'assistant',
            content: [{ type: 'output_text', text: refusal }],
          })
      })
    }
  }
})
