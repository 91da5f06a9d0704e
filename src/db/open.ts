// Opens the ledger database: the pragmas every connection needs, then the embedded migrations.
// What an operator must fix (no database, one it cannot write, one a newer svc migrated) is said
// here in a line that names the path, before anything is served or written.
import { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { accessSync, chmodSync, closeSync, constants, existsSync, mkdirSync, openSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'
import type { MigrationMeta } from 'drizzle-orm/migrator'
import { embeddedMigrations } from './migrations.generated'
import { ConfigError } from '../config/load'
import type { Logger } from '../lib/log'
import * as schema from './schema'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

export interface OpenOptions {
  /** Make the database where there is none (the default); admin verbs pass false: a wrong path is said. */
  create?: boolean
  /** Refuse a database this process cannot write: a gateway that cannot record must not serve. */
  mustWrite?: boolean
  /** Where migrations and permission repairs are told (they may take minutes, or surprise). */
  log?: Pick<Logger, 'info' | 'warn'>
  /**
   * Runs once the file is known to be svc's (and writable, with mustWrite), before any migration:
   * where `svc serve` takes its lock, so that a second gateway never migrates the schema under one
   * still serving, and a path that is no database is refused before a lock file is made beside it.
   */
  beforeMigrations?: (path: string) => void
}

export function openDatabase(path: string, opts: OpenOptions = {}): Db {
  if (opts.create === false && path !== ':memory:' && !existsSync(path)) {
    throw new ConfigError(`no database at ${path} (start svc serve, or pass --db)`)
  }
  refuseDirectory(path)
  const client = openClient(path, opts)
  try {
    client.exec('PRAGMA synchronous = NORMAL')
    client.exec('PRAGMA busy_timeout = 5000')
    if (opts.mustWrite) refuseUnwritable(client, path)
    refuseNewerMigrations(client, path)
    opts.beforeMigrations?.(path)
    const db = drizzle({ client, schema }) as Db
    applyMigrations(db, path, opts.log)
    client.exec('PRAGMA foreign_keys = ON')
    return db
  } catch (err) {
    client.close()
    throw err
  }
}

/**
 * The file, made where it is missing. A path that cannot be a database (a directory that cannot
 * be made, a file that is something else, no permission) is the operator's to change: said in a
 * line that names it rather than as SQLite's stack.
 */
function openClient(path: string, opts: OpenOptions): Database {
  let client: Database | undefined
  try {
    if (path !== ':memory:') {
      if (opts.create !== false) {
        mkdirSync(dirname(path), { recursive: true })
        createOwnerOnly(path)
      }
    }
    client = new Database(path, { create: true, strict: true })
    // The first read of the file, so also where one that is not a database says so: before any
    // change to it (its mode, its journal), so that a file that is not svc's is left as it was.
    client.query('SELECT 1 FROM sqlite_master LIMIT 1').get()
    // `svc serve` too: it makes a database of a new or empty file, never of another program's.
    refuseForeign(client, path)
    // Only `svc serve` makes one: an admin verb given an empty file (a `touch`, a failed copy) made
    // it svc's, and the gateway later started on it made no first account and key.
    if (opts.create === false && path !== ':memory:' && !client.query(migrationsTable).get()) {
      throw new ConfigError(`no database at ${path} (the file is empty: start svc serve on it, or pass --db)`)
    }
    if (path !== ':memory:') ownerOnly(path, opts.log)
    // WAL lets usage queries read while a request is being recorded; NORMAL is durable across
    // process crashes in WAL mode (only an OS crash can lose the last commits).
    client.exec('PRAGMA journal_mode = WAL')
    return client
  } catch (err) {
    client?.close()
    if (err instanceof ConfigError) throw err
    throw cannotOpen(path, err)
  }
}

/** Why SQLite could not open or read `path`, in the one line every verb gives (backup too). */
export function cannotOpen(path: string, err: unknown): ConfigError {
  const denied = path === ':memory:' ? undefined : whyUnwritableFiles(path)
  return new ConfigError(
    `cannot open the database at ${path}: ${(err as Error).message}${denied ? ` (${denied})` : ''}; choose another with --db or [server] database`,
  )
}

/**
 * A directory is no database. Refused before anything touches it: the mode repair below would
 * otherwise make it 0600 (an empty `--db`, resolved against the working directory, locked a user
 * out of their home).
 */
export function refuseDirectory(path: string) {
  if (path !== ':memory:' && statIfAny(path)?.isDirectory()) {
    throw new ConfigError(
      `cannot open the database at ${path}: it is a directory; choose another with --db or [server] database`,
    )
  }
}

/**
 * Another program's SQLite file (tables, but none of svc's migration bookkeeping): any verb, serve
 * included, would add svc's tables to it. Read only: nothing written. A file with no tables at all
 * holds nothing to spoil: `svc serve` makes it svc's database.
 */
export function refuseForeign(client: Database, path: string) {
  if (path === ':memory:' || client.query(migrationsTable).get()) return
  const tables = client.query("SELECT 1 FROM sqlite_master WHERE type = 'table' LIMIT 1").get()
  if (tables) {
    throw new ConfigError(
      `${path} is not an svc database (it has tables, but not svc's): choose another with --db or [server] database`,
    )
  }
}

/**
 * A new database file readable by its owner alone: it holds hashed API keys and sealed provider
 * keys, and its -wal and -shm files take its mode. SQLite would create it under the umask (0644).
 */
function createOwnerOnly(path: string) {
  try {
    closeSync(openSync(path, 'wx', 0o600))
  } catch (err) {
    if ((err as { code?: string }).code !== 'EEXIST') throw err
  }
}

/**
 * Builds before 2026-11-26 created the database under the umask (0644): its hashed keys and sealed
 * provider keys stayed readable by every user of the machine after an upgrade. Our own files lose their group and other bits, said
 * once; another user's files are theirs to change (and a read-only one is left as it is).
 */
function ownerOnly(path: string, log: OpenOptions['log']) {
  const tightened: string[] = []
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    const stat = statIfAny(file)
    // Regular files only: a directory or a device given as the path keeps its mode.
    if (!stat?.isFile() || stat.uid !== process.getuid?.() || (stat.mode & 0o077) === 0) continue
    try {
      chmodSync(file, 0o600)
      tightened.push(`${file} (was ${modeOf(stat.mode)})`)
    } catch {
      // A read-only file system: opening goes on, and a gateway is refused by refuseUnwritable.
    }
  }
  if (tightened.length > 0) {
    log?.warn(`made the database readable by its owner only (0600): ${tightened.join(', ')}`)
  }
}

function statIfAny(file: string) {
  try {
    return statSync(file)
  } catch {
    return undefined
  }
}
const modeOf = (mode: number) => `0${(mode & 0o777).toString(8)}`

/**
 * A gateway that cannot write would answer every request and record none (or refuse them all):
 * a read-only file, directory or mount is refused at start, in a line that says which and why.
 * The files are asked first (their owner and mode name the fix); SQLite's own write lock last
 * catches what access(2) cannot see.
 */
function refuseUnwritable(client: Database, path: string) {
  if (path === ':memory:') return
  const why = whyUnwritableFiles(path)
  if (!why) {
    try {
      client.exec('BEGIN IMMEDIATE')
      client.exec('ROLLBACK')
      return
    } catch (err) {
      throw new ConfigError(`cannot write the database at ${path}: ${describeSqliteError(err)}`)
    }
  }
  throw new ConfigError(`cannot write the database at ${path}: ${why}`)
}

/** The database, its -wal and -shm, and the directory SQLite makes them in: the first this process cannot write, and why. */
const whyUnwritableFiles = (path: string) =>
  [path, `${path}-wal`, `${path}-shm`, dirname(path)].map(whyUnwritable).find(Boolean)

function whyUnwritable(file: string): string | undefined {
  try {
    accessSync(file, constants.W_OK)
    return undefined
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    if (code === 'EROFS') return `${file} is on a read-only file system`
    const stat = statIfAny(file)
    if (code !== 'EACCES' || !stat) return undefined
    return `permission denied: ${file} is owned by uid ${stat.uid} with mode ${modeOf(stat.mode)}, and svc runs as uid ${process.getuid?.()}`
  }
}

/** The SQLite error under a driver's wrapping (Drizzle puts it in `cause`), if there is one. */
export function sqliteCause(err: unknown): (Error & { code: string }) | undefined {
  for (let e = err; e instanceof Error; e = e.cause) {
    const code = (e as { code?: unknown }).code
    if (typeof code === 'string' && code.startsWith('SQLITE_')) return e as Error & { code: string }
  }
  return undefined
}

const describeSqliteError = (err: unknown) => {
  const cause = sqliteCause(err)
  return cause ? `${cause.message} (${cause.code})` : String((err as Error)?.message ?? err)
}

export const migrationsTable = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '__drizzle_migrations'"

/**
 * Drizzle keeps only each applied migration's hash and created_at, and applies what is newer than
 * the last created_at: a database a newer svc migrated looks up to date to an older one, which
 * then fails every request write on a column it does not know. A row dated past every migration
 * this build embeds is that newer svc's (an edited older migration keeps its date).
 */
export function refuseNewerMigrations(client: Database, path: string) {
  if (!client.query(migrationsTable).get()) return
  const latest = Math.max(...embeddedMigrations.map((m) => m.when))
  const newer = client
    .query<{ hash: string; created_at: number }, [number]>(
      'SELECT hash, CAST(created_at AS INTEGER) AS created_at FROM __drizzle_migrations WHERE CAST(created_at AS INTEGER) > ? ORDER BY 2 DESC LIMIT 1',
    )
    .get(latest)
  if (!newer) return
  throw new ConfigError(
    `${path} was migrated by a newer svc (migration of ${new Date(newer.created_at).toISOString()}, sha256 ${newer.hash.slice(0, 12)}); run that build, or restore the backup taken before the upgrade`,
  )
}

/**
 * The same bookkeeping as drizzle-kit's migrator (table __drizzle_migrations), from memory, one
 * migration per transaction so each is told as it starts (a large ledger takes minutes).
 * Foreign keys are off meanwhile: a migration that changes a table's key rebuilds it (create,
 * copy, drop, rename: SQLite's procedure for schema changes), and dropping a parent table with
 * keys on would fail on its children's rows. The keys are checked once the rebuild is done.
 */
function applyMigrations(db: Db, path: string, log: OpenOptions['log']): void {
  const migrations: (MigrationMeta & { tag: string })[] = embeddedMigrations.map((m) => ({
    tag: m.tag,
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash('sha256').update(m.sql).digest('hex'),
  }))
  const applied = lastApplied(db.$client)
  const pending = migrations.findIndex((m) => m.folderMillis > applied)
  if (pending === -1) return
  // biome-ignore lint/suspicious/noExplicitAny: drizzle exposes its dialect migrator only untyped
  const internal = db as any
  db.$client.exec('PRAGMA foreign_keys = OFF')
  const started = performance.now()
  for (let i = pending; i < migrations.length; i++) {
    log?.info(`migrating ${path}: ${migrations[i]!.tag}`)
    try {
      // Drizzle applies those newer than the last recorded: given the list up to i, just the i-th.
      internal.dialect.migrate(migrations.slice(0, i + 1), internal.session, {})
    } catch (err) {
      throw new ConfigError(
        `cannot migrate the database at ${path} (${migrations[i]!.tag}): ${describeSqliteError(err)}`,
      )
    }
  }
  const broken = db.$client.query<{ table: string; parent: string }, []>('PRAGMA foreign_key_check').all()
  if (broken.length > 0) {
    const where = [...new Set(broken.map((b) => `${b.table} → ${b.parent}`))].join(', ')
    throw new Error(`database migration left ${broken.length} rows without their parent row (${where})`)
  }
  log?.info(`migrated ${path}`, {
    migrations: migrations.length - pending,
    ms: Math.round(performance.now() - started),
  })
}

function lastApplied(client: Database): number {
  if (!client.query(migrationsTable).get()) return -1
  const row = client
    .query<{ at: number | null }, []>('SELECT max(CAST(created_at AS INTEGER)) AS at FROM __drizzle_migrations')
    .get()
  return row?.at ?? -1
}
