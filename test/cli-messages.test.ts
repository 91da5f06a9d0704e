// What the CLI and the /login page say when something is wrong, as a newcomer's run-through met it:
// each message names what to fix (the variable, the flag, the token), and a failure that is no
// mistyped command exits 1 without the usage hint.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Io } from '../src/cli/context'
import { runHelp } from '../src/cli/help'
import { cliRuns, cliUser, fakeAgent, removeCliHomes } from './support/cli-user'
import { createHarness, type Harness } from './support/harness'

let h: Harness
let server: ReturnType<typeof Bun.serve>
let gateway: string

beforeAll(async () => {
  h = await createHarness({ grantUsd: 3, config: { server: { device_poll_interval_seconds: 0 } } })
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => h.app.handle(r) })
  gateway = `http://127.0.0.1:${server.port}`
})
afterAll(() => {
  server.stop(true)
  removeCliHomes()
})

const cli = cliRuns

const usageHint = "Run 'svc help' for usage."

describe('a key in $SVC_API_KEY the gateway refuses', () => {
  const bogus = 'svc-bogusbogusbogusbogusbogusbogus0000'

  test('whoami, svc claude and svc codex name the variable, not `svc login`, and never print the key (exit 1)', async () => {
    const c = cli()
    const agent = fakeAgent(c.home)
    Object.assign(c.io.env, {
      SVC_URL: gateway,
      SVC_API_KEY: bogus,
      SVC_CLAUDE_BIN: agent.bin,
      SVC_CODEX_BIN: agent.bin,
    })
    const said = `svc: ${gateway} refused the key in $SVC_API_KEY (revoked, or not a key of this gateway?): set SVC_API_KEY to a valid key, or unset it to use the stored sign-in`
    for (const argv of [['whoami'], ['claude', '-p', 'hi'], ['codex', 'exec', 'hi']]) {
      expect({ argv, code: await c.run(...argv), err: c.err() }).toEqual({ argv, code: 1, err: said })
    }
    expect(agent.started()).toBe(false)
  })

  test('over a stored sign-in too ($SVC_API_KEY alone wins over its key); the stored key refused still says svc login', async () => {
    const c = cli(`${h.key}\n`)
    expect(await c.run('login', gateway, '--with-token')).toBe(0)
    c.io.env.SVC_API_KEY = bogus
    expect(await c.run('whoami')).toBe(1)
    expect(c.err()).toStartWith(`svc: ${gateway} refused the key in $SVC_API_KEY`)
    expect(c.err()).not.toContain(bogus)

    const victim = await h.deps.admin.createKey({ account: 'default', name: 'victim' })
    const d = cli(`${victim.key}\n`)
    expect(await d.run('login', gateway, '--with-token')).toBe(0)
    await h.deps.ledger.revokeApiKey(victim.record.id)
    h.deps.auth.forgetKey(victim.record.id)
    expect(await d.run('whoami')).toBe(1)
    expect(d.err()).toBe(`svc: ${gateway} refused the signed-in key (revoked?): run \`svc login\` again`)
  })
})

describe('the /login page, approved with an admin token', () => {
  const post = (url: string, fields: Record<string, string>) =>
    fetch(`${url}/login`, { method: 'POST', body: new URLSearchParams(fields) })

  test('a wrong one is said to be not valid, in the same words whether or not the gateway has one', async () => {
    const tokenless = await createHarness({ env: { SVC_ADMIN_TOKEN: '' } })
    expect(tokenless.config.server.adminToken).toBeUndefined()
    const other = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => tokenless.app.handle(r) })
    try {
      const fields = { user_code: 'ABCD-EFGH', admin_token: 'admin-guess', account: 'default', decision: 'approve' }
      const answers = await Promise.all(
        [gateway, `http://127.0.0.1:${other.port}`].map(async (url) => {
          const res = await post(url, fields)
          return { status: res.status, body: await res.text() }
        }),
      )
      expect(answers[0]!.status).toBe(401)
      expect(answers[0]!.body).toContain('<strong>that admin token is not valid</strong>')
      expect(answers[0]!.body).not.toContain('give an API key of your account')
      expect(answers[1]).toEqual(answers[0]!)
      // Without an account name, too: the token is what is wrong.
      const noAccount = await post(gateway, { user_code: 'ABCD-EFGH', admin_token: 'admin-guess', decision: 'approve' })
      expect(noAccount.status).toBe(401)
      expect(await noAccount.text()).toContain('that admin token is not valid')
    } finally {
      other.stop(true)
    }
  })

  test('neither a key nor a token: the page asks for one, as before', async () => {
    const res = await post(gateway, { user_code: 'ABCD-EFGH', account: 'default', decision: 'approve' })
    expect(res.status).toBe(401)
    expect(await res.text()).toContain('give an API key of your account (or the admin token and an account name)')
  })
})

describe('svc login that does not end signed in', () => {
  /** Waits (bounded) until the CLI has printed its code, and returns it. */
  async function codeFrom(err: string[]): Promise<string> {
    for (let i = 0; i < 500; i++) {
      const match = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(err.join(''))
      if (match) return match[1]!
      await Bun.sleep(5)
    }
    throw new Error('the CLI never printed a code')
  }

  test('denied on the gateway: exit 1, no usage hint', async () => {
    const c = cliUser()
    const login = c.run('login', gateway, '--no-browser')
    const code = await codeFrom(c.err)
    await fetch(`${gateway}/login`, {
      method: 'POST',
      body: new URLSearchParams({ user_code: code, decision: 'deny' }),
    })
    expect(await login).toBe(1)
    expect(c.err.at(-1)).toBe('svc: the sign-in was denied on the gateway')
    expect(c.err.join('')).not.toContain(usageHint)
  })

  test('the code expired, told by the gateway or run out while waiting: exit 1, no usage hint', async () => {
    // A gateway whose codes expire: at once (expires_in 0), or as the first poll says.
    const fake = (expiresIn: number) =>
      Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: (r) =>
          new URL(r.url).pathname === '/v1/auth/device/code'
            ? Response.json({ device_code: 'd', user_code: 'ABCD-EFGH', expires_in: expiresIn, interval: 0 })
            : Response.json({ error: 'expired_token', error_description: 'the code expired' }, { status: 400 }),
      })
    for (const expiresIn of [600, 0]) {
      const srv = fake(expiresIn)
      try {
        const c = cliUser()
        expect(await c.run('login', `http://127.0.0.1:${srv.port}`, '--no-browser')).toBe(1)
        expect(c.err.at(-1)).toBe('svc: the code expired before it was approved: run `svc login` again')
        expect(c.err.join('')).not.toContain(usageHint)
      } finally {
        srv.stop(true)
      }
    }
  })
})

describe('SVC_CLAUDE_BIN and SVC_CODEX_BIN that name no agent', () => {
  test('a path not there: the variable and the path named, exit 127 as for an agent not installed', async () => {
    const c = cli()
    Object.assign(c.io.env, {
      SVC_URL: gateway,
      SVC_API_KEY: h.key,
      SVC_CLAUDE_BIN: '/nonexistent/claude',
      SVC_CODEX_BIN: '/nonexistent/codex',
    })
    expect(await c.run('claude', '-p', 'hi')).toBe(127)
    expect(c.err()).toBe(
      'svc: SVC_CLAUDE_BIN names /nonexistent/claude, which does not exist: point it at the claude executable, or unset it to run claude from the PATH',
    )
    expect(await c.run('codex', 'exec', 'hi')).toBe(127)
    expect(c.err()).toBe(
      'svc: SVC_CODEX_BIN names /nonexistent/codex, which does not exist: point it at the codex executable, or unset it to run codex from the PATH',
    )
    // A name without a slash is looked for on the PATH.
    c.io.env.SVC_CLAUDE_BIN = 'claude-nosuch'
    expect(await c.run('claude', '-p', 'hi')).toBe(127)
    expect(c.err()).toStartWith('svc: SVC_CLAUDE_BIN names claude-nosuch, which is not on the PATH: ')
  })

  test('a directory, or a file that is not executable: said so, exit 126 as a shell gives', async () => {
    const c = cli()
    const dir = join(c.home, 'claude-dir')
    mkdirSync(dir)
    const plain = join(c.home, 'codex.txt')
    writeFileSync(plain, '#!/bin/sh\n')
    chmodSync(plain, 0o644)
    Object.assign(c.io.env, { SVC_URL: gateway, SVC_API_KEY: h.key, SVC_CLAUDE_BIN: dir, SVC_CODEX_BIN: plain })
    expect(await c.run('claude', '-p', 'hi')).toBe(126)
    expect(c.err()).toBe(
      `svc: SVC_CLAUDE_BIN names ${dir}, which is a directory: point it at the claude executable, or unset it to run claude from the PATH`,
    )
    expect(await c.run('codex', 'exec', 'hi')).toBe(126)
    expect(c.err()).toBe(
      `svc: SVC_CODEX_BIN names ${plain}, which is not executable: point it at the codex executable, or unset it to run codex from the PATH`,
    )
  })
})

describe('svc systemd-unit', () => {
  test('--user naming no user here: a warning on stderr, and the unit still (it may run elsewhere)', async () => {
    const c = cli()
    expect(await c.run('systemd-unit', '--user', 'nosuchuser')).toBe(0)
    expect(c.err()).toBe(
      'svc: warning: no user nosuchuser on this machine: create it before starting the unit (systemd would fail it with 217/USER)',
    )
    expect(c.out()).toContain('\nUser=nosuchuser\n')
    expect(c.out()).not.toContain('nosuchuser on this machine')
    expect(await c.run('systemd-unit', '--user', 'root')).toBe(0)
    expect(c.err()).toBe('')
  })

  test('a --binary the sandbox hides: the warning says to give another path, not to pass --binary', async () => {
    const c = cli()
    expect(await c.run('systemd-unit', '--binary', '/home/me/svc')).toBe(0)
    const warning =
      '/home/me/svc is under /home, which ProtectHome=yes/PrivateTmp=yes hide from the service (it would fail with 203/EXEC): install it outside /home (as /usr/local/bin/svc, say) and give that path to --binary'
    expect(c.err()).toBe(`svc: warning: ${warning}`)
    expect(c.out()).toContain(`# WARNING: ${warning}\n`)
  })

  test('a relative --db or --config: refused, naming the working directory the unit sets', async () => {
    const c = cli()
    expect(await c.run('systemd-unit', '--db', 'relative.db')).toBe(2)
    expect(c.err()).toBe(
      `svc: --db must be an absolute path: the service would look for it in its working directory, /var/lib/svc, not here (got relative.db)\n${usageHint}`,
    )
    expect(await c.run('systemd-unit', '--db', '/var/lib/gw/svc.db', '--config', 'svc.toml')).toBe(2)
    expect(c.err()).toStartWith(
      'svc: --config must be an absolute path: the service would look for it in its working directory, /var/lib/gw, not here (got svc.toml)',
    )
    expect(await c.run('systemd-unit', '--db', '/var/lib/gw/svc.db')).toBe(0)
    expect(c.out()).toContain('\nWorkingDirectory=/var/lib/gw\n')
    expect(await c.run('systemd-unit', '--binary', 'bin/svc')).toBe(2)
    expect(c.err()).toStartWith(
      'svc: --binary must be an absolute path: systemd would not look for it here (got bin/svc)',
    )
  })

  test('svc help systemd-unit says a missing user is warned of, not that it must exist here', async () => {
    const c = cli()
    expect(await c.run('help', 'systemd-unit')).toBe(0)
    expect(c.out().replace(/\s+/g, ' ')).toContain(
      '--user NAME, an account that must exist where the unit runs: warned of when this machine has none',
    )
  })
})

describe('svc help', () => {
  test('svc help login lists every address plain http may go to, 0.0.0.0 included, as svc login takes it', async () => {
    const c = cli(`${h.key}\n`)
    expect(await c.run('help', 'login')).toBe(0)
    expect(c.out().replace(/\s+/g, ' ')).toContain(
      'refused to any host but this machine (localhost, 127.0.0.0/8, ::1, and the 0.0.0.0 or :: a server bound to every interface logs)',
    )
    expect(await c.run('login', `http://0.0.0.0:${server.port}/`, '--with-token')).toBe(0)
  })

  test('a topic that is no command: said so, exit 2, as `svc nosuch` does', () => {
    const out: string[] = []
    const err: string[] = []
    const io: Io = { env: {}, cwd: '/', out: (t) => out.push(t), err: (t) => err.push(t) }
    for (const topic of ['nosuch', 'constructor']) {
      out.length = 0
      err.length = 0
      expect({ code: runHelp([topic], io), out, err }).toEqual({
        code: 2,
        out: [],
        err: [`svc: unknown command "${topic}"\n${usageHint}`],
      })
    }
    out.length = 0
    expect(runHelp(['login'], io)).toBe(0)
    expect(out.join('')).toStartWith('svc login [URL]')
    out.length = 0
    expect(runHelp([], io)).toBe(0)
    expect(out.join('')).toContain('Usage: svc <command> [options]')
  })
})
