// The CLI run in process for a user with a home of their own (a temporary directory): what it
// printed, as it prints it (live, for a test that reads a sign-in code while `svc login` waits),
// and where it keeps the sign-in.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Io } from '../../src/cli/context'
import { main } from '../../src/main'

const homes: string[] = []

/** `stdin`: what the CLI reads on standard input (a key for `svc login --with-token`). */
export function cliUser(stdin = '') {
  const home = mkdtempSync(join(tmpdir(), 'svc-home-'))
  homes.push(home)
  const out: string[] = []
  const err: string[] = []
  const io: Io = {
    env: { HOME: home, PATH: process.env.PATH },
    cwd: home,
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    stdin: async () => stdin,
  }
  const path = join(home, '.config', 'svc', 'credentials.json')
  return {
    home,
    io,
    out,
    err,
    run: (...argv: string[]) => main(argv, io),
    /** The sign-in file. */
    path,
    stored: () => JSON.parse(readFileSync(path, 'utf8')) as Record<string, string>,
  }
}

/** Removes every home made so far (for an afterAll). */
export function removeCliHomes(): void {
  for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true })
}
