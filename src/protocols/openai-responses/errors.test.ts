import { describe, expect, test } from 'bun:test'
import { GatewayError, invalidRequest } from '../../lib/errors'
import { decodeResponsesError, encodeGatewayErrorAsOpenAI, encodeOpenAIError, mapErrorStatusToOpenAI } from './errors'

describe('decodeResponsesError', () => {
  test.each([
    [
      400,
      '{"error":{"message":"bad","type":"invalid_request_error","param":"input","code":null}}',
      { type: 'invalid_request_error', message: 'bad', param: 'input' },
    ],
    [
      401,
      '{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}',
      { type: 'authentication_error', message: 'Incorrect API key', code: 'invalid_api_key' },
    ],
    [
      429,
      '{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}',
      { type: 'billing_error', message: 'quota', code: 'insufficient_quota' },
    ],
    [
      429,
      '{"error":{"message":"quota","type":"insufficient_quota","code":null}}',
      { type: 'billing_error', message: 'quota' },
    ],
    [
      429,
      '{"error":{"message":"slow","type":"requests","code":"rate_limit_exceeded"}}',
      { type: 'rate_limit_error', message: 'slow', code: 'rate_limit_exceeded' },
    ],
    [
      404,
      '{"error":{"message":"no model","type":"invalid_request_error","code":"model_not_found"}}',
      { type: 'not_found_error', message: 'no model', code: 'model_not_found' },
    ],
    [500, '{"error":{"message":"oops","type":"server_error"}}', { type: 'api_error', message: 'oops' }],
    // A proxy's: the message alone, or a body that is no JSON at all (in the words Chat's errors get).
    [503, '{"error":"no healthy upstream"}', { type: 'overloaded_error', message: 'no healthy upstream' }],
    [
      503,
      '<html>Service Unavailable</html>',
      { type: 'overloaded_error', message: 'upstream returned HTTP 503: <html>Service Unavailable</html>' },
    ],
    [504, '', { type: 'timeout_error', message: 'upstream returned HTTP 504' }],
  ])('%i %s', (status, body, info) => {
    expect(decodeResponsesError(status, body)).toEqual({ status, ...info })
  })
})

describe('OpenAI error bodies', () => {
  test('encodeOpenAIError always has all four keys', () => {
    expect(encodeOpenAIError({ message: 'nope', type: 'invalid_request_error' })).toEqual({
      error: { message: 'nope', type: 'invalid_request_error', param: null, code: null },
    })
  })

  test.each([
    [invalidRequest('input must not be empty', 'input'), 400, 'invalid_request_error', 'input', null],
    [new GatewayError('authentication', 'bad key'), 401, 'invalid_request_error', null, 'invalid_api_key'],
    // OpenAI's own no-credit answer, on which Codex stops ("Quota exceeded") where it retries a 402.
    [new GatewayError('billing', 'no credit'), 429, 'insufficient_quota', null, 'insufficient_quota'],
    [new GatewayError('rate_limit', 'slow down'), 429, 'rate_limit_error', null, 'rate_limit_exceeded'],
    [new GatewayError('not_found', 'no such'), 404, 'invalid_request_error', null, null],
    [new GatewayError('overloaded', 'busy'), 503, 'server_error', null, 'server_overloaded'],
    [new GatewayError('api_error', 'boom'), 500, 'server_error', null, 'server_error'],
  ])('%s → %i %s', (error, status, type, param, code) => {
    expect(mapErrorStatusToOpenAI(error)).toBe(status)
    expect(encodeGatewayErrorAsOpenAI(error)).toEqual({ error: { message: error.message, type, param, code } })
  })
})
