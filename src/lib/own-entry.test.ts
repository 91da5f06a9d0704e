import { describe, expect, test } from 'bun:test'
import { ownEntry } from './own-entry'

describe('ownEntry', () => {
  const table: Record<string, number> = { up: 1, down: -1 }

  test("finds the table's own keys", () => {
    expect(ownEntry(table, 'up')).toBe(1)
    expect(ownEntry(table, 'down')).toBe(-1)
    expect(ownEntry(table, 'sideways')).toBeUndefined()
  })

  test('finds nothing for what every object inherits', () => {
    for (const inherited of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'valueOf', '__defineGetter__']) {
      expect(ownEntry(table, inherited)).toBeUndefined()
    }
  })
})
