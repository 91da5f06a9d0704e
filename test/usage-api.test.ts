import { describe, expect, test } from 'bun:test'
import { createHarness } from './support/harness'
import { seedRequest } from './support/ledger-fixtures'

const T0 = Date.parse('2026-11-22T10:00:00.000Z')

describe('GET /v1/usage', () => {
  test('credit position, grants and recent legs; costs charged from the grant', async () => {
    const h = await createHarness({ grantUsd: 5, now: T0 })
    await seedRequest(h.deps.ledger, {
      accountId: h.accountId,
      at: T0 + 1,
      id: 'req1',
      legs: [{ costNanos: 1234, input: 7, cached: 3, cacheCreation: 2, output: 9 }],
    })
    const res = await h.call('/v1/usage')
    expect(res.status).toBe(200)
    const body = await res.json()
    expect(body).toEqual({
      limit_nanos: 5_000_000_000,
      used_nanos: 1234,
      remaining_nanos: 5_000_000_000 - 1234,
      grants: [
        {
          id: expect.stringMatching(/^grant_/),
          amount_nanos: 5_000_000_000,
          remaining_nanos: 5_000_000_000 - 1234,
          scope_cost_type: 'all',
          source: 'starter',
          created_at: '2026-11-22T10:00:00.000Z',
        },
      ],
      recent_events: [
        {
          id: 'leg_req1_1',
          request_id: 'req1',
          attempt: 1,
          model_id: 'claude-sonnet-4-5',
          provider_id: 'anthropic',
          upstream_model: 'claude-sonnet-4-5-20250929',
          committed: true,
          estimated: false,
          outcome: 'ok',
          error: null,
          input_tokens: 7,
          cached_input_tokens: 3,
          cache_creation_input_tokens: 2,
          cache_creation_1h_input_tokens: 0,
          output_tokens: 9,
          web_search_requests: 0,
          cost_nanos: 1234,
          charged_nanos: 1234,
          byok: false,
          created_at: '2026-11-22T10:00:00.001Z',
          ended_at: '2026-11-22T10:00:00.006Z',
        },
      ],
    })
  })

  test('limit bounds: default 20, 1..200, recent_events capped', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    for (let i = 0; i < 25; i++) await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + i })
    expect((await (await h.call('/v1/usage')).json()).recent_events).toHaveLength(20)
    expect((await (await h.call('/v1/usage?limit=3')).json()).recent_events).toHaveLength(3)
    expect((await (await h.call('/v1/usage?limit=200')).json()).recent_events).toHaveLength(25)
    for (const bad of ['0', '201', '-1', 'abc', '1.5']) {
      const res = await h.call(`/v1/usage?limit=${bad}`)
      expect(res.status).toBe(400)
      const body = await res.json()
      expect(body.type).toBe('error')
      expect(body.error.type).toBe('invalid_request_error')
      expect(body.error.message).toContain('limit must be')
      expect(body.error.message).toContain('200')
    }
  })

  test('answers with no credit left: usage never passes the quota gate', async () => {
    const h = await createHarness({ now: T0 })
    const res = await h.call('/v1/usage')
    expect(res.status).toBe(200)
    expect(await res.json()).toMatchObject({ limit_nanos: 0, used_nanos: 0, grants: [] })
  })

  test('authentication: missing, malformed, unknown and x-api-key-only are 401 in the error shape', async () => {
    const h = await createHarness({ now: T0 })
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Basic abc' },
      { authorization: 'Bearer svc-unknownunknownunknown' },
      { 'x-api-key': h.key },
    ]
    for (const headers of cases) {
      const res = await h.call('/v1/usage', { key: null, headers })
      expect(res.status).toBe(401)
      expect((await res.json()).error.type).toBe('authentication_error')
    }
  })

  test('the Bearer scheme is read in any case, as HTTP has it', async () => {
    const h = await createHarness({ now: T0 })
    for (const scheme of ['bearer', 'BEARER', 'bEaReR']) {
      const res = await h.call('/v1/usage', { key: null, headers: { authorization: `${scheme} ${h.key}` } })
      expect(res.status).toBe(200)
    }
  })

  test('a revoked key stops working at once, also when the CLI (another connection) revokes it', async () => {
    const h = await createHarness({ now: T0 })
    expect((await h.call('/v1/usage')).status).toBe(200)
    const keys = await h.deps.ledger.listApiKeys(h.accountId)
    // Revoke through the ledger directly: the authenticator's cache must not keep the key alive.
    await h.deps.ledger.revokeApiKey(keys[0]!.id)
    h.deps.auth.forgetKey(keys[0]!.id)
    expect((await h.call('/v1/usage')).status).toBe(401)
  })
})

describe('GET /v1/usage/requests', () => {
  test('pages through colliding timestamps with before + before_id, newest first, no row lost or repeated', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    const ids: string[] = []
    // 7 requests share each millisecond: ordering and the cursor must fall back on the id.
    for (let i = 0; i < 21; i++) {
      const r = await seedRequest(h.deps.ledger, {
        accountId: h.accountId,
        at: T0 + Math.floor(i / 7),
        id: `r${String(i).padStart(2, '0')}`,
      })
      ids.push(r.id)
    }
    const seen: string[] = []
    let url = '/v1/usage/requests?limit=4'
    let pages = 0
    for (;;) {
      const res = await h.call(url)
      expect(res.status).toBe(200)
      const page = await res.json()
      pages++
      seen.push(...page.items.map((i: { request_id: string }) => i.request_id))
      if (!page.has_more) break
      const last = page.items.at(-1)
      url = `/v1/usage/requests?limit=4&before=${encodeURIComponent(last.created_at)}&before_id=${last.request_id}`
    }
    expect(pages).toBe(6)
    expect(seen).toEqual([...ids].reverse())
  })

  test('default page size 50, session filter, bounds and cursor errors', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    for (let i = 0; i < 55; i++)
      await seedRequest(h.deps.ledger, {
        accountId: h.accountId,
        at: T0 + i,
        sessionId: i % 5 === 0 ? 'sess-a' : undefined,
      })
    const page = await (await h.call('/v1/usage/requests')).json()
    expect(page.items).toHaveLength(50)
    expect(page.has_more).toBe(true)
    const filtered = await (await h.call('/v1/usage/requests?session_id=sess-a')).json()
    expect(filtered.items).toHaveLength(11)
    // Ids are recorded trimmed: a filter with spaces around finds the same rows.
    expect(await (await h.call('/v1/usage/requests?session_id=%20sess-a%20')).json()).toEqual(filtered)
    expect(filtered.items).toHaveLength(11)
    expect(filtered.items.every((i: { session_id: string }) => i.session_id === 'sess-a')).toBe(true)
    expect(filtered.has_more).toBe(false)

    const cases: [string, string][] = [
      ['/v1/usage/requests?limit=0', 'limit must be'],
      ['/v1/usage/requests?limit=201', 'limit must be'],
      ['/v1/usage/requests?before=2026-11-22T10:00:00Z', 'before and before_id go together'],
      ['/v1/usage/requests?before_id=x', 'before and before_id go together'],
      ['/v1/usage/requests?before=yesterday&before_id=x', 'before must be an RFC 3339 timestamp'],
    ]
    for (const [url, message] of cases) {
      const res = await h.call(url)
      expect(res.status).toBe(400)
      expect((await res.json()).error.message).toContain(message)
    }
  })
})

describe('GET /v1/usage/requests/{id}', () => {
  test('filters by how a request ended and by the model that served it; a status svc never records is a 400', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    const seeded: [string, 'completed' | 'failed' | 'aborted', string][] = [
      ['r1', 'completed', 'alpha'],
      ['r2', 'failed', 'alpha'],
      ['r3', 'completed', 'beta'],
      ['r4', 'aborted', 'beta'],
      ['r5', 'failed', 'beta'],
    ]
    for (const [id, status, modelId] of seeded) {
      await seedRequest(h.deps.ledger, {
        accountId: h.accountId,
        at: T0 + Number(id.slice(1)),
        id,
        status,
        legs: [{ modelId }],
      })
    }
    const ids = async (query: string) =>
      (await (await h.call(`/v1/usage/requests?${query}`)).json()).items.map(
        (r: { request_id: string }) => r.request_id,
      )
    expect(await ids('status=failed')).toEqual(['r5', 'r2'])
    expect(await ids('model=beta')).toEqual(['r5', 'r4', 'r3'])
    expect(await ids('status=completed&model=beta')).toEqual(['r3'])
    // Filters and the cursor together: the page after r5 among beta's.
    expect(await ids('model=beta&limit=1&before=2026-11-22T10:00:00.005Z&before_id=r5')).toEqual(['r4'])
    const bad = await h.call('/v1/usage/requests?status=in_progress')
    expect(bad.status).toBe(400)
    expect((await bad.json()).error.message).toBe('status must be one of completed, failed, aborted (got in_progress)')
  })
  test('the record with legs and charges; 404 for unknown ids and for another account', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    await seedRequest(h.deps.ledger, {
      accountId: h.accountId,
      at: T0,
      id: 'reqA',
      sessionId: 's1',
      agentId: 'agent-7',
      sessionSource: 'claude-code',
      legs: [{ outcome: 'failed', costNanos: 0, input: 0, output: 0 }, { costNanos: 5000 }],
    })
    const res = await h.call('/v1/usage/requests/reqA')
    expect(res.status).toBe(200)
    const record = await res.json()
    expect(record).toMatchObject({
      request_id: 'reqA',
      routing_mode: 'pro',
      selected_model_id: 'claude-sonnet-4-5',
      total_cost_nanos: 5000,
      charged_nanos: 5000,
      total_input_tokens: 10,
      total_output_tokens: 5,
      session_id: 's1',
      agent_id: 'agent-7',
      session_source: 'claude-code',
      byok: false,
      provider_ranks: [],
      attempts: 2,
    })
    expect(record.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['failed', 'ok'])
    expect(record.grant_charges).toEqual([
      {
        grant_id: expect.stringMatching(/^grant_/),
        usage_event_id: 'leg_reqA_2',
        cost_type: 'model_usage',
        amount_nanos: 5000,
      },
    ])

    expect((await h.call('/v1/usage/requests/nope')).status).toBe(404)
    const other = await h.deps.admin.createAccount('bob')
    const { key: bobKey } = await h.deps.admin.createKey({ account: other.name })
    const asBob = await h.call('/v1/usage/requests/reqA', { key: bobKey })
    expect(asBob.status).toBe(404)
    expect((await asBob.json()).error.type).toBe('not_found_error')
    const bobList = await (await h.call('/v1/usage/requests', { key: bobKey })).json()
    expect(bobList).toEqual({ items: [], has_more: false })
  })
})

describe('sessions', () => {
  test('sessions?ids= aggregates; at most 100 ids; list is most recent first with limit bounds', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    await seedRequest(h.deps.ledger, {
      accountId: h.accountId,
      at: T0,
      sessionId: 'old',
      sessionSource: 'codex',
      legs: [{ costNanos: 100 }],
    })
    await seedRequest(h.deps.ledger, {
      accountId: h.accountId,
      at: T0 + 10,
      sessionId: 'new',
      sessionSource: 'claude-code',
      legs: [{ costNanos: 7 }],
    })
    await seedRequest(h.deps.ledger, {
      accountId: h.accountId,
      at: T0 + 20,
      sessionId: 'old',
      sessionSource: 'codex',
      legs: [{ costNanos: 200 }],
    })
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 30 })

    const agg = await (await h.call('/v1/usage/sessions?ids=old,new,unknown')).json()
    const byId = Object.fromEntries(agg.items.map((s: { session_id: string }) => [s.session_id, s]))
    expect(byId.old).toMatchObject({
      request_count: 2,
      total_cost_nanos: 300,
      session_source: 'codex',
      latest_at: '2026-11-22T10:00:00.020Z',
    })
    expect(byId.new).toMatchObject({ request_count: 1, total_cost_nanos: 7 })
    expect(byId.unknown).toBeUndefined()

    const list = await (await h.call('/v1/usage/sessions/list')).json()
    expect(list.map((s: { session_id: string }) => s.session_id)).toEqual(['old', 'new'])
    expect(
      (await (await h.call('/v1/usage/sessions/list?limit=1')).json()).map((s: { session_id: string }) => s.session_id),
    ).toEqual(['old'])

    // A row recorded before every session had a source (no source stored) reads as api.
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 5, sessionId: 'legacy' })
    const legacy = await (await h.call('/v1/usage/sessions?ids=legacy')).json()
    expect(legacy.items).toEqual([expect.objectContaining({ session_id: 'legacy', session_source: 'api' })])

    // An id with a comma in it (a client's own) is found by the whole value, beside its parts.
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 6, sessionId: 'proj-a,task-7' })
    const comma = await (await h.call('/v1/usage/sessions?ids=proj-a%2Ctask-7')).json()
    expect(comma.items).toEqual([expect.objectContaining({ session_id: 'proj-a,task-7', request_count: 1 })])
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + 7, sessionId: 'task-7,' })
    const trailing = await (await h.call('/v1/usage/sessions?ids=task-7%2C')).json()
    expect(trailing.items).toEqual([expect.objectContaining({ session_id: 'task-7,' })])

    const tooMany = Array.from({ length: 101 }, (_, i) => `s${i}`).join(',')
    const res = await h.call(`/v1/usage/sessions?ids=${tooMany}`)
    expect(res.status).toBe(400)
    expect((await res.json()).error.message).toContain('at most 100')
    expect((await h.call(`/v1/usage/sessions?ids=${tooMany.split(',').slice(0, 100).join(',')}`)).status).toBe(200)
    expect((await h.call('/v1/usage/sessions')).status).toBe(400)
    for (const bad of ['0', '101']) {
      const r = await h.call(`/v1/usage/sessions/list?limit=${bad}`)
      expect(r.status).toBe(400)
      expect((await r.json()).error.message).toContain('from 1 to 100')
    }
  })

  test('without a limit the list gives the 30 most recent sessions', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    for (let i = 0; i < 35; i++)
      await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 + i, sessionId: `s${i}` })
    const list = await (await h.call('/v1/usage/sessions/list')).json()
    expect(list.map((s: { session_id: string }) => s.session_id)).toEqual(
      Array.from({ length: 30 }, (_, i) => `s${34 - i}`),
    )
  })
})

describe('POST /v1/usage/requests/{id}/feedback', () => {
  test('records rating, reason and comment; validates each; 404 for another account', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0, id: 'reqF' })
    const res = await h.call('/v1/usage/requests/reqF/feedback', {
      method: 'POST',
      json: { rating: 'down', reason: 'stronger_model_needed', comment: 'missed the bug' },
    })
    expect(res.status).toBe(201)
    expect(await res.json()).toEqual({
      id: expect.stringMatching(/^fb_/),
      request_id: 'reqF',
      rating: 'down',
      reason: 'stronger_model_needed',
      comment: 'missed the bug',
      created_at: '2026-11-22T10:00:00.000Z',
    })
    const record = await (await h.call('/v1/usage/requests/reqF')).json()
    expect(record.feedback).toHaveLength(1)
    const family = await h.call('/v1/usage/requests/reqF/feedback', {
      method: 'POST',
      json: { comment: '👨‍👩‍👧'.repeat(4000) },
    })
    expect(family.status).toBe(201)

    const bad: [unknown, string][] = [
      [{ rating: 'meh' }, 'rating: must be one of up, down'],
      [{ reason: 'because' }, 'reason: must be one of'],
      [{ comment: 'x'.repeat(4001) }, 'comment must be at most 4,000 characters (got 4,001)'],
      // Characters as a reader counts them: a family emoji is one (five code points, eight UTF-16 units).
      [{ comment: '👨‍👩‍👧'.repeat(4001) }, 'comment must be at most 4,000 characters (got 4,001)'],
      [{ comment: 'x'.repeat(100_000) }, 'comment must be at most 4,000 characters'],
      [{}, 'feedback needs a rating'],
      // A blank comment is no comment.
      [{ comment: '  ' }, 'feedback needs a rating'],
      // The body's schema is closed: a misspelt key is refused, not silently dropped.
      [{ rating: 'up', raiting: 'down' }, 'raiting'],
    ]
    for (const [json, message] of bad) {
      const r = await h.call('/v1/usage/requests/reqF/feedback', { method: 'POST', json })
      expect(r.status).toBe(400)
      expect((await r.json()).error.message).toContain(message)
    }
    const broken = await h.call('/v1/usage/requests/reqF/feedback', {
      method: 'POST',
      body: '{"rating":',
      headers: { 'content-type': 'application/json' },
    })
    expect(broken.status).toBe(400)
    expect((await broken.json()).error.message).toBe('request body is not valid JSON')

    const bob = await h.deps.admin.createAccount('bob')
    const { key } = await h.deps.admin.createKey({ account: bob.name })
    expect(
      (await h.call('/v1/usage/requests/reqF/feedback', { method: 'POST', json: { rating: 'up' }, key })).status,
    ).toBe(404)
    expect((await h.call('/v1/usage/requests/reqF')).status).toBe(200)
    expect((await (await h.call('/v1/usage/requests/reqF')).json()).feedback).toHaveLength(2)
  })

  test('a reason alone is feedback enough', async () => {
    const h = await createHarness({ grantUsd: 1, now: T0 })
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0, id: 'reqR' })
    const res = await h.call('/v1/usage/requests/reqR/feedback', { method: 'POST', json: { reason: 'too_slow' } })
    expect(res.status).toBe(201)
    expect(await res.json()).toMatchObject({ rating: null, reason: 'too_slow', comment: null })
  })
})

describe('errors on any route', () => {
  test('unknown route 404, wrong method 405, oversized body 413 — all in the error shape', async () => {
    const h = await createHarness({ now: T0 })
    const notFound = await h.call('/v2/nothing')
    expect(notFound.status).toBe(404)
    expect(await notFound.json()).toEqual({
      type: 'error',
      error: { type: 'not_found_error', message: 'no route GET /v2/nothing' },
    })

    const wrongMethod = await h.call('/v1/usage', { method: 'DELETE' })
    expect(wrongMethod.status).toBe(405)
    expect(wrongMethod.headers.get('allow')).toBe('GET')
    expect((await wrongMethod.json()).type).toBe('error')

    h.config.server.maxBodyBytes = 2048
    const app2 = (await import('../src/app')).createApp(h.deps)
    const big = await app2.handle(
      new Request('http://localhost/v1/usage/requests/x/feedback', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': '5015', authorization: `Bearer ${h.key}` },
        body: JSON.stringify({ comment: 'x'.repeat(5000) }),
      }),
    )
    expect(big.status).toBe(413)
    expect(((await big.json()) as { error: { type: string } }).error.type).toBe('request_too_large')
  })

  // Elysia gives a path id that does not decode as null: the 404 said "no request null".
  test('an id whose percent-encoding does not decode is named as sent', async () => {
    const h = await createHarness({ now: T0 })
    const named = async (path: string, init: { method?: string; json?: unknown } = {}) =>
      JSON.stringify(await (await h.call(path, { headers: { 'anthropic-version': '2023-06-01' }, ...init })).json())
    expect(await named('/v1/usage/requests/%FF')).toContain('no request %FF in this account')
    expect(await named('/v1/usage/requests/%FF/feedback', { method: 'POST', json: { rating: 'up' } })).toContain(
      'no request %FF in this account',
    )
    expect(await named('/compat-a/v1/models/%E0%A4%A')).toContain('no model %E0%A4%A')
    expect(await named('/compat-b/v1/responses/%FF')).toContain('response %FF is not kept')
    const revoke = await h.call('/v1/admin/keys/%FF/revoke', {
      method: 'POST',
      key: null,
      headers: { authorization: 'Bearer admin-secret' },
    })
    expect(JSON.stringify(await revoke.json())).toContain('no API key with id %FF')
    expect(JSON.stringify(await (await h.call('/dashboard/%FF', { key: null })).json())).toContain(
      'no dashboard file %FF',
    )
  })

  test('a gateway bug: 500 with the id its log line names, as its message says', async () => {
    const h = await createHarness({ now: T0 })
    const logged: string[] = []
    h.deps.log = (await import('../src/lib/log')).createLogger('info', (line) => logged.push(line))
    h.deps.ledger.listRequests = () => {
      throw new TypeError('a bug')
    }
    const res = await h.call('/v1/usage/requests')
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'internal error in the gateway; the request id identifies it in the logs' },
    })
    const id = res.headers.get('x-request-id')!
    expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/)
    const line = JSON.parse(logged.find((l) => l.includes('unhandled error'))!)
    expect(line).toMatchObject({ level: 'error', msg: 'unhandled error', request_id: id, error: 'TypeError: a bug' })
  })

  // A model request's key is checked, and its room in the memory budget taken, before its body is
  // read where the body is large or has to wait: a bug there was a 500 with no id and no log line.
  test('a gateway bug before a model request’s body is read: the same 500, id and log line', async () => {
    const h = await createHarness({ now: T0 })
    const logged: string[] = []
    h.deps.log = (await import('../src/lib/log')).createLogger('info', (line) => logged.push(line))
    const large = JSON.stringify({ model: 'svc-pro', input: 'x'.repeat(70 * 1024) })
    const small = JSON.stringify({ model: 'svc-pro', input: 'hi' })
    const post = (body: string) =>
      h.call('/compat-b/v1/responses', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': String(body.length) },
        body,
      })
    const authenticate = h.deps.auth.authenticate
    h.deps.auth.authenticate = () => Promise.reject(new TypeError('a bug in auth'))
    const screened = await post(large)
    h.deps.auth.authenticate = authenticate
    h.deps.admission.admitBeforeBody = () => Promise.reject(new TypeError('a bug in admission'))
    const admitted = await post(small)
    for (const [res, bug] of [
      [screened, 'TypeError: a bug in auth'],
      [admitted, 'TypeError: a bug in admission'],
    ] as const) {
      expect(res.status).toBe(500)
      expect((await res.json()).error).toMatchObject({
        type: 'server_error',
        message: expect.stringContaining('the request id identifies it in the logs'),
      })
      const id = res.headers.get('x-request-id')!
      expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/)
      expect(logged.map((l) => JSON.parse(l))).toContainEqual(
        expect.objectContaining({ msg: 'unhandled error', request_id: id, error: bug }),
      )
    }
  })
})
