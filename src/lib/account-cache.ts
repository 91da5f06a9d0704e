// Per-account values held in memory (grants, BYOK keys, nudges), loaded on first use and dropped
// when the database changes under them.

export interface AccountCache<T> {
  get(accountId: string): Promise<T>
  /**
   * For a value being produced now (the ledger's state after a write in flight): the returned
   * setter replaces the entry, unless an invalidation came in between and made the value stale.
   */
  setLater(accountId: string): (value: T) => void
  invalidate(accountId: string): void
  clear(): void
}

export function accountCache<T>(load: (accountId: string) => Promise<T>): AccountCache<T> {
  const entries = new Map<string, Promise<T>>()
  /** Moves on every invalidation; a setLater from before it is dropped. */
  let generation = 0
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
    setLater(accountId) {
      const from = generation
      return (value) => {
        if (generation === from) entries.set(accountId, Promise.resolve(value))
      }
    },
    invalidate(accountId) {
      generation++
      entries.delete(accountId)
    },
    clear() {
      generation++
      entries.clear()
    },
  }
}
