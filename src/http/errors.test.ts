import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../lib/errors'
import { errorResponse } from './errors'

describe('errorResponse: x-should-retry', () => {
  const permanent = new GatewayError('api_error', 'no model can serve this request', { status: 503, permanent: true })

  // On the OpenAI surface such an error is a 400: Codex retries every 5xx whatever the header says.
  test.each([
    ['anthropic', 503],
    ['openai', 400],
  ] as const)('a permanent error carries x-should-retry: false (%s shape, %i)', (surface, status) => {
    const res = errorResponse(permanent, surface, { 'x-request-id': 'r1' })
    expect(res.status).toBe(status)
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(res.headers.get('x-request-id')).toBe('r1')
  })

  test('any other error leaves the decision to the client’s own rule: no header, never `true`', () => {
    const others = [
      new GatewayError('rate_limit', 'slow down', { retryable: true, retryAfterSeconds: 2 }),
      new GatewayError('overloaded', 'Overloaded', { retryable: true }),
      new GatewayError('timeout', 'no first byte', { retryable: true }),
      new GatewayError('api_error', 'Internal server error', { retryable: true }),
      new GatewayError('invalid_request', 'bad'),
      new Error('a bug'),
    ]
    for (const err of others) {
      for (const surface of ['anthropic', 'openai'] as const) {
        expect(errorResponse(err, surface).headers.get('x-should-retry')).toBeNull()
      }
    }
  })

  test('notPermanent() keeps everything but the flag', () => {
    const error = new GatewayError('api_error', 'Low balance', { status: 502, retryable: true, permanent: true })
    const copy = error.notPermanent()
    expect(copy).toBeInstanceOf(GatewayError)
    expect(copy).toMatchObject({
      kind: 'api_error',
      message: 'Low balance',
      status: 502,
      retryable: true,
      permanent: false,
    })
    expect(errorResponse(copy, 'anthropic').headers.get('x-should-retry')).toBeNull()
    expect(copy.notPermanent()).toBe(copy)
  })
})
