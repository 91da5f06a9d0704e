import { describe, expect, test } from 'bun:test'
import { Type as T } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { describeValueError } from './schema-errors'

const firstError = (schema: Parameters<typeof Value.Errors>[0], value: unknown) =>
  describeValueError(Value.Errors(schema, value).First()!)

describe('describeValueError', () => {
  test('quotes a short wrong value back', () => {
    expect(firstError(T.Object({ account: T.String() }), { account: 123 })).toBe('account: expected string (got 123)')
  })

  test("shows TOML's inf and nan as Infinity and NaN, not JSON's null, wherever they sit", () => {
    const schema = T.Object({ usd: T.Number() })
    expect(
      [
        Number.POSITIVE_INFINITY,
        Number.NEGATIVE_INFINITY,
        Number.NaN,
        [1, Number.NaN],
        { b: Number.POSITIVE_INFINITY },
      ].map((usd) => firstError(schema, { usd })),
    ).toEqual([
      'usd: expected number (got Infinity)',
      'usd: expected number (got -Infinity)',
      'usd: expected number (got NaN)',
      'usd: expected number (got [1,NaN])',
      'usd: expected number (got {"b":Infinity})',
    ])
  })

  test('never quotes a secret, wherever it sits', () => {
    const body = T.Object({ provider: T.Object({ api_key: T.String() }), key: T.String() })
    expect(firstError(body, { provider: { api_key: 'sk-x' }, key: ['sk-ant-SECRET'] })).toBe(
      'key: expected string (value not shown: a secret)',
    )
    expect(firstError(body, { provider: { api_key: { v: 'sk-ant-SECRET' } }, key: 'k' })).toBe(
      'provider.api_key: expected string (value not shown: a secret)',
    )
  })

  test('cuts a long wrong value to its first 80 characters', () => {
    const message = firstError(T.Object({ messages: T.Array(T.Unknown()) }), { messages: { text: 'x'.repeat(10_000) } })
    expect(message).toBe(`messages: expected array (got ${`{"text":"${'x'.repeat(10_000)}`.slice(0, 80)}…)`)
  })
})
