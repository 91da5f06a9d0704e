// What opening and closing the ledger tells an operator: a database a newer svc migrated is
// refused, migrations are told as they run, an admin verb never makes a database, files an older
// release left world-readable are made the owner's, and closing on a database that refuses writes
// says what was lost instead of throwing.
import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import type { Io } from '../src/cli/context'
import { embeddedMigrations } from '../src/db/migrations.generated'
import { type Db, openDatabase } from '../src/db/open'
import * as schema from '../src/db/schema'
import { createSqliteLedger } from '../src/ledger/sqlite-ledger'
import { main } from '../src/main'
import { finishedRequest } from './support/ledger-fixtures'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
function tempDatabase() {
  const dir = mkdtempSync(join(tmpdir(), 'svc-open-'))
  dirs.push(dir)
  return join(dir, 'svc.db')
}

async function cli(...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const io: Io = { env: {}, cwd: tmpdir(), out: (t) => out.push(t), err: (t) => err.push(t) }
  const code = await main(argv, io)
  return { code, out: out.join(''), err: err.join('') }
}

/** Log lines as `{ level, msg }`, from a logger that keeps them. */
function keptLog() {
  const lines: { level: string; msg: string }[] = []
  return {
    lines,
    info: (msg: string) => lines.push({ level: 'info', msg }),
    warn: (msg: string) => lines.push({ level: 'warn', msg }),
  }
}

describe('a database a newer svc migrated', () => {
  test('is refused by serve and every admin verb, naming the migration and the way back', async () => {
    const path = tempDatabase()
    const db = openDatabase(path)
    const newest = Math.max(...embeddedMigrations.map((m) => m.when))
    const when = newest + 86_400_000
    db.$client.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', [
      'ab12cd34ef56'.repeat(5),
      when,
    ])
    db.$client.close()
    const refusal = `${path} was migrated by a newer svc (migration of ${new Date(when).toISOString()}, sha256 ab12cd34ef56); run that build, or restore the backup taken before the upgrade`
    expect(() => openDatabase(path)).toThrow(refusal)
    for (const argv of [
      ['serve', '--once', '--port', '0'],
      ['accounts', 'list'],
      ['keys', 'list'],
    ]) {
      expect(await cli(...argv, '--db', path)).toEqual({ code: 1, out: '', err: `svc: ${refusal}` })
    }
  })
})

test('each migration applied at open is told, then that it is done; an up-to-date database says nothing', () => {
  const path = tempDatabase()
  const log = keptLog()
  openDatabase(path, { log }).$client.close()
  expect(log.lines).toEqual([
    ...embeddedMigrations.map((m) => ({ level: 'info', msg: `migrating ${path}: ${m.tag}` })),
    { level: 'info', msg: `migrated ${path}` },
  ])
  const again = keptLog()
  openDatabase(path, { log: again }).$client.close()
  expect(again.lines).toEqual([])
})

test('an admin verb on a path with no database says so and makes none', async () => {
  const path = tempDatabase()
  for (const argv of [
    ['accounts', 'list'],
    ['keys', 'list'],
    ['grants', 'list', '--account', 'a'],
    ['backup', 'x.db'],
  ]) {
    expect(await cli(...argv, '--db', path)).toEqual({
      code: 1,
      out: '',
      err: `svc: no database at ${path} (start svc serve, or pass --db)`,
    })
  }
  expect(existsSync(path)).toBe(false)
})

test('an admin verb on an empty file says so and leaves it empty: svc serve makes it a database, first key and all', async () => {
  const path = tempDatabase()
  writeFileSync(path, '', { mode: 0o644 })
  for (const argv of [
    ['accounts', 'create', 'alice'],
    ['accounts', 'list'],
    ['keys', 'list'],
  ]) {
    expect(await cli(...argv, '--db', path)).toEqual({
      code: 1,
      out: '',
      err: `svc: no database at ${path} (the file is empty: start svc serve on it, or pass --db)`,
    })
  }
  expect({ size: statSync(path).size, mode: (statSync(path).mode & 0o777).toString(8) }).toEqual({
    size: 0,
    mode: '644',
  })
  const served = await cli('serve', '--once', '--port', '0', '--db', path)
  expect(served.code).toBe(0)
  expect(JSON.parse(served.out)).toMatchObject({ first_account: 'default' })
})

test('a database an older release left readable by others is made its owner’s, and that is said once', () => {
  const path = tempDatabase()
  // svc's own database, as a release that made it with the umask's mode left it (a reader keeps its -wal and -shm).
  openDatabase(path).$client.close()
  const made = new Database(path)
  made.exec('PRAGMA journal_mode = WAL')
  made.query('SELECT count(*) FROM accounts').get()
  for (const file of [path, `${path}-wal`, `${path}-shm`]) if (existsSync(file)) chmodSync(file, 0o644)
  const log = keptLog()
  openDatabase(path, { log }).$client.close()
  made.close()
  const mode = (file: string) => (existsSync(file) ? (statSync(file).mode & 0o777).toString(8) : 'gone')
  expect([mode(path), mode(`${path}-wal`), mode(`${path}-shm`)].filter((m) => m !== 'gone')).toEqual(
    [path, `${path}-wal`, `${path}-shm`].filter(existsSync).map(() => '600'),
  )
  expect(log.lines.filter((l) => l.level === 'warn')).toEqual([
    {
      level: 'warn',
      msg: `made the database readable by its owner only (0600): ${path} (was 0644), ${path}-wal (was 0644), ${path}-shm (was 0644)`,
    },
  ])
})

test('closing on a database that refuses writes says what it could not record, and does not throw', () => {
  const path = tempDatabase()
  const writable = openDatabase(path)
  // A read-only connection: every write and the closing checkpoint are refused (SQLITE_READONLY),
  // as on a file made read-only or a file system remounted so.
  const client = new Database(path, { readonly: true })
  const ledger = createSqliteLedger(drizzle({ client, schema }) as Db)
  ledger.queueRequest(finishedRequest({ accountId: 'acct_x', at: Date.now() }))
  ledger.queueRequest(finishedRequest({ accountId: 'acct_x', at: Date.now() }))
  const closed = ledger.close()
  writable.$client.close()
  expect({ unrecorded: closed.unrecorded, checkpointFailed: closed.checkpointFailure instanceof Error }).toEqual({
    unrecorded: 2,
    checkpointFailed: true,
  })
})

/** The CLI run from `cwd` (a temp directory: an empty --db names the working directory). */
async function cliIn(cwd: string, ...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const io: Io = { env: {}, cwd, out: (t) => out.push(t), err: (t) => err.push(t) }
  const code = await main(argv, io)
  return { code, out: out.join(''), err: err.join('') }
}

describe('a path that names no database file', () => {
  test('an empty --db or a directory is refused in one line, before the directory’s mode is touched', async () => {
    const dir = dirname(tempDatabase())
    chmodSync(dir, 0o755)
    const directory = `svc: cannot open the database at ${dir}: it is a directory; choose another with --db or [server] database`
    for (const argv of [
      ['accounts', 'list'],
      ['serve', '--once', '--port', '0'],
      ['backup', 'copy.db'],
    ]) {
      // `--db "$DB"` with DB unset: it used to resolve to the working directory and make it 0600.
      expect(await cliIn(dir, ...argv, '--db', '')).toEqual({
        code: 2,
        out: '',
        err: "svc: --db is empty (an unset shell variable?): give the database file's path\nRun 'svc help' for usage.",
      })
      for (const path of [dir, '.']) {
        expect(await cliIn(dir, ...argv, '--db', path)).toEqual({ code: 1, out: '', err: directory })
      }
      expect((statSync(dir).mode & 0o777).toString(8)).toBe('755')
    }
    expect(readdirSync(dir)).toEqual([])
    expect(() => openDatabase(dir)).toThrow(directory.slice('svc: '.length))
    expect((statSync(dir).mode & 0o777).toString(8)).toBe('755')
  })

  // A shared ledger is a PostgreSQL URL elsewhere: taken as a path, it made ./postgres:/…/svc, and
  // each instance behind a balancer kept a ledger, keys and credit of its own.
  test('a URL is refused in one line, the password left out, and nothing is made', async () => {
    const dir = dirname(tempDatabase())
    const refusal = "svc: database postgres://… is a URL: svc's ledger is an SQLite file; give its path"
    for (const argv of [
      ['serve', '--once', '--port', '0'],
      ['accounts', 'list'],
    ]) {
      for (const url of ['postgres://svc:secret@127.0.0.1:5432/svc', 'postgres://127.0.0.1/svc?password=secret']) {
        expect(await cliIn(dir, ...argv, '--db', url)).toEqual({ code: 1, out: '', err: refusal })
      }
    }
    expect(readdirSync(dir)).toEqual([])
  })

  test('any verb, serve included, on another program’s SQLite file refuses it and leaves the file as it was', async () => {
    const path = join(dirname(tempDatabase()), 'other.db')
    const other = new Database(path, { create: true })
    other.exec('CREATE TABLE mine (x)')
    other.exec("INSERT INTO mine VALUES ('kept')")
    other.close()
    chmodSync(path, 0o644)
    const before = readFileSync(path)
    const refusal = `svc: ${path} is not an svc database (it has tables, but not svc's): choose another with --db or [server] database`
    for (const argv of [
      ['accounts', 'list'],
      ['keys', 'list'],
      ['grants', 'list', '--account', 'a'],
      ['backup', 'x.db'],
      ['serve', '--once', '--port', '0'],
    ]) {
      expect(await cliIn(dirname(path), ...argv, '--db', path)).toEqual({ code: 1, out: '', err: refusal })
    }
    const after = new Database(path, { readonly: true })
    expect(after.query("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([{ name: 'mine' }])
    after.close()
    // Not a byte, not its mode, not its journal: WAL would have left a -wal beside it.
    expect(readFileSync(path).equals(before)).toBe(true)
    expect((statSync(path).mode & 0o777).toString(8)).toBe('644')
    expect(readdirSync(dirname(path)).sort()).toEqual(['other.db'])
  })

  test('a backup of an empty file says there is nothing to back up, and leaves no copy', async () => {
    const dir = dirname(tempDatabase())
    const path = join(dir, 'empty.db')
    writeFileSync(path, '')
    expect(await cliIn(dir, 'backup', 'copy.db', '--db', path)).toEqual({
      code: 1,
      out: '',
      err: `svc: ${path} is not an svc database yet (no tables): nothing to back up`,
    })
    expect(readdirSync(dir).sort()).toEqual(['empty.db'])
  })
})
