// `svc backup FILE`: a consistent copy of the ledger while the gateway serves. SQLite's VACUUM
// INTO reads one snapshot (WAL lets the gateway keep writing meanwhile) and writes a compact
// database that stands on its own, with no log beside it; journal entries not yet spread into the
// tables go along and are spread when a restored copy is first opened.
// `svc restore FILE`: such a copy put back in the database's place, with the gateway stopped.
import { Database } from 'bun:sqlite'
import {
  chownSync,
  closeSync,
  existsSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs'
import { dirname, resolve } from 'node:path'
import { ConfigError } from '../config/load'
import { cannotOpen, migrationsTable, refuseDirectory, refuseForeign, refuseNewerMigrations } from '../db/open'
import { heldElsewhere, holdExclusively } from '../db/serve-lock'
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
      `To restore: stop svc, run svc restore ${target} --db ${database}, start svc.`,
    ].join('\n'),
  )
  return 0
}

const restoreUsage = 'usage: svc restore FILE'

/**
 * Puts a backup in the database's place. By hand (copy the file over) a `-wal` left beside the
 * database by a gateway that crashed was replayed onto the restored copy at the next start: the
 * crashed gateway's state came back as if nothing had been restored, or the copy was ruined
 * ("database disk image is malformed"). Here the backup is copied whole first (VACUUM INTO, as a
 * backup is made: what a `-wal` of its own holds goes along) and checked; then the database, once no
 * process has it open, is kept aside and the copy renamed into its place, with no log beside it.
 */
export async function runRestore(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, {})
  if (positionals.length !== 1) throw new UsageError(restoreUsage)
  const backup = resolve(io.cwd, positionals[0]!)
  const configured = loadCliConfig(io, values).server.database
  // Through a link, the file it names is the one replaced: data kept on another volume stays there,
  // the link too (its target gone, as when a restore is wanted, the file is made where it pointed).
  const database = configured === ':memory:' ? configured : linkedFile(configured)
  if (database === ':memory:') throw new GatewayError('invalid_request', 'an in-memory database cannot be restored')
  if (!existsSync(backup)) throw new GatewayError('not_found', `no backup at ${backup}`)
  refuseDirectory(backup)
  refuseDirectory(database)
  // A backup a newer svc made would be refused by this one's serve once in place: refused before.
  const source = openSource(backup)
  try {
    refuseNewerMigrations(source, backup)
  } finally {
    source.close()
  }
  // By the files themselves: a link to the database is the database.
  if (existsSync(database) && realpathSync(backup) === realpathSync(database)) {
    throw new GatewayError('invalid_request', `${backup} is the database itself: give the backup's file`)
  }
  // Written beside the database, then renamed over its path: a crash leaves the old file or the new.
  const incoming = `${database}.restoring`
  rmSync(incoming, { force: true })
  createPrivately(incoming)
  let counts: ReturnType<typeof countsOf>
  try {
    copyInto(backup, incoming)
    counts = countsOf(incoming)
    flushToDisk(incoming) // before it replaces the database by rename
  } catch (err) {
    rmSync(incoming, { force: true })
    throw err
  }
  const owner = existsSync(database) ? statSync(database) : undefined
  // Restored by root (sudo) for a service running as its own user: the file stays that user's.
  if (owner && process.getuid?.() === 0) chownSync(incoming, owner.uid, owner.gid)
  let replaced: string | undefined
  try {
    replaced = owner ? setAside(database) : undefined
    // A log with no database beside it (the file deleted by hand) would be replayed onto the backup.
    for (const suffix of ['-wal', '-shm']) rmSync(database + suffix, { force: true })
    renameSync(incoming, database)
  } catch (err) {
    rmSync(incoming, { force: true })
    if (replaced && !existsSync(database)) renameSync(replaced, database)
    throw err
  }
  const summary = { file: backup, database, replaced: replaced ?? null, ...counts }
  print(io, values.json, summary, () =>
    [
      `restored ${backup} to ${database}: ${counts.accounts} accounts, ${counts.requests} requests, ${counts.grants} grants`,
      replaced ? `The database it replaced is kept as ${replaced}.` : '',
    ]
      .filter(Boolean)
      .join('\n'),
  )
  return 0
}

/**
 * The file a path names through any link, whether or not the file is there: a dangling link is
 * followed hop by hop, each read from the link's real directory, as the system follows it.
 */
function linkedFile(path: string): string {
  if (existsSync(path)) return realpathSync(path)
  let at = path
  for (let hops = 0; hops < 40 && isLink(at); hops++) at = resolve(realpathSync(dirname(at)), readlinkSync(at))
  return at
}

const isLink = (path: string): boolean => {
  try {
    return lstatSync(path).isSymbolicLink()
  } catch {
    return false
  }
}

function flushToDisk(file: string) {
  const fd = openSync(file, 'r+')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * The database moved aside (`PATH.replaced-<time>`), once no process has it open: a gateway
 * running on it holds it, and the exclusive lock taken here is refused at once. Closing that
 * connection folds the log into the file, so the file set aside stands alone; a `-wal` or `-shm`
 * left regardless goes with it, never to the restored database.
 */
function setAside(database: string): string {
  let client: Database | undefined
  try {
    client = new Database(database)
    refuseForeign(client, database)
    holdExclusively(client)
  } catch (err) {
    client?.close()
    if (err instanceof ConfigError) throw err
    if (heldElsewhere(err)) {
      throw new GatewayError(
        'invalid_request',
        `${database} is open in another process (a running svc serve?): stop it first, then restore`,
      )
    }
    throw cannotOpen(database, err)
  }
  client.close()
  const aside = `${database}.replaced-${new Date().toISOString().replace(/[:.]/g, '-')}`
  renameSync(database, aside)
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(database + suffix)) renameSync(database + suffix, aside + suffix)
  }
  return aside
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
    // A journal entry is a request charged whose rows are spread when the copy is first opened (a
    // database older than migration 0004 has no journal).
    const journal = copy.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_journal'").get()
    const requests = count('requests') + (journal ? count('ledger_journal') : 0)
    return { accounts: count('accounts'), requests, grants: count('grants') }
  } finally {
    copy.close()
  }
}
