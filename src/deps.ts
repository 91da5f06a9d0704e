// The one place that wires config → database, ledger, caches and services. createApp(deps) takes
// the result; tests build their own with an in-memory database and a simulator URL.
import { type Admin, createAdmin } from './accounts/admin'
import { type Authenticator, createAuthenticator } from './accounts/api-keys'
import type { Config } from './config/load'
import { type Db, openDatabase } from './db/open'
import type { GrantRecord, Ledger } from './ledger/ledger'
import { createSqliteLedger } from './ledger/sqlite-ledger'
import { createLogger, type Logger } from './lib/log'

export interface Deps {
  config: Config
  ledger: Ledger
  admin: Admin
  auth: Authenticator
  log: Logger
  clock: () => number
  fetch: typeof fetch
  /** The account's grants, from memory between ledger writes: the quota gate reads these. */
  credit: AccountCache<GrantRecord[]>
  /** The account's own provider keys (BYOK), decrypted once and held in memory only. */
  byok: AccountCache<Map<string, string>> & { keysOf(accountId: string): Promise<Map<string, string>> }
  /** Drops in-memory caches when another process wrote to the database (CLI revoke, new grant). */
  syncCaches(): void
}

export interface AccountCache<T> {
  grantsOf(accountId: string): Promise<T>
  invalidate(accountId: string): void
  clear(): void
}

function accountCache<T>(load: (accountId: string) => Promise<T>) {
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
    invalidate: (accountId: string) => void entries.delete(accountId),
    clear: () => entries.clear(),
  }
}

export interface DepsOptions {
  db?: Db
  clock?: () => number
  fetch?: typeof fetch
  log?: Logger
}

export function createDeps(config: Config, opts: DepsOptions = {}): Deps {
  const clock = opts.clock ?? Date.now
  const db = opts.db ?? openDatabase(config.server.database)
  const ledger = createSqliteLedger(db, clock)
  const auth = createAuthenticator(ledger)
  const admin = createAdmin({ ledger, config, clock })
  const grants = accountCache((accountId) => ledger.listGrants(accountId))
  const byokKeys = accountCache((accountId) => admin.openProviderKeys(accountId))
  return {
    config,
    ledger,
    admin,
    auth,
    credit: { grantsOf: grants.get, invalidate: grants.invalidate, clear: grants.clear },
    byok: { grantsOf: byokKeys.get, keysOf: byokKeys.get, invalidate: byokKeys.invalidate, clear: byokKeys.clear },
    log: opts.log ?? createLogger('info'),
    clock,
    fetch: opts.fetch ?? fetch,
    syncCaches() {
      if (!ledger.changedElsewhere()) return
      auth.clear()
      grants.clear()
      byokKeys.clear()
    },
  }
}
