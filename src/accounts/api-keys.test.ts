import { describe, expect, test } from 'bun:test'
import type { ApiKeyRecord, Ledger } from '../ledger/ledger'
import { apiKeyPrefix, createAuthenticator, hashApiKey } from './api-keys'

const key = `svc-${'a'.repeat(40)}`

/** A ledger that knows one key (or none) and counts the lookups. */
function keyLedger(known: { revokedAt?: number | null; fail?: boolean } | undefined) {
  const state = { lookups: 0, known }
  const record = (): ApiKeyRecord =>
    ({
      id: 'key_1',
      accountId: 'acct_1',
      name: 'test',
      prefix: apiKeyPrefix(key),
      hash: hashApiKey(key),
      createdAt: 0,
      revokedAt: state.known?.revokedAt ?? null,
    }) as ApiKeyRecord
  const ledger = {
    // Reads at the call, answers after a turn: what a query sees is what was there when it ran.
    async findApiKeyByPrefix(prefix: string) {
      state.lookups++
      const fail = state.known?.fail
      const found = state.known && prefix === apiKeyPrefix(key) ? record() : undefined
      await Bun.sleep(1)
      if (fail) throw new Error('database is locked')
      return found
    },
  } as unknown as Ledger
  return { ledger, state }
}

describe('createAuthenticator', () => {
  test('requests that miss together share one lookup, and the answer is kept', async () => {
    const { ledger, state } = keyLedger({})
    const auth = createAuthenticator(ledger)
    const principals = await Promise.all(Array.from({ length: 64 }, () => auth.authenticate(key)))
    expect(principals.every((p) => p?.accountId === 'acct_1' && p.keyId === 'key_1')).toBe(true)
    expect(state.lookups).toBe(1)
    await auth.authenticate(key)
    expect(state.lookups).toBe(1)
    // After a clear (a write elsewhere), the next burst asks once more.
    auth.clear()
    await Promise.all(Array.from({ length: 8 }, () => auth.authenticate(key)))
    expect(state.lookups).toBe(2)
  })

  test('an unknown key is asked about again: it may be created at any time', async () => {
    const { ledger, state } = keyLedger(undefined)
    const auth = createAuthenticator(ledger)
    expect(await Promise.all([auth.authenticate(key), auth.authenticate(key)])).toEqual([undefined, undefined])
    state.known = {}
    expect((await auth.authenticate(key))?.keyId).toBe('key_1')
    expect(state.lookups).toBe(2)
  })

  test('a key that shares a real key’s prefix but not the rest is refused', async () => {
    // The prefix finds the row, and it is no secret: `svc keys list`, the admin API and whoami show it.
    const { ledger } = keyLedger({})
    const auth = createAuthenticator(ledger)
    const forged = `${apiKeyPrefix(key)}${'b'.repeat(key.length - apiKeyPrefix(key).length)}`
    expect(await auth.authenticate(forged)).toBeUndefined()
    expect((await auth.authenticate(key))?.keyId).toBe('key_1')
    expect(await auth.authenticate(forged)).toBeUndefined()
  })

  test('a failed lookup fails its waiters and is not kept', async () => {
    const { ledger, state } = keyLedger({ fail: true })
    const auth = createAuthenticator(ledger)
    const results = await Promise.allSettled([auth.authenticate(key), auth.authenticate(key)])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected'])
    state.known = {}
    expect((await auth.authenticate(key))?.keyId).toBe('key_1')
    expect(state.lookups).toBe(2)
  })

  test('a key revoked while its lookup runs is answered once but not kept', async () => {
    const { ledger, state } = keyLedger({})
    const auth = createAuthenticator(ledger)
    const inFlight = auth.authenticate(key)
    auth.forgetKey('key_1')
    state.known = { revokedAt: 1 }
    expect((await inFlight)?.keyId).toBe('key_1')
    expect(await auth.authenticate(key)).toBeUndefined()
    expect(state.lookups).toBe(2)
  })
})
