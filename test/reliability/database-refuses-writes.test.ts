// When the database refuses writes (a full disk; SQLite's max_page_count plays one here), svc
// keeps the requests it has already answered and turns new model requests away, rather than
// serving them unbilled and losing them from the usage API. Once the database takes writes again,
// every answered request is recorded and charged, once.
import type { Database } from 'bun:sqlite'
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../../src/db/open'
import { createSqliteLedger } from '../../src/ledger/sqlite-ledger'
import { databaseRefusesWrites } from '../../src/ledger/write-refusals'
import { createHarness, type Harness } from '../support/harness'
import { finishedRequest } from '../support/ledger-fixtures'
import { simClaude, simProviders } from '../support/sim-models'
import { startSimulator } from '../support/simulator'

const sim = startSimulator({ apiKey: 'sim' })
const dir = mkdtempSync(join(tmpdir(), 'svc-refusals-'))
afterAll(() => {
  sim.stop()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * Caps the database at the pages it has and fills its free ones: the next write that needs a page
 * is SQLITE_FULL, as on a full disk.
 */
function fillDisk(db: Database) {
  db.run('CREATE TABLE IF NOT EXISTS filler (x BLOB)')
  const { page_count } = db.query('PRAGMA page_count').get() as { page_count: number }
  db.run(`PRAGMA max_page_count = ${page_count}`)
  try {
    for (;;) db.run('INSERT INTO filler VALUES (zeroblob(256))')
  } catch (err) {
    if (!databaseRefusesWrites(err)) throw err
  }
}
const makeRoom = (db: Database) => db.run('PRAGMA max_page_count = 1000000000')

const gateway = () =>
  createHarness({
    grantUsd: 5,
    env: { SIM_KEY: 'sim' },
    config: {
      catalog: { builtin: false },
      providers: simProviders(sim.url),
      models: [simClaude({ profiles: ['max'] })],
    },
  })

const ask = (h: Harness) =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-max', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] },
  })

async function until(what: string, ok: () => Promise<boolean>, ms = 5_000) {
  const deadline = performance.now() + ms
  while (!(await ok())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

describe('a database that refuses writes', () => {
  test('answered requests wait for it, new ones are refused in each surface’s shape, and every answered one is charged once there is room', async () => {
    const h = await gateway()
    fillDisk(h.db)
    // The database's free pages take a few; sooner or later a commit is refused. Each request is
    // answered and queued; the usage API's read writes the queue, so the refusal is seen at once.
    const answered: string[] = []
    let refused: Response | undefined
    for (let i = 0; i < 300 && !refused; i++) {
      const res = await ask(h)
      if (res.status === 200) answered.push(res.headers.get('request-id')!)
      else refused = res
      expect((await h.call('/v1/usage')).status).toBe(200)
    }
    expect(refused?.status).toBe(503)
    expect(refused!.headers.get('retry-after')).toBe('5')
    expect(await refused!.json()).toEqual({
      type: 'error',
      error: {
        type: 'api_error',
        message:
          'svc cannot record usage right now (its database refuses writes: a full disk, a read-only file or another process holding its lock), so it serves no model requests until it can; retry later',
      },
    })
    const onResponses = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: 'svc-max', input: 'hi' },
    })
    expect(onResponses.status).toBe(503)
    expect((await onResponses.json()).error.message).toContain('database refuses writes')
    const notReady = await h.call('/readyz', { key: null })
    expect(notReady.status).toBe(503)
    expect(await notReady.json()).toMatchObject({ status: 'not_ready', database: true, recording: false })
    const metrics = async () => (await h.call('/metrics', { key: null })).text()
    expect(await metrics()).toContain('\nsvc_ledger_refusing_writes 1\n')
    // An admin's write is refused too, as a 503 that says why (not an internal error).
    const grant = await h.call('/v1/admin/grants', {
      method: 'POST',
      headers: { authorization: 'Bearer admin-secret' },
      key: null,
      json: { account: 'default', usd: 1, source: 'too-late' },
    })
    if (grant.status !== 201) {
      expect(grant.status).toBe(503)
      expect((await grant.json()).error.message).toContain('refuses writes')
    }
    const upstreamCalls = sim.requests.length

    makeRoom(h.db)
    await until('the gateway to record again', async () => (await h.call('/readyz', { key: null })).status === 200)
    expect(await metrics()).toContain('\nsvc_ledger_refusing_writes 0\n')
    // Nothing refused reached the upstream; every answered request is in the ledger, charged, once.
    expect(sim.requests.length).toBe(upstreamCalls)
    const rows = h.db.query('SELECT id, charged_nanos FROM requests').all() as { id: string; charged_nanos: number }[]
    expect(rows.map((r) => r.id).sort()).toEqual([...answered].sort())
    for (const row of rows) expect(row.charged_nanos).toBeGreaterThan(0)
    const charged = rows.reduce((sum, r) => sum + r.charged_nanos, 0)
    const usage = await (await h.call('/v1/usage')).json()
    expect(usage.used_nanos).toBe(charged)
    const grants = h.db.query('SELECT amount_nanos, remaining_nanos FROM grants').all() as {
      amount_nanos: number
      remaining_nanos: number
    }[]
    const remaining = grants.reduce((sum, g) => sum + g.remaining_nanos, 0)
    expect(remaining).toBe(grants.reduce((sum, g) => sum + g.amount_nanos, 0) - charged)
    for (const id of answered.slice(-3)) {
      const detail = await (await h.call(`/v1/usage/requests/${id}`)).json()
      expect(detail).toMatchObject({ request_id: id, status: 'completed' })
    }

    // And it serves again.
    const again = await ask(h)
    expect(again.status).toBe(200)
  })

  test('a request waiting when the ledger closes is reported lost, once; one written after the refusal resolves', async () => {
    const lost: string[] = []
    const refusals: unknown[] = []
    const resumed: number[] = []
    const db = openDatabase(join(dir, 'close.db'))
    const ledger = createSqliteLedger(db, Date.now, {
      onRecordFailure: (id) => lost.push(id),
      onRefused: (err) => refusals.push(err),
      onResumed: (written) => resumed.push(written),
    })
    const account = await ledger.createAccount('acme')
    await ledger.addGrant({ accountId: account.id, amountNanos: 1_000_000_000, scopeCostType: 'all', source: 'admin' })
    const at = Date.now()

    fillDisk(db.$client)
    const waiting = Array.from({ length: 40 }, (_, i) => finishedRequest({ accountId: account.id, at: at + i }))
    const recorded = ledger.recordRequest(waiting[0]!)
    for (const finished of waiting.slice(1)) ledger.queueRequest(finished)
    await ledger.listAccounts() // a read writes the queue first
    expect(ledger.refusesWrites()).toBe(true)
    expect(refusals).toHaveLength(1)
    expect(databaseRefusesWrites(refusals[0])).toBe(true)

    // Room, then the retry (within a second) writes all forty; the waiting caller's promise resolves.
    makeRoom(db.$client)
    expect((await recorded).request.id).toBe(waiting[0]!.request.id)
    expect(ledger.refusesWrites()).toBe(false)
    expect(resumed).toEqual([40])

    // Full again, and closed before there is room: each waiting request is reported, once.
    fillDisk(db.$client)
    const late = Array.from({ length: 40 }, (_, i) => finishedRequest({ accountId: account.id, at: at + 100 + i }))
    for (const finished of late) ledger.queueRequest(finished)
    await ledger.listAccounts()
    expect(ledger.refusesWrites()).toBe(true)
    ledger.close()
    expect(lost.sort()).toEqual(late.map((f) => f.request.id).sort())
  })

  test('journal entries the database will not move into the tables wait there, told once, and move once there is room', async () => {
    const refusedSpreads: unknown[] = []
    let entryFailures = 0
    const db = openDatabase(join(dir, 'spread.db'))
    const ledger = createSqliteLedger(db, Date.now, {
      onSpreadRefused: (err) => refusedSpreads.push(err),
      onSpreadFailure: () => entryFailures++,
    })
    const account = await ledger.createAccount('acme')
    await ledger.addGrant({ accountId: account.id, amountNanos: 1_000_000_000, scopeCostType: 'all', source: 'admin' })
    // A lone request commits to the journal; its spread into the tables comes ~25 ms later.
    const lone = finishedRequest({ accountId: account.id, at: Date.now() })
    await ledger.recordRequest(lone)
    // A row may fit a page the tables have, so no cap on pages is sure to stop the move: a
    // read-only database (SQLITE_READONLY) is.
    db.$client.run('PRAGMA query_only = ON')
    const count = (table: string) => (db.$client.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
    for (let i = 0; i < 5; i++) expect(await ledger.getRequest(account.id, lone.request.id)).toBeUndefined()
    expect([count('ledger_journal'), count('requests')]).toEqual([1, 0])
    expect(refusedSpreads).toHaveLength(1)
    expect(entryFailures).toBe(0)
    // Charged when it was journaled: the grant already shows it.
    expect((await ledger.listGrants(account.id))[0]!.remainingNanos).toBe(1_000_000_000 - 1000)
    // No request was refused a write: the spread alone waiting turns no one away.
    expect(ledger.refusesWrites()).toBe(false)

    db.$client.run('PRAGMA query_only = OFF')
    expect((await ledger.getRequest(account.id, lone.request.id))?.request.chargedNanos).toBe(1000)
    expect([count('ledger_journal'), count('requests')]).toEqual([0, 1])
    ledger.close()
  })

  // A read-only connection refuses every write at once (SQLITE_READONLY), as a full disk refuses some.
  test('an admin’s write it refuses is a 503 to retry later, with the Retry-After the model routes give', async () => {
    const h = await gateway()
    h.db.run('PRAGMA query_only = ON')
    const grant = await h.call('/v1/admin/grants', {
      method: 'POST',
      headers: { authorization: 'Bearer admin-secret' },
      key: null,
      json: { account: 'default', usd: 1, source: 'on-a-full-disk' },
    })
    expect([grant.status, grant.headers.get('retry-after'), await grant.json()]).toEqual([
      503,
      '5',
      {
        type: 'error',
        error: {
          type: 'api_error',
          message:
            "svc's database refuses writes right now (a full disk, a read-only file or another process holding its lock): retry later",
        },
      },
    ])
    h.db.run('PRAGMA query_only = OFF')
  })

  test('the refusals that hold requests are the database’s, not a record’s', () => {
    const sqliteError = (code: string) => Object.assign(new Error(code), { code })
    for (const code of [
      'SQLITE_FULL',
      'SQLITE_IOERR_WRITE',
      'SQLITE_READONLY_DBMOVED',
      'SQLITE_BUSY',
      'SQLITE_CORRUPT',
    ])
      expect(databaseRefusesWrites(sqliteError(code))).toBe(true)
    for (const code of ['SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_MISMATCH', 'SQLITE_TOOBIG', 'SQLITE_ERROR'])
      expect(databaseRefusesWrites(sqliteError(code))).toBe(false)
    expect(databaseRefusesWrites(new TypeError('x is undefined'))).toBe(false)
    expect(databaseRefusesWrites(undefined)).toBe(false)
  })
})

test('after the database refused writes, the request answered first is charged first', async () => {
  const db = openDatabase(join(dir, 'order.db'))
  const ledger = createSqliteLedger(db, Date.now)
  const account = await ledger.createAccount('acme')
  // Pays for one of the two requests below.
  await ledger.addGrant({ accountId: account.id, amountNanos: 1000, scopeCostType: 'all', source: 'admin' })
  const at = Date.now()
  const first = finishedRequest({ accountId: account.id, at, id: 'req_first', legs: [{ costNanos: 1000 }] })
  const second = finishedRequest({ accountId: account.id, at: at + 10, id: 'req_second', legs: [{ costNanos: 1000 }] })
  db.$client.run('PRAGMA query_only = ON')
  ledger.queueRequest(first)
  await ledger.listAccounts() // a read writes the queue: refused
  expect(ledger.refusesWrites()).toBe(true)
  ledger.queueRequest(second) // answered later, waits behind the first
  db.$client.run('PRAGMA query_only = OFF')
  await ledger.listAccounts() // the queue, refused ones first, is written
  const charged = async (id: string) => (await ledger.getRequest(account.id, id))?.request.chargedNanos
  expect({ first: await charged('req_first'), second: await charged('req_second') }).toEqual({ first: 1000, second: 0 })
  ledger.close()
})
