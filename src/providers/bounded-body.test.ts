import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../lib/errors'
import { readAnswerText, readTextPrefix } from './bounded-body'

/** A body of unknown length (no content-length), sent in pieces. */
const chunked = (...pieces: string[]) =>
  new Response(
    new ReadableStream<Uint8Array>({
      start(controller) {
        for (const piece of pieces) controller.enqueue(new TextEncoder().encode(piece))
        controller.close()
      },
    }),
  )

describe('readAnswerText', () => {
  test('a body within the bound, of known length or not, is read whole', async () => {
    expect(await readAnswerText(new Response('{"ok":true}', { headers: { 'content-length': '11' } }), 100)).toBe(
      '{"ok":true}',
    )
    expect(await readAnswerText(chunked('{"ok":', 'true}'), 100)).toBe('{"ok":true}')
    expect(await readAnswerText(chunked('é'.repeat(50)), 100)).toBe('é'.repeat(50))
  })

  test('past the bound, declared or found on the way: a retryable 502', async () => {
    for (const response of [
      chunked('x'.repeat(60), 'x'.repeat(60)),
      new Response('x'.repeat(120), { headers: { 'content-length': '120' } }),
    ]) {
      const err = (await readAnswerText(response, 100).catch((e: unknown) => e)) as GatewayError
      expect(err).toBeInstanceOf(GatewayError)
      expect({ status: err.status, retryable: err.retryable }).toEqual({ status: 502, retryable: true })
    }
  })
})

describe('readTextPrefix', () => {
  test('up to the bound, the rest left unread', async () => {
    expect(await readTextPrefix(chunked('abc', 'def'), 100)).toBe('abcdef')
    expect(await readTextPrefix(chunked('abc', 'defgh', 'ij'), 5)).toBe('abcde')
  })
})
