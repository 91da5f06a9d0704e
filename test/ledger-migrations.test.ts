// A database written by an earlier release opens under the current one with every row intact.
// Migration 0003 rebuilds the three tables a model request writes (new keys, WITHOUT ROWID), so
// it is checked on a ledger made at 0002: rows, charge order, foreign keys, usage API reads.
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { embeddedMigrations } from '../src/db/migrations.generated'
import { openDatabase } from '../src/db/open'
import { createSqliteLedger } from '../src/ledger/sqlite-ledger'

const dir = mkdtempSync(join(tmpdir(), 'svc-migrations-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** A database as a release that shipped migrations 0000–0002 left it, bookkeeping included. */
function ledgerAt0002(path: string): Database {
  const db = new Database(path, { create: true, strict: true })
  db.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)')
  const before0003 = embeddedMigrations.slice(
    0,
    embeddedMigrations.findIndex((m) => m.tag.startsWith('0003')),
  )
  expect(before0003.map((m) => m.tag)).toEqual(['0000_init', '0001_device_codes', '0002_session_partial_index'])
  for (const m of before0003) {
    for (const statement of m.sql.split('--> statement-breakpoint')) db.exec(statement)
    const hash = createHash('sha256').update(m.sql).digest('hex')
    db.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', [hash, m.when])
  }
  return db
}

test('a ledger made before migration 0003 keeps its requests, legs and charges in order', async () => {
  const path = join(dir, 'old.db')
  const old = ledgerAt0002(path)
  old.exec(`
    INSERT INTO accounts VALUES ('acct_a', 'a', 1);
    INSERT INTO grants VALUES ('grant_2', 'acct_a', 900, 0, 'all', 'admin', NULL, NULL, NULL, NULL, 2);
    INSERT INTO grants VALUES ('grant_1', 'acct_a', 500, 100, 'all', 'admin', NULL, NULL, NULL, NULL, 1);
    INSERT INTO requests (id, account_id, surface, routing_mode, status, http_status, stream, provider_ranks,
      attempts, total_cost_nanos, charged_nanos, created_at, ended_at)
      VALUES ('req_1', 'acct_a', 'messages', 'pro', 'completed', 200, 0, '[]', 2, 1300, 1300, 10, 20);
    INSERT INTO usage_events (id, request_id, account_id, attempt, model_id, provider_id, upstream_model, committed,
      estimated, outcome, cost_nanos, charged_nanos, created_at, ended_at)
      VALUES ('leg_1', 'req_1', 'acct_a', 1, 'm', 'p', 'um', 0, 1, 'failed', 0, 0, 10, 12),
             ('leg_2', 'req_1', 'acct_a', 2, 'm', 'p', 'um', 1, 0, 'ok', 1300, 1300, 12, 20);
    -- Charging order is grant_2 before grant_1 (soonest expiry, say): not the grants' id order.
    INSERT INTO grant_charges (grant_id, usage_event_id, request_id, cost_type, amount_nanos, created_at)
      VALUES ('grant_2', 'leg_2', 'req_1', 'model_usage', 900, 20), ('grant_1', 'leg_2', 'req_1', 'model_usage', 400, 20);
    INSERT INTO feedback VALUES ('fb_1', 'req_1', 'acct_a', 'good', NULL, NULL, 30);
  `)
  old.close()

  const db = openDatabase(path)
  const tables = db.$client
    .query<{ name: string; sql: string }, []>(
      "SELECT name, sql FROM sqlite_master WHERE name IN ('requests', 'usage_events', 'grant_charges')",
    )
    .all()
  expect(tables).toHaveLength(3)
  for (const t of tables) expect(t.sql).toEndWith('WITHOUT ROWID')
  expect(db.$client.query('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
  expect(db.$client.query('PRAGMA foreign_key_check').all()).toEqual([])

  const ledger = createSqliteLedger(db, Date.now)
  const detail = await ledger.getRequest('acct_a', 'req_1')
  expect(detail?.request).toMatchObject({ id: 'req_1', totalCostNanos: 1300, chargedNanos: 1300, attempts: 2 })
  expect(detail?.legs.map((l) => [l.id, l.attempt, l.outcome])).toEqual([
    ['leg_1', 1, 'failed'],
    ['leg_2', 2, 'ok'],
  ])
  expect(detail?.charges).toEqual([
    { grantId: 'grant_2', usageEventId: 'leg_2', costType: 'model_usage', amountNanos: 900 },
    { grantId: 'grant_1', usageEventId: 'leg_2', costType: 'model_usage', amountNanos: 400 },
  ])
  expect(detail?.feedback.map((f) => f.id)).toEqual(['fb_1'])

  // Foreign keys hold again for new writes: a charge for a request that does not exist is refused.
  expect(() =>
    db.$client.exec("INSERT INTO grant_charges VALUES ('req_missing', 'leg_x', 0, 'grant_1', 'model_usage', 1, 1)"),
  ).toThrow(/FOREIGN KEY/)
  ledger.close()

  // Opening again applies nothing and changes nothing.
  const again = openDatabase(path)
  expect(again.$client.query('SELECT count(*) AS n FROM grant_charges').get()).toEqual({ n: 2 })
  again.$client.close()
})
