import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../lib/errors'
import { anthropicSurface } from './anthropic-surface'

const ids = { requestId: '01KAPX4Z7T9V3QJ8M2N6R5W0YB', profile: 'svc-max', createdAt: 0 }
const ourId = `msg_${ids.requestId}`
const usage = { input_tokens: 9, cache_read_input_tokens: 3, output_tokens: 21 }

describe('anthropic pass-through JSON', () => {
  test('the upstream’s message under our id, with its usage', () => {
    const json = { id: 'msg_up1', type: 'message', content: [], usage }
    expect(anthropicSurface.passThroughJson(json, ids)).toEqual({
      body: { ...json, id: ourId },
      usage: { input: 9, cacheRead: 3, cacheWrite: 0, output: 21, reasoning: 0 },
    })
  })

  test.each(['{"id":"x","type":"error"}', '[1]'])('%s is not a message: a retryable 502', (text) => {
    const error = (() => {
      try {
        anthropicSurface.passThroughJson(JSON.parse(text), ids)
      } catch (err) {
        return err
      }
    })()
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ status: 502, retryable: true })
  })
})

describe('anthropic pass-through text', () => {
  const passThroughText = (text: string) => anthropicSurface.passThroughText!(text, JSON.parse(text), ids)

  test('our id is put into the upstream’s own text: every other byte as sent', () => {
    const text = `{"id":"msg_up1","type":"message","content":[{"type":"text","text":"caf\\u00e9 \\"id\\":\\"msg_up1\\""}],\n "usage": ${JSON.stringify(usage)}}\n`
    const relayed = passThroughText(text)
    expect(relayed).toBe(text.replace('"id":"msg_up1"', `"id":"${ourId}"`))
    expect(JSON.parse(relayed!)).toEqual({ ...JSON.parse(text), id: ourId })
  })

  test.each([
    ['the member occurs twice', '{"id":"msg_up1","type":"message","content":[{"id":"msg_up1"}],"usage":{}}'],
    ['the member is spaced', '{"id": "msg_up1","type":"message","usage":{}}'],
    ['the id is escaped otherwise', '{"id":"msg\\/up1","type":"message","usage":{}}'],
    ['the id is not a string', '{"id":7,"type":"message","usage":{}}'],
    ['there is no id', '{"type":"message","usage":{}}'],
  ])('none when %s (the answer is serialized again)', (_case, text) => {
    expect(passThroughText(text)).toBeUndefined()
  })
})
