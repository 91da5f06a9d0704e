import { Database } from 'bun:sqlite'
import { afterEach, describe, expect, test } from 'bun:test'
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Io } from '../src/cli/context'
import { openDatabase } from '../src/db/open'
import { createSqliteLedger } from '../src/ledger/sqlite-ledger'
import { main } from '../src/main'
import { createHarness, type TestResponse } from './support/harness'
import { finishedRequest } from './support/ledger-fixtures'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

function cli(env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'svc-cli-'))
  dirs.push(dir)
  // As `svc serve` leaves it: only serve makes a database, the admin verbs use one.
  openDatabase(join(dir, 'svc.db')).$client.close()
  /** Runs the CLI with more variables than the runner's own (a different master key, say). */
  const runWith = async (more: Record<string, string>, ...argv: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const io: Io = {
      env: { SVC_DATABASE: join(dir, 'svc.db'), ...env, ...more },
      cwd: dir,
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    }
    const code = await main(argv, io)
    return { code, out: out.join(''), err: err.join('') }
  }
  const run = (...argv: string[]) => runWith({}, ...argv)
  return { dir, run, runWith }
}

/**
 * The gateway's log lines (JSON on stderr) that hold `words`, parsed, from a `svc serve --once`
 * that must succeed.
 */
async function startupLog(serve: () => Promise<{ code: number }>, words: string): Promise<Record<string, unknown>[]> {
  const lines: string[] = []
  const write = process.stderr.write
  process.stderr.write = ((chunk: string | Uint8Array) => {
    lines.push(String(chunk))
    return true
  }) as typeof process.stderr.write
  try {
    expect((await serve()).code).toBe(0)
  } finally {
    process.stderr.write = write
  }
  return lines
    .join('')
    .split('\n')
    .filter((line) => line.includes(words))
    .map((line) => JSON.parse(line))
}

describe('admin CLI', () => {
  test('accounts, keys, grants and usage, as text and --json', async () => {
    const { run } = cli()
    expect((await run('accounts', 'create', 'alice')).code).toBe(0)
    const dup = await run('accounts', 'create', 'alice')
    expect(dup).toMatchObject({ code: 1, err: 'svc: account alice already exists' })

    const created = JSON.parse((await run('keys', 'create', '--account', 'alice', '--name', 'laptop', '--json')).out)
    expect(created.key).toMatch(/^svc-[0-9A-Za-z]{40}$/)
    expect(created).toMatchObject({ name: 'laptop', prefix: created.key.slice(0, 12), revoked_at: null })

    const grant = JSON.parse(
      (
        await run(
          'grants',
          'add',
          '--account',
          'alice',
          '--usd',
          '2.5',
          '--routing-mode',
          'pro',
          '--routing-mode',
          'max',
          '--model',
          'gpt-5.1',
          '--expires',
          '2099-01-01T00:00:00Z',
          '--source',
          'promo',
          '--json',
        )
      ).out,
    )
    expect(grant).toMatchObject({
      amount_nanos: 2_500_000_000,
      remaining_nanos: 2_500_000_000,
      scope_cost_type: 'all',
      scope_routing_modes: ['pro', 'max'],
      scope_models: ['gpt-5.1'],
      expires_at: '2099-01-01T00:00:00.000Z',
      source: 'promo',
    })
    const list = JSON.parse((await run('grants', 'list', '--account', 'alice', '--json')).out)
    expect(list).toHaveLength(1)
    // Each narrowing named, not run together with the cost type (`all,pro,max,gpt-5.1`).
    expect((await run('grants', 'list', '--account', 'alice')).out).toContain('all mode=pro,max model=gpt-5.1')
    const usage = JSON.parse((await run('usage', '--account', 'alice', '--json')).out)
    expect(usage).toMatchObject({ limit_nanos: 2_500_000_000, used_nanos: 0, recent_events: [] })
    expect((await run('usage', '--account', 'alice')).out).toContain('0 of 2.5 USD used')

    const keys = JSON.parse((await run('keys', 'list', '--json')).out)
    expect(keys.map((k: { name: string }) => k.name)).toEqual(['laptop'])
    expect(JSON.stringify(keys)).not.toContain(created.key)
    const revoked = JSON.parse((await run('keys', 'revoke', created.id, '--json')).out)
    expect(revoked.revoked_at).not.toBeNull()

    const badGrants: [string[], string][] = [
      [['--usd', 'x'], 'the amount must be a plain decimal number of USD, such as 20 or 0.25 (got x)'],
      [['--usd', '1', '--routing-mode', 'fast'], 'routing mode fast is not one of'],
      [['--usd', '1', '--cost-type', 'tokens'], 'scope_cost_type must be one of all, model_usage, byok_fee'],
      [['--usd', '1', '--expires', 'tomorrow'], 'expires_at must be an RFC 3339 timestamp'],
      // A day February lacks (Date.parse reads it as March 2), and a time with no zone (read in
      // whatever zone the gateway's machine is in).
      [['--usd', '1', '--expires', '2099-02-30T00:00:00Z'], 'expires_at must be an RFC 3339 timestamp'],
      [
        ['--usd', '1', '--expires', '2099-01-01T00:00:00'],
        'expires_at must be an RFC 3339 timestamp with its time zone',
      ],
      [
        ['--usd', '1', '--expires', '2020-01-01T00:00:00Z'],
        'expires_at 2020-01-01T00:00:00Z is not in the future: an expired grant pays for nothing',
      ],
      [['--usd', '0'], 'more than zero'],
      [['--usd', '1e30'], 'the amount must be a plain decimal number of USD, such as 20 or 0.25 (got 1e30)'],
    ]
    for (const [args, message] of badGrants) {
      const r = await run('grants', 'add', '--account', 'alice', ...args)
      expect(r.code).not.toBe(0)
      expect(r.err).toContain(message)
    }
    expect((await run('keys', 'create')).err).toContain('--account is required')
    expect((await run('accounts', 'create', 'alice', '--bogus')).code).toBe(2)
  })

  test('help for every command, version, unknown command', async () => {
    const { run } = cli()
    for (const command of [
      'serve',
      'init',
      'accounts',
      'keys',
      'grants',
      'provider-keys',
      'usage',
      'backup',
      'restore',
    ]) {
      const r = await run(command, '--help')
      expect(r.code).toBe(0)
      expect(r.out).toContain(`svc ${command}`)
      expect(r.out).toContain('Example')
    }
    expect((await run('--version')).out).toMatch(/^svc \d+\.\d+\.\d+/)
    expect(await run('frobnicate')).toMatchObject({ code: 2 })
    // Names every object inherits are not commands or help topics either.
    expect(await run('constructor')).toMatchObject({ code: 2 })
    expect(await run('toString', '--help')).toMatchObject({ code: 2 })
    expect(await run('help', 'constructor')).toMatchObject({ code: 2 })
  })

  test('a grant scoped to a model or provider not configured is made, and the CLI says so', async () => {
    const { run } = cli()
    expect((await run('accounts', 'create', 'alice')).code).toBe(0)
    const typo = await run(
      'grants',
      'add',
      '--account',
      'alice',
      '--usd',
      '1',
      '--model',
      'gtp-5.1',
      '--provider',
      'opnai',
    )
    expect(typo.code).toBe(0)
    expect(typo.err).toBe(
      'svc: no model gtp-5.1 is configured: the grant pays for it only once one is' +
        'svc: no provider opnai is configured: the grant pays for it only once one is',
    )
    expect((await run('grants', 'add', '--account', 'alice', '--usd', '1', '--model', 'gpt-5.1')).err).toBe('')
    expect(JSON.parse((await run('grants', 'list', '--account', 'alice', '--json')).out)).toHaveLength(2)
  })

  test('init writes a config that loads, and refuses to overwrite without --force', async () => {
    const { dir, run } = cli()
    expect((await run('init')).code).toBe(0)
    expect((await run('init')).code).toBe(2)
    expect((await run('init', '--force')).code).toBe(0)
    // The written example is valid: an admin verb loads it from ./svc.toml.
    expect((await run('accounts', 'list')).code).toBe(0)
    writeFileSync(join(dir, 'svc.toml'), '[server]\nprot = 1\n')
    const r = await run('accounts', 'list')
    expect(r.code).toBe(1)
    expect(r.err).toContain('server.prot: unknown key')
    // A place it cannot write: the system's own words, one line, no stack.
    const missing = join(dir, 'no-such-dir', 'svc.toml')
    expect(await run('init', missing)).toEqual({
      code: 1,
      out: '',
      err: `svc: ENOENT: no such file or directory, open '${missing}'`,
    })
  })

  test('provider keys are stored encrypted: the key never reaches the database file in clear', async () => {
    const { dir, run } = cli({ SVC_MASTER_KEY: 'master-secret-for-tests', ANTHROPIC_API_KEY: 'platform-key' })
    await run('accounts', 'create', 'alice')
    const secret = 'sk-ant-byok-SECRET-0123456789'
    // provider-keys reads stdin; drive the admin function the CLI calls.
    const { createDeps } = await import('../src/deps')
    const { resolveConfig } = await import('../src/config/load')
    const config = resolveConfig(
      {},
      {
        env: { SVC_MASTER_KEY: 'master-secret-for-tests', ANTHROPIC_API_KEY: 'x' },
        overrides: { database: join(dir, 'svc.db') },
      },
    )
    const deps = createDeps(config)
    await deps.admin.addProviderKey({ account: 'alice', provider: 'anthropic', key: secret })
    const account = await deps.admin.findAccount('alice')
    expect((await deps.admin.openProviderKeys(account.id)).get('anthropic')).toBe(secret)
    deps.ledger.close()
    const list = await run('provider-keys', 'list', '--json')
    expect(JSON.parse(list.out)[0]).toMatchObject({ provider_id: 'anthropic', hint: '…6789' })
    for (const file of ['svc.db', 'svc.db-wal']) {
      let bytes: Buffer
      try {
        bytes = readFileSync(join(dir, file))
      } catch {
        continue
      }
      expect(bytes.includes(Buffer.from(secret))).toBe(false)
      expect(bytes.includes(Buffer.from('SECRET-0123'))).toBe(false)
    }
  })

  test('a master key rotation: list says which keys the master key opens, reseal seals them under the new one', async () => {
    const { dir, runWith } = cli({ ANTHROPIC_API_KEY: 'platform-key' })
    await runWith({}, 'accounts', 'create', 'alice')
    await runWith({}, 'accounts', 'create', 'bob')
    const { createDeps } = await import('../src/deps')
    const { resolveConfig } = await import('../src/config/load')
    /** The admin the CLI drives, under the given master key (provider-keys add reads stdin). */
    const adminUnder = (masterKey: string) =>
      createDeps(
        resolveConfig(
          {},
          { env: { SVC_MASTER_KEY: masterKey, ANTHROPIC_API_KEY: 'x' }, overrides: { database: join(dir, 'svc.db') } },
        ),
      )
    const old = adminUnder('the-old-master-key')
    await old.admin.addProviderKey({ account: 'alice', provider: 'anthropic', key: 'sk-ant-alice-0123456789' })
    old.ledger.close()
    const other = adminUnder('a-key-nobody-has-now')
    await other.admin.addProviderKey({ account: 'bob', provider: 'anthropic', key: 'sk-ant-bob-0123456789' })
    other.ledger.close()

    const underNew = { SVC_MASTER_KEY: 'the-new-master-key', OLD_MASTER_KEY: 'the-old-master-key' }
    const opens = async () =>
      JSON.parse((await runWith(underNew, 'provider-keys', 'list', '--json')).out).map(
        (k: { hint: string; opens: boolean }) => [k.hint, k.opens],
      )
    expect(await opens()).toEqual([
      ['…6789', false],
      ['…6789', false],
    ])
    const reseal = () => runWith(underNew, 'provider-keys', 'reseal', '--old-master-key-env', 'OLD_MASTER_KEY')
    // Bob's key opens with neither: left as it is, and the exit code says so.
    expect(await reseal()).toEqual({
      code: 1,
      out: 'resealed 1 key(s) under the current master key; 0 already were; 1 open with neither key and were left as they are',
      err: '',
    })
    const fresh = adminUnder('the-new-master-key')
    const alice = await fresh.admin.findAccount('alice')
    expect((await fresh.admin.openProviderKeys(alice.id)).get('anthropic')).toBe('sk-ant-alice-0123456789')
    fresh.ledger.close()
    // Again: nothing left to do for Alice's key.
    expect((await reseal()).out).toStartWith('resealed 0 key(s) under the current master key; 1 already were;')
    expect(await runWith(underNew, 'provider-keys', 'reseal')).toMatchObject({ code: 2 })
    expect(
      await runWith(
        { SVC_MASTER_KEY: 'the-new-master-key' },
        'provider-keys',
        'reseal',
        '--old-master-key-env',
        'UNSET_VAR',
      ),
    ).toMatchObject({
      code: 2,
      err: expect.stringContaining('UNSET_VAR is not set'),
    })
  })

  test('serve warns at startup of a provider whose key variable is unset', async () => {
    const { dir, runWith } = cli()
    writeFileSync(
      join(dir, 'svc.toml'),
      '[providers.sim]\nkind = "anthropic"\nbase_url = "http://127.0.0.1:9"\napi_key_env = "SIM_KEYY"\n',
    )
    const warnings = await startupLog(
      () => runWith({}, 'serve', '--once', '--port', '0', '--config', join(dir, 'svc.toml')),
      'no platform key',
    )
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'provider sim has no platform key: SIM_KEYY is not set; only accounts with their own key for it (BYOK) reach it',
      }),
    ])
  })

  test('serve names an openai-responses provider it takes for a compatible server by its host alone', async () => {
    const { dir, runWith } = cli()
    const section = (id: string, url: string, more = '') =>
      `[providers.${id}]\nkind = "openai-responses"\nbase_url = "${url}"\napi_key_env = "K"\n${more}`
    writeFileSync(
      join(dir, 'svc.toml'),
      [
        section('litellm', 'https://litellm.corp.example/v1'),
        section('proxy', 'https://llm-proxy.internal/v1', 'openai_itself = true\n'),
        section('llama', 'http://127.0.0.1:8080/v1', 'openai_itself = false\n'),
        section('direct', 'https://api.openai.com/v1'),
      ].join('\n'),
    )
    const warnings = await startupLog(
      () => runWith({ K: 'k' }, 'serve', '--once', '--port', '0', '--config', join(dir, 'svc.toml')),
      'OpenAI-compatible Responses server',
    )
    // Only the one the file says nothing of, on a host that is not OpenAI's.
    expect(warnings.map(({ msg }) => msg)).toEqual([
      "provider litellm is taken for an OpenAI-compatible Responses server, not OpenAI itself: Responses clients' requests are translated for it (function tools only) and web search goes to a model that runs it; if it is OpenAI behind a proxy, set openai_itself = true in [providers.litellm]",
    ])
  })

  test('serve warns at startup of each profile no model can serve, and why', async () => {
    const { dir, runWith } = cli()
    const model = (id: string, profiles: string, more: string) =>
      `[[models]]\nid = "${id}"\nprovider = "sim"\nprofiles = ${profiles}\nquality = 50\n${more}\n`
    writeFileSync(
      join(dir, 'svc.toml'),
      [
        '[catalog]\nbuiltin = false\n',
        '[providers.sim]\nkind = "anthropic"\nbase_url = "http://127.0.0.1:9"\napi_key_env = "SIM_KEY"\n',
        model('cheap', '["pro", "ultra_saver"]', 'input_usd_per_mtok = 1\noutput_usd_per_mtok = 2'),
        model('unpriced', '["ultra_saver"]', ''),
      ].join('\n'),
    )
    const warnings = await startupLog(
      () => runWith({ SIM_KEY: 'k' }, 'serve', '--once', '--port', '0', '--config', join(dir, 'svc.toml')),
      'can serve nothing',
    )
    expect(warnings.map(({ msg, why }) => ({ msg, why }))).toEqual([
      {
        msg: 'profile svc-max can serve nothing: every request to it is refused (503 on the messages route, 400 on the responses route)',
        why: 'no model of a configured provider is in it',
      },
      {
        msg: 'profile svc-ultra-saver can serve nothing: every request to it is refused (503 on the messages route, 400 on the responses route)',
        why: {
          'quality 50 is below the profile floor 60': ['cheap'],
          'no known price (no price, no route)': ['unpriced'],
        },
      },
    ])
  })

  test('serve warns at startup of a [[models]] entry whose provider is not configured, not of built-in rows', async () => {
    const { dir, runWith } = cli()
    writeFileSync(
      join(dir, 'svc.toml'),
      [
        '[providers.sim]\nkind = "anthropic"\nbase_url = "http://127.0.0.1:9"\napi_key_env = "SIM_KEY"\n',
        '[[models]]\nid = "m"\nprovider = "smi"\nprofiles = ["pro"]\nquality = 50\n',
        '[[models]]\nid = "ok"\nprovider = "sim"\nprofiles = ["pro"]\nquality = 50\n',
      ].join('\n'),
    )
    const warnings = await startupLog(
      () => runWith({ SIM_KEY: 'k' }, 'serve', '--once', '--port', '0', '--config', join(dir, 'svc.toml')),
      'not configured',
    )
    expect(warnings).toEqual([
      expect.objectContaining({
        level: 'warn',
        msg: 'model m names provider smi, which is not configured: the model is never routed to (a misspelt provider id?)',
      }),
    ])
  })

  test('serve says at startup which stored keys its master key cannot open', async () => {
    const { dir, runWith } = cli({ ANTHROPIC_API_KEY: 'platform-key' })
    await runWith({}, 'accounts', 'create', 'alice')
    const { createDeps } = await import('../src/deps')
    const { resolveConfig } = await import('../src/config/load')
    const env = { SVC_MASTER_KEY: 'master-secret-for-tests', ANTHROPIC_API_KEY: 'x' }
    const deps = createDeps(resolveConfig({}, { env, overrides: { database: join(dir, 'svc.db') } }))
    await deps.admin.addProviderKey({ account: 'alice', provider: 'anthropic', key: 'sk-ant-byok-0123456789' })
    const alice = (await deps.admin.findAccount('alice')).id
    deps.ledger.close()
    const problems = (more: Record<string, string>) =>
      startupLog(() => runWith(more, 'serve', '--once', '--port', '0', '--log-level', 'error'), 'cannot be opened')
    for (const [more, why] of [
      [{}, 'SVC_MASTER_KEY is not set'],
      [{ SVC_MASTER_KEY: 'another-key' }, 'SVC_MASTER_KEY is not the key they were sealed with'],
    ] as const) {
      const [line, ...others] = await problems(more)
      expect(others).toEqual([])
      expect(line).toMatchObject({
        level: 'error',
        msg: `1 stored provider key(s) cannot be opened: ${why}; until it is, their accounts are not served by those providers (the platform's key is never used in their place)`,
        keys: [{ account_id: alice, provider: 'anthropic' }],
      })
    }
    expect(await problems({ SVC_MASTER_KEY: 'master-secret-for-tests' })).toEqual([])
  })
})

// Any text is taken as the master key (hashed into one): a short one guards a copied database's
// stored keys no better than a password, and nothing said so.
test('serve warns of a master key of short text, not of 32 random bytes', async () => {
  const { runWith } = cli({ ANTHROPIC_API_KEY: 'platform-key' })
  const warned = (masterKey: string) =>
    startupLog(() => runWith({ SVC_MASTER_KEY: masterKey }, 'serve', '--once', '--port', '0'), 'openssl rand')
  expect(await warned('short-secret')).toEqual([
    expect.objectContaining({
      level: 'warn',
      msg: 'SVC_MASTER_KEY is 12 characters: the BYOK keys sealed with it are as safe as it is hard to guess; make one of 32 random bytes with `openssl rand -base64 32` (and rotate to it: svc provider-keys reseal)',
    }),
  ])
  expect(await warned(Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64'))).toEqual([])
})

describe('admin HTTP API', () => {
  /** Calls on `h` with the admin token. */
  const adminOf =
    (h: Awaited<ReturnType<typeof createHarness>>) =>
    (path: string, init: RequestInit & { json?: unknown } = {}): Promise<TestResponse> =>
      h.call(path, { ...init, key: null, headers: { authorization: 'Bearer admin-secret' } })

  test('guarded by the admin token; same verbs as the CLI', async () => {
    const h = await createHarness()
    const admin = adminOf(h)
    expect((await h.call('/v1/admin/accounts', { key: null })).status).toBe(401)
    expect((await h.call('/v1/admin/accounts', { key: null, headers: { authorization: 'Bearer wrong' } })).status).toBe(
      401,
    )
    expect((await h.call('/v1/admin/accounts')).status).toBe(401) // an account key is not the admin token

    expect((await admin('/v1/admin/accounts', { method: 'POST', json: { name: 'carol' } })).status).toBe(201)
    const key = await (await admin('/v1/admin/keys', { method: 'POST', json: { account: 'carol', name: 'ci' } })).json()
    expect(key.key).toMatch(/^svc-/)
    const grant = await admin('/v1/admin/grants', {
      method: 'POST',
      json: { account: 'carol', usd: 1, scope_providers: ['anthropic'] },
    })
    expect(grant.status).toBe(201)
    expect(await grant.json()).toMatchObject({ amount_nanos: 1_000_000_000, scope_providers: ['anthropic'] })
    const usage = await (await h.call('/v1/usage', { key: key.key })).json()
    expect(usage.limit_nanos).toBe(1_000_000_000)
    expect((await admin('/v1/admin/usage?account=carol')).status).toBe(200)
    const missing = await admin('/v1/admin/grants', { method: 'POST', json: { account: 'nobody', usd: 1 } })
    expect(missing.status).toBe(404)
    expect((await missing.json()).error.type).toBe('not_found_error')

    expect((await admin(`/v1/admin/keys/${key.id}/revoke`, { method: 'POST' })).status).toBe(200)
    expect((await h.call('/v1/usage', { key: key.key })).status).toBe(401)
  })

  test('provider keys over HTTP: stored, listed by hint, removed; a wrong method is a 405 naming the right ones', async () => {
    const h = await createHarness({ env: { ANTHROPIC_API_KEY: 'platform-key' } })
    const admin = (path: string, init: RequestInit & { json?: unknown } = {}): Promise<TestResponse> =>
      h.call(path, { ...init, key: null, headers: { authorization: 'Bearer admin-secret' } })
    const stored = await admin('/v1/admin/provider-keys', {
      method: 'POST',
      json: { account: 'default', provider: 'anthropic', key: 'sk-ant-own-0123456789' },
    })
    expect(stored.status).toBe(201)
    expect(await stored.json()).toMatchObject({ provider_id: 'anthropic', hint: '…6789' })
    expect((await h.deps.byok.get(h.accountId)).get('anthropic')).toBe('sk-ant-own-0123456789')

    const removed = await admin('/v1/admin/provider-keys?account=default&provider=anthropic', { method: 'DELETE' })
    expect(removed.status).toBe(200)
    expect(await removed.json()).toEqual({ account: 'default', provider_id: 'anthropic', removed: true })
    expect(await (await admin('/v1/admin/provider-keys?account=default')).json()).toEqual([])
    // The account's cached keys went with it: its next request uses the platform's key.
    expect((await h.deps.byok.get(h.accountId)).has('anthropic')).toBe(false)
    const again = await admin('/v1/admin/provider-keys?account=default&provider=anthropic', { method: 'DELETE' })
    expect(again.status).toBe(404)
    expect((await admin('/v1/admin/provider-keys?account=default', { method: 'DELETE' })).status).toBe(400)

    const wrong = await admin('/v1/admin/accounts', { method: 'PUT', json: { name: 'x' } })
    expect(wrong.status).toBe(405)
    expect(wrong.headers.get('allow')).toBe('GET,POST')
    expect((await wrong.json()).error.message).toBe('PUT is not allowed on /v1/admin/accounts; use GET or POST')
    expect((await admin('/v1/admin/keys/key_x/revoke', { method: 'GET' })).status).toBe(405)
  })

  test('an account is named by its id as well as by its name', async () => {
    const h = await createHarness()
    const admin = adminOf(h)
    const key = await admin('/v1/admin/keys', { method: 'POST', json: { account: h.accountId, name: 'by-id' } })
    expect(key.status).toBe(201)
    expect(await key.json()).toMatchObject({ account_id: h.accountId, name: 'by-id' })
    expect((await admin(`/v1/admin/usage?account=${h.accountId}`)).status).toBe(200)
  })

  test('keys listed for an account are its own; an account that does not exist is a 404', async () => {
    const h = await createHarness()
    const admin = adminOf(h)
    expect((await admin('/v1/admin/accounts', { method: 'POST', json: { name: 'bob' } })).status).toBe(201)
    const created = await admin('/v1/admin/keys', { method: 'POST', json: { account: 'bob', name: 'laptop' } })
    const bobsKey = await created.json()
    const ids = async (query: string) =>
      (await (await admin(`/v1/admin/keys${query}`)).json()).map((k: { id: string }) => k.id)
    expect(await ids('?account=bob')).toEqual([bobsKey.id])
    expect(await ids('?account=default')).not.toContain(bobsKey.id)
    expect(await ids('')).toHaveLength(2)
    const nobody = await admin('/v1/admin/keys?account=nobody')
    expect(nobody.status).toBe(404)
    expect((await nobody.json()).error.message).toBe('no account named "nobody"')
  })

  test('a key revoked again keeps the time it was first revoked', async () => {
    const h = await createHarness()
    const admin = adminOf(h)
    const created = await (await admin('/v1/admin/keys', { method: 'POST', json: { account: 'default' } })).json()
    const revoke = async () => (await admin(`/v1/admin/keys/${created.id}/revoke`, { method: 'POST' })).json()
    const first = await revoke()
    expect(first.revoked_at).toBe('2026-11-22T10:00:00.000Z')
    h.clock.advance(60_000)
    expect(await revoke()).toEqual(first)
  })

  test('a provider key for a provider this gateway has not configured is refused, and nothing is stored', async () => {
    const h = await createHarness({ env: { ANTHROPIC_API_KEY: 'platform-key' } })
    const admin = adminOf(h)
    const res = await admin('/v1/admin/provider-keys', {
      method: 'POST',
      json: { account: 'default', provider: 'anthropc', key: 'sk-ant-own-0123456789' },
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error.message).toStartWith('provider anthropc is not configured (known: ')
    expect(await (await admin('/v1/admin/provider-keys')).json()).toEqual([])
  })

  test("removing one account's provider key leaves another account's key for that provider", async () => {
    const h = await createHarness({ env: { ANTHROPIC_API_KEY: 'platform-key' } })
    const admin = adminOf(h)
    expect((await admin('/v1/admin/accounts', { method: 'POST', json: { name: 'bob' } })).status).toBe(201)
    for (const [account, key] of [
      ['default', 'sk-ant-default-0001'],
      ['bob', 'sk-ant-bob-0002'],
    ]) {
      const stored = await admin('/v1/admin/provider-keys', {
        method: 'POST',
        json: { account, provider: 'anthropic', key },
      })
      expect(stored.status).toBe(201)
    }
    const removed = await admin('/v1/admin/provider-keys?account=default&provider=anthropic', { method: 'DELETE' })
    expect(removed.status).toBe(200)
    const left = await (await admin('/v1/admin/provider-keys')).json()
    expect(left.map((k: { account_id: string; hint: string }) => [k.account_id, k.hint])).toEqual([
      [(await h.deps.admin.findAccount('bob')).id, '…0002'],
    ])
  })

  test('off without a configured token', async () => {
    const h = await createHarness({ env: { SVC_ADMIN_TOKEN: '' } })
    const res = await h.call('/v1/admin/accounts', { key: null, headers: { authorization: 'Bearer anything' } })
    expect(res.status).toBe(403)
    expect((await res.json()).error.message).toContain('admin API is disabled')
  })
})

describe('serve on an empty database', () => {
  test('creates the first account, writes its key with mode 0600, and the key works', async () => {
    const { dir, run } = cli()
    const r = await run('serve', '--once', '--port', '0')
    expect(r.code).toBe(0)
    const keyFile = join(dir, 'first-api-key')
    expect(statSync(keyFile).mode & 0o777).toBe(0o600)
    const key = readFileSync(keyFile, 'utf8').trim()
    const h2 = await import('../src/config/load')
    const { createDeps } = await import('../src/deps')
    const deps = createDeps(h2.resolveConfig({}, { env: {}, overrides: { database: join(dir, 'svc.db') } }))
    expect(await deps.auth.authenticate(key)).toMatchObject({ accountId: expect.stringMatching(/^acct_/) })
    const grants = await deps.ledger.listGrants((await deps.admin.findAccount('default')).id)
    expect(grants.map((g) => [g.source, g.amountNanos])).toEqual([['starter', 5_000_000_000]])
    deps.ledger.close()
    // A second start does not make another account.
    expect((await run('serve', '--once', '--port', '0')).code).toBe(0)
    expect(JSON.parse((await run('accounts', 'list', '--json')).out)).toHaveLength(1)
    // The database and its log are the owner's alone: they hold hashed and sealed keys.
    for (const file of ['svc.db', 'svc.db-wal']) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600)
    // On IPv6 the URL it gives is one a client can use (`http://::1:PORT` is none).
    const onSix = await run('serve', '--once', '--port', '0', '--host', '::1')
    const { url } = JSON.parse(onSix.out) as { url: string }
    expect(url).toMatch(/^http:\/\/\[::1\]:\d+$/)
    expect(URL.canParse(url)).toBe(true)
    // Another database in the same directory keeps the first's key file as it was.
    expect((await run('serve', '--once', '--port', '0', '--db', join(dir, 'other.db'))).code).toBe(0)
    expect(readFileSync(keyFile, 'utf8').trim()).toBe(key)
    expect(statSync(join(dir, 'other.db-first-api-key')).mode & 0o777).toBe(0o600)
  })
})

describe('what serve and the admin verbs cannot use, said in one line', () => {
  test('a port in use, an address not here', async () => {
    const { dir, run } = cli()
    const taken = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
    try {
      expect(await run('serve', '--once', '--port', String(taken.port), '--db', join(dir, 'other.db'))).toEqual({
        code: 1,
        out: '',
        err: `svc: cannot listen on 127.0.0.1:${taken.port}: the port is in use (another svc?); choose another with --host/--port or [server]`,
      })
      // Nothing made for a gateway that never served: no database, no first key beside it.
      expect(existsSync(join(dir, 'other.db'))).toBe(false)
      expect(existsSync(join(dir, 'other.db-first-api-key'))).toBe(false)
    } finally {
      taken.stop(true)
    }
    expect((await run('serve', '--once', '--port', '0', '--host', '192.0.2.1')).err).toBe(
      'svc: cannot listen on 192.0.2.1:0: no interface of this machine has that address; choose another with --host/--port or [server]',
    )
    // IPv6 in brackets, as a URL writes it: `::1:8080` is no address and port.
    const taken6 = Bun.serve({ port: 0, hostname: '::1', fetch: () => new Response() })
    try {
      expect((await run('serve', '--once', '--port', String(taken6.port), '--host', '::1')).err).toStartWith(
        `svc: cannot listen on [::1]:${taken6.port}: the port is in use`,
      )
    } finally {
      taken6.stop(true)
    }
    const verbose = await run('serve', '--once', '--port', '0', '--log-level', 'verbose')
    expect(verbose.code).not.toBe(0)
    expect(verbose.err).toStartWith('svc: --log-level must be debug, info, warn or error (got verbose)')
    // Empty, Bun would listen on every interface.
    const blank = await run('serve', '--once', '--port', '0', '--host', '')
    expect({ code: blank.code, err: blank.err.split('\n')[0] }).toEqual({
      code: 2,
      err: 'svc: --host is empty (an unset shell variable?): give an address, e.g. 127.0.0.1',
    })
  })

  test('a database path that cannot be one', async () => {
    const { dir, run } = cli()
    const notDatabase = join(dir, 'notes.txt')
    writeFileSync(notDatabase, 'not a database, but kept as it was\n')
    chmodSync(notDatabase, 0o644)
    for (const argv of [
      ['serve', '--once', '--port', '0'],
      ['accounts', 'list'],
    ]) {
      expect(await run(...argv, '--db', notDatabase)).toEqual({
        code: 1,
        out: '',
        err: `svc: cannot open the database at ${notDatabase}: file is not a database; choose another with --db or [server] database`,
      })
    }
    expect(readFileSync(notDatabase, 'utf8')).toBe('not a database, but kept as it was\n')
    // Its mode too: the owner-only repair is for database files.
    expect((statSync(notDatabase).mode & 0o777).toString(8)).toBe('644')
    const underAFile = join(notDatabase, 'svc.db')
    const r = await run('serve', '--once', '--port', '0', '--db', underAFile)
    expect(r.code).toBe(1)
    // The system's own reason (Bun says EEXIST for a directory that is a file) in the same one line.
    expect(r.err).toStartWith(`svc: cannot open the database at ${underAFile}: `)
    expect(r.err).toEndWith('; choose another with --db or [server] database')
    expect(r.err).not.toContain('\n')
  })
})

describe('another process writes', () => {
  test('a key revoked by the CLI stops working at once on a running gateway', async () => {
    const { dir, run } = cli()
    const { createDeps } = await import('../src/deps')
    const { createApp } = await import('../src/app')
    const { resolveConfig } = await import('../src/config/load')
    const { createLogger } = await import('../src/lib/log')
    const config = resolveConfig({}, { env: {}, overrides: { database: join(dir, 'svc.db') } })
    const deps = createDeps(config, { log: createLogger('silent') })
    const first = await deps.admin.bootstrap()
    const app = createApp(deps)
    const get = () =>
      app.handle(new Request('http://localhost/v1/usage', { headers: { authorization: `Bearer ${first?.key}` } }))
    expect((await get()).status).toBe(200) // now cached in memory
    const keyId = JSON.parse((await run('keys', 'list', '--json')).out)[0].id
    expect((await run('keys', 'revoke', keyId)).code).toBe(0)
    // The CLI ran in this process without yielding to the event loop; a real request arrives in
    // a later turn of it, and requests of one turn share one look at the database (deps.ts).
    await new Promise((resolve) => setImmediate(resolve))
    expect((await get()).status).toBe(401)
    deps.ledger.close()
  })
})

describe('backup', () => {
  test('copies the database while a gateway has it open, unspread journal and all; the copy restores; never over a file', async () => {
    const { dir, run } = cli()
    const database = join(dir, 'svc.db')
    expect((await run('accounts', 'create', 'alice')).code).toBe(0)
    expect((await run('grants', 'add', '--account', 'alice', '--usd', '3')).code).toBe(0)
    // The serving gateway's connection: a lone request commits to the journal and is spread
    // into the tables only later (sqlite-request-writer.ts); the backup is taken in between.
    const serving = createSqliteLedger(openDatabase(database))
    const alice = (await serving.getAccountByName('alice'))!
    const answered = finishedRequest({ accountId: alice.id, at: Date.now(), legs: [{ costNanos: 250_000 }] })
    await serving.recordRequest(answered)

    const copy = join(dir, 'backups', 'svc-copy.db')
    mkdirSync(join(dir, 'backups'))
    const done = await run('backup', copy)
    expect(done.code).toBe(0)
    expect(done.out).toContain(`backed up ${database} to ${copy}`)
    expect(done.out).toContain('1 accounts')
    expect(done.out).toContain(`To restore: stop svc, run svc restore ${copy} --db ${database}, start svc.`)
    expect(statSync(copy).mode & 0o777).toBe(0o600)
    serving.close()
    const raw = new Database(copy, { readonly: true })
    const count = (table: string) => (raw.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
    expect([count('ledger_journal'), count('requests')]).toEqual([1, 0])
    raw.close()

    // Restored: the journal entry is spread on open, charged once.
    const restored = createSqliteLedger(openDatabase(copy))
    const got = await restored.getRequest(alice.id, answered.request.id)
    expect(got?.request.chargedNanos).toBe(250_000)
    const [grant] = await restored.listGrants(alice.id)
    expect(grant!.remainingNanos).toBe(3_000_000_000 - 250_000)
    restored.close()

    // Not a usage mistake: exit 1 and the one line, without "Run 'svc help' for usage".
    expect(await run('backup', copy)).toEqual({
      code: 1,
      out: '',
      err: `svc: ${copy} exists: a backup never overwrites a file; choose another name`,
    })
    const json = JSON.parse((await run('backup', join(dir, 'second.db'), '--json')).out)
    expect(json).toMatchObject({ file: join(dir, 'second.db'), database, accounts: 1, grants: 1 })
    expect(json.bytes).toBeGreaterThan(0)
  })

  // Each step a process of its own, as an operator runs them: a connection this test process opened
  // through Drizzle stays open until its statements are collected, and would hold the database.
  const restoreSetup = () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-restore-'))
    dirs.push(dir)
    const database = join(dir, 'svc.db')
    const svcOn = (db: string, ...argv: string[]) => {
      const run = Bun.spawnSync([process.execPath, join(import.meta.dir, '../src/main.ts'), ...argv, '--db', db], {
        cwd: dir, // no svc.toml there: defaults
        env: { ...process.env, SVC_CONFIG: '' },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      return { code: run.exitCode, out: run.stdout.toString(), err: run.stderr.toString() }
    }
    const svc = (...argv: string[]) => svcOn(database, ...argv)
    return { dir, database, svc, svcOn }
  }
  /** A gateway that writes `name`'s account and is killed outright: the write is in the -wal alone. */
  const killedAfterWriting = (database: string, name: string) =>
    Bun.spawnSync(
      [
        process.execPath,
        '-e',
        `const { Database } = require('bun:sqlite');
         const db = new Database(${JSON.stringify(database)});
         db.exec("PRAGMA wal_autocheckpoint = 0");
         db.exec("INSERT INTO accounts (id, name, created_at) VALUES ('acct_${name}', '${name}', 1)");
         process.kill(process.pid, 'SIGKILL')`,
      ],
      { stderr: 'pipe' },
    )
  const names = (file: string) => {
    const db = new Database(file, { readonly: true })
    const rows = db.query('SELECT name FROM accounts ORDER BY name').all() as { name: string }[]
    db.close()
    return rows.map((r) => r.name)
  }

  test("restore: a backup with a -wal of its own (a crashed gateway's file) comes whole; a link to the database is refused", () => {
    const { dir, database, svc, svcOn } = restoreSetup()
    expect(svc('serve', '--once', '--port', '0').code).toBe(0)
    const old = join(dir, 'old.db')
    expect(svcOn(old, 'serve', '--once', '--port', '0').code).toBe(0)
    expect(killedAfterWriting(old, 'bob').signalCode).toBe('SIGKILL')
    expect(statSync(`${old}-wal`).size).toBeGreaterThan(0)
    const done = svc('restore', old, '--json')
    expect(done.code).toBe(0)
    expect(JSON.parse(done.out)).toMatchObject({ accounts: 2 })
    expect(names(database)).toEqual(['bob', 'default'])

    // A link to the database is the database: refused before anything moves.
    const link = join(dir, 'latest-backup.db')
    symlinkSync(database, link)
    expect(svc('restore', link).err).toBe(`svc: ${link} is the database itself: give the backup's file\n`)
    expect(names(database)).toEqual(['bob', 'default'])
    expect(existsSync(`${database}.restoring`)).toBe(false)
  })

  test('restore: a backup a newer svc made is refused before anything moves; through a linked --db, the file it names is replaced', () => {
    const { dir, svc, svcOn } = restoreSetup()
    expect(svc('serve', '--once', '--port', '0').code).toBe(0)
    const newer = join(dir, 'newer.db')
    expect(svcOn(newer, 'serve', '--once', '--port', '0').code).toBe(0)
    expect(svcOn(newer, 'accounts', 'create', 'carol').code).toBe(0)
    const raw = new Database(newer)
    raw.run('INSERT INTO __drizzle_migrations (hash, created_at) VALUES (?, ?)', [
      'ab'.repeat(32),
      Date.now() + 86_400_000,
    ])
    raw.close()
    const refused = svc('restore', newer)
    expect(refused.code).toBe(1)
    expect(refused.err).toContain('was migrated by a newer svc')
    expect(readdirSync(dir).filter((f) => f.startsWith('svc.db.'))).toEqual([])

    // The operator keeps the ledger on another volume and links it: the linked file is restored.
    const volume = join(dir, 'volume')
    mkdirSync(volume)
    const kept = join(volume, 'svc.db')
    expect(svcOn(kept, 'serve', '--once', '--port', '0').code).toBe(0)
    const link = join(dir, 'linked.db')
    symlinkSync(kept, link)
    expect(svc('accounts', 'create', 'dora').code).toBe(0)
    const copy = join(dir, 'backup.db')
    expect(svc('backup', copy).code).toBe(0)
    expect(names(kept)).toEqual(['default'])
    const done = svcOn(link, 'restore', copy, '--json')
    expect(done.code).toBe(0)
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(JSON.parse(done.out).replaced).toStartWith(`${kept}.replaced-`)
    expect(names(kept)).toEqual(['default', 'dora'])
  })

  test('restore: a database an older svc left (no journal table) backs up and restores; a dangling linked --db is made where it pointed', () => {
    const { dir, database, svc, svcOn } = restoreSetup()
    expect(svc('serve', '--once', '--port', '0').code).toBe(0)
    // As before migration 0004, which made the journal.
    const raw = new Database(database)
    raw.run('DROP TABLE ledger_journal')
    raw.close()
    const copy = join(dir, 'backup.db')
    const backedUp = svc('backup', copy, '--json')
    expect(backedUp.err).toBe('')
    expect(JSON.parse(backedUp.out)).toMatchObject({ accounts: 1, requests: 0 })

    // The volume the link named is empty (why a restore is wanted): the file is made there.
    const volume = join(dir, 'volume')
    mkdirSync(volume)
    const link = join(dir, 'linked.db')
    symlinkSync(join(volume, 'svc.db'), link)
    const done = svcOn(link, 'restore', copy, '--json')
    expect(done.err).toBe('')
    expect(lstatSync(link).isSymbolicLink()).toBe(true)
    expect(names(join(volume, 'svc.db'))).toEqual(['default'])

    // A link to a dangling link, relative, through a linked directory: followed as the system does.
    mkdirSync(join(dir, 'deep', 'real'), { recursive: true })
    mkdirSync(join(dir, 'deep', 'vol'))
    symlinkSync(join(dir, 'deep', 'real'), join(dir, 'alias'))
    symlinkSync('../vol/svc.db', join(dir, 'deep', 'real', 'svc.db'))
    const outer = join(dir, 'outer.db')
    symlinkSync(join(dir, 'alias', 'svc.db'), outer)
    expect(svcOn(outer, 'restore', copy).code).toBe(0)
    expect([
      lstatSync(outer).isSymbolicLink(),
      lstatSync(join(dir, 'deep', 'real', 'svc.db')).isSymbolicLink(),
    ]).toEqual([true, true])
    expect(names(join(dir, 'deep', 'vol', 'svc.db'))).toEqual(['default'])
  })

  test('restore: refused while a gateway has the database open; then the backup alone, a crash-left log set aside with the file it replaced', async () => {
    const { dir, database, svc } = restoreSetup()
    expect(svc('serve', '--once', '--port', '0').code).toBe(0)
    expect(svc('accounts', 'create', 'alice').code).toBe(0)
    const copy = join(dir, 'backup.db')
    expect(svc('backup', copy).code).toBe(0)

    // A gateway that goes on after the backup and is killed outright: its last writes are in a -wal.
    expect(killedAfterWriting(database, 'bob').signalCode).toBe('SIGKILL')
    expect(statSync(`${database}-wal`).size).toBeGreaterThan(0)

    // A gateway running on it: refused, nothing moved.
    const serving = Bun.spawn(
      [
        process.execPath,
        '-e',
        `const { Database } = require('bun:sqlite');
         const db = new Database(${JSON.stringify(database)});
         db.query('SELECT count(*) FROM accounts').get();
         console.log('open');
         setTimeout(() => {}, 20000)`,
      ],
      { stdout: 'pipe' },
    )
    await serving.stdout.getReader().read()
    expect(svc('restore', copy)).toEqual({
      code: 1,
      out: '',
      err: `svc: ${database} is open in another process (a running svc serve?): stop it first, then restore\n`,
    })
    serving.kill()
    await serving.exited

    const done = svc('restore', copy, '--json')
    expect(done.err).toBe('')
    expect(done.code).toBe(0)
    const summary = JSON.parse(done.out)
    expect(summary).toMatchObject({ file: copy, database, accounts: 2 })
    expect(summary.replaced).toStartWith(`${database}.replaced-`)
    expect([existsSync(`${database}-wal`), existsSync(`${database}-shm`)]).toEqual([false, false])
    expect(statSync(database).mode & 0o777).toBe(0o600)
    // The backup's accounts, not the crashed gateway's; what it had is in the file set aside.
    expect(names(database)).toEqual(['alice', 'default'])
    expect(names(summary.replaced)).toEqual(['alice', 'bob', 'default'])

    expect(svc('restore', database).err).toBe(`svc: ${database} is the database itself: give the backup's file\n`)
    writeFileSync(join(dir, 'notes.txt'), 'not a database')
    expect(svc('restore', join(dir, 'notes.txt')).code).toBe(1)
    expect(names(database)).toEqual(['alice', 'default'])
  })

  test('no database, no backup and no file left behind', async () => {
    const { dir, run } = cli({ SVC_DATABASE: '/nonexistent/dir/svc.db' })
    const result = await run('backup', 'out.db')
    expect(result).toMatchObject({
      code: 1,
      err: 'svc: no database at /nonexistent/dir/svc.db (start svc serve, or pass --db)',
    })
    expect(existsSync(join(dir, 'out.db'))).toBe(false)
  })
})

describe('what an audit of the admin CLI found', () => {
  test('usage --limit is read as the admin route reads limit: an integer from 1 to 200, else one line', async () => {
    const { dir, run } = cli()
    expect((await run('accounts', 'create', 'alice')).code).toBe(0)
    const ledger = createSqliteLedger(openDatabase(join(dir, 'svc.db')))
    const alice = (await ledger.getAccountByName('alice'))!
    for (let i = 0; i < 3; i++) await ledger.recordRequest(finishedRequest({ accountId: alice.id, at: Date.now() + i }))
    ledger.close()
    const events = async (...limit: string[]) =>
      JSON.parse((await run('usage', '--account', 'alice', '--json', ...limit)).out).recent_events.length
    expect([await events(), await events('--limit', '2'), await events('--limit', '200')]).toEqual([3, 2, 3])
    // Number() listed everything for "abc", nothing for 0 or 1.5, and gave SQLite 1e20 (a stack trace).
    for (const [limit, why] of [
      ['abc', 'must be an integer from 1 to 200'],
      ['1.5', 'must be an integer from 1 to 200'],
      ['0', 'must be from 1 to 200 (got 0)'],
      ['201', 'must be from 1 to 200 (got 201)'],
      ['99999999999999999999', 'must be from 1 to 200 (got 99999999999999999999)'],
    ]) {
      expect(await run('usage', '--account', 'alice', '--limit', limit!)).toEqual({
        code: 2,
        out: '',
        err: `svc: --limit ${why}\nRun 'svc help' for usage.`,
      })
    }
    // The route's own words for the same values.
    const h = await createHarness()
    const route = await h.call('/v1/admin/usage?account=default&limit=abc', {
      key: null,
      headers: { authorization: 'Bearer admin-secret' },
    })
    expect([route.status, (await route.json()).error.message]).toEqual([400, 'limit must be an integer from 1 to 200'])
  })

  test('backup of a file that is not a database: the line every verb gives, and no copy left', async () => {
    const { dir, run } = cli()
    const notDatabase = join(dir, 'notadb')
    writeFileSync(notDatabase, 'hello\n')
    const line = `svc: cannot open the database at ${notDatabase}: file is not a database; choose another with --db or [server] database`
    expect(await run('accounts', 'list', '--db', notDatabase)).toEqual({ code: 1, out: '', err: line })
    expect(await run('backup', 'bk.db', '--db', notDatabase)).toEqual({ code: 1, out: '', err: line })
    expect(existsSync(join(dir, 'bk.db'))).toBe(false)
  })

  test('grant amounts: plain decimals of whole nanos on the CLI; the API says "too large" beyond 2^53 − 1 nanos', async () => {
    const { run } = cli()
    expect((await run('accounts', 'create', 'alice')).code).toBe(0)
    const plain = 'the amount must be a plain decimal number of USD, such as 20 or 0.25'
    const refused: [string, string][] = [
      ['0x10', `svc: ${plain} (got 0x10)`], // was granted as 16 USD
      ['1e-10', `svc: ${plain} (got 1e-10)`], // was "must be more than zero"
      ['1e3', `svc: ${plain} (got 1e3)`],
      ['.5', `svc: ${plain} (got .5)`],
      ['', "svc: --usd is required\nRun 'svc help' for usage."],
      [
        '0.0000000005', // was rounded up to a nano without a word
        'svc: the amount 0.0000000005 USD is finer than the ledger counts: it keeps whole nanos (0.000000001 USD), at most 9 decimals',
      ],
      ['0.000000000', 'svc: the amount must be more than zero'],
      [
        '9007199.254740992',
        'svc: the amount 9007199.254740992 USD is too large: a grant holds at most 9007199.254740991 USD',
      ],
    ]
    for (const [usd, err] of refused) {
      const r = await run('grants', 'add', '--account', 'alice', `--usd=${usd}`)
      expect({ usd, ...r }).toEqual({ usd, code: err.includes('Run') ? 2 : 1, out: '', err })
    }
    const granted = async (usd: string) =>
      JSON.parse((await run('grants', 'add', '--account', 'alice', '--usd', usd, '--json')).out).amount_nanos
    expect([
      await granted('0.000000001'),
      await granted('007.50'),
      await granted('1.5000000000000'),
      await granted('9007199.254740991'),
    ]).toEqual([1, 7_500_000_000, 1_500_000_000, 9_007_199_254_740_991])

    const h = await createHarness()
    // The body as a client writes it: JSON.parse, not this file, turns its digits into numbers.
    const grant = async (fields: string) => {
      const res = await h.call('/v1/admin/grants', {
        method: 'POST',
        key: null,
        headers: { authorization: 'Bearer admin-secret', 'content-type': 'application/json' },
        body: `{"account":"default",${fields}}`,
      })
      const body = await res.json()
      return [res.status, body.amount_nanos ?? body.error.message]
    }
    // JSON's 9007199254740993 arrives as 2^53, which is no safe integer: it was "more than zero".
    const tooLarge = 'amount_nanos is too large: a grant holds at most 9007199254740991 nanos (9007199.254740991 USD)'
    const finer = (usd: string) =>
      `the amount ${usd} USD is finer than the ledger counts: it keeps whole nanos (0.000000001 USD), at most 9 decimals`
    expect(
      await Promise.all([
        grant('"amount_nanos":9007199254740993'),
        grant('"amount_nanos":9007199254740991'),
        grant('"amount_nanos":0'),
        grant('"usd":1e-10'),
        grant('"usd":0.0000000005'),
        grant('"usd":1e-7'),
        grant('"usd":0.1'),
        grant('"usd":1e30'),
        grant('"usd":-2'),
        // More digits than a double keeps: JSON.parse made it 8500000000000004 nanos.
        grant('"usd":8500000.000000003'),
        grant('"usd":"9007199.254740991"'),
        grant('"usd":"0.000000001"'),
        grant('"usd":"0x10"'),
      ]),
    ).toEqual([
      [400, tooLarge],
      [201, Number.MAX_SAFE_INTEGER],
      [400, 'the amount must be more than zero'],
      [400, finer('0.0000000001')],
      [400, finer('0.0000000005')],
      [201, 100],
      [201, 100_000_000],
      [400, `the amount ${'1'.padEnd(31, '0')} USD is too large: a grant holds at most 9007199.254740991 USD`],
      [400, 'the amount must be more than zero'],
      [
        400,
        'the amount 8500000.000000004 USD has more digits than a JSON number keeps exactly: send usd as a string ("8500000.000000004") or amount_nanos',
      ],
      [201, Number.MAX_SAFE_INTEGER],
      [201, 1],
      [400, 'the amount must be a plain decimal number of USD, such as 20 or 0.25 (got 0x10)'],
    ])
  })

  test('key names: at most 100 characters and no control characters, from the CLI and the API alike', async () => {
    const { run } = cli()
    expect((await run('accounts', 'create', 'alice')).code).toBe(0)
    const refusal = 'key name: at most 100 characters, without tabs, line breaks or other control characters'
    for (const name of ['lap\ttop', 'lap\ntop', 'x'.repeat(101), 'a\u2028b', 'bell\u0007']) {
      expect(await run('keys', 'create', '--account', 'alice', '--name', name)).toEqual({
        code: 1,
        out: '',
        err: `svc: ${refusal}`,
      })
    }
    // 100 characters, counted as characters (an emoji is one), and the list stays a table.
    const hundred = '🔑'.repeat(100)
    expect((await run('keys', 'create', '--account', 'alice', '--name', hundred)).code).toBe(0)
    expect((await run('keys', 'list')).out.split('\n')).toHaveLength(2)

    const h = await createHarness()
    const res = await h.call('/v1/admin/keys', {
      method: 'POST',
      key: null,
      headers: { authorization: 'Bearer admin-secret' },
      json: { account: 'default', name: 'ci\nbuild' },
    })
    expect([res.status, (await res.json()).error.message]).toEqual([400, refusal])
  })

  test('whoami not signed in is no usage mistake; init answers --json, systemd-unit refuses it', async () => {
    const { dir, runWith } = cli()
    const home = { HOME: dir, XDG_CONFIG_HOME: join(dir, 'config') }
    expect(await runWith(home, 'whoami')).toEqual({
      code: 1,
      out: '',
      err: 'svc: not signed in: run `svc login [URL]` (or set SVC_URL and SVC_API_KEY)',
    })
    const written = await runWith(home, 'init', 'example.toml', '--json')
    expect(written.code).toBe(0)
    expect(JSON.parse(written.out)).toEqual({ file: join(dir, 'example.toml') })
    expect(await runWith(home, 'systemd-unit', '--json')).toEqual({
      code: 2,
      out: '',
      err: "svc: systemd-unit prints the unit file itself: it has no --json output\nRun 'svc help' for usage.",
    })
  })

  test('the help and README grant examples are accepted whatever the year', async () => {
    const { run } = cli()
    expect((await run('accounts', 'create', 'alice')).code).toBe(0)
    const { commandHelp } = await import('../src/cli/help')
    const readme = readFileSync(join(import.meta.dir, '..', 'README.md'), 'utf8')
    const examples = [
      ...(commandHelp.grants ?? '').split('\n'),
      ...readme.split('\n').map((line) => line.replace('bun src/main.ts', 'svc')),
    ].filter((line) => line.trim().startsWith('svc grants add') && line.includes('--expires 2'))
    expect(examples.length).toBe(2)
    for (const example of examples) {
      const argv = example.trim().split(/\s+/).slice(1)
      const expires = argv[argv.indexOf('--expires') + 1]
      // Years ahead: a fixed date in an example stops working the day it passes (2027-01-01 did).
      expect(Date.parse(expires!) - Date.now()).toBeGreaterThan(10 * 365 * 86_400_000)
      expect((await run(...argv)).code).toBe(0)
    }
  })
})
