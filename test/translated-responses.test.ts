// A Responses client answered by an Anthropic upstream (translated): its completion dated by the
// gateway's clock (completed_at is when the answer completed, not when the request came, nor the
// machine's own Date.now()), and its failure coded as every OpenAI error body svc writes codes it.
import { expect, test } from 'bun:test'
import { anthropicEvent, anthropicTextAnswer, scriptedUpstream, twoModelGateway } from './support/scripted-upstream'

const message = {
  id: 'msg_up',
  type: 'message',
  role: 'assistant',
  model: 'first-up',
  content: [{ type: 'text', text: 'hi' }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 2 },
}

const frames = anthropicTextAnswer('first-up')

/** An Anthropic upstream that takes 7 s (on the gateway's clock) to answer a Responses client. */
async function slowUpstream(stream: boolean) {
  const h = await twoModelGateway({ kind: 'anthropic' })
  const startedAt = Math.floor(h.clock.now / 1000)
  scriptedUpstream(h, () => {
    h.clock.advance(7_000)
    return stream ? { sse: frames } : { json: message }
  })
  const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { model: 'svc-pro', input: 'x', stream } })
  expect(res.status).toBe(200)
  return { res, startedAt }
}

test('a translated answer completed 7 s after it was asked for says so', async () => {
  const { res, startedAt } = await slowUpstream(false)
  expect(await res.json()).toMatchObject({ status: 'completed', created_at: startedAt, completed_at: startedAt + 7 })
})

test('a translated stream’s response.completed is dated by the gateway’s clock', async () => {
  const { res, startedAt } = await slowUpstream(true)
  const completed = (await res.text()).split('\n\n').find((f) => f.startsWith('event: response.completed'))!
  const data = JSON.parse(completed.slice(completed.indexOf('data: ') + 'data: '.length))
  expect(data.response).toMatchObject({ status: 'completed', created_at: startedAt, completed_at: startedAt + 7 })
})

test('an upstream overload mid-stream fails the response with the code an OpenAI error body gives it', async () => {
  const h = await twoModelGateway({ kind: 'anthropic' })
  scriptedUpstream(h, () => ({
    sse: [
      ...frames.slice(0, 3),
      anthropicEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ],
  }))
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    json: { model: 'svc-pro', input: 'x', stream: true },
  })
  const failed = (await res.text()).split('\n\n').find((f) => f.startsWith('event: response.failed'))!
  const data = JSON.parse(failed.slice(failed.indexOf('data: ') + 'data: '.length))
  // As a pass-through stream's error event and a 503 body say it (it was server_error).
  expect(data.response).toMatchObject({ status: 'failed', error: { code: 'server_overloaded', message: 'Overloaded' } })
})
