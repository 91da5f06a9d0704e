// One `svc serve` per database. A gateway keeps state that another process on the same file cannot
// see: the credit its requests in flight hold (two gateways let an account spend twice its credit,
// where README promises about one request past it), each session's last model (a session behind a
// balancer switched model every turn), the checkpointer's hold on the log (two writers grew the WAL
// past 300 MB in 24 s) and the sign-in rate limits. So a second gateway on the same file is refused.
//
// The lock is an SQLite file of its own beside the database (`svc.db-serve-lock`, one empty page), held in
// exclusive locking mode: the operating system drops it when the process ends, `kill -9` included,
// so a crash never leaves a stale lock; the admin verbs, `svc backup` and `svc restore` never take it.
import { Database } from 'bun:sqlite'
import { realpathSync } from 'node:fs'
import { ConfigError } from '../config/load'

export interface ServeLock {
  release(): void
}

export const serveLockPath = (database: string) => `${realpathSync(database)}-serve-lock`

/** Takes the database for this gateway alone, or says which database another gateway has. */
export function holdServeLock(database: string): ServeLock {
  // Beside the file itself: two paths to one database (a link, a relative path) share one lock.
  const path = serveLockPath(database)
  let client: Database | undefined
  try {
    client = new Database(path, { create: true })
    client.exec('PRAGMA locking_mode = EXCLUSIVE')
    // Its journal in memory: no `-journal` file beside it (OFF still left one, measured).
    client.exec('PRAGMA journal_mode = MEMORY')
    // Locks at once, or fails at once (no busy timeout): kept until this connection closes.
    client.exec('BEGIN EXCLUSIVE')
    client.exec('COMMIT')
  } catch (err) {
    client?.close()
    if (/locked|busy/i.test((err as Error).message)) {
      throw new ConfigError(
        `another svc serve is using the database at ${database}: one database serves one gateway (stop the other, or let it drain and exit, first; or give this one its own with --db)`,
      )
    }
    throw new ConfigError(`cannot lock the database at ${database} (${path}): ${(err as Error).message}`)
  }
  const held = client
  return { release: () => held.close() }
}
