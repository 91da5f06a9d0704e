// WAL checkpoints for a serving gateway, in a worker thread on its own connection; and, on the
// same connection, the ledger's few reads that grow with its size (the spend series: seconds over
// a few hundred thousand legs), so that no read stalls the event loop every stream shares.
//
// Checkpoints copy the WAL into the database file, with fsyncs. SQLite would run them inside
// whichever commit crosses its threshold (a request); a timer on the event loop stalled it for up
// to 200 ms. So a worker runs PASSIVE checkpoints, which never block the writer.
//
// PASSIVE alone is not enough under sustained writes: SQLite wraps the log (starts writing it
// from the top again) only when a write begins after a checkpoint has copied every frame, and
// with commits every few milliseconds that moment never comes. The log then grows without bound
// (a gigabyte in a minute at 10k requests/s) and every page lookup slows with it. So once the log
// passes `wrapAfterFrames`, the worker asks the request writer to hold its commits and copies the
// rest of the log. Requests wait for their ledger write during that copy (a second's worth of
// frames); the event loop does not.
//
// Whoever writes first into a fully copied log starts it over, and SQLite then syncs the log's
// header: an fsync (~1–2 ms here, more on a busy disk) that, left to the request writer, stalled
// the event loop once a second at light load — every stream in flight paused. So after a
// complete copy, still under the hold, the worker makes that first write itself (the database's
// user_version, rewritten unchanged: one page). Its cost is that the gateway sees a write from
// another connection and reloads its caches once (`Ledger.changedElsewhere`). A round does
// nothing while nobody has written since the log was last started over: an idle gateway does no I/O.
import type { Database } from 'bun:sqlite'

export interface CheckpointPolicy {
  everyMs: number
  wrapAfterFrames: number
  /**
   * Below this many frames in the last round's log, a round copies everything under the hold
   * and starts the log over: commits wait for a copy of a few pages. Above it (sustained load),
   * rounds copy without holding anyone and the log is started over only past `wrapAfterFrames`,
   * as before: a hold and a restart every second cost the busy gateway more than the one fsync
   * they save.
   */
  holdFirstFrames: number
}

/** A round a second; wrap past 64 MB of 4 KB pages; below 4 MB a second, restart every round. */
export const defaultCheckpoints: CheckpointPolicy = { everyMs: 1000, wrapAfterFrames: 16_384, holdFirstFrames: 1024 }

/** If the worker never answers, the writer goes on after this long: a stuck checkpoint must not stop the ledger. */
const maxHoldMs = 1000

/** What the checkpointer needs from the request writer. */
export interface HoldableWriter {
  hold(): void
  release(): void
}

/** Run from a blob URL: no file to locate at run time, so the compiled binary carries it like any string. */
const workerSource = `
import { Database } from 'bun:sqlite'
let db
let policy
let waiting = false
// Whether the log was last left started over by this worker, and the data_version (changed by
// other connections' commits only) then: both unchanged means there is nothing to copy.
let settled = false
let seenVersion = -1
// The last copy's log size: at light load the whole round runs under the hold, so that no
// commit can slip in between the copy and the restart and do the restart itself.
let lastLog = 0
const checkpoint = () => db.query('PRAGMA wal_checkpoint(PASSIVE)').get()
function round() {
  if (waiting) return
  try {
    const version = db.query('PRAGMA data_version').get().data_version
    if (settled && version === seenVersion) return
    seenVersion = version
    settled = false
    if (lastLog > policy.holdFirstFrames) {
      // Sustained load: copy without holding anyone, and wrap only a long log. (PASSIVE reports
      // the frames there were when it began: all copied says nothing of the commits since.)
      const { log } = checkpoint()
      lastLog = log
      if (log <= policy.wrapAfterFrames) return
    }
    waiting = true
    postMessage('hold')
  } catch {}
}
self.onmessage = (event) => {
  if (event.data.read !== undefined) {
    const { read, sql, params } = event.data
    try {
      postMessage({ read, rows: db.query(sql).values(...params) })
    } catch (error) {
      postMessage({ read, error: String(error) })
    }
    return
  }
  if (event.data === 'held') {
    // No commit can land now: this copies the whole log (unless another process is reading it).
    try {
      const { log, checkpointed } = checkpoint()
      lastLog = log
      // -1 for both where the connection had not opened the log yet: nothing copied, not all.
      if (log >= 0 && checkpointed === log) {
        const { user_version } = db.query('PRAGMA user_version').get()
        db.exec('PRAGMA user_version = ' + user_version)
        // Its frame stays uncopied, so the next commit appends to the log rather than starting it
        // over (a second checkpoint here made every request's commit pay that sync, a review).
        settled = true
      }
    } catch {}
    waiting = false
    postMessage('release')
    return
  }
  policy = event.data
  db = new Database(policy.path)
  db.exec('PRAGMA busy_timeout = 1000')
  // As the gateway's own connection: the restart write's commit needs no fsync of its own.
  db.exec('PRAGMA synchronous = NORMAL')
  // The restart write trims the log file to the size the gateway's own connection keeps it at.
  db.exec('PRAGMA journal_size_limit = ' + policy.journalSizeLimit)
  // A first read opens the log: until then a checkpoint reports -1 frames (a test's flake: the
  // first round took that for a log fully copied and never came back to it).
  db.query('SELECT 1 FROM sqlite_master LIMIT 1').get()
  setInterval(round, policy.everyMs)
}
`

export interface Checkpointer {
  /** A read on the worker's connection: what the gateway's has committed (flush first), rows as value arrays. */
  read(query: { sql: string; params: unknown[] }): Promise<unknown[][]>
  stop(): void
}

/** None for an in-memory database, which has no WAL (and no other connection could see it). */
export function startCheckpointer(
  client: Database,
  writer: HoldableWriter,
  policy: CheckpointPolicy,
): Checkpointer | undefined {
  if (!client.filename || client.filename === ':memory:') return undefined
  client.exec('PRAGMA wal_autocheckpoint = 0')
  // When the log is started over, its file is trimmed back to this size.
  const journalSizeLimit = policy.wrapAfterFrames * 4096
  client.exec(`PRAGMA journal_size_limit = ${journalSizeLimit}`)
  const url = URL.createObjectURL(new Blob([workerSource], { type: 'application/javascript' }))
  const worker = new Worker(url)
  let holdTimer: ReturnType<typeof setTimeout> | undefined
  const release = () => {
    clearTimeout(holdTimer)
    holdTimer = undefined
    writer.release()
  }
  const reads = new Map<number, { resolve(rows: unknown[][]): void; reject(error: Error): void }>()
  let lastRead = 0
  worker.onmessage = (event: MessageEvent) => {
    if (event.data.read !== undefined) {
      const { read, rows, error } = event.data as { read: number; rows?: unknown[][]; error?: string }
      const waiting = reads.get(read)
      reads.delete(read)
      if (reads.size === 0) worker.unref()
      if (error === undefined) waiting?.resolve(rows!)
      else waiting?.reject(new Error(error))
      return
    }
    if (event.data === 'hold') {
      writer.hold()
      holdTimer = setTimeout(release, maxHoldMs)
      holdTimer.unref()
      worker.postMessage('held')
    } else if (event.data === 'release') {
      release()
    }
  }
  worker.postMessage({ path: client.filename, journalSizeLimit, ...policy })
  worker.unref()
  return {
    read({ sql, params }) {
      const read = ++lastRead
      // Referenced while a read waits: a process with nothing else to do still gets its answer.
      worker.ref()
      worker.postMessage({ read, sql, params })
      return new Promise((resolve, reject) => reads.set(read, { resolve, reject }))
    },
    stop() {
      worker.terminate()
      release()
      for (const waiting of reads.values()) waiting.reject(new Error('the ledger is closing'))
      reads.clear()
    },
  }
}
