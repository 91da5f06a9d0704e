import { describe, expect, test } from 'bun:test'
import { bodyOf, parseHead } from './wire'

const framingOf = (contentLength: string) =>
  bodyOf(parseHead(`HTTP/1.1 200 OK\r\ncontent-length: ${contentLength}`), 'POST').framing

describe('content-length', () => {
  test.each([
    ['5', 5],
    ['0', 0],
    ['007', 7],
    ['5, 5', 5],
    ['5,5,5', 5],
    ['999999999999999', 999_999_999_999_999],
  ])('%s is a length of %d', (value, remaining) => {
    expect(framingOf(value)).toEqual({ kind: 'length', remaining })
  })

  test('repeated headers that agree are one length', () => {
    const head = parseHead('HTTP/1.1 200 OK\r\ncontent-length: 12\r\nContent-Length: 12')
    expect(bodyOf(head, 'POST').framing).toEqual({ kind: 'length', remaining: 12 })
  })

  test.each(['5, 6', '5, 5, 6', '5,', ',5', '', '-1', '+1', '1.5', '1e3', '0x10', '1234567890123456', 'five'])(
    '%p is refused',
    (value) => {
      expect(() => framingOf(value)).toThrow('bad content-length')
    },
  )
})

describe('framing that closes the connection', () => {
  test('chunked with a Content-Length: chunked frames the body, and the connection is not kept (RFC 9112 §6.3)', () => {
    const head = parseHead('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked')
    expect(bodyOf(head, 'POST')).toMatchObject({ framing: { kind: 'chunked' }, keepAlive: false })
    expect(bodyOf(parseHead('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked'), 'POST').keepAlive).toBe(true)
  })

  test('a head of bare LF line ends parses as one of CRLF', () => {
    expect(parseHead('HTTP/1.1 200 OK\ncontent-length: 2\r\nx-a: b')).toEqual(
      parseHead('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nx-a: b'),
    )
  })
})
