import { describe, expect, test } from 'bun:test'
import { collect, readFixture, sseOf } from '../fixture-streams'
import { encodeSse } from '../sse'
import { isReported } from '../unreported-usage'
import { createAnthropicPassThroughMeter, rewriteMessageStart } from './usage-meter'

async function meterFixture(name: string) {
  const meter = createAnthropicPassThroughMeter()
  const events = await collect(sseOf(await readFixture(name)))
  for (const event of events) meter.observe(event)
  return { meter, events }
}

describe('createAnthropicPassThroughMeter', () => {
  test('5.2: start usage, then message_delta overwrites output', async () => {
    const { meter } = await meterFixture('anthropic/text-tool-use.sse')
    expect(meter.usage()).toEqual({ input: 86, cacheRead: 1920, cacheWrite: 0, output: 48, reasoning: 0 })
    expect(meter.finished()).toBe(true)
    expect(meter.estimatedOutputTokens()).toBe(48)
    expect(meter.error()).toBeUndefined()
  })

  test('cumulative message_delta usage overwrites, never adds', () => {
    const meter = createAnthropicPassThroughMeter()
    meter.observe({
      event: 'message_start',
      data: JSON.stringify({ message: { usage: { input_tokens: 0 } } }),
      raw: '',
    })
    for (const output of [10, 25]) {
      meter.observe({
        event: 'message_delta',
        data: JSON.stringify({ usage: { output_tokens: output, input_tokens: 7, cache_creation_input_tokens: 3 } }),
        raw: '',
      })
    }
    expect(meter.usage()).toEqual({ input: 7, cacheRead: 0, cacheWrite: 3, output: 25, reasoning: 0 })
  })

  test("1-hour cache writes: message_start's split, overwritten by a message_delta that repeats it", () => {
    const frame = (event: string, data: unknown) => ({ event, data: JSON.stringify(data), raw: '' })
    const meter = createAnthropicPassThroughMeter()
    const start = {
      input_tokens: 12,
      cache_creation_input_tokens: 1000,
      cache_read_input_tokens: 0,
      cache_creation: { ephemeral_5m_input_tokens: 400, ephemeral_1h_input_tokens: 600 },
      output_tokens: 1,
    }
    meter.observe(frame('message_start', { message: { usage: start } }))
    expect(meter.usage()).toMatchObject({ cacheWrite: 1000, cacheWrite1h: 600 })
    // A final usage without the split keeps message_start's.
    meter.observe(frame('message_delta', { usage: { output_tokens: 30, cache_creation_input_tokens: 1000 } }))
    expect(meter.usage()).toEqual({
      input: 12,
      cacheRead: 0,
      cacheWrite: 1000,
      cacheWrite1h: 600,
      output: 30,
      reasoning: 0,
    })
    meter.observe(
      frame('message_delta', {
        usage: { output_tokens: 31, cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 1000 } },
      }),
    )
    expect(meter.usage()).toMatchObject({ cacheWrite: 1000, cacheWrite1h: 1000, output: 31 })
  })

  test('no split anywhere: no 1-hour part', () => {
    const frame = (event: string, data: unknown) => ({ event, data: JSON.stringify(data), raw: '' })
    const meter = createAnthropicPassThroughMeter()
    meter.observe(frame('message_start', { message: { usage: { input_tokens: 12, cache_creation_input_tokens: 9 } } }))
    meter.observe(frame('message_delta', { usage: { output_tokens: 3 } }))
    expect(meter.usage()).toEqual({ input: 12, cacheRead: 0, cacheWrite: 9, output: 3, reasoning: 0 })
  })

  test('5.9: cut by an error, the output is estimated from delta sizes', async () => {
    const { meter } = await meterFixture('anthropic/mid-stream-error.sse')
    expect(meter.finished()).toBe(false)
    expect(meter.error()).toEqual({ status: 529, type: 'overloaded_error', message: 'Overloaded' })
    expect(meter.usage().input).toBe(10)
    // No message_delta ever came: "Partial" is 7 chars ≈ 2 tokens, more than message_start's 1.
    expect(meter.estimatedOutputTokens()).toBe(2)
    const long = createAnthropicPassThroughMeter()
    const text = 'x'.repeat(400)
    long.observe({
      event: 'content_block_delta',
      data: JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
      raw: '',
    })
    expect(long.estimatedOutputTokens()).toBe(100)
    // By UTF-8 bytes: 400 Chinese characters are 1,200 bytes, ~300 tokens (o200k ~0.75 a character,
    // Claude more), where counting characters billed 100.
    const chinese = createAnthropicPassThroughMeter()
    chinese.observe({
      event: 'content_block_delta',
      data: JSON.stringify({
        type: 'content_block_delta',
        index: 0,
        delta: { type: 'text_delta', text: '中文'.repeat(200) },
      }),
      raw: '',
    })
    expect(chinese.estimatedOutputTokens()).toBe(300)
  })

  test('other frames are not parsed, and bad JSON never throws', () => {
    const meter = createAnthropicPassThroughMeter()
    meter.observe({ event: 'content_block_start', data: '{not json', raw: '' })
    meter.observe({ event: 'message_delta', data: '{not json', raw: '' })
    meter.observe({ event: 'error', data: 'oops', raw: '' })
    expect(meter.usage()).toMatchObject({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 })
    expect(meter.error()).toEqual({ status: 500, type: 'api_error', message: 'upstream stream error' })
  })

  test('reported once a message_delta gives the output count; message_stop alone finishes, unreported', () => {
    const frame = (event: string, data: unknown) => ({ event, data: JSON.stringify(data), raw: '' })
    const meter = createAnthropicPassThroughMeter()
    meter.observe(frame('message_start', { message: { usage: { input_tokens: 10, output_tokens: 1 } } }))
    meter.observe(frame('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: '225' } }))
    meter.observe(frame('message_delta', { delta: { stop_reason: 'end_turn' } }))
    meter.observe(frame('message_stop', {}))
    expect(meter.finished()).toBe(true)
    expect(meter.usage()).toMatchObject({ input: 10, output: 1 })
    expect(isReported(meter.usage())).toBe(false)
    meter.observe(frame('message_delta', { usage: { output_tokens: 225 } }))
    expect(meter.usage()).toEqual({ input: 10, cacheRead: 0, cacheWrite: 0, output: 225, reasoning: 0 })
    expect(isReported(meter.usage())).toBe(true)
  })

  test("a body that ends without message_stop finishes the message only after a message_delta's stop reason", () => {
    const frame = (event: string, data: unknown) => ({ event, data: JSON.stringify(data), raw: '' })
    const start = frame('message_start', { message: { usage: { input_tokens: 10, output_tokens: 1 } } })
    const after = (...frames: ReturnType<typeof frame>[]) => {
      const meter = createAnthropicPassThroughMeter()
      for (const event of [start, ...frames]) meter.observe(event)
      return [meter.closeCleanly(), meter.finished()]
    }
    const named = frame('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 5 } })
    const unnamed = frame('message_delta', { delta: { stop_reason: null }, usage: { output_tokens: 5 } })
    expect(after(named)).toEqual(['event: message_stop\ndata: {"type":"message_stop"}\n\n', true])
    expect(after(unnamed)).toEqual(['', false])
    expect(after(frame('content_block_delta', { delta: { type: 'text_delta', text: 'Hi' } }))).toEqual(['', false])
    // A message that did end has nothing to add.
    expect(after(named, frame('message_stop', {}))).toEqual(['', true])
  })
})

describe('rewriteMessageStart', () => {
  test('replaces only the message id', async () => {
    const [start] = await collect(sseOf(await readFixture('anthropic/thinking-text.sse')))
    if (!start) throw new Error('fixture is empty')
    const rewritten = rewriteMessageStart(start, { id: 'msg_gw_9' })
    const original = JSON.parse(start.data)
    expect(rewritten).toBe(
      encodeSse('message_start', { ...original, message: { ...original.message, id: 'msg_gw_9' } }),
    )
    expect(JSON.parse(rewritten.split('data: ')[1] ?? '').message.model).toBe('claude-sonnet-4-5')
  })

  test("our id goes in place of the upstream's: every other byte as sent", () => {
    const data =
      '{"type":"message_start", "message":{"id":"msg_up","type":"message","role":"assistant","model":"m","usage":{"input_tokens":3}}}'
    const event = { event: 'message_start', data, raw: `event: message_start\ndata: ${data}\n\n` }
    expect(rewriteMessageStart(event, { id: 'msg_gw_9' })).toBe(event.raw.replace('msg_up', 'msg_gw_9'))
  })

  test('a frame that is not JSON is forwarded as it came', () => {
    const event = { event: 'message_start', data: 'nope', raw: 'event: message_start\ndata: nope\n\n' }
    expect(rewriteMessageStart(event, { id: 'x' })).toBe(event.raw)
  })
})
