// The gateway URL and key the CLI uses: `svc login URL` and $SVC_URL checked alike (a scheme, the
// gateway's root, no plain http to another machine without --insecure), the stored key never sent
// to a gateway $SVC_URL names instead, a broken credentials file said as such, a refused key told.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { gatewayUrl, isLoopback } from '../src/cli/credentials'
import { runBounded } from './support/agents'
import { cliRuns, fakeAgent, removeCliHomes } from './support/cli-user'
import { createHarness, type Harness } from './support/harness'

let h: Harness
let server: ReturnType<typeof Bun.serve>
let gateway: string
/** Paths of the requests that reached the gateway. */
const reached: string[] = []
const dirs: string[] = []

beforeAll(async () => {
  h = await createHarness({ grantUsd: 3 })
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (r) => {
      reached.push(new URL(r.url).pathname)
      return h.app.handle(r)
    },
  })
  gateway = `http://127.0.0.1:${server.port}`
})
afterAll(() => {
  server.stop(true)
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
  removeCliHomes()
})

const cli = cliRuns

/** A server that is not the signed-in gateway, answering like svc's whoami, recording what reaches it. */
function otherGateway() {
  const seen: { path: string; auth: string | null }[] = []
  const srv = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch: (r) => {
      seen.push({ path: new URL(r.url).pathname, auth: r.headers.get('authorization') })
      return Response.json({ account: { id: 'acct_x', name: 'other' }, key: { id: 'k', name: 'n', prefix: 'p' } })
    },
  })
  return { seen, url: `http://127.0.0.1:${srv.port}`, stop: () => srv.stop(true) }
}

describe('gateway URLs: svc login URL and SVC_URL', () => {
  test('no scheme, another scheme, a route inside the gateway, a query: refused before any request, saying what to give', async () => {
    const port = server.port
    const cases: [string, string][] = [
      [
        `localhost:${port}`,
        `the gateway URL "localhost:${port}" is not an http:// or https:// URL: give it whole, e.g. http://localhost:${port}`,
      ],
      [
        `127.0.0.1:${port}`,
        `the gateway URL "127.0.0.1:${port}" is not an http:// or https:// URL: give it whole, e.g. http://127.0.0.1:${port}`,
      ],
      [
        'svc.example.com',
        'the gateway URL "svc.example.com" is not an http:// or https:// URL: give it whole, e.g. https://svc.example.com',
      ],
      [
        `ftp://127.0.0.1:${port}`,
        `the gateway URL "ftp://127.0.0.1:${port}" is not an http:// or https:// URL: give it whole, e.g. https://svc.example.com`,
      ],
      [`${gateway}/compat-a`, `give the gateway's root URL, e.g. ${gateway}, not …/compat-a`],
      [`${gateway}/compat-b/v1/`, `give the gateway's root URL, e.g. ${gateway}, not …/compat-b/v1`],
      [`${gateway}/svc/v1/messages`, `give the gateway's root URL, e.g. ${gateway}/svc, not …/v1/messages`],
      [`${gateway}?x=1`, `give the gateway's root URL, e.g. ${gateway}, not …?x=1`],
      [`http://user:pw@127.0.0.1:${port}`, 'the gateway URL must not hold a user name or password'],
    ]
    for (const [url, message] of cases) {
      reached.length = 0
      const c = cli(`${h.key}\n`)
      expect({ url, code: await c.run('login', url, '--with-token'), err: c.err() }).toEqual({
        url,
        code: 2,
        err: `svc: ${message}\nRun 'svc help' for usage.`,
      })
      expect(reached).toEqual([])
      expect(existsSync(c.path)).toBe(false)
    }
    // $SVC_URL: the same words, naming it; whoami exits 1 (an answer, not a usage mistake).
    const c = cli()
    c.io.env.SVC_URL = `${gateway}/compat-a`
    c.io.env.SVC_API_KEY = h.key
    expect(await c.run('whoami')).toBe(1)
    expect(c.err()).toBe(`svc: give the gateway's root URL, e.g. ${gateway}, not …/compat-a`)
    c.io.env.SVC_URL = `localhost:${port}`
    expect(await c.run('whoami')).toBe(1)
    expect(c.err()).toBe(
      `svc: SVC_URL "localhost:${port}" is not an http:// or https:// URL: give it whole, e.g. http://localhost:${port}`,
    )
    expect(reached).toEqual([])
  })

  test('stored normalised (scheme and host in lower case, no trailing slashes, no default port), and used so', async () => {
    for (const [url, normal] of [
      [`HTTP://127.0.0.1:${server.port}//`, gateway],
      [`http://LocalHost:${server.port}/`, `http://localhost:${server.port}`],
    ] as const) {
      const c = cli(`${h.key}\n`)
      expect(await c.run('login', url, '--with-token')).toBe(0)
      expect(c.stored().gateway).toBe(normal)
      expect(await c.run('whoami')).toBe(0)
      expect(c.out()).toContain(`gateway  ${normal}`)
    }
    expect(gatewayUrl('https://Svc.Example.com:443/')).toBe('https://svc.example.com')
    expect(gatewayUrl('https://example.com/svc/')).toBe('https://example.com/svc')
    // A proxy's prefix named like a route is still a prefix: only the path's end names a route.
    for (const prefixed of [
      'https://gw.example.com/openai',
      'https://ai.example.com/v1/svc',
      'https://example.com/anthropic/gw',
    ])
      expect(gatewayUrl(prefixed)).toBe(prefixed)
    expect(() => gatewayUrl('https://gw.example.com/openai/v1')).toThrow(
      "give the gateway's root URL, e.g. https://gw.example.com, not …/openai/v1",
    )
    // The address `svc serve --host 0.0.0.0` logs reaches this machine.
    expect(gatewayUrl('http://0.0.0.0:8080')).toBe('http://0.0.0.0:8080')
  })

  test('a stored gateway from before the check (`svc login localhost:8080`): whoami and the launchers say to sign in again', async () => {
    const c = cli()
    mkdirSync(join(c.home, '.config', 'svc'), { recursive: true })
    writeFileSync(c.path, JSON.stringify({ gateway: `localhost:${server.port}`, api_key: h.key }))
    const agent = fakeAgent(c.home)
    c.io.env.SVC_CODEX_BIN = agent.bin
    for (const verb of ['whoami', 'codex']) {
      expect(await c.run(verb)).toBe(1)
      expect(c.err()).toStartWith(`svc: the stored sign-in's gateway "localhost:${server.port}" is not usable (`)
      expect(c.err()).toEndWith('): run `svc login URL` again')
    }
    expect(agent.started()).toBe(false)
  })
})

describe('plain http to another machine', () => {
  test('loopback is this machine: 127.0.0.0/8, ::1, localhost, the unspecified addresses; anything else is not', () => {
    for (const host of [
      '127.0.0.1',
      '127.5.6.7',
      'localhost',
      'LOCALHOST',
      '[::1]',
      '[::ffff:7f00:1]',
      '0.0.0.0',
      '[::]',
    ])
      expect({ host, loopback: isLoopback(host) }).toEqual({ host, loopback: true })
    for (const host of ['10.0.0.1', '128.0.0.1', '0.0.0.1', 'localhost.example.com', '127.0.0.1.nip.io', '[::2]'])
      expect({ host, loopback: isLoopback(host) }).toEqual({ host, loopback: false })
    expect(gatewayUrl('http://[::1]:8080')).toBe('http://[::1]:8080')
    expect(gatewayUrl('http://127.0.0.1.nip.io', { insecure: true })).toBe('http://127.0.0.1.nip.io')
  })

  test('refused without --insecure, saying why, for svc login, SVC_URL (whoami, the launchers) alike; nothing sent', async () => {
    const why =
      'refusing http://svc.example.com: over plain http the API key would travel in clear to svc.example.com, ' +
      'readable on every network between. Use https://, or pass --insecure if that network is yours alone'
    const c = cli(`${h.key}\n`)
    expect(await c.run('login', 'http://svc.example.com', '--with-token')).toBe(2)
    expect(c.err()).toBe(`svc: ${why}\nRun 'svc help' for usage.`)
    expect(existsSync(c.path)).toBe(false)
    c.io.env.SVC_URL = 'http://svc.example.com'
    c.io.env.SVC_API_KEY = h.key
    expect(await c.run('whoami')).toBe(1)
    expect(c.err()).toBe(`svc: ${why}`)
    const agent = fakeAgent(c.home)
    c.io.env.SVC_CLAUDE_BIN = agent.bin
    expect(await c.run('claude', '-p', 'hi')).toBe(2)
    expect(c.err()).toBe(`svc: ${why}\nRun 'svc help' for usage.`)
    expect(agent.started()).toBe(false)
    // https, and http on this machine, need nothing.
    expect(gatewayUrl('https://svc.example.com')).toBe('https://svc.example.com')
    expect(gatewayUrl('http://localhost:8080')).toBe('http://localhost:8080')
  })

  test('--insecure lets it through: svc login, whoami and svc claude reach the host (through a proxy here), the flag not passed on', {
    timeout: 30_000,
  }, async () => {
    // A loopback proxy stands in for the network path to svc.example.com, and forwards to svc.
    const wire: string[] = []
    const proxy = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: (r) => {
        wire.push(`${r.method} ${r.url}`)
        return h.app.handle(r)
      },
    })
    try {
      const home = mkdtempSync(join(tmpdir(), 'svc-cli-insecure-'))
      dirs.push(home)
      const agent = fakeAgent(home)
      const proxyUrl = `http://127.0.0.1:${proxy.port}`
      const env = { PATH: process.env.PATH ?? '', HOME: home, http_proxy: proxyUrl, HTTP_PROXY: proxyUrl }
      const svc = (args: string[], more: Record<string, string> = {}, stdin?: string) =>
        runBounded([process.execPath, resolve(import.meta.dir, '../src/main.ts'), ...args], {
          timeoutMs: 15_000,
          stdin,
          env: { ...env, ...more },
        })
      const login = await svc(['login', 'http://svc.example.com', '--with-token', '--insecure'], {}, `${h.key}\n`)
      expect({ code: login.exitCode, err: login.stderr }).toEqual({ code: 0, err: '' })
      expect(wire).toEqual(['GET http://svc.example.com/v1/auth/whoami'])
      // Stored, the gateway is the one signed in to: no flag needed to use it.
      expect((await svc(['whoami'])).exitCode).toBe(0)
      const direct = { SVC_URL: 'http://svc.example.com', SVC_API_KEY: h.key }
      expect((await svc(['whoami'], direct)).exitCode).toBe(1)
      expect((await svc(['whoami', '--insecure'], direct)).exitCode).toBe(0)
      const run = await svc(['claude', '--insecure', '-p', 'hi'], { ...direct, SVC_CLAUDE_BIN: agent.bin })
      expect(run.exitCode).toBe(0)
      expect(agent.args().slice(2)).toEqual(['-p', 'hi'])
      expect(JSON.parse(agent.args()[1]!).env.ANTHROPIC_BASE_URL).toBe('http://svc.example.com/compat-a')
      expect(wire.at(-1)).toBe('GET http://svc.example.com/compat-a/v1/models/svc-pro')
    } finally {
      proxy.stop(true)
    }
  })
})

describe('SVC_URL alone and the stored key', () => {
  test('the stored key goes only to the gateway it was made for: SVC_URL naming another asks for SVC_API_KEY (exit 1), sending nothing', async () => {
    const c = cli(`${h.key}\n`)
    expect(await c.run('login', gateway, '--with-token')).toBe(0)
    const other = otherGateway()
    try {
      const agent = fakeAgent(c.home)
      Object.assign(c.io.env, { SVC_URL: other.url, SVC_CLAUDE_BIN: agent.bin, SVC_CODEX_BIN: agent.bin })
      const told = `svc: SVC_URL names ${other.url}, but this machine is signed in to ${gateway}: set SVC_API_KEY to a key for ${other.url} (the stored key is not sent to another gateway)`
      for (const argv of [['whoami'], ['claude', '-p', 'hi'], ['codex', 'exec', 'hi']]) {
        expect({ argv, code: await c.run(...argv), err: c.err() }).toEqual({ argv, code: 1, err: told })
      }
      expect(other.seen).toEqual([])
      expect(agent.started()).toBe(false)

      // The signed-in gateway, spelt otherwise: the stored key, as before.
      c.io.env.SVC_URL = `HTTP://127.0.0.1:${server.port}/`
      expect(await c.run('whoami')).toBe(0)
      // A key given for the other gateway goes there, and only it.
      c.io.env.SVC_URL = other.url
      c.io.env.SVC_API_KEY = 'svc-other-gateways-key'
      expect(await c.run('whoami')).toBe(0)
      expect(other.seen).toEqual([{ path: '/v1/auth/whoami', auth: 'Bearer svc-other-gateways-key' }])
    } finally {
      other.stop()
    }
  })
})

describe('an unreadable credentials file', () => {
  const broken = [
    ['{\n  "gateway": "x",\n  "api_key": "svc-abc",\n}\n', 'not valid JSON'],
    ['{}', 'no gateway and key in it'],
    ['null', 'no gateway and key in it'],
    ['{"gateway": 5, "api_key": "svc-abc"}', 'no gateway and key in it'],
  ] as const
  /** A CLI whose credentials file holds `content`. */
  function brokenFile(content: string) {
    const c = cli(`${h.key}\n`)
    mkdirSync(join(c.home, '.config', 'svc'), { recursive: true })
    writeFileSync(c.path, content)
    return c
  }

  test.each(broken)('whoami and the launchers say so, naming the file (exit 1): %j', async (content, reason) => {
    const c = brokenFile(content)
    const told = `svc: the sign-in file ${c.path} is unreadable (${reason}): run \`svc login\` to replace it`
    const agent = fakeAgent(c.home)
    c.io.env.SVC_CLAUDE_BIN = agent.bin
    for (const argv of [['whoami'], ['claude', '-p', 'hi']])
      expect({ argv, code: await c.run(...argv), err: c.err() }).toEqual({ argv, code: 1, err: told })
    expect(agent.started()).toBe(false)
    // Given both in the environment, the file is not needed.
    Object.assign(c.io.env, { SVC_URL: gateway, SVC_API_KEY: h.key })
    expect(await c.run('whoami')).toBe(0)
  })

  test.each(broken)('login replaces it, saying so: %j', async (content, reason) => {
    const c = brokenFile(content)
    expect(await c.run('login', gateway, '--with-token')).toBe(0)
    expect(c.err()).toBe(
      `replacing the unreadable sign-in file ${c.path} (${reason}); a key it may hold was not revoked`,
    )
    expect(c.stored()).toMatchObject({ gateway, api_key: h.key })
  })

  test.each(broken)('logout deletes it, saying it could not revoke a key it may hold: %j', async (content, reason) => {
    const c = brokenFile(content)
    expect(await c.run('logout')).toBe(0)
    expect(c.err()).toBe(
      `deleted the unreadable sign-in file ${c.path} (${reason}); a key it may hold could not be revoked: the gateway's operator revokes it with \`svc keys revoke ID\` on its machine`,
    )
    expect(c.out()).toBe('signed out')
    expect(existsSync(c.path)).toBe(false)
  })

  test('a directory where the file should be is unreadable too; no file at all is not signed in, as before', async () => {
    const c = cli()
    mkdirSync(c.path, { recursive: true })
    expect(await c.run('whoami')).toBe(1)
    expect(c.err()).toBe(`svc: the sign-in file ${c.path} is unreadable (EISDIR): run \`svc login\` to replace it`)
    const none = cli()
    expect(await none.run('whoami')).toBe(1)
    expect(none.err()).toBe('svc: not signed in: run `svc login [URL]` (or set SVC_URL and SVC_API_KEY)')
    expect(await none.run('logout')).toBe(0)
    expect(none.out()).toBe('not signed in')
  })
})

describe('whoami with a key the gateway refuses', () => {
  test('exit 1, saying the key was refused and to run svc login again, as the launchers do; no usage hint', async () => {
    const victim = await h.deps.admin.createKey({ account: 'default', name: 'victim' })
    const c = cli(`${victim.key}\n`)
    expect(await c.run('login', gateway, '--with-token')).toBe(0)
    await h.deps.ledger.revokeApiKey(victim.record.id)
    h.deps.auth.forgetKey(victim.record.id)
    expect(await c.run('whoami')).toBe(1)
    expect(c.err()).toBe(`svc: ${gateway} refused the signed-in key (revoked?): run \`svc login\` again`)
  })
})
