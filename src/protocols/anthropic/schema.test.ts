import { describe, expect, test } from 'bun:test'
import { Value } from '@sinclair/typebox/value'
import { AnthropicCountTokensBody, AnthropicMessagesBody } from './schema'

const messages = [{ role: 'user', content: 'hi' }]

describe('AnthropicMessagesBody', () => {
  test('accepts a minimal body and unknown extra fields', () => {
    expect(Value.Check(AnthropicMessagesBody, { model: 'm', max_tokens: 1, messages })).toBe(true)
    expect(
      Value.Check(AnthropicMessagesBody, { model: 'm', max_tokens: 5, messages, stream: true, container: 'c' }),
    ).toBe(true)
  })

  test('rejects what no request can do without', () => {
    const bad = [
      { max_tokens: 1, messages },
      { model: 'm', messages },
      { model: 'm', max_tokens: 0, messages },
      { model: 'm', max_tokens: 1.5, messages },
      { model: 'm', max_tokens: 1, messages: [] },
      { model: 'm', max_tokens: 1, messages: ['hi'] },
      { model: 'm', max_tokens: 1, messages, stream: 'yes' },
    ]
    for (const body of bad) expect(Value.Check(AnthropicMessagesBody, body)).toBe(false)
  })
})

describe('AnthropicCountTokensBody', () => {
  test('model and messages required; system and tools optional; extras allowed', () => {
    expect(Value.Check(AnthropicCountTokensBody, { model: 'm', messages, system: 's', tools: [], thinking: {} })).toBe(
      true,
    )
    expect(Value.Check(AnthropicCountTokensBody, { model: 'm', messages, system: [{ type: 'text', text: 's' }] })).toBe(
      true,
    )
    expect(Value.Check(AnthropicCountTokensBody, { model: 'm', messages: [] })).toBe(false)
    expect(Value.Check(AnthropicCountTokensBody, { model: 'm', messages, system: 3 })).toBe(false)
  })
})
