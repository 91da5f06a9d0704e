// Many requests in parallel against a grant that pays for about five: every one admitted while credit
// remained is served and recorded, no grant ever goes below zero, the charges never exceed the
// grants, the unpaid rest shows as total_cost_nanos − charged_nanos (README, "Money and credit"),
// and once the credit is gone a new request gets 402.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHarness, type Harness } from '../support/harness'
import { simClaude } from '../support/sim-models'
import { startSimulator } from '../support/simulator'
import { isAnthropicError, parseFrames, requestDetail } from './helpers'

const SIM_KEY = 'sim-key-credit'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())

/** 100 input tokens × 3000 + 100 output tokens × 15000. */
const C = 100 * 3000 + 100 * 15000
const PARALLEL = 50
const admin = { authorization: 'Bearer admin-secret' }

async function addGrant(h: Harness, body: Record<string, unknown>): Promise<string> {
  const res = await h.call('/v1/admin/grants', {
    method: 'POST',
    headers: admin,
    key: null,
    json: { account: 'default', ...body },
  })
  expect(res.status).toBe(201)
  return (await res.json()).id
}

async function creditSnapshot(h: Harness) {
  const usage = await (await h.call('/v1/usage')).json()
  const stored = await h.deps.ledger.listGrants(h.accountId)
  return {
    remaining: usage.remaining_nanos as number,
    grants: (usage.grants as { remaining_nanos: number }[]).map((g) => g.remaining_nanos),
    stored: stored.map((g) => g.remainingNanos),
  }
}

describe('credit under concurrency', () => {
  test(`${PARALLEL} parallel requests against credit for ~5.5: never negative, overspend visible and bounded, then 402`, async () => {
    const h = await createHarness({
      env: { SIM_KEY },
      config: {
        catalog: { builtin: false },
        providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
        models: [simClaude()],
      },
    })
    // A grant for max (spent first: scoped credit before general) and a general one: 5.5 requests' worth.
    const scoped = await addGrant(h, { amount_nanos: 2 * C, scope_routing_modes: ['max'], source: 'scoped' })
    const general = await addGrant(h, { amount_nanos: 3 * C + C / 2, source: 'general' })
    // Slow enough to first byte that every request passes the quota gate before any is recorded.
    sim.setScenario('claude-c-up', { text: 'Paid answer.', firstByteDelayMs: 40, usage: { input: 100, output: 100 } })

    const snapshots: Awaited<ReturnType<typeof creditSnapshot>>[] = []
    const results = await Promise.all(
      Array.from({ length: PARALLEL }, async (_, i) => {
        const stream = i % 2 === 1
        const res = await h.call('/compat-a/v1/messages', {
          method: 'POST',
          headers: { 'anthropic-version': '2023-06-01' },
          json: { model: 'svc-max', max_tokens: 200, stream, messages: [{ role: 'user', content: `question ${i}` }] },
        })
        const text = await res.text()
        // After every request completes, the credit position is read back.
        snapshots.push(await creditSnapshot(h))
        return { status: res.status, id: res.headers.get('x-request-id')!, stream, text }
      }),
    )

    // Every request passed the gate while credit remained, and was served in full.
    expect(results.map((r) => r.status)).toEqual(Array(PARALLEL).fill(200))
    for (const r of results) {
      if (r.stream) expect(parseFrames(r.text).at(-1)!.event).toBe('message_stop')
      else expect(JSON.parse(r.text).content).toEqual([{ type: 'text', text: 'Paid answer.', citations: null }])
    }
    // Never below zero, after any request.
    expect(snapshots).toHaveLength(PARALLEL)
    for (const s of snapshots) {
      expect(s.remaining).toBeGreaterThanOrEqual(0)
      for (const g of [...s.grants, ...s.stored]) expect(g).toBeGreaterThanOrEqual(0)
    }

    const details = await Promise.all(results.map((r) => requestDetail(h, r.id)))
    const charged = details.map((d) => d.charged_nanos as number)
    // Five paid in full, one paid with what was left, the rest admitted while credit remained and unpaid.
    expect(charged.toSorted((a, b) => b - a)).toEqual([C, C, C, C, C, C / 2, ...Array(PARALLEL - 6).fill(0)])
    for (const d of details) {
      expect(d).toMatchObject({ status: 'completed', total_cost_nanos: C })
      expect(d.usage_events).toEqual([expect.objectContaining({ cost_nanos: C, charged_nanos: d.charged_nanos })])
      expect(d.grant_charges.reduce((n: number, c: { amount_nanos: number }) => n + c.amount_nanos, 0)).toBe(
        d.charged_nanos,
      )
    }
    const totalCharged = charged.reduce((a, b) => a + b, 0)
    const unpaid = details.reduce((n, d) => n + d.total_cost_nanos - d.charged_nanos, 0)
    expect(totalCharged).toBe(5 * C + C / 2)
    expect(unpaid).toBe(PARALLEL * C - totalCharged)
    // The overspend is bounded by the requests in flight when the credit ran out: each one's own cost.
    const inFlightAtExhaustion = details.filter((d) => d.charged_nanos < d.total_cost_nanos).length
    expect(unpaid).toBeLessThanOrEqual(inFlightAtExhaustion * C)

    // Scoped credit went first, and each grant ends at exactly zero.
    const byGrant = new Map<string, number>()
    for (const d of details) {
      for (const c of d.grant_charges) byGrant.set(c.grant_id, (byGrant.get(c.grant_id) ?? 0) + c.amount_nanos)
    }
    expect(Object.fromEntries(byGrant)).toEqual({ [scoped]: 2 * C, [general]: 3 * C + C / 2 })
    const usage = await (await h.call('/v1/usage')).json()
    expect(usage).toMatchObject({ limit_nanos: 5 * C + C / 2, used_nanos: 5 * C + C / 2, remaining_nanos: 0 })
    expect(usage.grants.map((g: { id: string; remaining_nanos: number }) => [g.id, g.remaining_nanos])).toEqual([
      [scoped, 0],
      [general, 0],
    ])

    // Exhausted: a new request is refused at the gate, before any upstream work, and recorded.
    const upstreamCalls = sim.requests.length
    for (const stream of [false, true]) {
      const res = await h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: 'svc-max', max_tokens: 200, stream, messages: [{ role: 'user', content: 'one more' }] },
      })
      expect(res.status).toBe(402)
      const body = await res.json()
      expect(isAnthropicError(body)).toBe(true)
      expect(body.error.type).toBe('billing_error')
      expect(await requestDetail(h, res.headers.get('x-request-id')!)).toMatchObject({
        status: 'failed',
        http_status: 402,
        attempts: 0,
        total_cost_nanos: 0,
        charged_nanos: 0,
        error: { type: 'billing' },
      })
    }
    const responses = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: 'svc-max', input: 'and another' },
    })
    expect(responses.status).toBe(402)
    expect((await responses.json()).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' })
    expect(sim.requests.length).toBe(upstreamCalls)
  })
})
