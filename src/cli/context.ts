// What every CLI verb shares: flags parsed the same way, config loaded the same way, output as
// text or --json, and failures as one line on stderr with a non-zero exit.
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { ConfigError, type Config, loadConfig } from '../config/load'
import { openDatabase, sqliteCause } from '../db/open'
import { createDeps, type Deps } from '../deps'
import { databaseRefusesWrites } from '../ledger/write-refusals'
import { GatewayError } from '../lib/errors'
import { createLogger } from '../lib/log'

export interface Io {
  env: Record<string, string | undefined>
  cwd: string
  out(text: string): void
  err(text: string): void
  /** Standard input as text, for verbs that read a secret from it (never from argv). */
  stdin?: () => Promise<string>
}

export const processIo = (): Io => ({
  env: process.env,
  cwd: process.cwd(),
  stdin: async () => (process.stdin.isTTY ? '' : await Bun.stdin.text()),
  out: (t) => process.stdout.write(t.endsWith('\n') ? t : `${t}\n`),
  err: (t) => process.stderr.write(t.endsWith('\n') ? t : `${t}\n`),
})

export class UsageError extends Error {
  override name = 'UsageError'
}

export const commonOptions = {
  config: { type: 'string' },
  db: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options']

export function parseFlags<O extends NonNullable<ParseArgsConfig['options']>>(args: string[], options: O) {
  try {
    return parseArgs({ args, options: { ...commonOptions, ...options }, allowPositionals: true, strict: true })
  } catch (err) {
    throw new UsageError((err as Error).message)
  }
}

export function loadCliConfig(io: Io, flags: { config?: string; db?: string; host?: string; port?: number }): Config {
  // `--db "$DB"` with DB unset: resolved against the working directory, it would name that directory.
  if (flags.db === '') throw new UsageError("--db is empty (an unset shell variable?): give the database file's path")
  return loadConfig({
    path: flags.config,
    env: io.env,
    cwd: io.cwd,
    overrides: { database: flags.db, host: flags.host, port: flags.port },
  })
}

/**
 * Runs a one-shot admin verb on the gateway's database, quiet logs, and closes it. Only `svc serve`
 * makes a database: a verb on a path with none is the wrong database, said rather than answered
 * from an empty one. A write the database refuses (a full disk, a read-only file) is said in a line.
 */
export async function withAdmin<T>(
  io: Io,
  flags: { config?: string; db?: string },
  verb: (deps: Deps) => Promise<T>,
): Promise<T> {
  const config = loadCliConfig(io, flags)
  // Migrations are told (an upgrade's first verb may take minutes on a large ledger).
  const db = openDatabase(config.server.database, { create: false, log: createLogger('info') })
  const deps = createDeps(config, { log: createLogger('warn'), db })
  try {
    return await verb(deps)
  } catch (err) {
    const cause = sqliteCause(err)
    if (!databaseRefusesWrites(cause)) throw err
    throw new ConfigError(`the database refuses writes: ${cause!.message} (${config.server.database})`)
  } finally {
    deps.ledger.close()
  }
}

export function print(io: Io, json: boolean | undefined, value: unknown, text: () => string): void {
  io.out(json ? JSON.stringify(value, null, 2) : text())
}

/**
 * An error the system call itself gave (a file that cannot be written, a directory that is not
 * there): the user's to fix, and its message already names the call and the path.
 */
const isSystemError = (err: unknown): err is Error =>
  err instanceof Error &&
  typeof (err as NodeJS.ErrnoException).code === 'string' &&
  typeof (err as NodeJS.ErrnoException).syscall === 'string'

/** Turns the errors a verb may raise into a message and an exit code; anything else is a bug. */
export function reportFailure(io: Io, err: unknown): number {
  if (err instanceof UsageError) {
    io.err(`svc: ${err.message}\nRun 'svc help' for usage.`)
    return 2
  }
  if (err instanceof ConfigError || err instanceof GatewayError || isSystemError(err)) {
    io.err(`svc: ${err.message}`)
    return 1
  }
  io.err(`svc: unexpected error: ${(err as Error)?.stack ?? String(err)}`)
  return 1
}

export function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)'
  const cells = rows.map((r) => columns.map((c) => (r[c] === null || r[c] === undefined ? '-' : String(r[c]))))
  const widths = columns.map((c, i) => Math.max(c.length, ...cells.map((row) => row[i]!.length)))
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd()
  return [line(columns), ...cells.map(line)].join('\n')
}
