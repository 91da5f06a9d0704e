// Under sustained writes the WAL must stay bounded: PASSIVE checkpoints alone never find the log
// quiet, so without the writer held for a complete copy now and then SQLite would never wrap it and the file would grow forever.
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, statSync } from 'node:fs'
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
    checkpoints: { everyMs: 20, wrapAfterFrames },
  })
  const account = await ledger.createAccount('wal')
  let largest = 0
  let previous = 0
  let wraps = 0
  let written = 0
  const until = Date.now() + 1500
  // Batches back to back, a few milliseconds apart: the log is never quiet for a checkpoint.
  while (Date.now() < until) {
    await Promise.all(
      Array.from({ length: 20 }, () => seedRequest(ledger, { accountId: account.id, at: Date.now() + written++ })),
    )
    const size = statSync(`${path}-wal`).size
    if (size < previous) wraps++
    previous = size
    largest = Math.max(largest, size)
  }
  ledger.close()
  // Each 400 requests add ~2 MB of frames here: unwrapped, the log passed 250 MB in this time.
  expect(written).toBeGreaterThan(1000)
  expect(wraps).toBeGreaterThanOrEqual(3)
  expect(largest).toBeLessThan(32 * 1024 * 1024)
})
