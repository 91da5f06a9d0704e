// A tool loop's history on Anthropic-compatible servers that are not Anthropic (Kimi, DeepSeek:
// `anthropic` kind, their own host), and on Anthropic itself after a fallback. Those servers sign
// thinking their own way (an empty signature here) and refuse a tool-call turn without it; they
// name tool calls `functions.Read:0`, which Anthropic refuses. Claude Code (the Anthropic SDK,
// passed through) and Codex (the Responses shape, translated) each play two turns; the test reads
// what each upstream was sent.
import { describe, expect, test } from 'bun:test'
import { createHarness, endedRequestDetail, type Harness, sdkClients } from './support/harness'
import { sseFrame } from './support/scripted-upstream'

type Json = Record<string, unknown>
// biome-ignore lint/suspicious/noExplicitAny: the upstream bodies are read as the wire has them
type Wire = any

const kimiHost = 'api.moonshot.ai'
const claudeHost = 'api.anthropic.com'

/** svc-pro on a Kimi-like server first and Claude second, neither given `anthropic_signatures`. */
const gateway = () =>
  createHarness({
    grantUsd: 5,
    env: { KIMI: 'kimi-key-0123456789', CLAUDE: 'claude-key-0123456789' },
    config: {
      catalog: { builtin: false },
      providers: {
        kimi: { kind: 'anthropic', base_url: `https://${kimiHost}/anthropic`, api_key_env: 'KIMI' },
        claude: { kind: 'anthropic', base_url: `https://${claudeHost}`, api_key_env: 'CLAUDE' },
      },
      models: [
        { id: 'kimi-k2', provider: 'kimi', quality: 90 },
        { id: 'claude-x', provider: 'claude', quality: 80 },
      ].map((m) => ({
        ...m,
        profiles: ['pro'],
        thinking: true,
        input_usd_per_mtok: 1,
        output_usd_per_mtok: 1,
      })),
    },
  })

interface Sent {
  host: string
  body: Wire
}
type Answer = { status?: number; json?: unknown; sse?: string[] }

/** Every upstream call answered by `answer`, told the host it went to; returns what each was sent. */
function upstream(h: Harness, answer: (host: string, body: Wire) => Answer): Sent[] {
  const sent: Sent[] = []
  h.deps.fetch = (async (url: string, init: RequestInit) => {
    const host = new URL(url).hostname
    const body = JSON.parse(String(init.body))
    sent.push({ host, body })
    const { status = 200, json, sse } = answer(host, body)
    if (sse === undefined || body.stream !== true) return Response.json(json ?? {}, { status })
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const frame of sse) controller.enqueue(new TextEncoder().encode(frame))
        controller.close()
      },
    })
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
  }) as unknown as typeof fetch
  return sent
}

const message = (content: unknown[], stop = 'end_turn') => ({
  id: 'msg_up',
  type: 'message',
  role: 'assistant',
  model: 'kimi-k2',
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: { input_tokens: 100, output_tokens: 7 },
})
const done = { json: message([{ type: 'text', text: 'done' }]) }
const overloaded = { status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'busy' } } }

const kimiThinking = { type: 'thinking', thinking: 'I should read x', signature: '' }
const kimiCall = { type: 'tool_use', id: 'functions.Read:0', name: 'Read', input: { path: 'x' } }

/** Kimi's tool turn as it streams it: thinking with an empty signature, then a call under its own id. */
const kimiToolTurn = [
  sseFrame('message_start', { type: 'message_start', message: { ...message([], ''), stop_reason: null } }),
  sseFrame('content_block_start', {
    type: 'content_block_start',
    index: 0,
    content_block: { ...kimiThinking, thinking: '' },
  }),
  sseFrame('content_block_delta', {
    type: 'content_block_delta',
    index: 0,
    delta: { type: 'thinking_delta', thinking: kimiThinking.thinking },
  }),
  sseFrame('content_block_stop', { type: 'content_block_stop', index: 0 }),
  sseFrame('content_block_start', { type: 'content_block_start', index: 1, content_block: { ...kimiCall, input: {} } }),
  sseFrame('content_block_delta', {
    type: 'content_block_delta',
    index: 1,
    delta: { type: 'input_json_delta', partial_json: '{"path":"x"}' },
  }),
  sseFrame('content_block_stop', { type: 'content_block_stop', index: 1 }),
  sseFrame('message_delta', {
    type: 'message_delta',
    delta: { stop_reason: 'tool_use', stop_sequence: null },
    usage: { output_tokens: 12 },
  }),
  sseFrame('message_stop', { type: 'message_stop' }),
]

const tools = [
  {
    name: 'Read',
    description: 'read',
    input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } },
  },
]
const thinking = { type: 'enabled' as const, budget_tokens: 1024 }
const blockTypes = (message: Wire) => message.content.map((block: Json) => block.type)
const ids = (body: Wire) => [body.messages[1].content.at(-1).id, body.messages[2].content[0].tool_use_id]

/** Claude Code's loop: Kimi streams a tool turn; the client sends it back with the tool's result. */
async function claudeCodeLoop(h: Harness, turnTwo: (host: string) => Answer) {
  let turn = 0
  const sent = upstream(h, (host) => (++turn === 1 ? { sse: kimiToolTurn } : turnTwo(host)))
  const { anthropic } = sdkClients(h)
  const params = { model: 'svc-pro', max_tokens: 2000, thinking, tools }
  const ask = { role: 'user' as const, content: 'read x' }
  const first = await anthropic.messages.stream({ ...params, messages: [ask] }).finalMessage()
  expect(first.content).toEqual([kimiThinking, kimiCall] as never)
  await anthropic.messages.create({
    ...params,
    messages: [
      ask,
      { role: 'assistant', content: first.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'functions.Read:0', content: 'file body' }] },
    ],
  })
  return sent.slice(1)
}

describe('Claude Code (passed through)', () => {
  test("a Kimi-like server gets its tool turn's thinking back as it sent it, thinking on, its ids as they were", async () => {
    const h = await gateway()
    const [next, ...more] = await claudeCodeLoop(h, () => done)
    expect(more).toEqual([])
    expect(next!.host).toBe(kimiHost)
    expect(next!.body.thinking).toEqual(thinking)
    expect(next!.body.messages[1].content).toEqual([kimiThinking, kimiCall])
    expect(ids(next!.body)).toEqual(['functions.Read:0', 'functions.Read:0'])
  })

  test("an earlier tool turn's thinking stays too, while the last turn answered in words", async () => {
    const h = await gateway()
    const sent = upstream(h, () => done)
    const { anthropic } = sdkClients(h)
    await anthropic.messages.create({
      model: 'svc-pro',
      max_tokens: 2000,
      thinking,
      tools,
      messages: [
        { role: 'user', content: 'read x' },
        { role: 'assistant', content: [kimiThinking, kimiCall] as never },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'functions.Read:0', content: 'hi' }] },
        {
          role: 'assistant',
          content: [
            { ...kimiThinking, thinking: 'now answer' },
            { type: 'text', text: 'x says hi' },
          ] as never,
        },
        { role: 'user', content: 'thanks; now read y' },
      ],
    })
    expect(
      sent.map(({ body }) => [
        body.thinking,
        ...body.messages.filter((m: Json) => m.role === 'assistant').map(blockTypes),
      ]),
    ).toEqual([[thinking, ['thinking', 'tool_use'], ['thinking', 'text']]])
  })

  test('falling back to Anthropic itself, the same history goes without the foreign thinking, and with ids it takes', async () => {
    const h = await gateway()
    const [kimi, claude] = await claudeCodeLoop(h, (host) => (host === kimiHost ? overloaded : done))
    expect([kimi!.host, claude!.host]).toEqual([kimiHost, claudeHost])
    expect(kimi!.body.messages[1].content).toEqual([kimiThinking, kimiCall])
    expect(ids(kimi!.body)).toEqual(['functions.Read:0', 'functions.Read:0'])

    expect(blockTypes(claude!.body.messages[1])).toEqual(['tool_use'])
    expect(claude!.body).not.toHaveProperty('thinking')
    const [call, result] = ids(claude!.body)
    expect(call).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(result).toBe(call)
  })
})

describe('Codex (translated from the Responses shape)', () => {
  test("a Kimi-like server gets its tool turn's thinking back on the next turn; Anthropic, after a fallback, does not", async () => {
    const h = await gateway()
    let turn = 0
    const sent = upstream(h, (host) => {
      turn++
      if (turn === 1) return { json: message([kimiThinking, kimiCall], 'tool_use') }
      return turn === 2 && host === kimiHost ? overloaded : done
    })
    const base = {
      model: 'svc-pro',
      store: false,
      include: ['reasoning.encrypted_content'],
      reasoning: { effort: 'medium' },
      tools: tools.map((t) => ({ type: 'function', name: t.name, parameters: t.input_schema })),
    }
    const ask = { role: 'user', content: 'read x' }
    const first = await (
      await h.call('/compat-b/v1/responses', { method: 'POST', json: { ...base, input: [ask] } })
    ).json()
    const call = first.output.find((item: Json) => item.type === 'function_call')
    const input = [ask, ...first.output, { type: 'function_call_output', call_id: call.call_id, output: 'file body' }]
    expect((await h.call('/compat-b/v1/responses', { method: 'POST', json: { ...base, input } })).status).toBe(200)

    const [, kimi, claude] = sent
    expect([kimi!.host, claude!.host]).toEqual([kimiHost, claudeHost])
    expect(kimi!.body.messages[1].content[0]).toEqual(kimiThinking)
    expect(kimi!.body.thinking).toEqual({ type: 'enabled', budget_tokens: 2048 })
    expect(blockTypes(claude!.body.messages[1])).toEqual(['tool_use'])
    expect(claude!.body).not.toHaveProperty('thinking')
  })
})

describe("thinking a compatible server signed in Claude's own form (GLM, MiniMax), met at Anthropic", () => {
  // Anthropic's answer to a signature it did not make; svc cannot tell such a signature from Claude's.
  const refusal = {
    status: 400,
    json: {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'messages.1.content.0: Invalid `signature` in `thinking` block',
      },
    },
  }
  const signedElsewhere = { type: 'thinking', thinking: 'I should read x', signature: 'EqQBCkgIBxABGAIiQGlt' }
  const history = [
    { role: 'user', content: 'read x' },
    { role: 'assistant', content: [signedElsewhere, kimiCall] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'functions.Read:0', content: 'file body' }] },
  ]
  const hasThinking = (body: Wire) =>
    body.messages.some((m: Json) => Array.isArray(m.content) && m.content.some((b: Json) => b.type === 'thinking'))

  test('Anthropic gets the request again without the thinking history, and the client its answer', async () => {
    const h = await gateway()
    const sent = upstream(h, (host, body) => (host === kimiHost ? overloaded : hasThinking(body) ? refusal : done))
    const { anthropic } = sdkClients(h)
    const answer = await anthropic.messages.create({
      model: 'svc-pro',
      max_tokens: 2000,
      thinking,
      tools,
      messages: history as never,
    })
    expect(answer.content).toEqual([{ type: 'text', text: 'done' }] as never)
    const [, refused, resent] = sent
    expect([sent.length, refused!.host, resent!.host]).toEqual([3, claudeHost, claudeHost])
    expect(refused!.body.messages[1].content[0]).toEqual(signedElsewhere)
    // The tool loop's last turn no longer opens with thinking: Claude wants thinking off for it.
    expect(blockTypes(resent!.body.messages[1])).toEqual(['tool_use'])
    expect(resent!.body).not.toHaveProperty('thinking')
    const row = await endedRequestDetail(h, answer._request_id!)
    expect([row.status, row.usage_events.map((leg: Json) => [leg.provider_id, leg.outcome])]).toEqual([
      'completed',
      [
        ['kimi', 'failed'],
        ['claude', 'ok'],
      ],
    ])
  })

  test('any other 400 from Anthropic is not sent again', async () => {
    const h = await gateway()
    const other = { status: 400, json: { type: 'error', error: { type: 'invalid_request_error', message: 'bad' } } }
    const sent = upstream(h, (host) => (host === kimiHost ? overloaded : other))
    const { anthropic } = sdkClients(h)
    const status = await anthropic.messages
      .create({ model: 'svc-pro', max_tokens: 2000, thinking, tools, messages: history as never })
      .then(
        () => 200,
        (err) => err.status,
      )
    expect(status).toBe(400)
    expect(sent.map(({ host }) => host)).toEqual([kimiHost, claudeHost])
  })
})
