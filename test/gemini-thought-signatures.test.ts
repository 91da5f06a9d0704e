// Gemini 3 through Google's OpenAI-compatible endpoint, or through OpenRouter: its tool calls carry
// a thought signature (Google's `extra_content.google.thought_signature`, OpenRouter's
// `reasoning_details`) that must come back with the call in the next turn, or Gemini refuses the
// turn (400 "Function call is missing a thought_signature"). Claude Code (the Anthropic SDK) and
// Codex (the Responses shape) each play a tool loop; the test reads what each upstream was sent:
// Gemini its signature, every other upstream the call's id as Gemini gave it.
import { describe, expect, test } from 'bun:test'
import { createHarness, type Harness, sdkClients } from './support/harness'
import { type ScriptedAnswer, scriptedUpstream, sseFrame } from './support/scripted-upstream'

// biome-ignore lint/suspicious/noExplicitAny: the upstream bodies are read as the wire has them
type Wire = any

// A real signature is base64 of a few hundred bytes and more: '+', '/' and '=' included.
const signature = `CrICAdHt+im827fQ/${'x'.repeat(600)}==`
const callId = 'function-call-7'
const googleHost = 'generativelanguage.googleapis.com'

/**
 * svc-pro on Gemini first, then Claude, a Chat router and OpenAI's Responses API: each fallback
 * reads the conversation in its own dialect.
 */
const gateway = () =>
  createHarness({
    grantUsd: 5,
    env: { K: 'upstream-key-0123456789' },
    config: {
      catalog: { builtin: false },
      routing: { max_attempts: 4 },
      providers: {
        google: { kind: 'openai-chat', base_url: `https://${googleHost}/v1beta/openai`, api_key_env: 'K' },
        claude: { kind: 'anthropic', base_url: 'https://api.anthropic.com', api_key_env: 'K' },
        router: { kind: 'openai-chat', base_url: 'https://openrouter.ai/api/v1', api_key_env: 'K' },
        openai: { kind: 'openai-responses', base_url: 'https://api.openai.com/v1', api_key_env: 'K' },
      },
      models: [
        { id: 'gemini-3-pro-preview', provider: 'google', quality: 90 },
        { id: 'claude-x', provider: 'claude', quality: 85 },
        { id: 'router-x', provider: 'router', quality: 80 },
        { id: 'gpt-x', provider: 'openai', quality: 75 },
      ].map((m) => ({ ...m, profiles: ['pro'], input_usd_per_mtok: 1, output_usd_per_mtok: 1 })),
    },
  })

const chunk = (delta: Wire, finish: string | null = null, usage?: Wire) => ({
  id: 'chatcmpl-g',
  object: 'chat.completion.chunk',
  model: 'gemini-3-pro-preview',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...(usage ? { usage } : {}),
})
const usage = { prompt_tokens: 50, completion_tokens: 9, total_tokens: 59 }
const signedCall = {
  id: callId,
  type: 'function',
  function: { name: 'Read', arguments: '{"path":"x"}' },
  extra_content: { google: { thought_signature: signature } },
}

/** Gemini's tool turn as its compatible endpoint streams it: the call whole in one fragment, signed. */
const geminiStreamedCall: ScriptedAnswer = {
  sse: [
    sseFrame(undefined, chunk({ role: 'assistant', tool_calls: [{ index: 0, ...signedCall }] })),
    sseFrame(undefined, chunk({}, 'tool_calls', usage)),
    sseFrame(undefined, '[DONE]'),
  ],
}
const geminiJsonCall: ScriptedAnswer = {
  json: {
    id: 'chatcmpl-g',
    object: 'chat.completion',
    model: 'gemini-3-pro-preview',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: null, tool_calls: [signedCall] },
        finish_reason: 'tool_calls',
      },
    ],
    usage,
  },
}
const chatText: ScriptedAnswer = {
  json: {
    id: 'chatcmpl-t',
    object: 'chat.completion',
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: 'done' }, finish_reason: 'stop' }],
    usage,
  },
}
const responsesText: ScriptedAnswer = {
  json: {
    id: 'resp_1',
    object: 'response',
    status: 'completed',
    model: 'gpt-x',
    output: [
      {
        type: 'message',
        id: 'msg_1',
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: 'done', annotations: [] }],
      },
    ],
    usage: { input_tokens: 50, output_tokens: 9, total_tokens: 59 },
  },
}
const failed: ScriptedAnswer = { status: 500, json: { error: { message: 'down', type: 'server_error' } } }

const tools = [
  {
    name: 'Read',
    description: 'read',
    input_schema: { type: 'object' as const, properties: { path: { type: 'string' } } },
  },
]

interface Sent {
  host: string
  body: Wire
}

/** Every upstream call answered by host (`first` for the loop's first call); returns what each was sent. */
function upstream(h: Harness, first: ScriptedAnswer, next: (host: string) => ScriptedAnswer): Sent[] {
  const sent: Sent[] = []
  scriptedUpstream(h, (body, url) => {
    sent.push({ host: url.hostname, body })
    return sent.length === 1 ? first : next(url.hostname)
  })
  return sent
}

/** Claude Code's loop: Gemini streams a tool turn; the client sends it back with the tool's result. */
async function claudeCodeLoop(h: Harness, next: (host: string) => ScriptedAnswer, first = geminiStreamedCall) {
  const sent = upstream(h, first, next)
  const { anthropic } = sdkClients(h)
  const ask = { role: 'user' as const, content: 'read x' }
  const params = { model: 'svc-pro', max_tokens: 2000, tools }
  const answer = await anthropic.messages.stream({ ...params, messages: [ask] }).finalMessage()
  const call = answer.content.find((block) => block.type === 'tool_use')!
  // What Anthropic's own API would take from a client that sends it there.
  expect(call.id).toMatch(/^[a-zA-Z0-9_-]+$/)
  expect(call.input).toEqual({ path: 'x' })
  await anthropic.messages.create({
    ...params,
    messages: [
      ask,
      { role: 'assistant', content: answer.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'file body' }] },
    ],
  })
  return sent.slice(1)
}

/** Codex's loop: Gemini answers a tool call as JSON; the client sends the call back with its output. */
async function codexLoop(h: Harness, next: (host: string) => ScriptedAnswer, first = geminiJsonCall) {
  const sent = upstream(h, first, next)
  const { openai } = sdkClients(h)
  const codexTools = [{ type: 'function' as const, name: 'Read', strict: false, parameters: tools[0]!.input_schema }]
  const ask = { role: 'user' as const, content: 'read x' }
  const answer = await openai.responses.create({ model: 'svc-pro', input: [ask], tools: codexTools, store: false })
  const call = answer.output.find((item) => item.type === 'function_call')!
  expect(call.arguments).toBe('{"path":"x"}')
  await openai.responses.create({
    model: 'svc-pro',
    tools: codexTools,
    store: false,
    input: [
      ask,
      { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
      { type: 'function_call_output', call_id: call.call_id, output: 'file body' },
    ],
  })
  return sent.slice(1)
}

/** The Chat body's tool call and the id its result answers. */
const chatCall = (body: Wire) => ({
  call: body.messages.find((m: Wire) => m.role === 'assistant').tool_calls[0],
  answers: body.messages.find((m: Wire) => m.role === 'tool').tool_call_id,
})

const geminiGetsItsSignatureBack = (gemini: Sent) => {
  expect(gemini.host).toBe(googleHost)
  const { call, answers } = chatCall(gemini.body)
  expect(call).toEqual({ ...signedCall, function: { name: 'Read', arguments: '{"path":"x"}' } })
  expect(answers).toBe(callId)
}

/** Each fallback upstream's copy of the call and of the id its result answers. */
const idsEachFallbackRead = (sent: Sent[]) =>
  sent.slice(1).map(({ host, body }) => {
    if (body.messages === undefined) {
      const [call, output] = body.input.filter((item: Wire) => item.call_id !== undefined)
      return [host, call.call_id, output.call_id, 'extra_content' in call]
    }
    if (host === 'api.anthropic.com') {
      const call = body.messages[1].content.find((b: Wire) => b.type === 'tool_use')
      return [host, call.id, body.messages[2].content[0].tool_use_id, false]
    }
    const { call, answers } = chatCall(body)
    const signatureSent = 'extra_content' in call || body.messages.some((m: Wire) => 'reasoning_details' in m)
    return [host, call.id, answers, signatureSent]
  })

describe.each([
  ['Claude Code (Anthropic in, a streamed Gemini answer)', claudeCodeLoop],
  ['Codex (Responses in, a JSON Gemini answer, a stateless client)', codexLoop],
])('%s', (_client, loop) => {
  test("Gemini gets its call's signature back, on the call, under the id it gave", async () => {
    const h = await gateway()
    const [gemini, ...more] = await loop(h, () => chatText)
    expect(more).toEqual([])
    geminiGetsItsSignatureBack(gemini!)
  })

  test('every fallback upstream gets the id as Gemini gave it, without the signature', async () => {
    const h = await gateway()
    const sent = await loop(h, (host) => (host === 'api.openai.com' ? responsesText : failed))
    geminiGetsItsSignatureBack(sent[0]!)
    expect(idsEachFallbackRead(sent)).toEqual([
      ['api.anthropic.com', callId, callId, false],
      ['openrouter.ai', callId, callId, false],
      ['api.openai.com', callId, callId, false],
    ])
  })
})

test("a tool turn another model wrote reaches Gemini with Google's skip signature on its first call only", async () => {
  const h = await gateway()
  const sent = upstream(h, chatText, () => chatText)
  const { anthropic } = sdkClients(h)
  const readCall = (id: string, path: string) => ({ type: 'tool_use' as const, id, name: 'Read', input: { path } })
  const answer = (id: string) => ({ type: 'tool_result' as const, tool_use_id: id, content: 'body' })
  await anthropic.messages.create({
    model: 'svc-pro',
    max_tokens: 2000,
    tools,
    messages: [
      { role: 'user', content: 'read x and y' },
      { role: 'assistant', content: [readCall('toolu_01a', 'x'), readCall('toolu_01b', 'y')] },
      { role: 'user', content: [answer('toolu_01a'), answer('toolu_01b')] },
    ],
  })
  const calls = sent[0]!.body.messages[1].tool_calls
  expect(calls.map((call: Wire) => [call.id, call.extra_content])).toEqual([
    ['toolu_01a', { google: { thought_signature: 'skip_thought_signature_validator' } }],
    ['toolu_01b', undefined],
  ])
})

describe('through OpenRouter (its reasoning_details)', () => {
  const openRouterHost = 'openrouter.ai'
  const gemini = () =>
    createHarness({
      grantUsd: 5,
      env: { K: 'upstream-key-0123456789' },
      config: {
        catalog: { builtin: false },
        providers: { openrouter: { kind: 'openai-chat', base_url: 'https://openrouter.ai/api/v1', api_key_env: 'K' } },
        models: [
          {
            id: 'gemini-3-pro',
            provider: 'openrouter',
            upstream_model: 'google/gemini-3-pro-preview',
            profiles: ['pro'],
            quality: 90,
            input_usd_per_mtok: 1,
            output_usd_per_mtok: 1,
          },
        ],
      },
    })
  // OpenRouter's reasoning detail for a Gemini call: its signature, under the call's id.
  const details = [{ type: 'reasoning.encrypted', data: signature, id: callId, format: 'google-gemini-v1', index: 0 }]
  const { extra_content: _, ...call } = signedCall
  const streamed: ScriptedAnswer = {
    sse: [
      sseFrame(undefined, chunk({ role: 'assistant', content: '', reasoning_details: details })),
      sseFrame(undefined, chunk({ tool_calls: [{ index: 0, ...call }] })),
      sseFrame(undefined, chunk({}, 'tool_calls', usage)),
      sseFrame(undefined, '[DONE]'),
    ],
  }
  const json: ScriptedAnswer = {
    json: {
      id: 'gen-1',
      object: 'chat.completion',
      model: 'google/gemini-3-pro-preview',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, tool_calls: [call], reasoning_details: details },
          finish_reason: 'tool_calls',
        },
      ],
      usage,
    },
  }

  const openRouterGetsItsDetailBack = (sent: Sent) => {
    expect(sent.host).toBe(openRouterHost)
    const turn = sent.body.messages.find((m: Wire) => m.role === 'assistant')
    expect(turn.reasoning_details).toEqual(details)
    expect(turn.tool_calls).toEqual([call])
    expect(chatCall(sent.body).answers).toBe(callId)
  }

  test('Claude Code, streamed: the signature comes back in reasoning_details, under the id Gemini gave', async () => {
    const [next, ...more] = await claudeCodeLoop(await gemini(), () => chatText, streamed)
    expect(more).toEqual([])
    openRouterGetsItsDetailBack(next!)
  })

  test('Codex, JSON: the same', async () => {
    const [next, ...more] = await codexLoop(await gemini(), () => chatText, json)
    expect(more).toEqual([])
    openRouterGetsItsDetailBack(next!)
  })
})
