// Opens the ledger database: the pragmas every connection needs, then the embedded migrations.
import { Database } from 'bun:sqlite'
import { createHash } from 'node:crypto'
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { type BunSQLiteDatabase, drizzle } from 'drizzle-orm/bun-sqlite'
import type { MigrationMeta } from 'drizzle-orm/migrator'
import { embeddedMigrations } from './migrations.generated'
import * as schema from './schema'

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database }

export function openDatabase(path: string): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const client = new Database(path, { create: true, strict: true })
  // WAL lets usage queries read while a request is being recorded; NORMAL is durable across
  // process crashes in WAL mode (only an OS crash can lose the last commits).
  client.exec('PRAGMA journal_mode = WAL')
  client.exec('PRAGMA synchronous = NORMAL')
  client.exec('PRAGMA busy_timeout = 5000')
  const db = drizzle({ client, schema }) as Db
  applyMigrations(db)
  client.exec('PRAGMA foreign_keys = ON')
  return db
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
