// `svc backup FILE`: a consistent copy of the ledger while the gateway serves. SQLite's VACUUM
// INTO reads one snapshot (WAL lets the gateway keep writing meanwhile) and writes a compact
// database that stands on its own, with no log beside it; journal entries not yet spread into the
// tables go along and are spread when a restored copy is first opened.
import { Database } from 'bun:sqlite'
import { closeSync, existsSync, openSync, rmSync, statSync } from 'node:fs'
import { resolve } from 'node:path'
import { ConfigError } from '../config/load'
import { cannotOpen, migrationsTable, refuseDirectory, refuseForeign } from '../db/open'
import { GatewayError } from '../lib/errors'
import { type Io, loadCliConfig, parseFlags, print, UsageError } from './context'

const usage = 'usage: svc backup FILE'

export async function runBackup(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, {})
  if (positionals.length !== 1) throw new UsageError(usage)
  const target = resolve(io.cwd, positionals[0]!)
  const database = loadCliConfig(io, values).server.database
  if (database === ':memory:' || !existsSync(database)) {
    throw new GatewayError('not_found', `no database at ${database} (start svc serve, or pass --db)`)
  }
  refuseDirectory(database)
  createPrivately(target)
  let counts: ReturnType<typeof countsOf>
  try {
    copyInto(database, target)
    counts = countsOf(target)
  } catch (err) {
    rmSync(target, { force: true })
    throw err
  }
  const summary = { file: target, bytes: statSync(target).size, database, ...counts }
  print(io, values.json, summary, () =>
    [
      `backed up ${database} to ${target} (${(summary.bytes / 1024 / 1024).toFixed(1)} MB): ${summary.accounts} accounts, ${summary.requests} requests, ${summary.grants} grants`,
      `To restore: stop svc, copy it to ${database}, delete ${database}-wal and ${database}-shm, start svc.`,
    ].join('\n'),
  )
  return 0
}

/**
 * The copy holds hashed API keys and sealed provider keys: readable by its owner alone, from the
 * start. Created empty (VACUUM INTO writes into an empty file) and never over an existing one.
 */
function createPrivately(target: string) {
  try {
    closeSync(openSync(target, 'wx', 0o600))
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
      // Not a usage mistake (exit 1, no usage hint): the command was right, the name is taken.
      throw new GatewayError(
        'invalid_request',
        `${target} exists: a backup never overwrites a file; choose another name`,
      )
    }
    throw new GatewayError('invalid_request', `cannot create ${target}: ${(err as Error).message}`)
  }
}

function copyInto(database: string, target: string) {
  const source = openSource(database)
  try {
    source.run('VACUUM INTO ?', [target])
  } finally {
    source.close()
  }
}

/**
 * Read-only: the backup never migrates or writes the gateway's database. A file that is not a
 * database, or is another program's, is said in the line every other verb gives, not as a stack.
 */
function openSource(database: string): Database {
  let source: Database | undefined
  try {
    source = new Database(database, { readonly: true })
    source.exec('PRAGMA busy_timeout = 5000')
    refuseForeign(source, database) // the first read of the file
    // A file svc never migrated (empty): nothing to back up, and no tables to count in the copy.
    if (!source.query(migrationsTable).get()) {
      throw new ConfigError(`${database} is not an svc database yet (no tables): nothing to back up`)
    }
    return source
  } catch (err) {
    source?.close()
    throw err instanceof ConfigError ? err : cannotOpen(database, err)
  }
}

/** What the copy holds, read from the copy: it opens and is whole, or the backup fails. */
function countsOf(file: string) {
  const copy = new Database(file, { readonly: true })
  try {
    const check = copy.query<{ quick_check: string }, []>('PRAGMA quick_check').get()?.quick_check
    if (check !== 'ok') throw new GatewayError('api_error', `the backup at ${file} does not check out: ${check}`)
    const count = (table: string) => copy.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n
    return { accounts: count('accounts'), requests: count('requests'), grants: count('grants') }
  } finally {
    copy.close()
  }
}
