import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import type { GrantInput } from '../src/accounts/admin'
import { createDeviceLogin } from '../src/accounts/device-login'
import { linkUnderGateway } from '../src/cli/sign-in'
import { cliUser, removeCliHomes } from './support/cli-user'
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

const cli = cliUser

/** Waits (bounded) until the CLI has printed its code, and returns it. */
async function codeFrom(err: string[]): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const match = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(err.join(''))
    if (match) return match[1]!
    await Bun.sleep(5)
  }
  throw new Error('the CLI never printed a code')
}

const approve = (fields: Record<string, string>) =>
  fetch(`${gateway}/login`, { method: 'POST', body: new URLSearchParams(fields) })

type StartedCode = { device_code: string; user_code: string } & Record<string, unknown>

/** A code pair, as the CLI asks for one. */
async function startCode(device_name?: string): Promise<StartedCode> {
  const res = await fetch(`${gateway}/v1/auth/device/code`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(device_name === undefined ? {} : { device_name }),
  })
  return (await res.json()) as StartedCode
}

/** One poll of the device token endpoint, as the CLI makes it. */
async function pollToken(device_code: string) {
  const r = await fetch(`${gateway}/v1/auth/device/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ device_code }),
  })
  return { status: r.status, body: (await r.json()) as Record<string, string> }
}

describe('svc login (device flow)', () => {
  test('approve with an existing key: the CLI gets its own new key, stored 0600, and whoami works', async () => {
    const c = cli()
    const login = c.run('login', gateway, '--no-browser', '--name', 'laptop')
    const code = await codeFrom(c.err)
    const page = await fetch(`${gateway}/login?code=${code.toLowerCase().replace('-', '')}`)
    expect(page.status).toBe(200)
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(await page.text()).toContain('laptop')
    const approved = await approve({ user_code: code, api_key: h.key, decision: 'approve' })
    expect(approved.status).toBe(200)
    expect(await approved.text()).toContain('Device signed in')
    expect(await login).toBe(0)

    const path = join(c.home, '.config', 'svc', 'credentials.json')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(readFileSync(path, 'utf8'))
    // A copy: bun's toMatchObject writes the asymmetric matchers back into the object it checks.
    expect({ ...stored }).toMatchObject({ gateway, account: 'default', key_id: expect.stringMatching(/^key_/) })
    expect(stored.api_key).not.toBe(h.key)
    const keys = await h.deps.ledger.listApiKeys(h.accountId)
    expect(keys.find((k) => k.id === stored.key_id)?.name).toBe('device: laptop')

    c.out.length = 0
    expect(await c.run('whoami', '--json')).toBe(0)
    const me = JSON.parse(c.out.join(''))
    expect(me).toMatchObject({ gateway, account: { name: 'default' }, credit: { limit_nanos: 3_000_000_000 } })

    // The code is single-use: a second approval and a replayed poll both fail.
    const again = await approve({ user_code: code, api_key: h.key, decision: 'approve' })
    expect(again.status).toBe(400)
    expect(await again.text()).toContain('already used')

    expect(await c.run('logout')).toBe(0)
    const revoked = await h.deps.ledger.getApiKey(stored.key_id)
    expect(revoked?.revokedAt).not.toBeNull()
    expect(() => statSync(path)).toThrow()
  })

  test('a key given with --with-token is forgotten on logout but keeps working; a device key replaced by a new sign-in is revoked', async () => {
    const given = await h.deps.admin.createKey({ account: 'default', name: 'ci' })
    const c = cli(`${given.key}\n`)
    expect(await c.run('login', gateway, '--with-token')).toBe(0)
    c.out.length = 0
    expect(await c.run('logout')).toBe(0)
    expect(c.out.join('')).toBe(
      `signed out of ${gateway} (the key you gave was forgotten here and still works; the gateway's operator revokes it with \`svc keys revoke ${given.record.id}\` on its machine to end it)`,
    )
    expect((await h.deps.ledger.getApiKey(given.record.id))?.revokedAt).toBeNull()
    expect(existsSync(join(c.home, '.config', 'svc', 'credentials.json'))).toBe(false)

    // Two device sign-ins on one machine: the first key, now unused, is revoked by the second.
    const keyIds: string[] = []
    for (let i = 0; i < 2; i++) {
      c.err.length = 0
      const login = c.run('login', gateway, '--no-browser')
      await approve({ user_code: await codeFrom(c.err), api_key: h.key, decision: 'approve' })
      expect(await login).toBe(0)
      keyIds.push(JSON.parse(readFileSync(join(c.home, '.config', 'svc', 'credentials.json'), 'utf8')).key_id)
    }
    expect((await h.deps.ledger.getApiKey(keyIds[0]!))?.revokedAt).not.toBeNull()
    expect((await h.deps.ledger.getApiKey(keyIds[1]!))?.revokedAt).toBeNull()
    // And the one given after them is not revoked by a later sign-in: only the device key before it.
    const c2 = cli(`${given.key}\n`)
    expect(await c2.run('login', gateway, '--with-token')).toBe(0)
    const login = c2.run('login', gateway, '--no-browser')
    await approve({ user_code: await codeFrom(c2.err), api_key: h.key, decision: 'approve' })
    expect(await login).toBe(0)
    expect((await h.deps.ledger.getApiKey(given.record.id))?.revokedAt).toBeNull()
  })

  test('deny stops the CLI with a clear message; a wrong key cannot approve', async () => {
    const c = cli()
    const login = c.run('login', gateway, '--no-browser')
    const code = await codeFrom(c.err)
    const wrong = await approve({ user_code: code, api_key: 'svc-notakeynotakeynotakey', decision: 'approve' })
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain('not valid')
    await approve({ user_code: code, decision: 'deny' })
    // No mistyped command: exit 1, without the usage hint (cli-messages.test.ts).
    expect(await login).toBe(1)
    expect(c.err.at(-1)).toBe('svc: the sign-in was denied on the gateway')
  })

  test('the approval page posted as JSON with fields that are not text: the page again, with why, never a 500', async () => {
    const res = await fetch(`${gateway}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user_code: 3.2e-195, decision: 'approve', api_key: ['x'] }),
    })
    // The key is not text, so nobody proves an account: the page asks again.
    expect(res.status).toBe(401)
    expect(res.headers.get('content-type')).toStartWith('text/html')
    const page = await res.text()
    expect(page).toContain('<form method="post">')
    expect(page).toContain('give an API key of your account')
  })

  test('the operator can approve with the admin token for a named account', async () => {
    await h.deps.admin.createAccount('erin')
    const c = cli()
    const login = c.run('login', gateway, '--no-browser')
    const code = await codeFrom(c.err)
    await approve({ user_code: code, admin_token: 'admin-secret', account: 'erin', decision: 'approve' })
    expect(await login).toBe(0)
    expect(JSON.parse(readFileSync(join(c.home, '.config', 'svc', 'credentials.json'), 'utf8')).account).toBe('erin')
  })

  test('a wrong admin token approves nothing, for no account: the device keeps waiting', async () => {
    const { device_code, user_code } = await startCode()
    const wrong = await approve({ user_code, admin_token: 'admin-guess', account: 'default', decision: 'approve' })
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).toContain('that admin token is not valid')
    expect(await pollToken(device_code)).toMatchObject({ status: 400, body: { error: 'authorization_pending' } })
  })

  test('device token endpoint follows RFC 8628: pending, slow_down, expired, invalid', async () => {
    const start = await startCode()
    expect(start).toMatchObject({ verification_uri: `${gateway}/login`, expires_in: 600, interval: 0 })
    expect(await pollToken(start.device_code)).toMatchObject({
      status: 400,
      body: { error: 'authorization_pending' },
    })
    expect(await pollToken('nonsense')).toMatchObject({ status: 400, body: { error: 'invalid_grant' } })
    h.clock.advance(601_000)
    expect(await pollToken(start.device_code)).toMatchObject({ status: 400, body: { error: 'expired_token' } })
    h.clock.advance(-601_000)
  })

  test('two polls racing on one approved code: exactly one gets a key', async () => {
    const { device_code, user_code } = await startCode('racing')
    expect((await approve({ user_code, api_key: h.key, decision: 'approve' })).status).toBe(200)
    // In process, both polls read the approved code before either takes it, as on a busy gateway.
    const poll = async () => {
      const res = await h.call('/v1/auth/device/token', { method: 'POST', key: null, json: { device_code } })
      return { status: res.status, body: await res.json() }
    }
    const answers = await Promise.all([poll(), poll()])
    expect(answers.map((a) => [a.status, a.body.error]).toSorted()).toEqual([
      [200, undefined],
      [400, 'invalid_grant'],
    ])
    const keys = await h.deps.ledger.listApiKeys(h.accountId)
    expect(keys.filter((k) => k.name === 'device: racing')).toHaveLength(1)
  })

  test('behind a proxy that strips a path prefix, the CLI links under the base it was given, and the page works there', async () => {
    // A TLS-terminating proxy in miniature: it serves svc under /svc, and svc sees its internal
    // address without the prefix; once without forwarded headers (nginx's default), once with them.
    for (const forwarded of [false, true]) {
      const proxy = Bun.serve({
        port: 0,
        hostname: '127.0.0.1',
        fetch: async (r) => {
          const url = new URL(r.url)
          if (!url.pathname.startsWith('/svc/')) return new Response('not found', { status: 404 })
          const headers = new Headers(r.headers)
          if (forwarded) {
            headers.set('x-forwarded-proto', 'http')
            headers.set('x-forwarded-host', url.host)
          }
          const body = r.method === 'GET' || r.method === 'HEAD' ? undefined : await r.arrayBuffer()
          const internal = `http://127.0.0.1:8080${url.pathname.slice('/svc'.length)}${url.search}`
          return h.app.handle(new Request(internal, { method: r.method, headers, body }))
        },
      })
      try {
        const base = `http://127.0.0.1:${proxy.port}/svc`
        const c = cli()
        const login = c.run('login', base, '--no-browser', '--name', 'behind-proxy')
        const code = await codeFrom(c.err)
        const printed = c.err.join('')
        expect(printed).toContain(`open ${base}/login?code=${code}\n`)
        expect(printed).toContain(`go to ${base}/login and enter the code ${code}`)
        expect(printed).not.toContain(':8080')

        // The printed link opens through the proxy, and approving from it stays under the prefix.
        const link = `${base}/login?code=${code}`
        const page = await fetch(link)
        expect(page.status).toBe(200)
        const html = await page.text()
        expect(html).toContain('behind-proxy')
        // No form action, so a browser posts back to the page's own URL.
        expect(html).toContain('<form method="post">')
        const approved = await fetch(link, {
          method: 'POST',
          body: new URLSearchParams({ user_code: code, api_key: h.key, decision: 'approve' }),
        })
        expect(approved.status).toBe(200)
        expect(await login).toBe(0)
        expect(JSON.parse(readFileSync(join(c.home, '.config', 'svc', 'credentials.json'), 'utf8')).gateway).toBe(base)
      } finally {
        proxy.stop(true)
      }
    }
  })

  test('the CLI keeps a link already under its base and moves any other under it, never to another host', () => {
    const base = 'https://example.com/svc'
    expect(linkUnderGateway(base, 'https://example.com/svc/login?code=BCDF-GHJK')).toBe(
      'https://example.com/svc/login?code=BCDF-GHJK',
    )
    expect(linkUnderGateway(base, 'http://127.0.0.1:8080/login?code=BCDF-GHJK')).toBe(
      'https://example.com/svc/login?code=BCDF-GHJK',
    )
    expect(linkUnderGateway(base, 'https://example.com/login')).toBe('https://example.com/svc/login')
    expect(linkUnderGateway(base, '/login')).toBe('https://example.com/svc/login')
    expect(linkUnderGateway(base, '//evil.example/login')).toBe('https://example.com/svc/login')
    expect(linkUnderGateway('http://127.0.0.1:8080', 'http://127.0.0.1:8080/login')).toBe('http://127.0.0.1:8080/login')
    expect(linkUnderGateway(base, undefined)).toBeUndefined()
  })

  test('the device code response honours X-Forwarded-Proto and X-Forwarded-Host', async () => {
    const start = async (headers: Record<string, string>) => {
      const r = await fetch(`${gateway}/v1/auth/device/code`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      })
      const body = (await r.json()) as Record<string, string>
      return Object.assign(body, { cacheControl: r.headers.get('cache-control') })
    }
    const proxied = await start({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'svc.example.com' })
    expect(proxied.verification_uri).toBe('https://svc.example.com/login')
    expect(proxied.verification_uri_complete).toBe(`https://svc.example.com/login?code=${proxied.user_code}`)
    // It carries the device code, and no cache may hand one requester's link to another.
    expect(proxied.cacheControl).toBe('no-store')
    // Proxy chains append: the first value is the client's; a default port is dropped.
    const chained = await start({ 'x-forwarded-proto': 'HTTPS, http', 'x-forwarded-host': 'svc.example.com:443, b' })
    expect(chained.verification_uri).toBe('https://svc.example.com/login')
    const ported = await start({ 'x-forwarded-host': 'svc.example.com:8443' })
    expect(ported.verification_uri).toBe('http://svc.example.com:8443/login')
  })

  test('junk forwarded headers are ignored: the link falls back to the request origin', async () => {
    const uriFor = async (headers: Record<string, string>) => {
      const r = await fetch(`${gateway}/v1/auth/device/code`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '{}',
      })
      return ((await r.json()) as Record<string, string>).verification_uri
    }
    for (const proto of ['javascript', 'ftp', 'https:', 'https://evil.example', '', ' , https'])
      expect(await uriFor({ 'x-forwarded-proto': proto })).toBe(`${gateway}/login`)
    for (const host of [
      'evil.example/phish',
      'user@evil.example',
      'evil.example bad',
      'evil.example\\x',
      'evil.example:99999',
      'evil.example:',
      '-evil.example',
      '"><script>',
      '',
    ])
      expect(await uriFor({ 'x-forwarded-host': host })).toBe(`${gateway}/login`)
    // Each header stands alone: a sane one is used even when the other is junk.
    expect(await uriFor({ 'x-forwarded-proto': 'https', 'x-forwarded-host': 'a/b' })).toBe(
      `${gateway.replace('http:', 'https:')}/login`,
    )
  })

  test('polling faster than the interval is told to slow down', async () => {
    const slow = await createHarness({ config: { server: { device_poll_interval_seconds: 5 } } })
    const started = await slow.deps.deviceLogin.start('x')
    expect((await slow.deps.deviceLogin.poll(started.deviceCode)).ok).toBe(false)
    const second = await slow.deps.deviceLogin.poll(started.deviceCode)
    expect(second).toMatchObject({ ok: false, error: 'slow_down' })
    slow.clock.advance(10_001)
    expect(await slow.deps.deviceLogin.poll(started.deviceCode)).toMatchObject({
      ok: false,
      error: 'authorization_pending',
    })
  })

  test('a gateway that will not start a sign-in: the CLI says why in its words, or asks if it is svc at all', async () => {
    const full = await createHarness({ config: { server: { device_poll_interval_seconds: 0 } } })
    full.deps.deviceLogin = createDeviceLogin({
      ledger: full.deps.ledger,
      clock: full.deps.clock,
      intervalSeconds: 0,
      maxWaitingCodes: 0,
    })
    const fullServer = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => full.app.handle(r) })
    const notSvc = Bun.serve({
      port: 0,
      hostname: '127.0.0.1',
      fetch: () => new Response('<h1>Not Found</h1>', { status: 404 }),
    })
    try {
      const c = cli()
      expect(await c.run('login', `http://127.0.0.1:${fullServer.port}`, '--no-browser')).toBe(2)
      expect(c.err.join('')).toContain(
        'did not start a sign-in (HTTP 429): 0 sign-ins are already waiting for approval, the most this gateway holds',
      )
      const other = cli()
      expect(await other.run('login', `http://127.0.0.1:${notSvc.port}`, '--no-browser')).toBe(2)
      expect(other.err.join('')).toContain('did not start a sign-in (HTTP 404); is it an svc gateway?')
    } finally {
      fullServer.stop(true)
      notSvc.stop(true)
    }
  })

  test('a gateway that cannot be reached, or is not svc: one line that names it, never a stack', async () => {
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
    const down = `http://127.0.0.1:${closed.port}`
    closed.stop(true)
    const unreachable = `svc: cannot reach the gateway at ${down}: connection refused (is svc running there?)`
    for (const argv of [
      ['login', down, '--with-token'],
      ['login', down, '--no-browser'],
    ]) {
      const c = cli(`${h.key}\n`)
      expect(await c.run(...argv)).toBe(1)
      expect(c.err.join('')).toBe(unreachable)
    }
    // Signed in, and the gateway goes away (there, or named by SVC_URL with a key for it).
    const going = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => h.app.handle(r) })
    const gone = `http://127.0.0.1:${going.port}`
    const signedIn = cli(`${h.key}\n`)
    expect(await signedIn.run('login', gone, '--with-token')).toBe(0)
    going.stop(true)
    expect(await signedIn.run('whoami')).toBe(1)
    expect(signedIn.err.join('')).toBe(unreachable.replace(down, gone))
    signedIn.err.length = 0
    Object.assign(signedIn.io.env, { SVC_URL: down, SVC_API_KEY: h.key })
    expect(await signedIn.run('whoami')).toBe(1)
    expect(signedIn.err.join('')).toBe(unreachable)

    // Something else answers there: an empty 404, as an egress proxy does.
    const notSvc = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response(null, { status: 404 }) })
    try {
      const c = cli(`${h.key}\n`)
      expect(await c.run('login', `http://127.0.0.1:${notSvc.port}`, '--with-token')).toBe(2)
      expect(c.err.join('')).toStartWith(
        `svc: http://127.0.0.1:${notSvc.port} answered HTTP 404 to a sign-in check; is it an svc gateway?`,
      )
    } finally {
      notSvc.stop(true)
    }
  })

  test('the gateway restarting while the user approves: the CLI says so and keeps polling until it is back', async () => {
    const forward = (r: Request) => h.app.handle(r)
    let front = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: forward })
    const port = front.port
    const c = cli()
    const login = c.run('login', `http://127.0.0.1:${port}`, '--no-browser')
    const code = await codeFrom(c.err)
    front.stop(true)
    for (let i = 0; i < 500 && !c.err.join('').includes('trying again'); i++) await Bun.sleep(5)
    expect(c.err.join('')).toContain(
      `cannot reach the gateway at http://127.0.0.1:${port}: connection refused (is svc running there?); trying again until the code expires`,
    )
    front = Bun.serve({ port, hostname: '127.0.0.1', fetch: forward })
    try {
      expect((await approve({ user_code: code, api_key: h.key, decision: 'approve' })).status).toBe(200)
      expect(await login).toBe(0)
      expect(c.err.join('').match(/trying again/g)).toHaveLength(1)
    } finally {
      front.stop(true)
    }
  })

  test('login --with-token checks the key and stores it; a bad key is refused', async () => {
    const ok = cli(`${h.key}\n`)
    expect(await ok.run('login', gateway, '--with-token')).toBe(0)
    const bad = cli('svc-nonsensenonsensenonsense\n')
    expect(await bad.run('login', gateway, '--with-token')).toBe(2)
    expect(bad.err.join('')).toContain('refused the key')
  })
})

describe('whoami and logout', () => {
  test('logout revokes the key it was sent with at once, also where the gateway had it in memory', async () => {
    const { key, record } = await h.deps.admin.createKey({ account: 'default', name: 'logging out' })
    expect((await h.call('/v1/usage', { key })).status).toBe(200)
    const out = await h.call('/v1/auth/logout', { method: 'POST', key })
    expect(await out.json()).toEqual({ revoked: true, key_id: record.id })
    expect((await h.call('/v1/usage', { key })).status).toBe(401)
    expect((await h.call('/v1/auth/whoami', { key })).status).toBe(401)
  })

  test('both take the key in x-api-key too, as the messages routes do', async () => {
    const whoami = await h.call('/v1/auth/whoami', { key: null, headers: { 'x-api-key': h.key } })
    expect(whoami.status).toBe(200)
    expect(await whoami.json()).toMatchObject({
      account: { id: h.accountId, name: 'default' },
      key: { prefix: h.key.slice(0, 12) },
    })
    const { key, record } = await h.deps.admin.createKey({ account: 'default', name: 'x-api-key' })
    const out = await h.call('/v1/auth/logout', { method: 'POST', key: null, headers: { 'x-api-key': key } })
    expect(await out.json()).toEqual({ revoked: true, key_id: record.id })
  })
})

describe('whoami’s credit names what of it only some requests can spend', () => {
  test('the scoped grants with credit left, in the API and in `svc whoami`’s words; spent and expired ones not', async () => {
    await h.deps.admin.createAccount('scoped')
    const { key } = await h.deps.admin.createKey({ account: 'scoped' })
    const add = (grant: Omit<GrantInput, 'account'>) => h.deps.admin.addGrant({ account: 'scoped', ...grant })
    await add({ usd: 1 })
    const maxOnly = await add({ usd: 2, routingModes: ['max'] })
    await add({ usd: '0.5', models: ['claude-x'], providers: ['anth'] })
    await add({ usd: 4, routingModes: ['pro'], expiresAt: new Date(h.clock.now + 1000).toISOString() })
    const spent = await add({ usd: 1, costType: 'byok_fee' })
    h.db.run('UPDATE grants SET remaining_nanos = 0 WHERE id = ?', [spent.id])
    h.clock.advance(2000)

    const me = await (await h.call('/v1/auth/whoami', { key })).json()
    expect(me.credit).toMatchObject({ limit_nanos: 4_500_000_000, remaining_nanos: 3_500_000_000 })
    expect(me.credit.scoped).toEqual([
      expect.objectContaining({ id: maxOnly.id, remaining_nanos: 2_000_000_000, scope_routing_modes: ['max'] }),
      expect.objectContaining({ remaining_nanos: 500_000_000, scope_models: ['claude-x'], scope_providers: ['anth'] }),
    ])

    const c = cli()
    Object.assign(c.io.env, { SVC_URL: gateway, SVC_API_KEY: key })
    expect(await c.run('whoami')).toBe(0)
    expect(c.out.join('').split('\n').slice(3, 6)).toEqual([
      'credit   3.5 USD left of 4.5 (used 1)',
      '         2 USD of it only for all mode=max',
      '         0.5 USD of it only for all model=claude-x provider=anth',
    ])
  })
})

describe('svc claude / svc codex launch', () => {
  test('not signed in: says how to sign in; agent missing: says how to install it (127)', async () => {
    const c = cli()
    expect(await c.run('claude', '-p', 'hi')).toBe(2)
    expect(c.err.join('')).toContain('svc login')
    c.io.env.SVC_URL = gateway
    c.io.env.SVC_API_KEY = h.key
    c.io.env.PATH = '/nonexistent'
    expect(await c.run('claude', '-p', 'hi')).toBe(127)
    expect(c.err.join('')).toContain('npm install -g @anthropic-ai/claude-code')
    expect(await c.run('codex', 'exec', 'hi')).toBe(127)
    expect(c.err.join('')).toContain('npm install -g @openai/codex')
  })

  test('the agent gets the gateway, the key, the profile and session headers; args and exit code pass through', async () => {
    const c = cli()
    const script = join(c.home, 'fake-agent.sh')
    await Bun.write(
      script,
      '#!/bin/sh\nprintf "%s\\n" "$ANTHROPIC_BASE_URL|$ANTHROPIC_AUTH_TOKEN|$ANTHROPIC_MODEL|$ANTHROPIC_SMALL_FAST_MODEL|$ANTHROPIC_API_KEY|$CLAUDE_CODE_MAX_CONTEXT_TOKENS" > "$HOME/env.txt"\nprintf "%s\\n" "$ANTHROPIC_CUSTOM_HEADERS" >> "$HOME/env.txt"\nprintf "%s\\n" "$@" >> "$HOME/env.txt"\nexit 7\n',
    )
    Bun.spawnSync(['chmod', '+x', script])
    Object.assign(c.io.env, {
      SVC_URL: gateway,
      SVC_API_KEY: h.key,
      SVC_CLAUDE_BIN: script,
      ANTHROPIC_API_KEY: 'should-be-removed',
    })
    expect(await c.run('claude', '--profile', 'max', '-p', 'do it', '--', '--verbose')).toBe(7)
    const lines = readFileSync(join(c.home, 'env.txt'), 'utf8').trim().split('\n')
    // No model is configured here, so the gateway tells no window, and none is set.
    expect(lines[0]).toBe(`${gateway}/compat-a|${h.key}|svc-max|svc-ultra-saver||`)
    expect(lines[1]).toBe('x-session-source: claude-code')
    expect(lines[2]).toMatch(/^x-agent-id: claude-code@/)
    // The gateway's routing in --settings first (settings files cannot override it); the `--` after
    // the agent's own arguments is the agent's too (cli-launchers.test.ts).
    expect(lines.slice(3)).toEqual(['--settings', expect.any(String), '-p', 'do it', '--', '--verbose'])
    // The user's own window for Claude Code stands.
    c.io.env.CLAUDE_CODE_MAX_CONTEXT_TOKENS = '50000'
    expect(await c.run('claude', '-p', 'do it')).toBe(7)
    expect(readFileSync(join(c.home, 'env.txt'), 'utf8').split('\n')[0]).toEndWith('|50000')

    c.io.env.SVC_CODEX_BIN = script
    expect(await c.run('codex', '--profile', 'ultra-saver', 'exec', 'task')).toBe(7)
    const codexArgs = readFileSync(join(c.home, 'env.txt'), 'utf8').trim().split('\n').slice(2)
    expect(codexArgs[0]).toBe('-c')
    expect(codexArgs[1]).toContain(`base_url = "${gateway}/compat-b/v1"`)
    expect(codexArgs[1]).toContain('wire_api = "responses"')
    expect(codexArgs.slice(2)).toEqual(['-c', 'model_provider="svc"', '-c', 'model="svc-ultra-saver"', 'exec', 'task'])
    expect(await c.run('claude', '--profile', 'turbo')).toBe(2)
    expect(await c.run('codex', '--profile', 'constructor')).toBe(2)
  })

  test('a key the gateway refuses, or no gateway there: no agent starts, and the user is told why', async () => {
    const c = cli()
    const started = join(c.home, 'started')
    const script = join(c.home, 'fake-agent.sh')
    await Bun.write(script, `#!/bin/sh\ntouch "${started}"\n`)
    Bun.spawnSync(['chmod', '+x', script])
    Object.assign(c.io.env, {
      SVC_URL: gateway,
      SVC_API_KEY: 'svc-revokedrevokedrevokedrevokedrevoked0000',
      SVC_CLAUDE_BIN: script,
      SVC_CODEX_BIN: script,
    })
    for (const agent of ['claude', 'codex']) {
      c.err.length = 0
      expect(await c.run(agent, '-p', 'hi')).toBe(1)
      // The key is $SVC_API_KEY's, which `svc login` would not replace: the variable is named.
      expect(c.err.join('')).toStartWith(`svc: ${gateway} refused the key in $SVC_API_KEY (revoked`)
    }
    expect(existsSync(started)).toBe(false)

    // Nothing listening there: the same, with why.
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
    const down = `http://127.0.0.1:${closed.port}`
    closed.stop(true)
    c.io.env.SVC_URL = down
    c.err.length = 0
    expect(await c.run('claude', '-p', 'hi')).toBe(1)
    expect(c.err.join('')).toBe(`svc: cannot reach the gateway at ${down}: connection refused (is svc running there?)`)
    expect(existsSync(started)).toBe(false)
  })
})
