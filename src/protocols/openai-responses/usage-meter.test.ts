import { afterEach, describe, expect, test } from 'bun:test'
import { parseSse } from '../fixture-streams'
import type { SseEvent } from '../sse'
import { chunkBytes, collect, readFixture, serveResponses, sseResponse } from './test-support'
import { isReported } from '../unreported-usage'
import { createResponsesPassThroughMeter, type ResponsesRewriteOptions } from './usage-meter'

const ids: ResponsesRewriteOptions = { responseId: 'resp_01JGW', messageId: 'msg_01JGW', model: 'svc-pro' }

const relay = async (fixture: string, opts: ResponsesRewriteOptions = ids) => {
  const meter = createResponsesPassThroughMeter()
  const upstream = await collect(parseSse(chunkBytes(await readFixture(fixture), 9)))
  const frames = upstream.map((event) => {
    meter.observe(event)
    return meter.rewriteResponsesFrame(event, opts)
  })
  return { meter, upstream, frames }
}

const dataOf = async (frames: string[]): Promise<Record<string, unknown>[]> =>
  (await collect(parseSse(chunkBytes(frames.join(''))))).map((e: SseEvent) => JSON.parse(e.data))

describe('Responses pass-through meter', () => {
  let stop: (() => void) | undefined
  afterEach(() => {
    stop?.()
    stop = undefined
  })

  test('rewrites the response id, model and message item ids; the SDK sees only gateway ids', async () => {
    const { frames } = await relay('reasoning-text.sse')
    // openai-node 7 throws on event types it does not know; the fixture's made-up one stays out of its way.
    const known = frames.filter((frame) => !frame.includes('response.some_future_event'))
    const server = serveResponses(() => sseResponse(known))
    stop = server.stop
    const final = await server.client.responses.stream({ model: 'svc-pro', input: 'q' }).finalResponse()
    expect(final.id).toBe('resp_01JGW')
    expect(final.model).toBe('svc-pro')
    expect(final.output.map((item) => item.id)).toEqual(['rs_golden_01', 'msg_01JGW'])
    expect(final.output_text).toBe('Answer.')
    expect(frames.join('')).not.toContain('msg_golden_reason_01')
    expect(frames.join('')).not.toContain('resp_golden_reason_01')
    expect(frames.join('')).not.toContain('gpt-5-mini')
  })

  test('frames that name nothing to rewrite pass byte-for-byte', async () => {
    const { upstream, frames } = await relay('reasoning-text.sse')
    const untouched = upstream.flatMap((event, i) => (frames[i] === event.raw ? [event.event] : []))
    expect(untouched).toEqual([
      'response.output_item.added', // reasoning item
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done', // reasoning item
      'response.some_future_event',
    ])
    // Rewritten frames keep every other field, sequence numbers included.
    const before = upstream.map((e) => JSON.parse(e.data) as Record<string, unknown>)
    const after = await dataOf(frames)
    expect(after.map((d) => d['sequence_number'])).toEqual(before.map((d) => d['sequence_number']))
    expect(after[16]).toEqual({ ...before[16], item_id: 'msg_01JGW' })
  })

  test('function-call streams pass unchanged apart from lifecycle frames; usage and finish are read', async () => {
    const { meter, upstream, frames } = await relay('function-call.sse')
    expect(frames.slice(2, 7)).toEqual(upstream.slice(2, 7).map((e) => e.raw))
    expect(meter.finished()).toBe(true)
    expect(meter.usage()).toEqual({ input: 60, cacheRead: 0, cacheWrite: 0, output: 15, reasoning: 0 })
    // The reported count, not the 4 tokens its 16 characters of arguments would be estimated at.
    expect(meter.estimatedOutputTokens()).toBe(15)
  })

  test('usage subtracts cached tokens; incomplete counts as finished, failed does not', async () => {
    const reasoning = await relay('reasoning-text.sse')
    expect(reasoning.meter.usage()).toEqual({ input: 86, cacheRead: 1920, cacheWrite: 0, output: 300, reasoning: 200 })
    expect((await relay('incomplete.sse')).meter.finished()).toBe(true)
    const failed = await relay('failed.sse')
    expect(failed.meter.finished()).toBe(false)
    expect(failed.meter.usage()).toMatchObject({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 })
    expect(isReported(failed.meter.usage())).toBe(false)
    expect(failed.meter.estimatedOutputTokens()).toBe(2)
  })

  test('a completed response without a usage object, or with counts that are no numbers, was never reported', () => {
    for (const usage of [undefined, null, { input_tokens: '10', output_tokens: '225' }]) {
      const meter = createResponsesPassThroughMeter()
      const response = { id: 'resp_u', status: 'completed', output: [], ...(usage === undefined ? {} : { usage }) }
      meter.observe({
        event: 'response.completed',
        data: JSON.stringify({ type: 'response.completed', response }),
        raw: '',
      })
      // Finished (the client has the whole answer), but its usage is estimated.
      expect(meter.finished()).toBe(true)
      expect(isReported(meter.usage())).toBe(false)
    }
    const reported = createResponsesPassThroughMeter()
    const response = { id: 'resp_u', status: 'completed', output: [], usage: { input_tokens: 10, output_tokens: 225 } }
    reported.observe({
      event: 'response.completed',
      data: JSON.stringify({ type: 'response.completed', response }),
      raw: '',
    })
    expect(isReported(reported.usage())).toBe(true)
  })

  test('an error event is read at its top level, then under `error`; a bare `{"error":…}` frame is one too', () => {
    const errorOf = (event: string | undefined, json: Record<string, unknown>) => {
      const meter = createResponsesPassThroughMeter()
      meter.observe({ ...(event ? { event } : {}), data: JSON.stringify(json), raw: '' })
      return meter.error()
    }
    const limited = { status: 429, type: 'rate_limit_error', message: 'Slow down' }
    expect(errorOf('error', { type: 'error', code: 'rate_limit_exceeded', message: 'Slow down', param: null })).toEqual(
      limited,
    )
    const nested = { type: 'rate_limit_exceeded', code: 'rate_limit_exceeded', message: 'Slow down', param: null }
    expect(errorOf('error', { type: 'error', error: nested, sequence_number: 9 })).toEqual(limited)
    // OpenRouter's mid-stream failure: no event name, no type; its code the HTTP status.
    expect(errorOf(undefined, { error: { code: 502, message: 'Provider disconnected' } })).toEqual({
      status: 502,
      type: 'overloaded_error',
      message: 'Provider disconnected',
    })
  })

  test('several message items get distinct ids, consistent across added, deltas, done and completed', async () => {
    const message = (id: string, text: string, status: string) => ({
      id,
      type: 'message',
      role: 'assistant',
      status,
      content: status === 'completed' ? [{ type: 'output_text', text, annotations: [] }] : [],
    })
    const events = [
      { type: 'response.created', response: { id: 'resp_u', model: 'gpt-5', status: 'in_progress', output: [] } },
      { type: 'response.output_item.added', output_index: 0, item: message('msg_a', '', 'in_progress') },
      { type: 'response.output_text.delta', item_id: 'msg_a', output_index: 0, content_index: 0, delta: 'x' },
      { type: 'response.output_item.done', output_index: 0, item: message('msg_a', 'x', 'completed') },
      { type: 'response.output_item.added', output_index: 1, item: message('msg_b', '', 'in_progress') },
      // Whitespace in the JSON defeats the fast path; the parse fallback must still rewrite.
      { type: 'response.output_text.delta', item_id: 'msg_b', output_index: 1, content_index: 0, delta: 'y' },
      { type: 'response.output_item.done', output_index: 1, item: message('msg_b', 'y', 'completed') },
      {
        type: 'response.completed',
        response: {
          id: 'resp_u',
          model: 'gpt-5',
          status: 'completed',
          output: [message('msg_a', 'x', 'completed'), message('msg_b', 'y', 'completed')],
        },
      },
    ].map((e, i) => ({ ...e, sequence_number: i }))
    const text = events
      .map(
        (e, i) =>
          `event: ${e.type}\ndata: ${JSON.stringify(e, null, i === 5 ? 1 : undefined).replaceAll('\n', '')}\n\n`,
      )
      .join('')
    const meter = createResponsesPassThroughMeter()
    const frames = (await collect(parseSse(chunkBytes(text)))).map((e) => meter.rewriteResponsesFrame(e, ids))
    const data = await dataOf(frames)
    expect(data.map((d) => (d['item'] as { id?: string } | undefined)?.id ?? d['item_id'] ?? null)).toEqual([
      null,
      'msg_01JGW',
      'msg_01JGW',
      'msg_01JGW',
      'msg_01JGW_1',
      'msg_01JGW_1',
      'msg_01JGW_1',
      null,
    ])
    const completed = data[7] as { response: { id: string; output: { id: string }[] } }
    expect(completed.response.id).toBe('resp_01JGW')
    expect(completed.response.output.map((item) => item.id)).toEqual(['msg_01JGW', 'msg_01JGW_1'])
  })

  test('a sequence override renumbers the frame', async () => {
    const meter = createResponsesPassThroughMeter()
    const [event] = await collect(parseSse(chunkBytes(await readFixture('function-call.sse'))))
    if (!event) throw new Error('fixture is empty')
    const [data] = await dataOf([meter.rewriteResponsesFrame(event, { ...ids, sequence: 41 })])
    expect(data).toMatchObject({ type: 'response.created', sequence_number: 41, response: { id: 'resp_01JGW' } })
  })
})
