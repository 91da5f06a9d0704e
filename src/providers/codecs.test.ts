import { describe, expect, test } from 'bun:test'
import { codecs } from './codecs'

describe('anthropic: an error object under a 200', () => {
  const inBand = codecs.anthropic.inBandError!

  test('keeps the upstream’s type and its status', () => {
    expect(inBand({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })).toEqual({
      status: 529,
      type: 'overloaded_error',
      message: 'Overloaded',
    })
    expect(inBand({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } })).toMatchObject({
      status: 429,
    })
  })

  test('without its error object: a generic 500', () => {
    expect(inBand({ type: 'error' })).toEqual({
      status: 500,
      type: 'api_error',
      message: 'upstream answered 200 with an error',
    })
  })

  test('a message, or a body of no known shape, is none', () => {
    expect(inBand({ type: 'message', content: [] })).toBeUndefined()
    expect(inBand({ status: 'ok' })).toBeUndefined()
    expect(inBand([1])).toBeUndefined()
  })
})

describe('openai-responses: a 200 that is not an answer', () => {
  const inBand = codecs['openai-responses'].inBandError!
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: 'resp_1',
    object: 'response',
    status,
    output: [],
    ...extra,
  })

  test('a Response that failed, with its error', () => {
    expect(inBand(response('failed', { error: { code: 'server_error', message: 'The model failed.' } }))).toEqual({
      status: 500,
      type: 'api_error',
      message: 'The model failed.',
    })
    expect(inBand(response('failed', { error: { code: 'rate_limit_exceeded', message: 'later' } }))).toMatchObject({
      status: 429,
      type: 'rate_limit_error',
    })
  })

  test('failed or cancelled without an error: a generic failure', () => {
    expect(inBand(response('cancelled', { error: null }))).toEqual({
      status: 500,
      type: 'api_error',
      message: 'upstream response cancelled',
    })
    expect(inBand(response('failed'))).toMatchObject({ status: 500, message: 'upstream response failed' })
  })

  test('an error body with no output (a proxy’s)', () => {
    expect(inBand({ error: { message: 'no such model', code: 404 } })).toMatchObject({ status: 404 })
  })

  test('completed and incomplete answers are answers', () => {
    expect(inBand(response('completed'))).toBeUndefined()
    expect(inBand(response('incomplete', { incomplete_details: { reason: 'max_output_tokens' } }))).toBeUndefined()
  })
})
