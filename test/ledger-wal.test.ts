// Under sustained writes the WAL must stay bounded: PASSIVE checkpoints alone never find the log
// quiet, so without the writer held for a complete copy now and then SQLite would never wrap it and the file would grow forever.
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
    checkpoints: { everyMs: 20, wrapAfterFrames },
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
