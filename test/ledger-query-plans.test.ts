// The plans SQLite makes for the reads that must not grow with the whole ledger. A year-sized
// ledger (2 million requests, 1.5 million of them one account's) found two that did: a history
// page 250 days back took 0.75 s (the cursor, spelt with OR, was no index range), and the routing's
// feedback nudges read every account's ratings through a window (100 ms, on the request path).
import { expect, test } from 'bun:test'
import { openDatabase } from '../src/db/open'
import { createSqliteLedger } from '../src/ledger/sqlite-ledger'

/** The ledger over an in-memory database, and every statement it prepares, with SQLite's plan for it. */
function planned() {
  const db = openDatabase(':memory:')
  const statements: string[] = []
  const prepare = db.$client.prepare.bind(db.$client)
  db.$client.prepare = ((sql: string, ...rest: unknown[]) => {
    statements.push(sql)
    return (prepare as (sql: string, ...rest: unknown[]) => unknown)(sql, ...rest)
  }) as typeof db.$client.prepare
  const ledger = createSqliteLedger(db, Date.now)
  const planOf = (match: (sql: string) => boolean): string => {
    const sql = statements.findLast(match)
    if (!sql) throw new Error(`no statement matched among ${statements.length}`)
    return (db.$client.query(`EXPLAIN QUERY PLAN ${sql}`).all() as { detail: string }[]).map((r) => r.detail).join('; ')
  }
  return { ledger, planOf }
}

test('a history page before a cursor is a range of the account’s (created_at, id) index, with or without a filter', async () => {
  const { ledger, planOf } = planned()
  const account = await ledger.createAccount('a')
  const before = { at: Date.parse('2026-01-01T00:00:00Z'), id: '01K00000000000000000000000' }
  await ledger.listRequests({ accountId: account.id, limit: 51, before })
  const plan = planOf((sql) => sql.includes('from "requests"') && sql.includes('<'))
  expect(plan).toContain('USING INDEX requests_account_created (account_id=? AND (created_at,id)<(?,?))')
  expect(plan).not.toContain('TEMP B-TREE')
  await ledger.listRequests({ accountId: account.id, limit: 51, before, modelId: 'rare-model' })
  expect(planOf((sql) => sql.includes('from "requests"') && sql.includes('<'))).toContain(
    '(account_id=? AND (created_at,id)<(?,?))',
  )
})

test('the feedback nudges read only the account’s own ratings, newest first, by its index', async () => {
  const { ledger, planOf } = planned()
  const account = await ledger.createAccount('a')
  await ledger.recentFeedbackSignals(account.id, 200)
  const plan = planOf((sql) => sql.includes('FROM feedback'))
  expect(plan).toContain('USING INDEX feedback_account_created (account_id=?)')
  expect(plan).not.toContain('TEMP B-TREE')
})
