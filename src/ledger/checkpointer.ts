// WAL checkpoints for a serving gateway, in a worker thread on its own connection.
//
// Checkpoints copy the WAL into the database file, with fsyncs. SQLite would run them inside
// whichever commit crosses its threshold (a request); a timer on the event loop stalled it for up
// to 200 ms. So a worker runs PASSIVE checkpoints, which never block the writer.
//
// PASSIVE alone is not enough under sustained writes: SQLite wraps the log (starts writing it
// from the top again) only when a write begins after a checkpoint has copied every frame, and
// with commits every few milliseconds that moment never comes. The log then grows without bound
// (a gigabyte in a minute at 10k requests/s) and every page lookup slows with it. So once the log
// passes `wrapAfterFrames`, the worker asks the request writer to hold its commits, copies the
// rest of the log, and lets it go: the writer's next commit wraps the log and trims the file to
// the size limit. Requests wait for their ledger write during that copy (a second's worth of
// frames); the event loop does not.
import type { Database } from 'bun:sqlite'

export interface CheckpointPolicy {
  everyMs: number
  wrapAfterFrames: number
}

/** A round a second; wrap past 64 MB of 4 KB pages. */
export const defaultCheckpoints: CheckpointPolicy = { everyMs: 1000, wrapAfterFrames: 16_384 }

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
function round() {
  if (waiting) return
  try {
    const { log } = db.query('PRAGMA wal_checkpoint(PASSIVE)').get()
    if (log > policy.wrapAfterFrames) {
      waiting = true
      postMessage('hold')
    }
  } catch {}
}
self.onmessage = (event) => {
  if (event.data === 'held') {
    // No commit can land now: this copies the whole log, so the next commit wraps it.
    try { db.query('PRAGMA wal_checkpoint(PASSIVE)').get() } catch {}
    waiting = false
    postMessage('release')
    return
  }
  policy = event.data
  db = new Database(policy.path)
  db.exec('PRAGMA busy_timeout = 1000')
  setInterval(round, policy.everyMs)
}
`

/** None for an in-memory database, which has no WAL. */
export function startCheckpointer(
  client: Database,
  writer: HoldableWriter,
  policy: CheckpointPolicy,
): { stop(): void } | undefined {
  if (!client.filename || client.filename === ':memory:') return undefined
  client.exec('PRAGMA wal_autocheckpoint = 0')
  // When the writer wraps the log it also trims the file back to this size.
  client.exec(`PRAGMA journal_size_limit = ${policy.wrapAfterFrames * 4096}`)
  const url = URL.createObjectURL(new Blob([workerSource], { type: 'application/javascript' }))
  const worker = new Worker(url)
  let holdTimer: ReturnType<typeof setTimeout> | undefined
  const release = () => {
    clearTimeout(holdTimer)
    holdTimer = undefined
    writer.release()
  }
  worker.onmessage = (event: MessageEvent) => {
    if (event.data === 'hold') {
      writer.hold()
      holdTimer = setTimeout(release, maxHoldMs)
      holdTimer.unref()
      worker.postMessage('held')
    } else if (event.data === 'release') {
      release()
    }
  }
  worker.postMessage({ path: client.filename, ...policy })
  worker.unref()
  return {
    stop() {
      worker.terminate()
      release()
    },
  }
}
