import { describe, expect, test } from 'bun:test'
import { decodeAnthropicError, encodeAnthropicError, statusForAnthropicErrorType } from './errors'

describe('Anthropic errors', () => {
  test('reads the error body', () => {
    const body = JSON.stringify({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
      request_id: 'req_1',
    })
    expect(decodeAnthropicError(529, body)).toEqual({ status: 529, type: 'overloaded_error', message: 'Overloaded' })
  })

  test('falls back to the status when the body is not JSON', () => {
    expect(decodeAnthropicError(502, '<html>Bad gateway</html>')).toEqual({
      status: 502,
      type: 'overloaded_error',
      message: 'upstream returned HTTP 502: <html>Bad gateway</html>',
    })
    expect(decodeAnthropicError(429, '')).toEqual({
      status: 429,
      type: 'rate_limit_error',
      message: 'upstream returned HTTP 429',
    })
    expect(decodeAnthropicError(418, '{}').type).toBe('invalid_request_error')
  })

  test("an in-band error's status: by its type, 500 for a type Anthropic does not name", () => {
    expect(statusForAnthropicErrorType('overloaded_error')).toBe(529)
    expect(statusForAnthropicErrorType('rate_limit_error')).toBe(429)
    expect(statusForAnthropicErrorType('some_new_error')).toBe(500)
    expect(statusForAnthropicErrorType('constructor')).toBe(500)
    expect(statusForAnthropicErrorType('toString')).toBe(500)
  })

  test('encodes the body clients parse', () => {
    expect(encodeAnthropicError('api_error', 'boom')).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'boom' },
    })
  })
})
