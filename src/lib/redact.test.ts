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
  })

  test('a key as a provider masks it: its first and last characters are the key’s', () => {
    expect(withoutSecrets('Incorrect API key provided: sk-proj-****abcd.', 'x')).toBe(
      'Incorrect API key provided: [redacted].',
    )
    expect(
      withoutSecrets(
        `Incorrect API key provided: sk-proj-PLAT${'*'.repeat(40)}WXYZ. You can find your API key at`,
        'x',
      ),
    ).toBe('Incorrect API key provided: [redacted]. You can find your API key at')
    expect(withoutSecrets('Invalid API Key: gsk_ab************wxyz', 'x')).toBe('Invalid API Key: [redacted]')
    expect(withoutSecrets('Authentication Fails, Your api key: ****6789 is invalid', 'x')).toBe(
      'Authentication Fails, Your api key: [redacted] is invalid',
    )
    expect(withoutSecrets('Incorrect API key provided: na***ys.', 'x')).toBe('Incorrect API key provided: [redacted].')
    expect(withoutSecrets('bad key sk-1234***abcd and sk-ab***yz', 'x')).toBe('bad key [redacted] and [redacted]')
    // Markdown's emphasis, a masked value with nothing shown after it, and words starred out are no key.
    const said = '**bold** and ***more***, hunter2****, ab******, f***ing, char***argv, src/***test'
    expect(withoutSecrets(said, 'x')).toBe(said)
  })

  // An upstream's 400 may echo a client's prompt (vLLM's does): the pattern must not backtrack on it.
  test('a long hyphenated text is read in linear time', () => {
    const text = `${'a-'.repeat(16_384)} ${'sk-'.repeat(10_000)} and sk-proj-${'*'.repeat(20)}WXYZ`
    const started = performance.now()
    const said = withoutSecrets(text, 'x')
    expect(performance.now() - started).toBeLessThan(200)
    expect(said.endsWith(' and [redacted]')).toBe(true)
  })
})
