// Under sustained writes the WAL must stay bounded: PASSIVE checkpoints alone never find the log
// quiet, so without the writer held for a complete copy now and then SQLite would never wrap it and the file would grow forever.
// At light load the checkpointer starts the log over itself, so that the fsync that comes with it
// is never made by a request's commit on the event loop; an idle gateway writes nothing.
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/open'
import { createSqliteLedger } from '../src/ledger/sqlite-ledger'
import { seedRequest } from './support/ledger-fixtures'

const dir = mkdtempSync(join(tmpdir(), 'svc-wal-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

test('the WAL is wrapped and trimmed while requests keep being written', async () => {
  const path = join(dir, 'svc.db')
  const wrapAfterFrames = 200
  const ledger = createSqliteLedger(openDatabase(path), Date.now, {
    checkpointInWorker: true,
    // holdFirstFrames 0: every round is a sustained-load round, which wraps only a long log.
    checkpoints: { everyMs: 20, wrapAfterFrames, holdFirstFrames: 0 },
  })
  const account = await ledger.createAccount('wal')
  let largest = 0
  let wraps = 0
  let written = 0
  let sequence = walCheckpointSequence(path)
  // Until three wraps and enough writes to matter, within a bound: how often a wrap comes depends
  // on how fast this machine writes and how often the checkpointer's thread gets the core.
  const deadline = Date.now() + 10_000
  // Batches back to back, a few milliseconds apart: the log is never quiet for a checkpoint.
  while ((wraps < 3 || written < 4000) && Date.now() < deadline) {
    await Promise.all(
      Array.from({ length: 20 }, () => seedRequest(ledger, { accountId: account.id, at: Date.now() + written++ })),
    )
    const now = walCheckpointSequence(path)
    if (now !== sequence) wraps++
    sequence = now
    largest = Math.max(largest, statSync(`${path}-wal`).size)
  }
  ledger.close()
  // Each wrap trims the log to 200 frames (800 KB); unwrapped, it once passed 250 MB in 1.5 s here.
  expect(written).toBeGreaterThanOrEqual(4000)
  expect(wraps).toBeGreaterThanOrEqual(3)
  expect(largest).toBeLessThan(8 * 1024 * 1024)
}, 15_000)

/** The log's frames and how many of them are copied into the database, as another connection sees them. */
function walState(dbPath: string): { busy: number; log: number; checkpointed: number } {
  const db = new Database(dbPath)
  try {
    return db.query<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)').get()!
  } finally {
    db.close()
  }
}

test('the checkpointer starts a fully copied log over itself, and an idle ledger writes nothing', async () => {
  const path = join(dir, 'restart.db')
  const ledger = createSqliteLedger(openDatabase(path), Date.now, {
    checkpointInWorker: true,
    checkpoints: { everyMs: 20, wrapAfterFrames: 16_384, holdFirstFrames: 1024 },
  })
  const account = await ledger.createAccount('restart')
  for (let i = 0; i < 20; i++) await seedRequest(ledger, { accountId: account.id, at: Date.now() + i })
  await ledger.listRequests({ accountId: account.id, limit: 1 })
  // Without a commit from the ledger's own connection, the log holds only the checkpointer's
  // one-page restart write: the next request's commit appends to it and never syncs a header.
  // Up to 6 s: a machine busy with other work took over 2 s (an audit's runs beside the suite).
  let state = walState(path)
  for (let i = 0; i < 300 && state.log !== 1; i++) {
    await Bun.sleep(20)
    state = walState(path)
  }
  expect(state).toEqual({ busy: 0, log: 1, checkpointed: 1 })
  // Idle: rounds keep coming, and none of them writes.
  const size = statSync(`${path}-wal`).size
  const mtime = statSync(`${path}-wal`).mtimeMs
  await Bun.sleep(200)
  expect(statSync(`${path}-wal`).size).toBe(size)
  expect(statSync(`${path}-wal`).mtimeMs).toBe(mtime)
  ledger.close()
})

/**
 * The WAL header's checkpoint sequence number (bytes 12–15, big-endian), which SQLite increments
 * each time it starts the log over from its beginning: a wrap, whether or not the file shrank.
 */
function walCheckpointSequence(dbPath: string): number {
  const fd = openSync(`${dbPath}-wal`, 'r')
  try {
    const header = Buffer.alloc(32)
    return readSync(fd, header, 0, 32, 0) === 32 ? header.readUInt32BE(12) : -1
  } finally {
    closeSync(fd)
  }
}

test('the spend series, read on the checkpointer’s connection, is what the gateway’s own connection reads', async () => {
  const path = join(dir, 'spend.db')
  const serving = createSqliteLedger(openDatabase(path), Date.now, { checkpointInWorker: true })
  const account = await serving.createAccount('spend')
  const at = Date.parse('2026-11-20T10:00:00Z')
  const models = ['claude-sonnet-4-5', 'gpt-5', 'deepseek-chat']
  for (let i = 0; i < 60; i++) {
    const legs = [
      {
        modelId: models[i % 3],
        costNanos: 1000 + i,
        input: i,
        cached: i % 4,
        cacheCreation: i % 5,
        cacheCreation1h: i % 2,
      },
      ...(i % 7 === 0 ? [{ modelId: models[(i + 1) % 3], costNanos: 7, outcome: 'failed' as const }] : []),
    ]
    // Not awaited one by one: what is still queued when the series is asked for must be in it.
    void seedRequest(serving, { accountId: account.id, at: at + i * 600_000, legs })
  }
  const direct = createSqliteLedger(openDatabase(path), Date.now)
  for (const groupBy of ['model', 'provider', 'routing_mode'] as const) {
    const query = { since: at - 3_600_000, until: at + 2 * 86_400_000, bucketMs: 3_600_000, groupBy }
    const viaWorker = await serving.spendSeries(account.id, query)
    expect(viaWorker.totals.requests).toBe(60)
    expect(viaWorker).toEqual(await direct.spendSeries(account.id, query))
  }
  direct.close()
  serving.close()
})

// The request history and the sessions list are read there too (a filter on a rarely used model,
// or grouping every session, took a second at 1.5 million requests and stalled every stream).
test('history pages and the sessions list, read on the checkpointer’s connection, are what the gateway’s own reads', async () => {
  const path = join(dir, 'history.db')
  const serving = createSqliteLedger(openDatabase(path), Date.now, { checkpointInWorker: true })
  const account = await serving.createAccount('history')
  const at = Date.parse('2026-11-20T10:00:00Z')
  for (let i = 0; i < 40; i++) {
    void seedRequest(serving, {
      accountId: account.id,
      // Pairs share a timestamp: the cursor's tie-break is the id.
      at: at + Math.floor(i / 2) * 1000,
      sessionId: i % 3 === 0 ? undefined : `s${i % 5}`,
      legs: [{ modelId: i % 4 === 0 ? 'gpt-5' : 'claude-sonnet-4-5', byok: i % 6 === 0 }],
      providerRanks: [{ model_id: 'm', status: 'chosen' }],
      status: i % 7 === 0 ? 'failed' : 'completed',
    })
  }
  const direct = createSqliteLedger(openDatabase(path), Date.now)
  for (const filter of [{}, { modelId: 'gpt-5' }, { status: 'failed' as const }, { sessionId: 's1' }]) {
    const walk = async (ledger: typeof serving) => {
      const ids: string[] = []
      let before: { at: number; id: string } | undefined
      for (;;) {
        const page = await ledger.listRequests({ accountId: account.id, limit: 3, before, ...filter })
        ids.push(...page.map((r) => r.id))
        if (page.length < 3) return ids
        before = { at: page.at(-1)!.createdAt, id: page.at(-1)!.id }
      }
    }
    const viaWorker = await walk(serving)
    expect(viaWorker).toEqual(await walk(direct))
    expect(new Set(viaWorker).size).toBe(viaWorker.length)
  }
  const [first] = await serving.listRequests({ accountId: account.id, limit: 40 })
  // Stored values read as Drizzle reads them: JSON parsed, 0/1 as booleans.
  expect(first).toEqual((await direct.listRequests({ accountId: account.id, limit: 1 }))[0]!)
  expect(first!.providerRanks).toEqual([{ model_id: 'm', status: 'chosen' }])
  expect(typeof first!.byok).toBe('boolean')
  expect(typeof first!.stream).toBe('boolean')
  const sessions = await serving.listSessions(account.id, 2)
  expect(sessions).toEqual(await direct.listSessions(account.id, 2))
  const last = sessions.at(-1)!
  expect(await serving.listSessions(account.id, 10, { at: last.latestAt, id: last.sessionId })).toEqual(
    await direct.listSessions(account.id, 10, { at: last.latestAt, id: last.sessionId }),
  )
  direct.close()
  serving.close()
})
