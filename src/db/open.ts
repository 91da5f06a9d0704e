// Opens the ledger database: the pragmas every connection needs, then the embedded migrations.
import { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { closeSync, mkdirSync, openSync } from 'node:fs'
import { dirname } from 'node:path'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'
import type { MigrationMeta } from 'drizzle-orm/migrator'
import { embeddedMigrations } from './migrations.generated'
import { ConfigError } from '../config/load'
import * as schema from './schema'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

export function openDatabase(path: string): Db {
  const client = openClient(path)
  client.exec('PRAGMA synchronous = NORMAL')
  client.exec('PRAGMA busy_timeout = 5000')
  const db = drizzle({ client, schema }) as Db
  applyMigrations(db)
  client.exec('PRAGMA foreign_keys = ON')
  return db
}

/**
 * The file, made where it is missing. A path that cannot be a database (a directory that cannot
 * be made, a file that is something else, no permission) is the operator's to change: said in a
 * line that names it rather than as SQLite's stack.
 */
function openClient(path: string): Database {
  let client: Database | undefined
  try {
    if (path !== ':memory:') {
      mkdirSync(dirname(path), { recursive: true })
      createOwnerOnly(path)
    }
    client = new Database(path, { create: true, strict: true })
    // WAL lets usage queries read while a request is being recorded; NORMAL is durable across
    // process crashes in WAL mode (only an OS crash can lose the last commits). The first read of
    // the file, so also where one that is not a database says so.
    client.exec('PRAGMA journal_mode = WAL')
    return client
  } catch (err) {
    client?.close()
    throw new ConfigError(
      `cannot open the database at ${path}: ${(err as Error).message}; choose another with --db or [server] database`,
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
 * The same bookkeeping as drizzle-kit's migrator (table __drizzle_migrations), from memory.
 * Foreign keys are off meanwhile: a migration that changes a table's key rebuilds it (create,
 * copy, drop, rename: SQLite's procedure for schema changes), and dropping a parent table with
 * keys on would fail on its children's rows. The keys are checked once the rebuild is done.
 */
function applyMigrations(db: Db): void {
  const migrations: MigrationMeta[] = embeddedMigrations.map((m) => ({
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash('sha256').update(m.sql).digest('hex'),
  }))
  // biome-ignore lint/suspicious/noExplicitAny: drizzle exposes its dialect migrator only untyped
  const internal = db as any
  const schemaVersion = () => db.$client.query<{ schema_version: number }, []>('PRAGMA schema_version').get()!
  const before = schemaVersion().schema_version
  db.$client.exec('PRAGMA foreign_keys = OFF')
  internal.dialect.migrate(migrations, internal.session, {})
  if (schemaVersion().schema_version === before) return
  const broken = db.$client.query<{ table: string; parent: string }, []>('PRAGMA foreign_key_check').all()
  if (broken.length > 0) {
    const where = [...new Set(broken.map((b) => `${b.table} → ${b.parent}`))].join(', ')
    throw new Error(`database migration left ${broken.length} rows without their parent row (${where})`)
  }
}
