import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../../lib/errors'
import { isReported } from '../unreported-usage'
import { anthropicUsage, decodeAnthropicResponse } from './decode-anthropic-response'
import { encodeAnthropicResponse } from './encode-anthropic-response'

const upstream = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', thinking: 'Look it up.', signature: 'EqQBsig' },
    { type: 'text', text: "I'll look that up.", citations: null },
    { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
    { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
  ],
  stop_reason: 'tool_use',
  stop_sequence: null,
  usage: {
    input_tokens: 57,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 1920,
    output_tokens: 41,
    output_tokens_details: { thinking_tokens: 12 },
    service_tier: 'standard',
  },
}

describe('decodeAnthropicResponse / encodeAnthropicResponse', () => {
  test('decodes a message, skipping server-tool blocks', () => {
    expect(decodeAnthropicResponse(upstream)).toEqual({
      id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
      model: 'claude-sonnet-4-5',
      content: [
        { type: 'thinking', thinking: 'Look it up.', signature: 'EqQBsig' },
        { type: 'text', text: "I'll look that up." },
        { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stopReason: 'tool_use',
      stopSequence: null,
      usage: { input: 57, cacheRead: 1920, cacheWrite: 0, output: 41, reasoning: 12 },
    })
  })

  test('encodes under our id and the requested model', () => {
    const encoded = encodeAnthropicResponse(decodeAnthropicResponse(upstream), { id: 'msg_gw_1', model: 'sonnet' })
    expect(encoded).toEqual({
      id: 'msg_gw_1',
      type: 'message',
      role: 'assistant',
      model: 'sonnet',
      content: [
        { type: 'thinking', thinking: 'Look it up.', signature: 'EqQBsig' },
        { type: 'text', text: "I'll look that up." },
        { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 57, cache_creation_input_tokens: 0, cache_read_input_tokens: 1920, output_tokens: 41 },
    })
  })

  test('foreign thinking gets an empty signature, empty text is omitted, ids are sanitised', () => {
    const encoded = encodeAnthropicResponse(
      {
        id: 'x',
        model: 'm',
        content: [
          { type: 'thinking', thinking: 'r' },
          { type: 'text', text: '' },
          { type: 'tool_use', id: 'functions.f:0', name: 'f', input: null },
        ],
        stopReason: 'context_exceeded',
        stopSequence: null,
        usage: { input: 1, cacheRead: 0, cacheWrite: 0, output: 2, reasoning: 0 },
      },
      { id: 'msg_1', model: 'm' },
    )
    expect(encoded.content).toEqual([
      { type: 'thinking', thinking: 'r', signature: '' },
      { type: 'tool_use', id: 'functions_f_0_jis8l4', name: 'f', input: {} },
    ])
    expect(encoded.stop_reason).toBe('model_context_window_exceeded')
  })

  test('stop sequence and unknown stop reasons', () => {
    const base = { content: [], usage: {} }
    expect(decodeAnthropicResponse({ ...base, stop_reason: 'stop_sequence', stop_sequence: '###' })).toMatchObject({
      stopReason: 'stop_sequence',
      stopSequence: '###',
    })
    expect(decodeAnthropicResponse({ ...base, stop_reason: 'something_new' }).stopReason).toBe('end_turn')
  })

  test('a body without content is a 502', () => {
    expect(() => decodeAnthropicResponse({ type: 'message' })).toThrow(GatewayError)
  })

  test('anthropicUsage: null and absent are 0', () => {
    const reported = anthropicUsage({ input_tokens: 5, cache_read_input_tokens: null, output_tokens: 3 })
    expect(reported).toEqual({ input: 5, cacheRead: 0, cacheWrite: 0, output: 3, reasoning: 0 })
    expect(isReported(reported)).toBe(true)
    expect(anthropicUsage(undefined)).toMatchObject({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0 })
  })

  test('anthropicUsage: no usage, or an input or output count that is no number, was never reported', () => {
    for (const usage of [
      undefined,
      null,
      {},
      { input_tokens: 5 },
      { output_tokens: 3 },
      { input_tokens: '5', output_tokens: '3' },
    ]) {
      expect(isReported(anthropicUsage(usage))).toBe(false)
    }
    expect(isReported(decodeAnthropicResponse({ type: 'message', content: [] }).usage)).toBe(false)
  })
})
