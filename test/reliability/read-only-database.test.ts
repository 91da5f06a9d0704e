// A database svc may read but not write (a read-only file, directory or mount): `svc serve` refuses
// to start rather than serve unrecorded, a migration that cannot be written is one line, and the
// admin CLI answers reads and says a refused write in one line, never a stack. The verbs run as
// another user (nobody, when the tests run as root, whom file modes do not stop).
import { Database } from 'bun:sqlite'
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { createHash } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { embeddedMigrations } from '../../src/db/migrations.generated'
import { openDatabase } from '../../src/db/open'

const repoRoot = resolve(import.meta.dir, '../..')
const asRoot = process.getuid?.() === 0
const otherUser = asRoot ? ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] : []
const uid = asRoot ? 65534 : process.getuid?.()

const cleanups: (() => void)[] = []
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup()
})

/**
 * svc compiled into a directory every user may read: the other user cannot read a checkout in a
 * private directory (a CI runner's clone under a 0700 temp dir), and the binary is what an
 * operator runs anyway.
 */
const binDir = mkdtempSync(join(tmpdir(), 'svc-ro-bin-'))
const binary = join(binDir, 'svc')
beforeAll(async () => {
  chmodSync(binDir, 0o755)
  const build = Bun.spawn(
    [
      process.execPath,
      'build',
      '--compile',
      '--no-compile-autoload-bunfig',
      '--no-compile-autoload-dotenv',
      'src/main.ts',
      '--outfile',
      binary,
    ],
    { cwd: repoRoot, stdout: 'ignore', stderr: 'pipe' },
  )
  if ((await build.exited) !== 0) throw new Error(await new Response(build.stderr).text())
  chmodSync(binary, 0o755)
}, 60_000)
afterAll(() => rmSync(binDir, { recursive: true, force: true }))

/** A directory and database svc can read but not write: mode 0444 in a 0555 directory, not its owner's when root. */
function readOnlyLedger(make: (path: string) => Database = (path) => openDatabase(path).$client) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-ro-'))
  const database = join(dir, 'svc.db')
  const config = join(dir, 'svc.toml')
  writeFileSync(config, '[catalog]\nbuiltin = false\n')
  // Held open, as by the gateway that made it: its -wal and -shm stay, as on a live system.
  const holder = make(database)
  for (const file of [database, `${database}-wal`, `${database}-shm`]) chmodSync(file, 0o444)
  chmodSync(config, 0o444)
  chmodSync(dir, 0o555)
  cleanups.push(() => {
    holder.close()
    chmodSync(dir, 0o755)
    rmSync(dir, { recursive: true, force: true })
  })
  return { dir, database, config }
}

async function svc(where: { dir: string; database: string; config: string }, ...args: string[]) {
  const proc = Bun.spawn([...otherUser, binary, ...args, '--config', where.config, '--db', where.database], {
    cwd: where.dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: where.dir },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ])
  return { code, out, err }
}

const denied = (database: string) =>
  `permission denied: ${database} is owned by uid ${process.getuid?.()} with mode 0444, and svc runs as uid ${uid}`

/** A database as a release with migrations 0000–0002 left it (ledger-migrations.test.ts), in WAL mode. */
function ledgerAt0002(path: string): Database {
  const db = new Database(path, { create: true, strict: true })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('CREATE TABLE __drizzle_migrations (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)')
  for (const m of embeddedMigrations.slice(0, 3)) {
    for (const statement of m.sql.split('--> statement-breakpoint')) db.exec(statement)
    db.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', [
      createHash('sha256').update(m.sql).digest('hex'),
      m.when,
    ])
  }
  return db
}

describe.skipIf(asRoot && !Bun.which('setpriv'))('a database svc cannot write', () => {
  test('serve refuses to start, in one line naming the path, its owner and mode', async () => {
    const where = readOnlyLedger()
    // --once: a build that wrongly starts exits at once instead of serving on.
    expect(await svc(where, 'serve', '--once', '--port', '0')).toEqual({
      code: 1,
      out: '',
      err: `svc: cannot write the database at ${where.database}: ${denied(where.database)}\n`,
    })
  })

  test('a migration it cannot write is one line with the SQLite cause, not the SQL and a stack', async () => {
    const where = readOnlyLedger(ledgerAt0002)
    const { code, err } = await svc(where, 'accounts', 'list')
    const [migrating, ...rest] = err.trimEnd().split('\n')
    expect({ code, migrating: JSON.parse(migrating!).msg, rest }).toEqual({
      code: 1,
      migrating: `migrating ${where.database}: 0003_ledger_clustered`,
      rest: [
        `svc: cannot migrate the database at ${where.database} (0003_ledger_clustered): attempt to write a readonly database (SQLITE_READONLY)`,
      ],
    })
  })

  test('the admin CLI answers a read, and says a refused write in one line', async () => {
    const where = readOnlyLedger()
    expect(await svc(where, 'accounts', 'list')).toEqual({ code: 0, out: '(none)\n', err: '' })
    expect(await svc(where, 'accounts', 'create', 'bob')).toEqual({
      code: 1,
      out: '',
      err: `svc: the database refuses writes: attempt to write a readonly database (${where.database})\n`,
    })
  })
})
