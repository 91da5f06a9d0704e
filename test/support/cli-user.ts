// The CLI run in process for a user with a home of their own (a temporary directory): what it
// printed, as it prints it (live, for a test that reads a sign-in code while `svc login` waits),
// and where it keeps the sign-in.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
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

/** A user of the CLI whose output is read run by run: each run starts with nothing printed. */
export function cliRuns(stdin = '') {
  const user = cliUser(stdin)
  const run = async (...argv: string[]) => {
    user.out.length = 0
    user.err.length = 0
    return user.run(...argv)
  }
  return { ...user, out: () => user.out.join(''), err: () => user.err.join(''), run }
}

/** A fake agent in `home` that records that it started and its arguments, one a line. */
export function fakeAgent(home: string) {
  const bin = join(home, 'agent.sh')
  writeFileSync(bin, `#!/bin/sh\nprintf '%s\\n' "$@" > "${home}/agent-args.txt"\n`, { mode: 0o755 })
  const started = () => existsSync(join(home, 'agent-args.txt'))
  return { bin, started, args: () => readFileSync(join(home, 'agent-args.txt'), 'utf8').trimEnd().split('\n') }
}
