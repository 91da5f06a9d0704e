// The one place that wires config → database, ledger, caches and services. createApp(deps) takes
// the result; tests build their own with an in-memory database and a simulator URL.
import { type Admin, createAdmin } from './accounts/admin'
import { type Authenticator, createAuthenticator } from './accounts/api-keys'
import type { Config } from './config/load'
import { type Db, openDatabase } from './db/open'
import type { Ledger } from './ledger/ledger'
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
  /** Drops in-memory caches when another process wrote to the database (CLI revoke, new grant). */
  syncCaches(): void
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
  return {
    config,
    ledger,
    admin: createAdmin({ ledger, config, clock }),
    auth,
    log: opts.log ?? createLogger('info'),
    clock,
    fetch: opts.fetch ?? fetch,
    syncCaches() {
      if (ledger.changedElsewhere()) auth.clear()
    },
  }
}
