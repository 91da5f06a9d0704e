import { describe, expect, test } from 'bun:test'
import { Type as T } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { describeValueError } from './schema-errors'

const firstError = (schema: Parameters<typeof Value.Errors>[0], value: unknown) =>
  describeValueError(Value.Errors(schema, value).First()!)

describe('describeValueError', () => {
  // TypeBox's own words for these were "expected union value": nothing of what the field takes.
  test('says what a union takes, bounds and all', () => {
    const Nullable = <S extends Parameters<typeof T.Union>[0][number]>(s: S) => T.Union([s, T.Null()])
    const schema = T.Object({
      max_output_tokens: Nullable(T.Integer({ minimum: 1 })),
      input: T.Union([T.String(), T.Array(T.Unknown())]),
      store: Nullable(T.Boolean()),
      top_p: T.Union([T.Number({ minimum: 0, maximum: 1 }), T.Null()]),
    })
    const ok = { max_output_tokens: 5, input: 'hi', store: true, top_p: 0.5 }
    expect([
      firstError(schema, { ...ok, max_output_tokens: 0 }),
      firstError(schema, { ...ok, input: 5 }),
      firstError(schema, { ...ok, store: 'false' }),
      firstError(schema, { ...ok, top_p: 2 }),
    ]).toEqual([
      'max_output_tokens: must be an integer of at least 1, or null (got 0)',
      'input: must be a string, or an array (got 5)',
      'store: must be true or false, or null (got "false")',
      'top_p: must be a number from 0 to 1, or null (got 2)',
    ])
  })

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
