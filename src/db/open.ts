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
  client.exec('PRAGMA foreign_keys = ON')
  const db = drizzle({ client, schema }) as Db
  applyMigrations(db)
  return db
}

/** The same bookkeeping as drizzle-kit's migrator (table __drizzle_migrations), from memory. */
function applyMigrations(db: Db): void {
  const migrations: MigrationMeta[] = embeddedMigrations.map((m) => ({
    sql: m.sql.split('--> statement-breakpoint'),
    bps: m.breakpoints,
    folderMillis: m.when,
    hash: createHash('sha256').update(m.sql).digest('hex'),
  }))
  // biome-ignore lint/suspicious/noExplicitAny: drizzle exposes its dialect migrator only untyped
  const internal = db as any
  internal.dialect.migrate(migrations, internal.session, {})
}
