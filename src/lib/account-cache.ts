// Per-account values held in memory (grants, BYOK keys, nudges), loaded on first use and dropped
// when the database changes under them.

export interface AccountCache<T> {
  get(accountId: string): Promise<T>
  /** Replaces the entry with a value known to be current (the ledger's, read in its own commit). */
  set(accountId: string, value: T): void
  invalidate(accountId: string): void
  clear(): void
}

export function accountCache<T>(load: (accountId: string) => Promise<T>): AccountCache<T> {
  const entries = new Map<string, Promise<T>>()
  const get = (accountId: string) => {
    let entry = entries.get(accountId)
    if (!entry) {
      entry = load(accountId)
      entries.set(accountId, entry)
      entry.catch(() => entries.delete(accountId))
    }
    return entry
  }
  return {
    get,
    set(accountId, value) {
      entries.set(accountId, Promise.resolve(value))
    },
    invalidate(accountId) {
      entries.delete(accountId)
    },
    clear() {
      entries.clear()
    },
  }
}
