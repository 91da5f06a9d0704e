// An OpenAI Response that says it failed, on the Responses pass-through (the upstream is OpenAI
// itself): as a 200 JSON answer (`status: "failed"` or `"cancelled"`, `output: []`), as the stream's
// terminal `response.failed`, and gathered from that stream. Before the client has a byte it is a
// failed attempt: the next candidate serves and the failed leg is charged nothing. An `incomplete`
// answer is an answer (the output limit), served and charged.
import { describe, expect, test } from 'bun:test'
import { scriptedPair, scriptedUpstream, sseFrame } from '../support/scripted-upstream'
import { parseFrames, requestDetail } from './helpers'
import { responsesCleanEvents, responsesPrelude, routes, tokenizerCount } from './routes'

const route = routes.find((r) => r.surface === 'responses' && r.kind === 'openai-responses')!
/** scriptedPair's two models on OpenAI itself; every non-streaming request gathered from a stream. */
const gateway = () =>
  scriptedPair('openai-responses', { stream_upstream_above_max_tokens: 0 }, 5, { openai_itself: true })
/** A JSON call (max_output_tokens 50 is asked for as JSON); streamed; gathered (no limit: streamed upstream). */
const bodies = {
  json: { model: 'svc-pro', input: 'hi', max_output_tokens: 50 },
  stream: { model: 'svc-pro', input: 'hi', stream: true },
  gathered: { model: 'svc-pro', input: 'hi' },
}
const call = (h: Awaited<ReturnType<typeof gateway>>, body: Record<string, unknown>) =>
  h.call('/compat-b/v1/responses', { method: 'POST', json: body })

const response = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'resp_up',
  object: 'response',
  created_at: 1,
  model: 'first-up',
  status,
  output: [],
  ...extra,
})
const message = (text: string, status = 'completed') => ({
  id: 'msg_up',
  type: 'message',
  role: 'assistant',
  status,
  content: [{ type: 'output_text', text, annotations: [] }],
})
const modelFailed = { code: 'server_error', message: 'The model failed.' }
/** 10 tokens in, 2 out at 1 USD/Mtok. */
const usage = { input_tokens: 10, output_tokens: 2, total_tokens: 12 }
const served = response('completed', { model: 'second-up', output: [message('Backup here.')], usage })
const SERVED_COST = 12 * 1000

const legs = (detail: { usage_events: Record<string, unknown>[] }) =>
  detail.usage_events.map((e) => [e.model_id, e.outcome, e.estimated, e.error, e.cost_nanos, e.charged_nanos])

describe('a 200 JSON Response that says it failed', () => {
  const failures = [
    {
      name: 'failed, with its error',
      answer: response('failed', { error: modelFailed, usage }),
      error: 'The model failed.',
    },
    // OpenAI cancels a background response on request; the object then carries no error.
    {
      name: 'cancelled, without an error',
      answer: response('cancelled', { error: null }),
      error: 'upstream response cancelled',
    },
  ]

  test.each(failures)('$name: the second model serves, the failed leg free', async ({ answer, error }) => {
    const h = await gateway()
    scriptedUpstream(h, (body) => ({ json: body.model === 'first-up' ? answer : served }))
    const res = await call(h, bodies.json)
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    expect(await res.json()).toMatchObject({
      id: `resp_${requestId}`,
      status: 'completed',
      output: [{ type: 'message', content: [{ type: 'output_text', text: 'Backup here.' }] }],
      usage,
    })
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'completed',
      http_status: 200,
      attempts: 2,
      selected_model_id: 'second',
      charged_nanos: SERVED_COST,
    })
    expect(legs(detail)).toEqual([
      ['first', 'failed', false, error, 0, 0],
      ['second', 'ok', false, null, SERVED_COST, SERVED_COST],
    ])
  })

  test('failed from every candidate: the client hears the upstream’s failure, nothing charged', async () => {
    const h = await gateway()
    scriptedUpstream(h, () => ({ json: response('failed', { error: modelFailed, usage }) }))
    const res = await call(h, bodies.json)
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({
      error: { message: 'The model failed.', type: 'server_error', param: null, code: 'server_error' },
    })
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail).toMatchObject({
      status: 'failed',
      http_status: 500,
      attempts: 2,
      charged_nanos: 0,
      error: { type: 'api_error', message: 'The model failed.' },
    })
    expect(legs(detail)).toEqual([
      ['first', 'failed', false, 'The model failed.', 0, 0],
      ['second', 'failed', false, 'The model failed.', 0, 0],
    ])
    expect(detail.grant_charges).toEqual([])
  })

  test('incomplete (the output limit) is an answer: served as it came, charged', async () => {
    const h = await gateway()
    const cut = response('incomplete', {
      incomplete_details: { reason: 'max_output_tokens' },
      output: [message('Half an ans', 'incomplete')],
      usage,
    })
    scriptedUpstream(h, () => ({ json: cut }))
    const res = await call(h, bodies.json)
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
      output: [{ content: [{ text: 'Half an ans' }] }],
    })
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail).toMatchObject({ status: 'completed', attempts: 1, charged_nanos: SERVED_COST })
    expect(legs(detail)).toEqual([['first', 'ok', false, null, SERVED_COST, SERVED_COST]])
  })
})

describe('a stream that ends in response.failed', () => {
  const event = (type: string, seq: number, data: Record<string, unknown> = {}) =>
    sseFrame(type, { type, sequence_number: seq, ...data })
  const opening = [
    event('response.created', 0, { response: response('in_progress') }),
    event('response.in_progress', 1, { response: response('in_progress') }),
  ]
  const text = { output_index: 0, item_id: 'msg_up', content_index: 0 }
  const part = (t: string) => ({ type: 'output_text', text: t, annotations: [] })
  const content = [
    event('response.output_item.added', 2, { output_index: 0, item: { ...message('', 'in_progress'), content: [] } }),
    event('response.content_part.added', 3, { ...text, part: part('') }),
    event('response.output_text.delta', 4, { ...text, delta: 'aaaa bbbb' }),
  ]
  const failed = (seq: number) =>
    event('response.failed', seq, { response: response('failed', { error: modelFailed, usage: null }) })
  const whole = [
    ...opening,
    ...content.slice(0, 2),
    event('response.output_text.delta', 4, { ...text, delta: 'Backup here.' }),
    event('response.output_text.done', 5, { ...text, text: 'Backup here.' }),
    event('response.content_part.done', 6, { ...text, part: part('Backup here.') }),
    event('response.output_item.done', 7, { output_index: 0, item: message('Backup here.') }),
    event('response.completed', 8, { response: served }),
  ]

  test('right after the opening: the second model’s stream, the failed leg free', async () => {
    const h = await gateway()
    scriptedUpstream(h, (body) => ({ sse: body.model === 'first-up' ? [...opening, failed(2)] : whole }))
    const res = await call(h, bodies.stream)
    expect(res.status).toBe(200)
    const frames = parseFrames(await res.text())
    expect(frames.map((f) => f.event)).toEqual(responsesCleanEvents)
    const requestId = res.headers.get('x-request-id')!
    expect(frames.at(-1)!.data.response).toMatchObject({
      id: `resp_${requestId}`,
      status: 'completed',
      output: [{ ...message('Backup here.'), id: `msg_${requestId}` }],
      usage,
    })
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'completed',
      attempts: 2,
      selected_model_id: 'second',
      charged_nanos: SERVED_COST,
    })
    expect(legs(detail)).toEqual([
      ['first', 'failed', false, 'The model failed.', 0, 0],
      ['second', 'ok', false, null, SERVED_COST, SERVED_COST],
    ])
  })

  test('after content: the client’s stream ends failed, once; the leg estimated and charged for what flowed', async () => {
    const h = await gateway()
    scriptedUpstream(h, (body) => ({ sse: body.model === 'first-up' ? [...opening, ...content, failed(5)] : whole }))
    const res = await call(h, bodies.stream)
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    const frames = parseFrames(await res.text())
    expect(frames.map((f) => f.event)).toEqual([...responsesPrelude, 'response.output_text.delta', 'response.failed'])
    expect(frames.at(-1)!.data).toMatchObject({
      sequence_number: 5,
      response: { id: `resp_${requestId}`, status: 'failed', error: modelFailed },
    })
    // The prompt as svc counts it, and 'aaaa bbbb' at ≈ 4 characters a token; 1 USD/Mtok.
    const input = tokenizerCount(route, bodies.stream)
    const cost = (input + 3) * 1000
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({
      status: 'failed',
      http_status: 200,
      attempts: 1,
      total_input_tokens: input,
      total_output_tokens: 3,
      charged_nanos: cost,
      error: { type: 'api_error', message: 'The model failed.' },
    })
    expect(legs(detail)).toEqual([['first', 'failed', true, 'The model failed.', cost, cost]])
    expect(detail.provider_ranks.map((r: { status: string }) => r.status)).toEqual(['chosen', 'not_tried'])
  })

  test('after content, with its usage: the leg billed the output the upstream reported, as the client was told', async () => {
    const h = await gateway()
    const reported = { input_tokens: 10, output_tokens: 500, total_tokens: 510 }
    const failedWithUsage = event('response.failed', 5, {
      response: response('failed', { error: modelFailed, usage: reported }),
    })
    scriptedUpstream(h, (body) => ({
      sse: body.model === 'first-up' ? [...opening, ...content, failedWithUsage] : whole,
    }))
    const res = await call(h, bodies.stream)
    const requestId = res.headers.get('x-request-id')!
    const frames = parseFrames(await res.text())
    expect(frames.at(-1)!.data).toMatchObject({ response: { status: 'failed', usage: reported } })
    // 500 output tokens as reported, not 'aaaa bbbb' at ≈ 4 characters a token; 1 USD/Mtok.
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({ total_input_tokens: 10, total_output_tokens: 500, charged_nanos: 510 * 1000 })
  })

  test('gathered for a JSON client, after content: the second model serves, the failed leg free', async () => {
    const h = await gateway()
    scriptedUpstream(h, (body) => ({ sse: body.model === 'first-up' ? [...opening, ...content, failed(5)] : whole }))
    const res = await call(h, bodies.gathered)
    expect(res.status).toBe(200)
    const requestId = res.headers.get('x-request-id')!
    expect(await res.json()).toMatchObject({
      id: `resp_${requestId}`,
      status: 'completed',
      output: [{ ...message('Backup here.'), id: `msg_${requestId}` }],
      usage,
    })
    const detail = await requestDetail(h, requestId)
    expect(detail).toMatchObject({ status: 'completed', attempts: 2, charged_nanos: SERVED_COST })
    expect(legs(detail)).toEqual([
      ['first', 'failed', false, 'The model failed.', 0, 0],
      ['second', 'ok', false, null, SERVED_COST, SERVED_COST],
    ])
  })
})
