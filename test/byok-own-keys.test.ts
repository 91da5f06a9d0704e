// An account's own provider keys (BYOK) as their users meet them: a key whose provider account has
// run out of credit, the credit a request holds when its own key fails and the platform's serves,
// a key replaced after its circuit opened (here or from the CLI), and keys that are no keys.
import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createApp } from '../src/app'
import type { Io } from '../src/cli/context'
import { resolveConfig } from '../src/config/load'
import type { ConfigFile, ModelSection } from '../src/config/schema'
import { openDatabase } from '../src/db/open'
import { createDeps, type Deps } from '../src/deps'
import { createLogger } from '../src/lib/log'
import { main } from '../src/main'
import { createHarness, endedRequestDetail, type Harness, remainingNanos } from './support/harness'

const PLATFORM = 'sk-platform-key-0001'
const SPARE = 'sk-spare-platform-key-0001'
const OWN = 'sk-own-good-key-7f3a9c2e5d1b'
const REVOKED = 'sk-own-revoked-key-0000000'

/** 3 USD/Mtok in, 15 out (3,000 and 15,000 nanos a token), in svc-max. */
const model = (id: string, provider: string, quality: number): ModelSection => ({
  id,
  provider,
  upstream_model: `${id}-up`,
  profiles: ['max'],
  quality,
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
})
/** Served only with the account's own key: its provider has no platform key. */
const gamma = model('gamma', 'own', 95)
/** The platform's key. */
const alpha = model('alpha', 'anth', 90)
/** Another provider account of the platform's. */
const spare = model('spare', 'spare', 80)

const anthropic = (base_url: string, api_key_env: string) => ({ kind: 'anthropic' as const, base_url, api_key_env })
const configFile = (models: ModelSection[]): ConfigFile => ({
  catalog: { builtin: false },
  providers: {
    own: anthropic('http://own.test', 'OWN_PLATFORM_KEY_UNSET'),
    anth: anthropic('http://anth.test', 'PLATFORM_KEY'),
    spare: anthropic('http://spare.test', 'SPARE_KEY'),
  },
  models,
})
const env = { PLATFORM_KEY: PLATFORM, SPARE_KEY: SPARE }
/** configFile's providers as svc.toml has them, for the CLI. */
const providersToml = Object.entries(configFile([]).providers ?? {})
  .map(
    ([id, p]) =>
      `[providers.${id}]\nkind = "${p.kind}"\nbase_url = "${p.base_url}"\napi_key_env = "${p.api_key_env}"\n`,
  )
  .join('\n')

const gateway = (models: ModelSection[], grantUsd = 5) => createHarness({ grantUsd, env, config: configFile(models) })

/** How the provider account behind a key fares. Any key not listed is refused, as a revoked one. */
type ProviderAccount = 'ok' | 'out of credit'

/** Anthropic's answer to a key whose organization has run out of prepaid credit. */
const creditTooLow = {
  type: 'error',
  error: {
    type: 'invalid_request_error',
    message:
      'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
  },
  request_id: 'req_011CbrFTcXhtiMzr3s6EocF7',
}
const creditTooLowSaid =
  'its credit balance ran too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'

/** An Anthropic answer from `model`: 10 prompt tokens and `outputTokens`. */
const answerOf = (model: string, outputTokens: number) =>
  Response.json({
    id: 'msg_up',
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text: `from ${model}` }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: outputTokens },
  })

/**
 * The providers behind every upstream call of `deps`, answering by the key each call carries
 * (`accounts`, which a test may change between requests); returns the keys called, in order.
 */
function providers(
  deps: Deps,
  accounts: Record<string, ProviderAccount>,
  /** `refusalDelayMs`: how long the n-th refusal of a key takes (0-based), where not `delayMs`. */
  opts: { delayMs?: number; outputTokens?: number; refusalDelayMs?: (nth: number) => number } = {},
): string[] {
  const called: string[] = []
  let refusals = 0
  deps.fetch = (async (_url: string, init: RequestInit) => {
    const key = (init.headers as Record<string, string>)['x-api-key'] ?? ''
    const { model } = JSON.parse(String(init.body)) as { model: string }
    called.push(key)
    const account = accounts[key]
    const delayMs = account === undefined && opts.refusalDelayMs ? opts.refusalDelayMs(refusals++) : opts.delayMs
    if (delayMs) await Bun.sleep(delayMs)
    if (account === undefined) {
      return Response.json(
        { type: 'error', error: { type: 'authentication_error', message: 'invalid x-api-key' } },
        { status: 401 },
      )
    }
    if (account === 'out of credit') return Response.json(creditTooLow, { status: 400 })
    return answerOf(model, opts.outputTokens ?? 5)
  }) as unknown as typeof fetch
  return called
}

/** One svc-max request on the messages route: its status, body and record. */
async function ask(h: Harness, maxTokens = 100) {
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-max', max_tokens: maxTokens, messages: [{ role: 'user', content: 'hello' }] },
  })
  const body = await res.json()
  const detail = await endedRequestDetail(h, res.headers.get('x-request-id')!)
  return { status: res.status, body, detail }
}

/** A record's candidates as [model, status, circuit]. */
const ranksOf = (detail: { provider_ranks: { model_id: string; status: string; health: { state: string } }[] }) =>
  detail.provider_ranks.map((r) => [r.model_id, r.status, r.health.state])

/** Nanos: 10 prompt tokens and `output` tokens at 3,000 and 15,000. */
const costOf = (output: number) => 10 * 3_000 + output * 15_000
/** The 5 % BYOK fee, rounded up. */
const feeOf = (cost: number) => Math.ceil(cost / 20)

describe('an own Anthropic key whose account ran out of prepaid credit (a 400 "credit balance is too low")', () => {
  test('another model serves; the key is said to need attention, counts against its health, and is passed over once its circuit opens', async () => {
    const h = await gateway([gamma, alpha])
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: OWN })
    const called = providers(h.deps, { [OWN]: 'out of credit', [PLATFORM]: 'ok' })
    const refused = `own refused the key stored for this account (BYOK; the stored key needs replacing): ${creditTooLowSaid}`
    for (let i = 0; i < 3; i++) {
      const { status, body, detail } = await ask(h)
      expect({ status, text: body.content[0].text }).toEqual({ status: 200, text: 'from alpha-up' })
      expect(detail.usage_events).toEqual([
        expect.objectContaining({ model_id: 'gamma', byok: true, outcome: 'failed', error: refused, charged_nanos: 0 }),
        expect.objectContaining({ model_id: 'alpha', byok: false, outcome: 'ok', charged_nanos: costOf(5) }),
      ])
    }
    expect(called).toEqual([OWN, PLATFORM, OWN, PLATFORM, OWN, PLATFORM])
    // Three failures opened the key's circuit: the next request goes to the platform's model first.
    called.length = 0
    const { detail } = await ask(h)
    expect(called).toEqual([PLATFORM])
    expect(ranksOf(detail)).toEqual([
      ['alpha', 'chosen', 'closed'],
      ['gamma', 'not_tried', 'open'],
    ])
  })

  test('with no other model: a 502 that says the stored key’s account has no credit, not the client’s svc credit', async () => {
    const h = await gateway([gamma])
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: OWN })
    providers(h.deps, { [OWN]: 'out of credit' })
    const before = await remainingNanos(h)
    const { status, body, detail } = await ask(h)
    // The request used the account's own key, though none served it (the spec: byok "when a tenant
    // provider key was used"; recorded false before).
    expect(detail).toMatchObject({ status: 'failed', byok: true, selected_model_id: null })
    expect({ status, body }).toEqual({
      status: 502,
      body: {
        type: 'error',
        error: {
          type: 'api_error',
          message: `own refused the key stored for this account (BYOK; the stored key needs replacing): ${creditTooLowSaid}`,
        },
      },
    })
    expect(await remainingNanos(h)).toBe(before)
  })

  test('the platform’s key out of credit: another provider serves; alone, the client hears it is the operator’s to fix', async () => {
    const h = await gateway([alpha, spare])
    const called = providers(h.deps, { [PLATFORM]: 'out of credit', [SPARE]: 'ok' })
    const served = await ask(h)
    expect({ status: served.status, text: served.body.content[0].text }).toEqual({ status: 200, text: 'from spare-up' })
    expect(called).toEqual([PLATFORM, SPARE])
    const refused = `anth refused the gateway's own account there (for the gateway's operator to fix; your svc key is fine): ${creditTooLowSaid}`
    expect(served.detail.usage_events[0]).toMatchObject({ model_id: 'alpha', outcome: 'failed', error: refused })

    const alone = await gateway([alpha])
    providers(alone.deps, { [PLATFORM]: 'out of credit' })
    const { status, body } = await ask(alone)
    expect({ status, body }).toEqual({
      status: 502,
      body: { type: 'error', error: { type: 'api_error', message: refused } },
    })
  })
})

describe('the credit a request holds when its own key fails and the platform’s key serves', () => {
  // Each answer writes 4,000 tokens: 0.06003 USD at alpha's price, the fee on it 0.003 USD.
  const answer = costOf(4_000)

  test('30 requests at once on a 0.05 USD grant, the own key refused: served at most one request beyond the credit', async () => {
    const h = await gateway([gamma, alpha], 0.05)
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: REVOKED })
    providers(h.deps, { [PLATFORM]: 'ok' }, { delayMs: 20, outputTokens: 4_000 })
    const results = await Promise.all(Array.from({ length: 30 }, () => ask(h, 4_000)))
    const served = results.filter((r) => r.status === 200)
    const servedNanos = served.reduce((sum, r) => sum + r.detail.total_cost_nanos, 0)
    // The README's promise: about one request's cost beyond the credit (before: 17 served, 1.02 USD).
    expect(served.length).toBeGreaterThanOrEqual(1)
    expect(servedNanos).toBeLessThanOrEqual(50_000_000 + answer)
    // The others were told their credit is held, which the SDKs retry.
    for (const r of results.filter((r) => r.status !== 200)) {
      expect({ status: r.status, type: r.body.error.type }).toEqual({ status: 429, type: 'rate_limit_error' })
    }
    expect(await remainingNanos(h)).toBe(0)
  })

  // Judged on the grants the request was admitted on, each fallback saw the credit the others had
  // spent meanwhile as still there: all ten served, 0.15 USD on a 0.05 USD grant (an audit).
  test('own keys refused 50 ms apart: each fallback sees the credit spent meanwhile, at most one request beyond it', async () => {
    const h = await gateway([gamma, alpha], 0.05)
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: REVOKED })
    const small = costOf(1_000)
    providers(h.deps, { [PLATFORM]: 'ok' }, { delayMs: 5, outputTokens: 1_000, refusalDelayMs: (n) => 20 + 50 * n })
    const results = await Promise.all(Array.from({ length: 10 }, () => ask(h, 1_000)))
    const served = results.filter((r) => r.status === 200)
    expect(served.reduce((sum, r) => sum + r.detail.total_cost_nanos, 0)).toBeLessThanOrEqual(50_000_000 + small)
    expect(await remainingNanos(h)).toBe(0)
    // The others: told their credit is held while some is; once none is left, the failure before the
    // fallback answers (the stored key refused).
    for (const r of results.filter((r) => r.status !== 200)) {
      expect([
        { status: 429, type: 'rate_limit_error' },
        { status: 502, type: 'api_error' },
      ]).toContainEqual({ status: r.status, type: r.body.error.type })
    }
  })

  test('alone, a request whose own key is refused still falls back on the credit that is left', async () => {
    const h = await gateway([gamma, alpha], 0.05)
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: REVOKED })
    providers(h.deps, { [PLATFORM]: 'ok' }, { outputTokens: 4_000 })
    const { status, detail } = await ask(h, 4_000)
    expect({ status, cost: detail.total_cost_nanos, charged: detail.charged_nanos }).toEqual({
      status: 200,
      cost: answer,
      charged: 50_000_000,
    })
  })

  test('an own key that serves holds only its fee: ten requests at once on a 0.05 USD grant are all served', async () => {
    const h = await gateway([gamma, alpha], 0.05)
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: OWN })
    const called = providers(h.deps, { [OWN]: 'ok', [PLATFORM]: 'ok' }, { delayMs: 20, outputTokens: 4_000 })
    const results = await Promise.all(Array.from({ length: 10 }, () => ask(h, 4_000)))
    expect(results.map((r) => r.status)).toEqual(Array(10).fill(200))
    expect(new Set(called)).toEqual(new Set([OWN]))
    expect(await remainingNanos(h)).toBe(50_000_000 - 10 * feeOf(answer))
  })
})

// A fallback refused because its grant was spent meanwhile answered 402 (no retry; on the responses
// route Codex's "Quota exceeded") where the first model's 529 was the answer: sent again, that model
// would serve on its own grant (a review).
test('a fallback whose grant was spent meanwhile leaves the first model’s retryable failure as the answer', async () => {
  const h = await createHarness({
    env: { PLATFORM_KEY: PLATFORM, SPARE_KEY: SPARE },
    config: {
      catalog: { builtin: false },
      providers: {
        anth: anthropic('http://anth.test', 'PLATFORM_KEY'),
        spare: anthropic('http://spare.test', 'SPARE_KEY'),
      },
      models: [alpha, { ...spare, profiles: ['max', 'pro'] }],
    },
  })
  await h.deps.admin.addGrant({ account: 'default', usd: '1', models: ['alpha'] })
  await h.deps.admin.addGrant({ account: 'default', usd: '0.01', models: ['spare'] })
  h.deps.fetch = (async (url: string, init: RequestInit) => {
    const { model } = JSON.parse(String(init.body)) as { model: string }
    if (String(url).includes('anth.test')) {
      await Bun.sleep(150)
      return Response.json(
        { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } },
        { status: 529 },
      )
    }
    return answerOf(model, 1_000)
  }) as unknown as typeof fetch
  const send = (profile: string) =>
    h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: profile, max_tokens: 1_000, messages: [{ role: 'user', content: 'hello' }] },
    })
  const first = send('svc-max')
  await Bun.sleep(30)
  // Served by spare meanwhile, spending its 0.01 USD grant.
  expect((await send('svc-pro')).status).toBe(200)
  const res = await first
  expect({ status: res.status, type: (await res.json()).error.type }).toEqual({ status: 529, type: 'overloaded_error' })
  const detail = await endedRequestDetail(h, res.headers.get('x-request-id')!)
  expect(detail.provider_ranks.map((r: { model_id: string; status: string }) => [r.model_id, r.status])).toEqual([
    ['alpha', 'failed'],
    ['spare', 'skipped'],
  ])
})

describe('an own key replaced after its circuit opened is tried on the next request', () => {
  /** Three requests the own key fails: its circuit opens, and the platform's model serves. */
  async function openOwnCircuit(h: Harness) {
    for (let i = 0; i < 3; i++) expect((await ask(h)).detail.selected_model_id).toBe('alpha')
    expect(ranksOf((await ask(h)).detail)[1]).toEqual(['gamma', 'not_tried', 'open'])
  }
  const admin = (h: Harness, method: string, query = '', json?: unknown) =>
    h.call(`/v1/admin/provider-keys${query}`, { method, key: 'admin-secret', json })

  test('a new key, or the same one removed and stored again, through the admin API', async () => {
    const h = await gateway([gamma, alpha])
    const accounts: Record<string, ProviderAccount> = { [PLATFORM]: 'ok' }
    const called = providers(h.deps, accounts)
    await h.deps.admin.addProviderKey({ account: 'default', provider: 'own', key: REVOKED })
    await openOwnCircuit(h)
    expect((await admin(h, 'POST', '', { account: 'default', provider: 'own', key: OWN })).status).toBe(201)
    accounts[OWN] = 'ok'
    called.length = 0
    const replaced = await ask(h)
    expect(called).toEqual([OWN])
    expect(replaced.detail).toMatchObject({ selected_model_id: 'gamma', byok: true, charged_nanos: feeOf(costOf(5)) })

    // The provider suspends the key's account, then restores it; the key's owner stores it again.
    delete accounts[OWN]
    await openOwnCircuit(h)
    accounts[OWN] = 'ok'
    expect((await admin(h, 'DELETE', '?account=default&provider=own')).status).toBe(200)
    expect((await admin(h, 'POST', '', { account: 'default', provider: 'own', key: OWN })).status).toBe(201)
    called.length = 0
    expect((await ask(h)).detail.selected_model_id).toBe('gamma')
    expect(called).toEqual([OWN])
  })

  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })

  test('a key stored from another process (svc provider-keys add) is tried by the serving gateway', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-byok-'))
    dirs.push(dir)
    const database = join(dir, 'svc.db')
    const masterKey = 'test-master-key'
    const file = configFile([gamma, alpha])
    const config = resolveConfig(file, { env: { ...env, SVC_MASTER_KEY: masterKey }, overrides: { database } })
    config.billing.starterGrant = { nanos: 5_000_000_000 }
    // A clock that stands still: the old key's circuit stays open unless forgotten.
    const now = Date.parse('2026-11-22T10:00:00.000Z')
    const deps = createDeps(config, { db: openDatabase(database), clock: () => now, log: createLogger('silent') })
    const first = (await deps.admin.bootstrap())!
    const app = createApp(deps)
    // The harness's calls on this gateway (createHarness keeps its database in memory).
    const h = {
      deps,
      call: (path: string, init: RequestInit & { json?: unknown } = {}) =>
        app.handle(
          new Request(`http://localhost${path}`, {
            ...init,
            headers: { ...init.headers, authorization: `Bearer ${first.key}`, 'content-type': 'application/json' },
            body: init.json === undefined ? undefined : JSON.stringify(init.json),
          }),
        ),
    } as unknown as Harness
    const accounts: Record<string, ProviderAccount> = { [PLATFORM]: 'ok' }
    const called = providers(deps, accounts)
    await deps.admin.addProviderKey({ account: 'default', provider: 'own', key: REVOKED })
    await openOwnCircuit(h)

    writeFileSync(join(dir, 'svc.toml'), providersToml)
    const out: string[] = []
    const io: Io = {
      env: { SVC_MASTER_KEY: masterKey },
      cwd: dir,
      out: (t) => out.push(t),
      err: (t) => out.push(t),
      stdin: async () => `${OWN}\n`,
    }
    const argv = ['provider-keys', 'add', '--account', 'default', '--provider', 'own', '--db', database]
    expect(await main(argv, io)).toBe(0)
    // The gateway checks for other processes' writes once a turn of its event loop (deps.syncCaches):
    // the CLI, run in this one, returned within the turn of the last request.
    await new Promise((resolve) => setImmediate(resolve))
    accounts[OWN] = 'ok'
    called.length = 0
    expect((await ask(h)).detail).toMatchObject({ selected_model_id: 'gamma', byok: true })
    expect(called).toEqual([OWN])
    deps.ledger.close()
  })
})

describe('a stored own key is one line of visible ASCII, at most 1,024 characters', () => {
  const store = (h: Harness, key: string) =>
    h.call('/v1/admin/provider-keys', {
      method: 'POST',
      key: 'admin-secret',
      json: { account: 'default', provider: 'own', key },
    })
  const refusal = (message: string) => ({
    status: 400,
    body: { type: 'error', error: { type: 'invalid_request_error', message } },
  })

  test('the admin API refuses a key with a second line, a space, a zero-width space or a megabyte, saying what is wrong, never the key', async () => {
    const h = await gateway([gamma, alpha])
    const oneLine = 'a key is visible ASCII characters only, on one line (store the key alone)'
    const cases: [string, ReturnType<typeof refusal>][] = [
      [`${OWN}\nx-extra: injected`, refusal(`the provider key holds a line break at character 29 of 46: ${oneLine}`)],
      [OWN.replace('-good', ' good'), refusal(`the provider key holds a space at character 7 of 28: ${oneLine}`)],
      [
        `\u200b${OWN}`,
        refusal(`the provider key holds a character outside ASCII (U+200B) at character 1 of 29: ${oneLine}`),
      ],
      [`sk-${'a'.repeat(1_000_000)}`, refusal('the provider key is 1000003 characters long; a key is at most 1024')],
    ]
    for (const [key, want] of cases) {
      const res = await store(h, key)
      expect({ status: res.status, body: await res.json() }).toEqual(want)
    }
    expect(await h.deps.admin.listProviderKeys({})).toEqual([])
  })

  test('a pasted key’s surrounding whitespace is trimmed, and the key alone goes upstream', async () => {
    const h = await gateway([gamma, alpha])
    const called = providers(h.deps, { [OWN]: 'ok' })
    const res = await store(h, `  ${OWN}\r\n`)
    expect({ status: res.status, hint: (await res.json()).hint }).toEqual({ status: 201, hint: '…5d1b' })
    expect((await ask(h)).status).toBe(200)
    expect(called).toEqual([OWN])
  })

  test('svc provider-keys add: two lines on stdin are refused with exit code 1 and nothing is stored', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-byok-'))
    try {
      const database = join(dir, 'svc.db')
      openDatabase(database).$client.close()
      writeFileSync(join(dir, 'svc.toml'), providersToml)
      const run = async (stdin: string, ...argv: string[]) => {
        const out: string[] = []
        const err: string[] = []
        const io: Io = {
          env: { SVC_MASTER_KEY: 'test-master-key', SVC_DATABASE: database },
          cwd: dir,
          out: (t) => out.push(t),
          err: (t) => err.push(t),
          stdin: async () => stdin,
        }
        return { code: await main(argv, io), out: out.join(''), err: err.join('') }
      }
      expect((await run('', 'accounts', 'create', 'alice')).code).toBe(0)
      expect(
        await run(`${OWN}\r\n# my anthropic key\n`, 'provider-keys', 'add', '--account', 'alice', '--provider', 'own'),
      ).toEqual({
        code: 1,
        out: '',
        err: 'svc: the provider key holds a line break at character 29 of 48: a key is visible ASCII characters only, on one line (store the key alone)',
      })
      expect((await run('', 'provider-keys', 'list')).out).toBe('(none)')
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
