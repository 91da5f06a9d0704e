// GET /v1/usage/spend: buckets, grouping, totals and cache savings asserted exactly on seeded
// legs; the window's bounds; account isolation. Also the sessions list's keyset cursor.
import { describe, expect, test } from 'bun:test'
import { createHarness } from './support/harness'
import { seedRequest } from './support/ledger-fixtures'

const H = 3_600_000
const D = 24 * H
/** Wednesday noon, UTC: day buckets start at midnight UTC. */
const NOW = Date.parse('2026-11-25T12:30:00.000Z')
const DAY0 = Date.parse('2026-11-25T00:00:00.000Z')

const point = (t: string, p: Partial<Record<string, number>>) => ({
  t,
  cost_nanos: 0,
  requests: 0,
  input_tokens: 0,
  cached_input_tokens: 0,
  cache_creation_input_tokens: 0,
  output_tokens: 0,
  web_search_requests: 0,
  ...p,
})

/** Three days of traffic over two models, two providers and two routing modes, and a fallback. */
async function seeded() {
  const h = await createHarness({ grantUsd: 100, now: NOW })
  const seed = (at: number, opts: Parameters<typeof seedRequest>[1] extends infer O ? Partial<O> : never) =>
    seedRequest(h.deps.ledger, { accountId: h.accountId, at, ...opts })
  // today, 10:00–10:59
  await seed(DAY0 + 10 * H, {
    id: 'a1',
    legs: [{ costNanos: 100, input: 10, cached: 1000, cacheCreation: 100, output: 5 }],
  })
  await seed(DAY0 + 10 * H + 59 * 60_000, {
    id: 'a2',
    routingMode: 'max',
    legs: [{ costNanos: 200, input: 20, output: 7 }],
  })
  // today, 11:00: a fallback — a failed leg on one model, then a served leg on another
  await seed(DAY0 + 11 * H, {
    id: 'a3',
    legs: [
      { modelId: 'gpt-5.1', providerId: 'openai', outcome: 'failed', costNanos: 0, input: 0, output: 0 },
      { costNanos: 300, input: 30, output: 9 },
    ],
  })
  // yesterday and the day before
  await seed(DAY0 - D + 5 * H, {
    id: 'b1',
    legs: [{ modelId: 'gpt-5.1', providerId: 'openai', costNanos: 1000, input: 100, cached: 50, output: 20 }],
  })
  await seed(DAY0 - 2 * D + 23 * H, {
    id: 'c1',
    routingMode: 'ultra_saver',
    legs: [{ modelId: 'retired-model', providerId: 'acme', costNanos: 7, input: 1, cached: 400, output: 1 }],
  })
  // outside every window below: eight days ago
  await seed(DAY0 - 8 * D, { id: 'old', legs: [{ costNanos: 999_999 }] })
  return h
}

describe('GET /v1/usage/spend', () => {
  test('default: day buckets by model over the 7 whole UTC days ending with today', async () => {
    const h = await seeded()
    const res = await h.call('/v1/usage/spend')
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual({
      bucket: 'day',
      group_by: 'model',
      since: '2026-11-19T00:00:00.000Z',
      until: '2026-11-26T00:00:00.000Z',
      series: [
        {
          key: 'gpt-5.1',
          points: [
            point('2026-11-24T00:00:00.000Z', {
              cost_nanos: 1000,
              requests: 1,
              input_tokens: 100,
              cached_input_tokens: 50,
              output_tokens: 20,
            }),
            // the fallback's failed leg: a request under this model, at no cost
            point('2026-11-25T00:00:00.000Z', { requests: 1 }),
          ],
        },
        {
          key: 'claude-sonnet-4-5',
          points: [
            point('2026-11-25T00:00:00.000Z', {
              cost_nanos: 600,
              requests: 3,
              input_tokens: 60,
              cached_input_tokens: 1000,
              cache_creation_input_tokens: 100,
              output_tokens: 21,
            }),
          ],
        },
        {
          key: 'retired-model',
          points: [
            point('2026-11-23T00:00:00.000Z', {
              cost_nanos: 7,
              requests: 1,
              input_tokens: 1,
              cached_input_tokens: 400,
              output_tokens: 1,
            }),
          ],
        },
      ],
      // a3 has legs under two models but is one request
      totals: {
        cost_nanos: 1607,
        requests: 5,
        input_tokens: 161,
        cached_input_tokens: 1450,
        cache_creation_input_tokens: 100,
        output_tokens: 42,
        web_search_requests: 0,
      },
      // claude-sonnet-4-5: 1000 reads × (3000 − 300) nanos; 100 writes × (3750 − 3000).
      // gpt-5 (openai): 50 reads at its catalog prices; retired-model has no price: left out.
      cache_savings_nanos: 1000 * 2700 + 50 * (1250 - 125),
      cache_write_premium_nanos: 100 * 750,
      cache_unpriced_tokens: 400,
    })
  })

  test('hour buckets by provider: a bucket is [start, start + 1 h), the window [since, until)', async () => {
    const h = await seeded()
    const body = await (
      await h.call(
        '/v1/usage/spend?bucket=hour&group_by=provider&since=2026-11-25T10:00:00Z&until=2026-11-25T11:00:00.001Z',
      )
    ).json()
    expect(body.series).toEqual([
      {
        key: 'anthropic',
        points: [
          point('2026-11-25T10:00:00.000Z', {
            cost_nanos: 300,
            requests: 2,
            input_tokens: 30,
            cached_input_tokens: 1000,
            cache_creation_input_tokens: 100,
            output_tokens: 12,
          }),
          point('2026-11-25T11:00:00.000Z', { cost_nanos: 300, requests: 1, input_tokens: 30, output_tokens: 9 }),
        ],
      },
      { key: 'openai', points: [point('2026-11-25T11:00:00.000Z', { requests: 1 })] },
    ])
    expect(body.totals.requests).toBe(3)
    // until is exclusive: ending at 11:00:00.000 leaves a3 out
    const before = await (
      await h.call('/v1/usage/spend?bucket=hour&since=2026-11-25T10:00:00Z&until=2026-11-25T11:00:00Z')
    ).json()
    expect(before.totals).toMatchObject({ cost_nanos: 300, requests: 2 })
    // default hour window: the 24 whole hours ending with the current one
    const fallback = await (await h.call('/v1/usage/spend?bucket=hour')).json()
    expect([fallback.since, fallback.until]).toEqual(['2026-11-24T13:00:00.000Z', '2026-11-25T13:00:00.000Z'])
    expect(fallback.totals.cost_nanos).toBe(600)
  })

  test('by routing mode: the mode of the request each leg belongs to', async () => {
    const h = await seeded()
    const body = await (await h.call('/v1/usage/spend?group_by=routing_mode&since=2026-11-20T00:00:00Z')).json()
    expect(
      body.series.map((s: { key: string; points: { cost_nanos: number }[] }) => [
        s.key,
        s.points.map((p) => p.cost_nanos),
      ]),
    ).toEqual([
      ['pro', [1000, 400]],
      ['max', [200]],
      ['ultra_saver', [7]],
    ])
  })

  test('bounds: 7 days of hours, 90 days of days, since before until, known values; 400 names the bound', async () => {
    const h = await seeded()
    const ok = async (q: string) => expect((await h.call(`/v1/usage/spend?${q}`)).status).toBe(200)
    const bad = async (q: string, message: RegExp) => {
      const res = await h.call(`/v1/usage/spend?${q}`)
      expect(res.status).toBe(400)
      const body = await res.json()
      expect(body.error.type).toBe('invalid_request_error')
      expect(body.error.message).toMatch(message)
    }
    await ok('bucket=hour&since=2026-11-18T12:00:00Z&until=2026-11-25T12:00:00Z')
    await bad(
      'bucket=hour&since=2026-11-18T11:59:59Z&until=2026-11-25T12:00:00Z',
      // A second over reads as over, not as "7 days".
      /spans 7 days, 1 minute; with bucket=hour the range is at most 7 days/,
    )
    await ok('bucket=day&since=2026-08-27T00:00:00Z&until=2026-11-25T00:00:00Z')
    await bad(
      'bucket=day&since=2026-08-26T00:00:00Z&until=2026-11-25T00:00:00Z',
      /spans 91 days; with bucket=day the range is at most 90 days/,
    )
    await bad('since=2026-08-01T00:00:00Z', /at most 90 days/) // until defaults to the end of today
    await bad('since=2026-11-25T00:00:00Z&until=2026-11-25T00:00:00Z', /since must be before until/)
    await bad('bucket=week', /bucket must be one of hour, day \(got week\)/)
    await bad('group_by=agent', /group_by must be one of model, provider, routing_mode/)
    await bad('since=yesterday', /since must be an RFC 3339 timestamp/)
    await bad('until=2026-11-25', /until must be an RFC 3339 timestamp/)
  })

  test('an account sees only its own legs; no key, no spend; POST is 405', async () => {
    const h = await seeded()
    const bob = await h.deps.admin.createAccount('bob')
    const { key: bobKey } = await h.deps.admin.createKey({ account: bob.name })
    await seedRequest(h.deps.ledger, { accountId: bob.id, at: DAY0 + H, legs: [{ costNanos: 42, cached: 10 }] })
    const asBob = await (await h.call('/v1/usage/spend', { key: bobKey })).json()
    expect(asBob.series).toEqual([
      {
        key: 'claude-sonnet-4-5',
        points: [
          point('2026-11-25T00:00:00.000Z', {
            cost_nanos: 42,
            requests: 1,
            input_tokens: 10,
            cached_input_tokens: 10,
            output_tokens: 5,
          }),
        ],
      },
    ])
    expect(asBob.cache_savings_nanos).toBe(10 * 2700)
    const mine = await (await h.call('/v1/usage/spend')).json()
    expect(mine.totals.cost_nanos).toBe(1607)
    expect((await h.call('/v1/usage/spend', { key: null })).status).toBe(401)
    expect((await h.call('/v1/usage/spend', { method: 'POST' })).status).toBe(405)
  })

  test('an empty window: no series, zero totals', async () => {
    const h = await createHarness({ now: NOW })
    expect(await (await h.call('/v1/usage/spend?bucket=hour')).json()).toMatchObject({
      series: [],
      totals: {
        cost_nanos: 0,
        requests: 0,
        input_tokens: 0,
        cached_input_tokens: 0,
        cache_creation_input_tokens: 0,
        output_tokens: 0,
      },
      cache_savings_nanos: 0,
      cache_write_premium_nanos: 0,
      cache_unpriced_tokens: 0,
    })
  })
})

describe('GET /v1/usage/sessions/list pages', () => {
  test('before + before_id walk every session once, ties on latest_at included', async () => {
    const h = await createHarness({ now: NOW })
    // 7 sessions; s0..s3 share their latest millisecond
    for (let i = 0; i < 7; i++) {
      const latest = i < 4 ? NOW - H : NOW - H - i * 1000
      await seedRequest(h.deps.ledger, { accountId: h.accountId, at: latest - 5000, sessionId: `s${i}` })
      await seedRequest(h.deps.ledger, { accountId: h.accountId, at: latest, sessionId: `s${i}` })
    }
    const seen: string[] = []
    let cursor = ''
    for (let page = 0; page < 5; page++) {
      const rows = await (await h.call(`/v1/usage/sessions/list?limit=3${cursor}`)).json()
      if (rows.length === 0) break
      seen.push(...rows.map((r: { session_id: string }) => r.session_id))
      const last = rows.at(-1)
      cursor = `&before=${last.latest_at}&before_id=${last.session_id}`
    }
    expect(seen).toEqual(['s3', 's2', 's1', 's0', 's4', 's5', 's6'])
    const res = await h.call('/v1/usage/sessions/list?before=2026-11-25T00:00:00Z')
    expect(res.status).toBe(400)
    expect((await res.json()).error.message).toMatch(/before and before_id go together/)
  })
})

describe('spend at its edges', () => {
  const T0 = Date.parse('2026-11-22T10:00:00.000Z')
  test('spend counts legs in [since, until): one at until is left out', async () => {
    const h = await createHarness({ now: T0 + 3_600_000 })
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0 - 1, legs: [{ costNanos: 7 }] })
    await seedRequest(h.deps.ledger, { accountId: h.accountId, at: T0, legs: [{ costNanos: 1000 }] })
    const since = new Date(T0 - 3_600_000).toISOString()
    const until = new Date(T0).toISOString()
    const spend = await (await h.call(`/v1/usage/spend?bucket=hour&since=${since}&until=${until}`)).json()
    expect(spend.totals).toMatchObject({ cost_nanos: 7, requests: 1 })
  })
  test('cache tokens of a model the catalog no longer prices are all reported unpriced, writes too', async () => {
    const h = await createHarness({ now: T0 + 1000 })
    await seedRequest(h.deps.ledger, {
      accountId: h.accountId,
      at: T0,
      legs: [{ modelId: 'retired-model', providerId: 'anthropic', cached: 300, cacheCreation: 200, costNanos: 5 }],
    })
    const spend = await (await h.call('/v1/usage/spend?bucket=day')).json()
    expect(spend.cache_unpriced_tokens).toBe(500)
  })
})
