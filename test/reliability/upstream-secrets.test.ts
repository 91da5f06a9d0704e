// An upstream that quotes the request's key in its error (a compatible server echoing headers):
// the key reaches neither the client, nor the log, nor the ledger.
import { afterAll, describe, expect, test } from 'bun:test'
import { createLogger } from '../../src/lib/log'
import { createHarness, requestDetail } from '../support/harness'
import { simClaude } from '../support/sim-models'
import { anthropicEvent, anthropicMessageStart, scriptedPair, scriptedUpstream } from '../support/scripted-upstream'

const PLATFORM_KEY = 'PLATFORM-SECRET-KEY-abc123'
const echoing = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: (request) =>
    Response.json(
      {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: `bad request; you sent x-api-key ${request.headers.get('x-api-key')} and {"authorization":"Bearer sk-live-0123456789abcdef"}`,
        },
      },
      { status: 400 },
    ),
})
afterAll(() => echoing.stop(true))

describe('an upstream that quotes the key', () => {
  test('the client, the log and the ledger get its words without the key', async () => {
    const h = await createHarness({
      grantUsd: 5,
      env: { ECHO_KEY: PLATFORM_KEY },
      config: {
        catalog: { builtin: false },
        providers: { echo: { kind: 'anthropic', base_url: echoing.url.href, api_key_env: 'ECHO_KEY' } },
        models: [simClaude({ provider: 'echo' })],
      },
    })
    const logged: string[] = []
    h.deps.log = createLogger('info', (line) => logged.push(line))
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-max', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(res.status).toBe(400)
    const said = 'bad request; you sent x-api-key [redacted] and {"authorization":"[redacted]"}'
    expect((await res.json()).error.message).toBe(said)
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.usage_events[0].error).toBe(said)
    // A refusal of the request may quote it (below): the log tells its length, not its words.
    expect(logged.join('')).toContain(
      `(the upstream refused the request: ${said.length} characters, in the request's record)`,
    )
    const everything = JSON.stringify(detail) + logged.join('')
    expect(everything).not.toContain(PLATFORM_KEY)
    expect(everything).not.toContain('sk-live-0123456789abcdef')
  })
})

describe('an upstream whose refusal quotes the prompt (vLLM echoes the whole input of a request it refuses)', () => {
  const echoingInput = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: async (request) => {
      const { messages } = (await request.json()) as { messages: unknown }
      const said = `[{'type': 'extra_forbidden', 'loc': ('body', 'x'), 'input': ${JSON.stringify(messages)}}]`
      return Response.json(
        { object: 'error', message: said, type: 'BadRequestError', param: null, code: 400 },
        { status: 400 },
      )
    },
  })
  afterAll(() => echoingInput.stop(true))

  test('the client and its record get the words; the log, never the prompt', async () => {
    const h = await createHarness({
      grantUsd: 5,
      env: { K: 'vllm-key-0123456789' },
      config: {
        catalog: { builtin: false },
        providers: { vllm: { kind: 'openai-chat', base_url: `${echoingInput.url.href}v1`, api_key_env: 'K' } },
        models: [simClaude({ provider: 'vllm' })],
      },
    })
    const logged: string[] = []
    h.deps.log = createLogger('info', (line) => logged.push(line))
    const prompt = 'MY-SECRET-PROMPT: my password is hunter2'
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-max', max_tokens: 10, messages: [{ role: 'user', content: prompt }] },
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error.message).toContain('hunter2')
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.usage_events[0].error).toContain('hunter2')
    expect(logged.some((line) => line.includes('upstream leg failed'))).toBe(true)
    expect(logged.some((line) => line.includes('"msg":"request"'))).toBe(true)
    expect(logged.join('\n')).not.toContain('hunter2')
  })
})

describe('an upstream that quotes the key in an error event, once the answer has begun', () => {
  const upstreamKey = 'upstream-key-0123456789' // scriptedPair's
  const frames = [
    anthropicMessageStart('first-up', 5),
    anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'partial answer' } }),
    // Headers echoed as JSON inside the message: in the frame, its quotes are escaped.
    anthropicEvent('error', {
      error: {
        type: 'api_error',
        message: `bad header x-api-key ${upstreamKey} in {"authorization":"Bearer ${upstreamKey}"}`,
      },
    }),
  ]

  test.each([
    [
      'relayed to an Anthropic client',
      '/compat-a/v1/messages',
      { max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] },
    ],
    ['translated for a Responses client', '/compat-b/v1/responses', { input: 'hi' }],
  ])('%s: the client, the log and the ledger get its words without the key', async (_route, path, body) => {
    const h = await scriptedPair('anthropic')
    scriptedUpstream(h, () => ({ sse: frames }))
    const logged: string[] = []
    h.deps.log = createLogger('info', (line) => logged.push(line))
    const res = await h.call(path, {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', stream: true, ...body },
    })
    const stream = await res.text()
    expect(stream).toContain('partial answer')
    expect(stream).toContain('bad header x-api-key [redacted]')
    // Every frame still JSON, so the SDKs read the error as the upstream's, not as a broken stream.
    for (const line of stream.split('\n').filter((l) => l.startsWith('data: ')))
      expect(() => JSON.parse(line.slice(6))).not.toThrow()
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.usage_events[0].error).toStartWith('bad header x-api-key [redacted] in ')
    expect(stream + JSON.stringify(detail) + logged.join('')).not.toContain(upstreamKey)
  })
})

describe("a rate limit of the platform's key (OpenAI's and Anthropic's name the gateway's organization and its usage)", () => {
  const openaiWords =
    'Rate limit reached for gpt-5 in organization org-AbCdEf123456 on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000. Please try again in 2s. Visit https://platform.openai.com/account/rate-limits to learn more.'

  test("the client and its record get svc's words; an account's own key keeps the provider's", async () => {
    const h = await scriptedPair('openai-chat')
    const logged: string[] = []
    h.deps.log = createLogger('info', (line) => logged.push(line))
    scriptedUpstream(h, () => ({
      status: 429,
      json: { error: { message: openaiWords, type: 'tokens', param: null, code: 'rate_limit_exceeded' } },
    }))
    const ask = () =>
      h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: 'svc-pro', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
      })
    const res = await ask()
    expect(res.status).toBe(429)
    const said = (await res.json()).error.message
    expect(said).toBe(
      "p is rate-limiting the gateway's own account there (a limit its users share, not your svc key's): retry shortly",
    )
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(JSON.stringify(detail)).not.toContain('org-AbCdEf123456')
    // The operator's log keeps the provider's words: which limit (tokens a minute, requests a day).
    const legLines = logged.map((line) => JSON.parse(line)).filter((line) => line.msg === 'upstream leg failed')
    expect(legLines.map((line) => [line.status, line.error])).toEqual([
      [429, openaiWords],
      [429, openaiWords],
    ])

    // The account's own key (BYOK): its organization, its limits, its words.
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'p', key: 'own-key-0123456789' })
    const own = await ask()
    expect(own.status).toBe(429)
    expect((await own.json()).error.message).toBe(openaiWords)
  })
})
