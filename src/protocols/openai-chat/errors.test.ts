import { describe, expect, test } from 'bun:test'
import { decodeChatError } from './errors'

const openaiBody = (message: string, code: string | null = null) =>
  JSON.stringify({ error: { message, type: 'invalid_request_error', param: null, code } })

describe('decodeChatError', () => {
  test('classifies by HTTP status into Anthropic error types', () => {
    const cases: [number, string][] = [
      [400, 'invalid_request_error'],
      [422, 'invalid_request_error'],
      [401, 'authentication_error'],
      [402, 'billing_error'],
      [403, 'permission_error'],
      [404, 'not_found_error'],
      [408, 'timeout_error'],
      [413, 'request_too_large'],
      [429, 'rate_limit_error'],
      [500, 'api_error'],
      [502, 'overloaded_error'],
      [503, 'overloaded_error'],
      [504, 'timeout_error'],
      [529, 'overloaded_error'],
    ]
    for (const [status, type] of cases) {
      expect(decodeChatError(status, openaiBody('m'))).toEqual({ status, type, message: 'm' })
    }
  })

  test('OpenAI’s param and string code come along, for telling whose a 403 or 404 is', () => {
    const body = JSON.stringify({
      error: { message: 'gone', type: 'invalid_request_error', param: 'input', code: null },
    })
    expect(decodeChatError(404, body)).toEqual({
      status: 404,
      type: 'not_found_error',
      message: 'gone',
      param: 'input',
    })
    expect(decodeChatError(404, openaiBody('no model', 'model_not_found'))).toEqual({
      status: 404,
      type: 'not_found_error',
      message: 'no model',
      code: 'model_not_found',
    })
  })

  test('OpenAI insufficient_quota is a billing error, not a rate limit', () => {
    expect(decodeChatError(429, openaiBody('You exceeded your current quota', 'insufficient_quota')).type).toBe(
      'billing_error',
    )
  })

  test('OpenRouter and vLLM bodies; a non-JSON body falls back to the status', () => {
    expect(decodeChatError(402, JSON.stringify({ error: { code: 402, message: 'Insufficient credits' } }))).toEqual({
      status: 402,
      type: 'billing_error',
      message: 'Insufficient credits',
    })
    expect(
      decodeChatError(
        400,
        JSON.stringify({ object: 'error', message: 'too long', type: 'BadRequestError', code: 400 }),
      ),
    ).toEqual({ status: 400, type: 'invalid_request_error', message: 'too long' })
    expect(decodeChatError(503, 'upstream connect error')).toEqual({
      status: 503,
      type: 'overloaded_error',
      message: 'upstream returned HTTP 503: upstream connect error',
    })
  })
})
