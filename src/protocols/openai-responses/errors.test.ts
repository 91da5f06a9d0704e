import { describe, expect, test } from 'bun:test'
import { GatewayError, invalidRequest } from '../../lib/errors'
import { decodeResponsesError, encodeGatewayErrorAsOpenAI, encodeOpenAIError, mapErrorStatusToOpenAI } from './errors'

describe('decodeResponsesError', () => {
  test.each([
    [
      400,
      '{"error":{"message":"bad","type":"invalid_request_error","param":"input","code":null}}',
      'invalid_request_error',
      'bad',
    ],
    [
      401,
      '{"error":{"message":"Incorrect API key","type":"invalid_request_error","code":"invalid_api_key"}}',
      'authentication_error',
      'Incorrect API key',
    ],
    [
      429,
      '{"error":{"message":"quota","type":"insufficient_quota","code":"insufficient_quota"}}',
      'billing_error',
      'quota',
    ],
    [429, '{"error":{"message":"slow","type":"requests","code":"rate_limit_exceeded"}}', 'rate_limit_error', 'slow'],
    [
      404,
      '{"error":{"message":"no model","type":"invalid_request_error","code":"model_not_found"}}',
      'not_found_error',
      'no model',
    ],
    [500, '{"error":{"message":"oops","type":"server_error"}}', 'api_error', 'oops'],
    [503, '<html>Service Unavailable</html>', 'overloaded_error', '<html>Service Unavailable</html>'],
    [504, '', 'timeout_error', 'upstream answered HTTP 504'],
  ])('%i %s', (status, body, type, message) => {
    expect(decodeResponsesError(status, body)).toEqual({ status, type, message })
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
    [new GatewayError('authentication', 'bad key'), 401, 'authentication_error', null, 'invalid_api_key'],
    [new GatewayError('billing', 'no credit'), 402, 'insufficient_quota', null, 'insufficient_quota'],
    [new GatewayError('rate_limit', 'slow down'), 429, 'rate_limit_error', null, 'rate_limit_exceeded'],
    [new GatewayError('not_found', 'no such'), 404, 'not_found_error', null, null],
    [new GatewayError('overloaded', 'busy'), 503, 'server_error', null, 'server_overloaded'],
    [new GatewayError('api_error', 'boom'), 500, 'server_error', null, 'server_error'],
  ])('%s → %i %s', (error, status, type, param, code) => {
    expect(mapErrorStatusToOpenAI(error)).toBe(status)
    expect(encodeGatewayErrorAsOpenAI(error)).toEqual({ error: { message: error.message, type, param, code } })
  })
})
