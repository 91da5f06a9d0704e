// A lone answer commits to the ledger's journal (its grants charged in the same commit) and is
// spread into requests, usage_events and grant_charges soon after; any read sees it at once, and a
// process killed before the spread leaves entries that the next open spreads, charged once.
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/open'
import type { FinishedRequest, Ledger } from '../src/ledger/ledger'
import { createSqliteLedger } from '../src/ledger/sqlite-ledger'
import { createRequestWriter } from '../src/ledger/sqlite-request-writer'
import { finishedRequest, seedRequest } from './support/ledger-fixtures'

const dir = mkdtempSync(join(tmpdir(), 'svc-journal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

/** What another process sees in the file: the journal, the request rows, the grant's remaining. */
function look(path: string) {
  const db = new Database(path, { readonly: true })
  try {
    const count = (sql: string) => (db.query(sql).get() as { n: number }).n
    return {
      journal: count('SELECT count(*) AS n FROM ledger_journal'),
      requests: count('SELECT count(*) AS n FROM requests'),
      legs: count('SELECT count(*) AS n FROM usage_events'),
      charges: count('SELECT count(*) AS n FROM grant_charges'),
      remaining: count('SELECT sum(remaining_nanos) AS n FROM grants'),
    }
  } finally {
    db.close()
  }
}

async function ledgerWithGrant(name: string) {
  const path = join(dir, `${name}.db`)
  const ledger = createSqliteLedger(openDatabase(path), Date.now)
  const account = await ledger.createAccount(name)
  await ledger.addGrant({ accountId: account.id, amountNanos: 1_000_000, scopeCostType: 'all', source: 'admin' })
  return { path, ledger, accountId: account.id }
}

test('a lone answer is charged in its commit, spread into the tables within moments, and read at once', async () => {
  const { path, ledger, accountId } = await ledgerWithGrant('lone')
  const at = Date.now()
  const recorded = await seedRequest(ledger, { accountId, at, legs: [{ costNanos: 1_000 }] })
  expect(recorded.chargedNanos).toBe(1_000)
  // Committed: the grant is charged and the entry waits in the journal, not yet in the tables.
  expect(look(path)).toEqual({ journal: 1, requests: 0, legs: 0, charges: 0, remaining: 999_000 })
  // Spread by itself shortly after.
  for (let i = 0; i < 100 && look(path).journal > 0; i++) await Bun.sleep(5)
  expect(look(path)).toEqual({ journal: 0, requests: 1, legs: 1, charges: 1, remaining: 999_000 })

  // A read never waits for the spread: the next lone answer is in the usage API at once.
  const next = await seedRequest(ledger, { accountId, at: at + 1, legs: [{ costNanos: 2_000 }] })
  expect(look(path).journal).toBe(1)
  const detail = await ledger.getRequest(accountId, next.id)
  expect(detail?.request).toMatchObject({ id: next.id, totalCostNanos: 2_000, chargedNanos: 2_000 })
  expect(detail?.charges).toEqual([expect.objectContaining({ amountNanos: 2_000 })])
  expect(look(path)).toEqual({ journal: 0, requests: 2, legs: 2, charges: 2, remaining: 997_000 })
  ledger.close()
})

test('a write waits a few milliseconds to share its commit; a read or a close writes it at once', async () => {
  const { path, ledger, accountId } = await ledgerWithGrant('window')
  const at = Date.now()
  const queued = [1_000, 2_000, 3_000].map((costNanos, i) =>
    seedRequest(ledger, { accountId, at: at + i, legs: [{ costNanos }] }),
  )
  // Queued, not committed: another process still sees the grant untouched.
  expect(look(path)).toEqual({ journal: 0, requests: 0, legs: 0, charges: 0, remaining: 1_000_000 })
  await Promise.all(queued)
  // One commit for the three: a batch that size goes straight to the tables.
  expect(look(path)).toEqual({ journal: 0, requests: 3, legs: 3, charges: 3, remaining: 994_000 })

  // A read through the ledger does not wait for the window.
  const read = seedRequest(ledger, { accountId, at: at + 3, legs: [{ costNanos: 4_000 }] })
  const grants = await ledger.listGrants(accountId)
  expect(grants.map((g) => g.remainingNanos)).toEqual([990_000])
  await read
  // Nor does a shutdown.
  void seedRequest(ledger, { accountId, at: at + 4, legs: [{ costNanos: 5_000 }] })
  ledger.close()
  expect(look(path)).toMatchObject({ requests: 5, remaining: 985_000 })
})

test('answers finishing together go straight to the tables', async () => {
  const { path, ledger, accountId } = await ledgerWithGrant('together')
  const at = Date.now()
  await Promise.all([0, 1, 2, 3].map((i) => seedRequest(ledger, { accountId, at: at + i, legs: [{ costNanos: 100 }] })))
  expect(look(path)).toEqual({ journal: 0, requests: 4, legs: 4, charges: 4, remaining: 999_600 })
  ledger.close()
})

test('entries of a process killed before its spread are spread at the next open, charged once', async () => {
  const { path, ledger, accountId } = await ledgerWithGrant('killed')
  const at = Date.now()
  const first = await seedRequest(ledger, { accountId, at, legs: [{ costNanos: 1_000 }] })
  const second = await seedRequest(ledger, { accountId, at: at + 1, legs: [{ costNanos: 500 }, { costNanos: 250 }] })
  expect(look(path)).toMatchObject({ journal: 2, requests: 0, remaining: 998_250 })
  // No close, no spread: as after kill -9. The next process opens the same file.
  const reopened = createSqliteLedger(openDatabase(path), Date.now)
  expect(look(path)).toEqual({ journal: 0, requests: 2, legs: 3, charges: 3, remaining: 998_250 })
  expect((await reopened.getRequest(accountId, second.id))?.legs.map((l) => l.costNanos)).toEqual([500, 250])
  expect((await reopened.getRequest(accountId, first.id))?.request.chargedNanos).toBe(1_000)
  reopened.close()
  // The first process's timer finds nothing left to spread.
  await Bun.sleep(40)
  expect(look(path)).toEqual({ journal: 0, requests: 2, legs: 3, charges: 3, remaining: 998_250 })
  ledger.close()
})

test('an entry that cannot be moved stays in the journal, is reported, and does not hold the others back', async () => {
  const path = join(dir, 'stuck.db')
  const failures: number[] = []
  const ledger = createSqliteLedger(openDatabase(path), Date.now, {
    onSpreadFailure: (_err, seq) => failures.push(seq),
  })
  const account = await ledger.createAccount('stuck')
  await ledger.addGrant({ accountId: account.id, amountNanos: 1_000_000, scopeCostType: 'all', source: 'admin' })
  const good = await seedRequest(ledger, { accountId: account.id, at: Date.now(), legs: [{ costNanos: 1_000 }] })
  // Beside it, the same entry for another request of an account that does not exist: its
  // request row breaks a foreign key when it is moved.
  const raw = new Database(path)
  const [request] = JSON.parse((raw.query('SELECT entry FROM ledger_journal').get() as { entry: string }).entry)
  raw.run('INSERT INTO ledger_journal (seq, entry) VALUES (1000, ?)', [
    JSON.stringify([['req_orphan', 'acct_missing', ...request.slice(2)], []]),
  ])
  raw.close()
  expect((await ledger.getRequest(account.id, good.id))?.request.chargedNanos).toBe(1_000)
  expect(failures).toEqual([1000])
  expect(look(path)).toEqual({ journal: 1, requests: 1, legs: 1, charges: 1, remaining: 999_000 })
  ledger.close()
})

test('while the checkpointer holds the writer, timed commits wait but a reader still sees every answer', async () => {
  const { path, ledger, accountId } = await ledgerWithGrant('held')
  const db = new Database(path)
  const writer = createRequestWriter(db)
  const viaWriter = { recordRequest: (finished: FinishedRequest) => writer.record(finished) } as Ledger
  writer.hold()
  const recorded = seedRequest(viaWriter, { accountId, at: Date.now(), legs: [{ costNanos: 1_000 }] })
  await Bun.sleep(30)
  // Past the commit window: held, so nothing is written yet.
  expect(look(path)).toMatchObject({ journal: 0, requests: 0, remaining: 1_000_000 })
  writer.flush()
  expect((await recorded).chargedNanos).toBe(1_000)
  expect(look(path)).toEqual({ journal: 0, requests: 1, legs: 1, charges: 1, remaining: 999_000 })
  writer.release()
  db.close()
  ledger.close()
})

test('queued writes (the request path) report per batch: the grants once committed, a failure by its request id', async () => {
  const path = join(dir, 'queued.db')
  const committed: [string, number[]][] = []
  const failed: string[] = []
  const ledger = createSqliteLedger(openDatabase(path), Date.now, {
    onCommitted: (accountId, grants) => committed.push([accountId, grants.map((g) => g.remainingNanos)]),
    onRecordFailure: (requestId) => failed.push(requestId),
  })
  const account = await ledger.createAccount('queued')
  await ledger.addGrant({ accountId: account.id, amountNanos: 1_000_000, scopeCostType: 'all', source: 'admin' })
  const at = Date.now()
  ledger.queueRequest(finishedRequest({ accountId: account.id, at, id: 'req_good_1', legs: [{ costNanos: 1_000 }] }))
  // A record that cannot be written (ranks that do not serialise) must not take its batch-mates down.
  ledger.queueRequest(finishedRequest({ accountId: account.id, at, id: 'req_bad', providerRanks: [1n] }))
  ledger.queueRequest(finishedRequest({ accountId: account.id, at, id: 'req_good_2', legs: [{ costNanos: 2_000 }] }))
  expect(committed).toEqual([]) // nothing written yet: the commit window is open

  // Any read writes the queue first.
  expect((await ledger.getRequest(account.id, 'req_good_2'))?.request.chargedNanos).toBe(2_000)
  expect(await ledger.getRequest(account.id, 'req_good_1')).toBeDefined()
  expect(await ledger.getRequest(account.id, 'req_bad')).toBeUndefined()
  expect(failed).toEqual(['req_bad'])
  // The batch failed whole, then each request was written alone: the grants after each commit.
  expect(committed).toEqual([
    [account.id, [999_000]],
    [account.id, [997_000]],
  ])
  expect(look(path).remaining).toBe(997_000)
  ledger.close()
})

test('a commit hook that throws does not make the writer write its batch again: each request charged once', async () => {
  const path = join(dir, 'hook-throws.db')
  const ledger = createSqliteLedger(openDatabase(path), Date.now, {
    onCommitted: () => {
      throw new Error('hook failed')
    },
  })
  const account = await ledger.createAccount('hook')
  await ledger.addGrant({ accountId: account.id, amountNanos: 1_000_000, scopeCostType: 'all', source: 'admin' })
  const at = Date.now()
  for (const id of ['req_h1', 'req_h2', 'req_h3'])
    ledger.queueRequest(finishedRequest({ accountId: account.id, at, id, legs: [{ costNanos: 1_000 }] }))
  // The read that writes the queue meets the hook's error; the batch is in the file, once.
  expect(() => ledger.listGrants(account.id)).toThrow('hook failed')
  expect(look(path)).toMatchObject({ requests: 3, legs: 3, charges: 3, remaining: 997_000 })
})

test.each([
  ['cache_creation_1h_input_tokens', 1],
  ['web_search_requests', 2],
])('an entry journaled before %s existed (legs %i value(s) shorter) spreads with none', async (_column, missing) => {
  const { path, ledger, accountId } = await ledgerWithGrant(`older-entry-${missing}`)
  const recorded = await seedRequest(ledger, {
    accountId,
    at: Date.now(),
    legs: [{ costNanos: 1_000, cacheCreation: 40, cacheCreation1h: 30 }],
  })
  // As a process of an earlier version left it: every leg row without its last values.
  const raw = new Database(path)
  const { seq, entry } = raw.query('SELECT seq, entry FROM ledger_journal').get() as { seq: number; entry: string }
  const [request, legs] = JSON.parse(entry) as [unknown[], [unknown[], unknown[]][]]
  const older = [request, legs.map(([leg, charges]) => [leg.slice(0, -missing), charges])]
  raw.run('UPDATE ledger_journal SET entry = ? WHERE seq = ?', [JSON.stringify(older), seq])
  raw.close()
  const detail = await ledger.getRequest(accountId, recorded.id)
  expect(detail?.legs).toEqual([
    expect.objectContaining({
      costNanos: 1_000,
      cacheCreationInputTokens: 40,
      webSearchRequests: 0,
      cacheCreation1hInputTokens: 0,
    }),
  ])
  expect(look(path)).toEqual({ journal: 0, requests: 1, legs: 1, charges: 1, remaining: 999_000 })
  ledger.close()
})

test('a leg recorded through the journal keeps its 1-hour cache writes', async () => {
  const { ledger, accountId } = await ledgerWithGrant('hour-writes')
  const recorded = await seedRequest(ledger, {
    accountId,
    at: Date.now(),
    legs: [{ costNanos: 1_000, cacheCreation: 40, cacheCreation1h: 30 }],
  })
  const detail = await ledger.getRequest(accountId, recorded.id)
  expect(detail?.legs).toEqual([
    expect.objectContaining({ cacheCreationInputTokens: 40, cacheCreation1hInputTokens: 30 }),
  ])
  ledger.close()
})
