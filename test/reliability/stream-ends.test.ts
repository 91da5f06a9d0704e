// Where a broken upstream stream ends, found by the fault property test (test/fault-properties.test.ts)
// and pinned here in their smallest form: nothing of an answer before the break means the request
// may still fall back; a break after the upstream's terminal event is not the client's; and a
// stream the client saw fail is recorded failed.
import { expect, test } from 'bun:test'
import { requestDetail, sdkClients } from '../support/harness'
import {
  profileFor,
  rankedProGateway,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from '../support/translation-gateway'

const sim = translationSimulator()
const usage = { input: 1, output: 1 }

test('a Responses upstream that closes its stream before any event: the next candidate serves', async () => {
  const h = await rankedProGateway(sim, [
    { id: 'resp-first', kind: 'openai-responses', quality: 90 },
    { id: 'chat-next', kind: 'openai-chat', quality: 80 },
  ])
  sim.setScenario(upstreamModelFor['openai-responses'], { usage, fault: { kind: 'cut', afterFrames: 0 } })
  sim.setScenario(upstreamModelFor['openai-chat'], { text: 'Served by the next one.', usage })
  const stream = sdkClients(h).anthropic.messages.stream({
    model: 'svc-pro',
    max_tokens: 64,
    messages: [{ role: 'user', content: 'hi' }],
  })
  const message = await stream.finalMessage()
  expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Served by the next one.' })])
  const record = await requestDetail(h, message.id.replace(/^msg_/, ''))
  const legs = record.usage_events.map((leg: { model_id: string; outcome: string; charged_nanos: number }) => [
    leg.model_id,
    leg.outcome,
    leg.charged_nanos,
  ])
  expect(legs).toEqual([
    ['resp-first', 'failed', 0],
    ['chat-next', 'ok', expect.any(Number)],
  ])
})

test('pass-through: a frame after the upstream’s message_stop is not the client’s', async () => {
  const h = await translationGateway(sim)
  // message_start, content_block_start, ping, one delta, content_block_stop, message_delta,
  // message_stop: then a malformed frame.
  sim.setScenario(upstreamModelFor.anthropic, {
    text: 'Whole.',
    chunks: 1,
    usage,
    fault: { kind: 'malformed', afterFrames: 7 },
  })
  const message = await sdkClients(h)
    .anthropic.messages.stream({
      model: profileFor.anthropic,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    })
    .finalMessage()
  expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Whole.' })])
  const record = await requestDetail(h, message.id.replace(/^msg_/, ''))
  expect(record).toMatchObject({ status: 'completed', http_status: 200 })
})

test('translated: a stream the client saw fail is recorded failed, though the upstream had said finish', async () => {
  const h = await translationGateway(sim)
  // The malformed frame comes after message_delta (the finish) and before message_stop.
  sim.setScenario(upstreamModelFor.anthropic, {
    text: 'Almost.',
    chunks: 1,
    usage,
    fault: { kind: 'malformed', afterFrames: 6 },
  })
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    json: { model: profileFor.anthropic, input: 'hi', stream: true },
  })
  const text = await res.text()
  expect(text).toContain('event: response.failed')
  expect(text).not.toContain('event: response.completed')
  const record = await requestDetail(h, res.headers.get('x-request-id')!)
  expect(record).toMatchObject({ status: 'failed', http_status: 200 })
  expect(record.usage_events.map((leg: { outcome: string }) => leg.outcome)).toEqual(['failed'])
})
