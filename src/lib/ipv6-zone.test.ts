import { expect, test } from 'bun:test'
import { gatewayUrl } from '../cli/credentials'
import { resolveConfig } from '../config/load'

const zoned = 'an IPv6 address with a zone (%25eth0) cannot be used in a URL: give a global address or a host name'

test('a link-local address with its zone is refused in words that name the zone, in svc login and in base_url', () => {
  expect(() => gatewayUrl('http://[fe80::1%25eth0]:8080')).toThrow(
    `the gateway URL "http://[fe80::1%25eth0]:8080": ${zoned}`,
  )
  expect(() =>
    resolveConfig(
      { providers: { local: { kind: 'openai-chat', base_url: 'http://[fe80::1%25eth0]:8000/v1' } } },
      { env: {}, source: 'svc.toml' },
    ),
  ).toThrow(`svc.toml: providers.local.base_url: ${zoned}`)
  // Without a zone, IPv6 literals are URLs like any other.
  expect(gatewayUrl('http://[::1]:8080')).toBe('http://[::1]:8080')
})
