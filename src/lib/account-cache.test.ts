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

  test('a write-through value replaces the entry without a load; an invalidation after it still reloads', async () => {
    let loads = 0
    const cache = accountCache(async () => ++loads)
    expect(await cache.get('a')).toBe(1)
    cache.set('a', 42)
    expect(await cache.get('a')).toBe(42)
    expect(loads).toBe(1)
    cache.invalidate('a') // e.g. an admin grant landed after the commit
    expect(await cache.get('a')).toBe(2)
  })
})
