// The client's body is read again for each attempt of a fallback: leaving out what costs more than
// list price copies what it changes, and changes nothing of the client's.
import { describe, expect, test } from 'bun:test'
import { atListPrice } from './list-price'

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

describe('atListPrice', () => {
  test('a body with nothing above list price is the very object', () => {
    const body = { model: 'm', max_tokens: 10, service_tier: 'auto', messages: [{ role: 'user', content: 'hi' }] }
    expect(atListPrice(body, false)).toBe(body)
  })

  test("the client's body, frozen, is left as it was", () => {
    const hour = { type: 'ephemeral', ttl: '1h' }
    const body = deepFreeze({
      model: 'm',
      service_tier: 'priority',
      speed: 'fast',
      cache_control: hour,
      tools: [
        { type: 'code_execution_20250825', name: 'code_execution' },
        { name: 't', cache_control: hour },
      ],
      tool_choice: { type: 'tool', name: 'code_execution' },
      context_management: { edits: [{ type: 'compact_20260112' }] },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: hour }] }],
    })
    const before = JSON.stringify(body)
    expect(atListPrice(body, false)).toEqual({
      model: 'm',
      cache_control: { type: 'ephemeral' },
      tools: [{ name: 't', cache_control: { type: 'ephemeral' } }],
      tool_choice: { type: 'auto' },
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }],
    })
    expect(JSON.stringify(body)).toBe(before)
  })

  describe('hour-long cache marks', () => {
    const hour = { type: 'ephemeral', ttl: '1h' }
    const body = deepFreeze({
      model: 'm',
      cache_control: hour,
      system: [{ type: 'text', text: 'Be brief.', cache_control: hour }],
      tools: [{ name: 't', input_schema: { type: 'object' }, cache_control: hour }],
      messages: [
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'x', cache_control: hour }],
            },
          ],
        },
      ],
    })

    test('stay for a model that prices 1-hour cache writes: the very object goes', () => {
      expect(atListPrice(body, true)).toBe(body)
    })

    test('go as 5-minute marks, wherever they are, for a model that does not', () => {
      const ephemeral = { type: 'ephemeral' }
      expect(atListPrice(body, false)).toEqual({
        model: 'm',
        cache_control: ephemeral,
        system: [{ type: 'text', text: 'Be brief.', cache_control: ephemeral }],
        tools: [{ name: 't', input_schema: { type: 'object' }, cache_control: ephemeral }],
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: [{ type: 'text', text: 'x', cache_control: ephemeral }],
              },
            ],
          },
        ],
      })
    })

    test("inside a document's own content too, even when no other mark asks for an hour", () => {
      const document = (mark: object) => ({
        type: 'document',
        title: 'notes',
        source: { type: 'content', content: [{ type: 'text', text: 'a long document', cache_control: mark }] },
      })
      const nested = deepFreeze({ model: 'm', messages: [{ role: 'user', content: [document(hour)] }] })
      expect(atListPrice(nested, false)).toEqual({
        model: 'm',
        messages: [{ role: 'user', content: [document({ type: 'ephemeral' })] }],
      })
      expect(atListPrice(nested, true)).toBe(nested)
    })

    test('what else costs more than list price is still left out for a model that prices the hour', () => {
      expect(atListPrice({ ...body, speed: 'fast' }, true)).toEqual(body)
    })
  })
})
