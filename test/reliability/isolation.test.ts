// Account isolation: with real traffic from two accounts — even in a session id they both use —
// account A can read, page, filter, aggregate or rate nothing of account B's, B's feedback and
// session history do not steer A's routing, and A's key opens none of B's grants or provider keys.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHarness, type Harness, type TestResponse } from '../support/harness'
import { startSimulator } from '../support/simulator'
import { isAnthropicError } from './helpers'

const SIM_KEY = 'sim-key-isolation'
// No key check upstream: B's own provider key must get through too (which key was sent is asserted).
const sim = startSimulator()
afterAll(() => sim.stop())

const admin = { authorization: 'Bearer admin-secret' }

async function ask(h: Harness, key: string, session: string, content: string): Promise<string> {
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    key,
    headers: { 'anthropic-version': '2023-06-01', 'x-session-id': session },
    json: { model: 'svc-pro', max_tokens: 50, messages: [{ role: 'user', content }] },
  })
  expect(res.status).toBe(200)
  await res.json()
  return res.headers.get('x-request-id')!
}

const notFound = async (res: TestResponse) => {
  expect(res.status).toBe(404)
  const body = await res.json()
  expect(isAnthropicError(body)).toBe(true)
  expect(body.error.type).toBe('not_found_error')
}

describe('account isolation', () => {
  test('A sees, pages, filters, aggregates and rates nothing of B’s; B’s history does not steer A', async () => {
    const h = await createHarness({
      grantUsd: 5,
      env: { SIM_KEY },
      config: {
        catalog: { builtin: false },
        providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
        models: [
          {
            id: 'claude-i',
            provider: 'anth',
            upstream_model: 'claude-i-up',
            profiles: ['pro'],
            quality: 80,
            input_usd_per_mtok: 3,
            output_usd_per_mtok: 15,
          },
        ],
      },
    })
    sim.setScenario('claude-i-up', { text: 'ok', usage: { input: 10, output: 1 } })
    const keyA = h.key

    // Account B, its key, its grant and its own provider key, through the admin API.
    const post = (path: string, json: Record<string, unknown>) =>
      h.call(path, { method: 'POST', key: null, headers: admin, json })
    expect((await post('/v1/admin/accounts', { name: 'bob' })).status).toBe(201)
    const keyB = (await (await post('/v1/admin/keys', { account: 'bob', name: 'laptop' })).json()).key as string
    const grantB = (await (await post('/v1/admin/grants', { account: 'bob', usd: 3, source: 'bob-credit' })).json())
      .id as string
    expect(
      (await post('/v1/admin/provider-keys', { account: 'bob', provider: 'anth', key: 'sk-bob-secret-4242' })).status,
    ).toBe(201)

    // Traffic: both accounts use the session id "shared"; each also has a session of its own.
    const bShared = [await ask(h, keyB, 'shared', 'b one'), await ask(h, keyB, 'shared', 'b two')]
    const bOwn = await ask(h, keyB, 'bob-only', 'b three')
    // B rates its model down, hard: B's own ranking moves.
    for (const id of [...bShared, bOwn]) {
      const r = await h.call(`/v1/usage/requests/${id}/feedback`, {
        method: 'POST',
        key: keyB,
        json: { rating: 'down', reason: 'too_expensive' },
      })
      expect(r.status).toBe(201)
    }
    const aShared = await ask(h, keyA, 'shared', 'a one')
    const aOwn = await ask(h, keyA, 'alice-only', 'a two')
    const bIds = [...bShared, bOwn]

    // A's first request in "shared" did not stick to what served B there, and B's feedback did not nudge A.
    const aDetail = await (await h.call(`/v1/usage/requests/${aShared}`)).json()
    expect(aDetail.provider_ranks).toEqual([
      expect.objectContaining({ model_id: 'claude-i', nudge: 0, reason: 'eligible' }),
    ])
    const bLater = await ask(h, keyB, 'shared', 'b four')
    const bDetail = await (await h.call(`/v1/usage/requests/${bLater}`, { key: keyB })).json()
    expect(bDetail.provider_ranks[0].nudge).toBe(-10)
    expect(bDetail.provider_ranks[0].reason).toContain('session sticks to the model that served it')
    bIds.push(bLater)

    // Reading B's requests, or rating them: 404 as for an id that does not exist.
    for (const id of bIds) {
      await notFound(await h.call(`/v1/usage/requests/${id}`))
      await notFound(await h.call(`/v1/usage/requests/${id}/feedback`, { method: 'POST', json: { rating: 'up' } }))
    }
    // B's records are untouched by A's attempts.
    const bFeedback = await (await h.call(`/v1/usage/requests/${bShared[0]}`, { key: keyB })).json()
    expect(bFeedback.feedback.map((f: { rating: string }) => f.rating)).toEqual(['down'])

    // Listing, paging with B's cursor, and filtering by B's session: only A's rows.
    const list = await (await h.call('/v1/usage/requests?limit=200')).json()
    expect(list.items.map((r: { request_id: string }) => r.request_id).toSorted()).toEqual([aShared, aOwn].toSorted())
    const bRow = (await (await h.call('/v1/usage/requests?limit=1', { key: keyB })).json()).items[0]
    const paged = await (
      await h.call(
        `/v1/usage/requests?before=${encodeURIComponent(bRow.created_at)}&before_id=${bRow.request_id}&limit=200`,
      )
    ).json()
    for (const item of paged.items) expect(bIds).not.toContain(item.request_id)
    expect(await (await h.call('/v1/usage/requests?session_id=bob-only')).json()).toEqual({
      items: [],
      has_more: false,
    })
    const sharedRows = await (await h.call('/v1/usage/requests?session_id=shared')).json()
    expect(sharedRows.items.map((r: { request_id: string }) => r.request_id)).toEqual([aShared])

    // Session aggregates: a session id both use counts only A's requests; B's own session is unknown to A.
    const sessions = await (await h.call('/v1/usage/sessions?ids=shared,bob-only,alice-only')).json()
    const byId = Object.fromEntries(sessions.items.map((s: { session_id: string }) => [s.session_id, s]))
    expect(Object.keys(byId).toSorted()).toEqual(['alice-only', 'shared'])
    expect(byId.shared).toMatchObject({ request_count: 1, total_cost_nanos: aDetail.total_cost_nanos })
    const sessionList = await (await h.call('/v1/usage/sessions/list')).json()
    expect(sessionList.map((s: { session_id: string }) => s.session_id).toSorted()).toEqual(['alice-only', 'shared'])

    // Credit: A sees its own grant and legs only; B's charges did not touch A's grant.
    const usageA = await (await h.call('/v1/usage?limit=200')).json()
    expect(usageA.grants.map((g: { id: string }) => g.id)).not.toContain(grantB)
    expect(usageA.grants).toHaveLength(1)
    expect(usageA.limit_nanos).toBe(5_000_000_000)
    for (const e of usageA.recent_events) expect([aShared, aOwn]).toContain(e.request_id)
    expect(usageA.recent_events).toHaveLength(2)
    const whoami = await (await h.call('/v1/auth/whoami')).json()
    expect(whoami.account.id).toBe(h.accountId)

    // A's key is not an admin token: B's grants, keys and provider keys stay closed.
    for (const path of [
      '/v1/admin/provider-keys',
      '/v1/admin/provider-keys?account=bob',
      '/v1/admin/grants?account=bob',
      '/v1/admin/keys?account=bob',
      '/v1/admin/usage?account=bob',
      '/v1/admin/accounts',
    ]) {
      const res = await h.call(path)
      expect(res.status).toBe(401)
      const text = await res.text()
      expect(isAnthropicError(JSON.parse(text))).toBe(true)
      expect(text).not.toContain('4242')
      expect(text).not.toContain(grantB)
    }
    const grab = await h.call('/v1/admin/grants', { method: 'POST', json: { account: 'default', usd: 100 } })
    expect(grab.status).toBe(401)
    expect((await (await h.call('/v1/usage')).json()).limit_nanos).toBe(5_000_000_000)
    // B's key is served B's own provider key; A's requests still go out on the platform's.
    const upstreamKeys = sim.requests.map((r) => r.headers['x-api-key'])
    expect(upstreamKeys.filter((k) => k === 'sk-bob-secret-4242')).toHaveLength(4)
    expect(upstreamKeys.filter((k) => k === SIM_KEY)).toHaveLength(2)
  })
})
