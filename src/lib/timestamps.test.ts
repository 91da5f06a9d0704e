import { describe, expect, test } from 'bun:test'
import { isCalendarDate, parseRfc3339 } from './timestamps'

describe('isCalendarDate', () => {
  test('days the month has, and no others', () => {
    for (const date of ['2026-11-22', '2024-02-29', '2023-06-01', '0001-01-01']) expect(isCalendarDate(date)).toBe(true)
    for (const date of ['2026-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-1-1', '2026-11-22T00:00:00Z'])
      expect(isCalendarDate(date)).toBe(false)
  })
})

describe('parseRfc3339', () => {
  test('the instant, with its zone', () => {
    expect(parseRfc3339('2026-11-22T10:00:00.123Z')).toBe(Date.UTC(2026, 10, 22, 10, 0, 0, 123))
    expect(parseRfc3339('2026-11-22T12:00:00+02:00')).toBe(Date.UTC(2026, 10, 22, 10))
    expect(parseRfc3339('2024-02-29t10:00:00z')).toBe(Date.UTC(2024, 1, 29, 10))
  })

  test('a day or time that does not exist, or no zone, is no timestamp', () => {
    for (const value of [
      '2026-02-29T10:00:00Z',
      '2026-04-31T10:00:00Z',
      '2026-11-22T24:00:00Z',
      '2026-11-22T10:60:00Z',
      '2026-11-22T10:00:60Z',
      '2026-11-22T10:00:00+24:00',
      '2026-11-22T10:00:00',
      '2026-11-22',
      'tomorrow',
    ])
      expect(parseRfc3339(value)).toBeUndefined()
  })
})
