// One `svc serve` per database. A gateway keeps state that another process on the same file cannot
// see: the credit its requests in flight hold (two gateways let an account spend twice its credit,
// where README promises about one request past it), each session's last model (a session behind a
// balancer switched model every turn), the checkpointer's hold on the log (two writers grew the WAL
// past 300 MB in 24 s) and the sign-in rate limits. So a second gateway on the same file is refused.
//
// The lock is an SQLite file of its own beside the database (`svc.db-serve-lock`, one empty page),
// held in exclusive locking mode: the operating system drops it when the process ends, `kill -9`
// included, so a crash never leaves a stale lock; the admin verbs, `svc backup` and `svc restore`
// never take it. It is named by the file's real path: a hard link elsewhere is not seen (serve.ts
// warns of one).
import { Database } from 'bun:sqlite'
import { realpathSync } from 'node:fs'
import { ConfigError } from '../config/load'

export interface ServeLock {
  release(): void
}

const serveLockPath = (database: string) => `${realpathSync(database)}-serve-lock`

/** Takes the database for this gateway alone, or says which database another gateway has. */
export function holdServeLock(database: string): ServeLock {
  // Beside the file itself: two paths to one database (a link, a relative path) share one lock.
  const path = serveLockPath(database)
  let client: Database | undefined
  try {
    client = new Database(path, { create: true })
    // Its journal in memory: no `-journal` file beside it (OFF still left one, measured).
    client.exec('PRAGMA journal_mode = MEMORY')
    holdExclusively(client)
  } catch (err) {
    client?.close()
    if (heldElsewhere(err)) {
      throw new ConfigError(
        `another svc serve is using the database at ${database}: one database serves one gateway (stop the other, or let it drain and exit, first; or give this one its own with --db)`,
      )
    }
    throw new ConfigError(`cannot lock the database at ${database} (${path}): ${(err as Error).message}`)
  }
  const held = client
  return { release: () => held.close() }
}

/**
 * Takes the connection's file for it alone until it closes, at once or not at all (no busy
 * timeout): refused while any other connection, in any process, has the file open.
 */
export function holdExclusively(client: Database) {
  client.exec('PRAGMA locking_mode = EXCLUSIVE')
  client.exec('BEGIN EXCLUSIVE')
  client.exec('COMMIT')
}

/** The refusal holdExclusively meets when another connection has the file. */
export const heldElsewhere = (err: unknown) => /locked|busy/i.test((err as Error).message)
