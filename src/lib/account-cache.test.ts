import { describe, expect, test } from 'bun:test'
import { accountCache } from './account-cache'

describe('account cache', () => {
  test('loads once per account until invalidated', async () => {
    let loads = 0
    const cache = accountCache(async (id) => `${id}:${++loads}`)
    expect(await cache.get('a')).toBe('a:1')
    expect(await cache.get('a')).toBe('a:1')
    cache.invalidate('a')
    expect(await cache.get('a')).toBe('a:2')
  })

  test('a write-through value replaces the entry without a load', async () => {
    let loads = 0
    const cache = accountCache(async () => ++loads)
    expect(await cache.get('a')).toBe(1)
    const set = cache.setLater('a')
    set(42)
    expect(await cache.get('a')).toBe(42)
    expect(loads).toBe(1)
  })

  test('a write-through value that an invalidation overtook is dropped, so the next read loads', async () => {
    let loads = 0
    const cache = accountCache(async () => ++loads)
    const stale = cache.setLater('a')
    cache.invalidate('a') // e.g. an admin grant landed while the write was in flight
    stale(99)
    expect(await cache.get('a')).toBe(1)
    const staleToo = cache.setLater('a')
    cache.clear()
    staleToo(98)
    expect(await cache.get('a')).toBe(2)
  })
})
