import { describe, expect, test } from 'bun:test'
import { decodeTime, isValid } from 'ulid'
import { newId, newUlid } from './ids'

describe('newUlid', () => {
  test('ids made in one millisecond sort in the order they were made, and carry that millisecond', () => {
    const now = Date.now() + 60_000
    const ids = Array.from({ length: 100 }, () => newUlid(now))
    expect(ids.every(isValid)).toBe(true)
    expect(ids.every((id) => decodeTime(id) === now)).toBe(true)
    expect([...ids].sort()).toEqual(ids)
    expect(new Set(ids).size).toBe(100)
  })

  test('a later millisecond starts a new time part; an earlier one still sorts after the last id', () => {
    const now = Date.now() + 120_000
    const first = newUlid(now)
    const later = newUlid(now + 1)
    const clockBack = newUlid(now - 5)
    expect(decodeTime(later)).toBe(now + 1)
    expect(decodeTime(clockBack)).toBe(now + 1)
    expect([first, later, clockBack]).toEqual([first, later, clockBack].sort())
  })

  test('newId prefixes a ULID', () => {
    expect(newId('acct')).toMatch(/^acct_[0-9A-HJKMNP-TV-Z]{26}$/)
  })
})
