// When SQLite refuses a write because of the database, not the record: a full disk, an I/O
// error, a read-only or locked file. Such a refusal says nothing about the requests being
// written, and the same write succeeds once an operator makes room; a record of its own that
// breaks a constraint (a bug) fails alone, every time.
import { GatewayError } from '../lib/errors'

/** SQLite's primary result codes for a database that cannot take writes now (sqlite.org/rescode.html). */
const refusingCodes = new Set([
  'SQLITE_FULL',
  'SQLITE_IOERR',
  'SQLITE_READONLY',
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_NOMEM',
  'SQLITE_CANTOPEN',
  'SQLITE_PERM',
  'SQLITE_PROTOCOL',
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
])

/** True when `err` is SQLite refusing writes to the database as a whole (extended codes included). */
export function databaseRefusesWrites(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return false
  const underscore = code.indexOf('_', 'SQLITE_'.length)
  return refusingCodes.has(underscore === -1 ? code : code.slice(0, underscore))
}

/**
 * What a request is told while the database refuses writes: a 503 to retry in 5 s, by when an
 * operator may have made room (the OpenAPI document promises the Retry-After). `message` says what
 * svc cannot do meanwhile.
 */
export const refusingWritesError = (
  message = "svc's database refuses writes right now (a full disk, a read-only file or another process holding its lock): retry later",
): GatewayError => new GatewayError('api_error', message, { status: 503, retryAfterSeconds: 5 })
