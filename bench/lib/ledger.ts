// Counting svc's ledger from outside: rows of `requests` in its SQLite file (WAL, read-only
// here), and waiting until a burst of writes has settled before counting.
import { Database } from 'bun:sqlite'

export interface LedgerCount {
  total: number
  completed: number
}

export function countRequests(dbPath: string): LedgerCount {
  const db = new Database(dbPath, { readonly: true })
  try {
    db.exec('PRAGMA busy_timeout = 5000')
    const rows = db.query('SELECT status, count(*) AS n FROM requests GROUP BY status').all() as {
      status: string
      n: number
    }[]
    return {
      total: rows.reduce((sum, r) => sum + r.n, 0),
      completed: rows.find((r) => r.status === 'completed')?.n ?? 0,
    }
  } finally {
    db.close()
  }
}

/** Counts once the number stops moving (streams are recorded when they end), at most `maxMs`. */
export async function countSettled(dbPath: string, maxMs = 5000): Promise<LedgerCount> {
  const deadline = Date.now() + maxMs
  let last = countRequests(dbPath)
  while (Date.now() < deadline) {
    await Bun.sleep(150)
    const next = countRequests(dbPath)
    if (next.total === last.total && next.completed === last.completed) return next
    last = next
  }
  return last
}
