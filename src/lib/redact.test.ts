import { describe, expect, test } from 'bun:test'
import { withoutSecrets } from './redact'

describe('withoutSecrets', () => {
  test('the request’s key wherever it is quoted, and anything shaped like a key', () => {
    expect(
      withoutSecrets('invalid key: PLATFORM-SECRET-abc123 (sent PLATFORM-SECRET-abc123)', 'PLATFORM-SECRET-abc123'),
    ).toBe('invalid key: [redacted] (sent [redacted])')
    expect(
      withoutSecrets('headers {"authorization":"Bearer abc.def.ghi","x":"sk-ant-api03-AAAABBBBCCCCDDDD"}', undefined),
    ).toBe('headers {"authorization":"[redacted]","x":"[redacted]"}')
    expect(withoutSecrets('your key svc-0123456789abcdefghij was refused', 'other-key-entirely')).toBe(
      'your key [redacted] was refused',
    )
  })

  test('a message with nothing secret is the very string', () => {
    const said = 'Overloaded: try again (request_id req_011CTest)'
    expect(withoutSecrets(said, 'sk-ant-key-0001')).toBe(said)
    // OpenAI's own masked form names no key.
    expect(withoutSecrets('Incorrect API key provided: sk-proj-****abcd.', 'x')).toBe(
      'Incorrect API key provided: sk-proj-****abcd.',
    )
  })
})
