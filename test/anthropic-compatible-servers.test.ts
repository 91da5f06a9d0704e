// What Anthropic-COMPATIBLE servers (not Anthropic itself) really send from their Messages
// endpoints, as exact bytes, through both client routes: z.ai's and SGLang's usage only at the
// end, Ollama's message_delta without a stop reason, OpenRouter's `[DONE]` after message_stop,
// LiteLLM's message_delta with its last block never stopped, GLM's `sensitive` stop reason.
// Each answer is read by the official SDKs and its ledger record checked.
import { describe, expect, test } from 'bun:test'
import { endedRequestDetail, type Harness, sdkClients, teedSdkClients } from './support/harness'
import {
  anthropicEvent as event,
  type ScriptedAnswer,
  scriptedPair,
  scriptedUpstream,
  sseFrame,
} from './support/scripted-upstream'

type Json = Record<string, unknown>

const params = { model: 'svc-pro', max_tokens: 100, messages: [{ role: 'user' as const, content: 'hi' }] }

async function lastRecord(h: Harness) {
  const [row] = (await (await h.call('/v1/usage/requests')).json()).items
  return endedRequestDetail(h, row.request_id)
}

/** Every upstream call answered by model: the first model's script, then the second's. */
const byModel = (h: Harness, scripts: Record<string, ScriptedAnswer>) =>
  scriptedUpstream(h, (body) => scripts[String(body.model)] ?? { json: {} })

const messageStart = (usage: Json | undefined, extra: Json = {}) =>
  event('message_start', {
    message: {
      id: 'msg_up',
      type: 'message',
      role: 'assistant',
      model: 'first-up',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(usage === undefined ? {} : { usage }),
      ...extra,
    },
  })
const textBlock = (index: number, text: string) => [
  event('content_block_start', { index, content_block: { type: 'text', text: '' } }),
  event('content_block_delta', { index, delta: { type: 'text_delta', text } }),
]
const blockStop = (index: number) => event('content_block_stop', { index })
const messageDelta = (delta: Json, usage: Json) => event('message_delta', { delta, usage })
const messageStop = event('message_stop')

/** A Responses client's view: its text and its status. */
async function askResponses(h: Harness, stream: boolean) {
  const { openai } = sdkClients(h)
  const response = stream
    ? await openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
    : await openai.responses.create({ model: 'svc-pro', input: 'hi', stream: false })
  return { text: response.output_text, status: response.status, usage: response.usage }
}

describe('z.ai (GLM) and SGLang: message_start counts 0, the real counts come in the final message_delta', () => {
  // zai-org/GLM-5#139: message_start `"usage":{"input_tokens":0,"output_tokens":0}`; the final
  // message_delta `"usage":{"input_tokens":14,"output_tokens":…,"cache_read_input_tokens":…}`.
  // sgl-project/sglang#20678 (the same shape, before #25876).
  const frames = [
    messageStart({ input_tokens: 0, output_tokens: 0 }),
    ...textBlock(0, 'OK'),
    blockStop(0),
    messageDelta(
      { stop_reason: 'end_turn', stop_sequence: null },
      { input_tokens: 14, output_tokens: 3, cache_read_input_tokens: 200 },
    ),
    messageStop,
  ]
  const billed = { outcome: 'ok', estimated: false, input_tokens: 14, cached_input_tokens: 200, output_tokens: 3 }

  test('messages, streamed: the SDK reads the final counts; the leg is billed them, not estimated', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames } })
    const message = await sdkClients(h).anthropic.messages.stream(params).finalMessage()
    expect(message.usage).toMatchObject({ input_tokens: 14, output_tokens: 3, cache_read_input_tokens: 200 })
    expect((await lastRecord(h)).usage_events).toEqual([expect.objectContaining(billed)])
  })

  test('messages, gathered into JSON: the final counts', async () => {
    const h = await scriptedPair('anthropic', { stream_upstream_above_max_tokens: 10 })
    byModel(h, { 'first-up': { sse: frames } })
    const message = await sdkClients(h).anthropic.messages.create(params)
    expect(message.usage).toMatchObject({ input_tokens: 14, output_tokens: 3, cache_read_input_tokens: 200 })
    expect((await lastRecord(h)).usage_events).toEqual([expect.objectContaining(billed)])
  })

  test('responses, streamed: the final counts', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames } })
    const seen = await askResponses(h, true)
    expect(seen).toMatchObject({ text: 'OK', status: 'completed' })
    expect(seen.usage).toMatchObject({ input_tokens: 214, output_tokens: 3 })
    expect((await lastRecord(h)).usage_events).toEqual([expect.objectContaining(billed)])
  })
})

describe('Ollama: message_start without stop_reason, message_delta naming none', () => {
  // ollama/ollama anthropic/anthropic.go: MessagesResponse.StopReason and MessageDelta's fields are
  // `omitempty`, and mapStopReason gives "" for an empty done_reason: the delta is `{}`.
  const frames = [
    event('message_start', {
      message: {
        id: 'msg_ab12',
        type: 'message',
        role: 'assistant',
        model: 'first-up',
        content: [],
        usage: { input_tokens: 12, output_tokens: 0 },
      },
    }),
    ...textBlock(0, 'Hello'),
    blockStop(0),
    messageDelta({}, { input_tokens: 12, output_tokens: 5 }),
    messageStop,
  ]

  test('messages, streamed: whole, billed as reported', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames } })
    const message = await sdkClients(h).anthropic.messages.stream(params).finalMessage()
    expect(message.content).toEqual([{ type: 'text', text: 'Hello' } as never])
    const record = await lastRecord(h)
    expect(record).toMatchObject({ status: 'completed' })
    expect(record.usage_events).toEqual([
      expect.objectContaining({ outcome: 'ok', estimated: false, output_tokens: 5 }),
    ])
  })

  test('responses, streamed: completed', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames } })
    expect(await askResponses(h, true)).toMatchObject({ text: 'Hello', status: 'completed' })
  })
})

describe("OpenRouter's Anthropic endpoint: `data: [DONE]` after message_stop", () => {
  // alexazhou/gt_ai_gateway#14: "Failed to parse SSE data: [DONE]" from OpenRouter's /v1/messages,
  // after a completed stream (free-claude-code#43 removed the same sentinel from its own).
  const frames = [
    messageStart({ input_tokens: 20, output_tokens: 1 }),
    ...textBlock(0, 'Hi'),
    blockStop(0),
    messageDelta({ stop_reason: 'end_turn', stop_sequence: null }, { output_tokens: 2 }),
    messageStop,
    sseFrame(undefined, '[DONE]'),
  ]

  test('messages, streamed: the client never gets it, the request completed', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames } })
    const { clients, lastRaw } = teedSdkClients(h)
    const message = await clients.anthropic.messages.stream(params).finalMessage()
    expect(message.content).toEqual([{ type: 'text', text: 'Hi' } as never])
    expect(await lastRaw()).not.toContain('[DONE]')
    expect(await lastRecord(h)).toMatchObject({ status: 'completed' })
  })

  test('responses, streamed: completed', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames } })
    expect(await askResponses(h, true)).toMatchObject({ text: 'Hi', status: 'completed' })
    expect(await lastRecord(h)).toMatchObject({ status: 'completed' })
  })
})

describe("LiteLLM's /v1/messages: message_delta with the last block never stopped", () => {
  // BerriAI/litellm#28868 review: "`content_block_stop` missing before held `message_delta`" when
  // the finish chunk comes right after the last content.
  const frames = [
    messageStart({ input_tokens: 20, output_tokens: 1 }),
    ...textBlock(0, 'Unclosed'),
    messageDelta({ stop_reason: 'end_turn', stop_sequence: null }, { output_tokens: 2 }),
    messageStop,
  ]

  test('messages, gathered into JSON: the text', async () => {
    const h = await scriptedPair('anthropic', { stream_upstream_above_max_tokens: 10 })
    byModel(h, { 'first-up': { sse: frames } })
    const message = await sdkClients(h).anthropic.messages.create(params)
    expect(message.content).toEqual([{ type: 'text', text: 'Unclosed' } as never])
  })

  test.each([true, false])('responses (streamed: %p): the text, completed', async (stream) => {
    const h = await scriptedPair('anthropic', stream ? {} : { stream_upstream_above_max_tokens: 10 })
    byModel(h, { 'first-up': { sse: frames } })
    expect(await askResponses(h, stream)).toMatchObject({ text: 'Unclosed', status: 'completed' })
  })
})

describe("vLLM's /v1/messages: a message_start without type or role, its usage beside the message", () => {
  // vllm-project/vllm vllm/entrypoints/anthropic/serving_messages.py (message_stream_converter):
  // AnthropicStreamEvent(type="message_start", message=AnthropicMessagesResponse(id, content=[],
  // model), usage=AnthropicUsage(...)) dumped with exclude_unset=True, so the message has neither
  // `type` nor `role` nor `usage`, and the usage sits on the event; the delta has only stop_reason;
  // `data: [DONE]` follows message_stop.
  const frames = [
    sseFrame(
      'message_start',
      '{"type":"message_start","message":{"id":"chatcmpl-9f2","content":[],"model":"first-up"},"usage":{"input_tokens":20,"output_tokens":0}}',
    ),
    sseFrame(
      'content_block_start',
      '{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}',
    ),
    sseFrame(
      'content_block_delta',
      '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"From vLLM."}}',
    ),
    sseFrame('content_block_stop', '{"type":"content_block_stop","index":0}'),
    sseFrame(
      'message_delta',
      '{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":20,"output_tokens":4}}',
    ),
    sseFrame('message_stop', '{"type":"message_stop"}'),
    'data: [DONE]\n\n',
  ]
  const billed = { model_id: 'first', outcome: 'ok', estimated: false, input_tokens: 20, output_tokens: 4 }

  test('messages, streamed: the text and the final counts', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames } })
    const stream = sdkClients(h).anthropic.messages.stream(params)
    const started: unknown[] = []
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') started.push(event.message)
    })
    const message = await stream.finalMessage()
    // The message the SDK builds is a message, and the prompt it is first told is vLLM's count.
    expect(started).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        usage: expect.objectContaining({ input_tokens: 20 }),
      }),
    ])
    expect(message).toMatchObject({ type: 'message', role: 'assistant' })
    expect(message.content).toEqual([{ type: 'text', text: 'From vLLM.' } as never])
    expect(message.usage).toMatchObject({ input_tokens: 20, output_tokens: 4 })
    expect((await lastRecord(h)).usage_events).toEqual([expect.objectContaining(billed)])
  })

  // Cut before message_delta, the leg is billed the prompt vLLM counted, not an estimate of it.
  test.each([
    ['passed through', 'messages'],
    ['translated', 'responses'],
  ])('%s, cut before its message_delta: the prompt as vLLM counted it', async (_, route) => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames.slice(0, 3) } })
    const { anthropic, openai } = sdkClients(h)
    const asked =
      route === 'messages'
        ? anthropic.messages.stream(params).finalMessage()
        : openai.responses.stream({ model: 'svc-pro', input: 'hi' }).finalResponse()
    await asked.catch(() => {})
    expect((await lastRecord(h)).usage_events).toEqual([
      expect.objectContaining({ outcome: 'failed', estimated: true, input_tokens: 20 }),
    ])
  })

  // A non-streaming request above stream_upstream_above_max_tokens (4,096 by default: Claude Code's
  // are) is streamed from the upstream and gathered: the gathered message had no `type`, and was
  // refused as "a body that is not a message": the request fell back, or failed, every time.
  test('messages, gathered into JSON: the answer, billed as reported', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, {
      'first-up': { sse: frames },
      'second-up': { sse: frames.map((frame) => frame.replace('From vLLM.', 'From the second.')) },
    })
    const message = await sdkClients(h).anthropic.messages.create({ ...params, max_tokens: 8192 })
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      content: [{ type: 'text', text: 'From vLLM.' }],
      stop_reason: 'end_turn',
      usage: { input_tokens: 20, output_tokens: 4 },
    })
    expect((await lastRecord(h)).usage_events).toEqual([expect.objectContaining(billed)])
  })

  test('responses, streamed: the text, completed', async () => {
    const h = await scriptedPair('anthropic')
    byModel(h, { 'first-up': { sse: frames } })
    expect(await askResponses(h, true)).toMatchObject({ text: 'From vLLM.', status: 'completed' })
    expect((await lastRecord(h)).usage_events).toEqual([expect.objectContaining(billed)])
  })
})

describe("GLM's Anthropic endpoint: stop_reason `sensitive` (its safety filter cut the answer)", () => {
  // pi's anthropic-messages provider (used for z.ai's and Kimi's /anthropic endpoints) maps
  // `case "sensitive": // Content flagged by safety filters (not yet in SDK types)` to an error;
  // GLM's own API documents 'sensitive' as "content intercepted by the safety review". svc's Chat
  // decoder already reads GLM's `sensitive` as a refusal (README); the Anthropic decoder read it as
  // a natural end (end_turn), so a Responses client was told the cut answer was `completed`.
  const frames = [
    messageStart({ input_tokens: 20, output_tokens: 1 }),
    ...textBlock(0, 'I cannot'),
    blockStop(0),
    messageDelta({ stop_reason: 'sensitive', stop_sequence: null }, { output_tokens: 2 }),
    messageStop,
  ]

  test.each([true, false])('responses (streamed: %p): incomplete, as a refusal', async (stream) => {
    const h = await scriptedPair('anthropic', stream ? {} : { stream_upstream_above_max_tokens: 10 })
    byModel(h, { 'first-up': { sse: frames } })
    expect(await askResponses(h, stream)).toMatchObject({ text: 'I cannot', status: 'incomplete' })
  })
})
