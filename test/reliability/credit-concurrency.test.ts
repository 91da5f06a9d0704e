// Many requests in parallel against a grant that pays for about five: requests in flight hold what
// they are expected to cost, so the ones beyond the credit left are told to wait (429) and served
// once the others have ended, no grant ever goes below zero, the charges never exceed the grants,
// what was served beyond the credit is less than one request and shows as total_cost_nanos −
// charged_nanos (README, "Money and credit"), and once the credit is gone a request gets 402.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHarness, endedRequestDetail, type Harness } from '../support/harness'
import { anthropicJsonAnswer, scriptedPair, scriptedUpstream, twoModelGateway } from '../support/scripted-upstream'
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

/**
 * svc-pro on two models priced alike (1 USD/Mtok in, 2 out), `first` ranked above `second`, asking
 * the simulator for `<prefix>-first` and `<prefix>-second`.
 */
function twoPricedModels(prefix: string): Promise<Harness> {
  const priced = { provider: 'anth', profiles: ['pro' as const], input_usd_per_mtok: 1, output_usd_per_mtok: 2 }
  return createHarness({
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' } },
      models: [
        { id: 'first', upstream_model: `${prefix}-first`, quality: 90, ...priced },
        { id: 'second', upstream_model: `${prefix}-second`, quality: 80, ...priced },
      ],
    },
  })
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
  test(`${PARALLEL} parallel requests against credit for ~5.5, retried as the SDKs do: never negative, overspend under one request, then 402`, async () => {
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
    // Slow enough to first byte that the requests sent together are all in flight at once.
    sim.setScenario('claude-c-up', { text: 'Paid answer.', firstByteDelayMs: 40, usage: { input: 100, output: 100 } })

    const snapshots: Awaited<ReturnType<typeof creditSnapshot>>[] = []
    const ask = async (i: number) => {
      const stream = i % 2 === 1
      const res = await h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: 'svc-max', max_tokens: 200, stream, messages: [{ role: 'user', content: `question ${i}` }] },
      })
      const text = await res.text()
      // After every request completes, the credit position is read back.
      snapshots.push(await creditSnapshot(h))
      return {
        i,
        status: res.status,
        retryAfter: res.headers.get('retry-after'),
        id: res.headers.get('x-request-id')!,
        stream,
        text,
      }
    }
    type Answer = Awaited<ReturnType<typeof ask>>
    // All at once, then the ones told to wait (429) again, as the SDKs retry, until each is served
    // or refused for credit gone (402).
    const answers: Answer[] = []
    let waiting = Array.from({ length: PARALLEL }, (_, i) => i)
    for (let wave = 0; waiting.length > 0; wave++) {
      expect(wave).toBeLessThan(PARALLEL)
      const got = await Promise.all(waiting.map(ask))
      answers.push(...got)
      waiting = got.filter((a) => a.status === 429).map((a) => a.i)
    }
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([200, 429, 402]))
    const served = answers.filter((a) => a.status === 200)
    for (const r of served) {
      if (r.stream) expect(parseFrames(r.text).at(-1)!.event).toBe('message_stop')
      else expect(JSON.parse(r.text).content).toEqual([{ type: 'text', text: 'Paid answer.' }])
    }
    // Told to wait while the credit left was held by the requests in flight: nothing tried, nothing charged.
    for (const r of answers.filter((a) => a.status === 429)) {
      expect(r.retryAfter).toBe('1')
      expect(JSON.parse(r.text).error).toEqual({
        type: 'rate_limit_error',
        message: "this account's remaining credit is held by its requests in flight; retry when they have finished",
      })
      expect(await requestDetail(h, r.id)).toMatchObject({
        status: 'failed',
        http_status: 429,
        attempts: 0,
        charged_nanos: 0,
        // The ranking says the same: held, not uncovered (no grant scope or expiry is at fault).
        provider_ranks: [
          {
            model_id: 'claude-c',
            status: 'skipped',
            reason:
              "the credit that applies to this model is held by this account's requests in flight (retry when they finish)",
          },
        ],
      })
    }
    // Never below zero, after any request.
    for (const s of snapshots) {
      expect(s.remaining).toBeGreaterThanOrEqual(0)
      for (const g of [...s.grants, ...s.stored]) expect(g).toBeGreaterThanOrEqual(0)
    }

    const details = await Promise.all(served.map((r) => requestDetail(h, r.id)))
    for (const d of details) {
      expect(d).toMatchObject({ status: 'completed', total_cost_nanos: C })
      expect(d.usage_events).toEqual([expect.objectContaining({ cost_nanos: C, charged_nanos: d.charged_nanos })])
      expect(d.grant_charges.reduce((n: number, c: { amount_nanos: number }) => n + c.amount_nanos, 0)).toBe(
        d.charged_nanos,
      )
    }
    // Every nano of credit was spent, and what was served beyond it is less than one request: each
    // request held its estimate (more than it cost), so requests in flight together never took
    // more than the credit left and one request beyond it. Before the holds, all 50 were served.
    const totalCharged = details.reduce((n, d) => n + d.charged_nanos, 0)
    const unpaid = details.reduce((n, d) => n + d.total_cost_nanos - d.charged_nanos, 0)
    expect(totalCharged).toBe(5 * C + C / 2)
    expect(unpaid).toBeLessThanOrEqual(C)
    expect(served.length).toBeLessThanOrEqual(6)

    // Every hold was released as its request was recorded.
    const grants = await h.deps.credit.get(h.accountId)
    expect(h.deps.holds.available(grants)).toBe(grants)

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
    // OpenAI's own answer for no credit, on which Codex stops at once (a 402 it retries).
    expect(responses.status).toBe(429)
    expect(responses.headers.get('x-should-retry')).toBe('false')
    expect((await responses.json()).error).toMatchObject({ type: 'insufficient_quota', code: 'insufficient_quota' })
    expect(sim.requests.length).toBe(upstreamCalls)
  })

  // Each held in full on the grant of the model it was ranked to, they fell back together onto a
  // small general grant: judged on what each had been admitted to cost, each took what was left of
  // it, and three were served on credit for one (an audit: two requests' cost unpaid).
  test('20 requests held on a grant scoped to their first model fall back onto a small general one: overspend under one request', async () => {
    const h = await twoPricedModels('scoped-fallback')
    /** The ceiling each request holds: its prompt's ~4 tokens and its max_tokens, as the second answers. */
    const oneRequest = 4 * 1000 + 2000 * 2000
    // Neither a whole number of requests: the tenth's hold spills onto the general grant.
    const scoped = await addGrant(h, { amount_nanos: 40_000_000, scope_models: ['first'] })
    const general = await addGrant(h, { amount_nanos: 4_500_000 })
    sim.setScenario('scoped-fallback-first', { fault: { kind: 'status', status: 529 } })
    sim.setScenario('scoped-fallback-second', {
      text: 'one two three four five',
      chunks: 5,
      chunkDelayMs: 40,
      usage: { input: 4, output: 2000 },
    })

    const answers = await Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await h.call('/compat-a/v1/messages', {
          method: 'POST',
          headers: { 'anthropic-version': '2023-06-01' },
          json: {
            model: 'svc-pro',
            max_tokens: 2000,
            stream: true,
            messages: [{ role: 'user', content: 'count slowly' }],
          },
        })
        await res.text()
        return { status: res.status, id: res.headers.get('x-request-id')! }
      }),
    )
    const served = answers.filter((a) => a.status === 200)
    expect(served.length).toBeGreaterThan(0)
    // The rest were told to wait for credit others held, at the gate or at their fallback.
    expect(new Set(answers.filter((a) => a.status !== 200).map((a) => a.status))).toEqual(new Set([429]))
    let cost = 0
    let charged = 0
    for (const { id } of served) {
      const detail = await endedRequestDetail(h, id)
      expect(detail).toMatchObject({ status: 'completed', selected_model_id: 'second' })
      cost += detail.total_cost_nanos
      charged += detail.charged_nanos
    }
    expect(cost - charged).toBeLessThanOrEqual(oneRequest)
    // The scoped grant paid nothing: its model served no one. The general one paid what it had.
    const grants = await h.deps.ledger.listGrants(h.accountId)
    expect(grants.find((g) => g.id === scoped)!.remainingNanos).toBe(40_000_000)
    expect(grants.find((g) => g.id === general)!.remainingNanos).toBeGreaterThanOrEqual(0)
    expect(charged).toBe(4_500_000 - grants.find((g) => g.id === general)!.remainingNanos)
  })

  test('30 long answers at once on a grant worth less than one: each holds its whole max_tokens, so one is served, the rest wait, then 402', async () => {
    // 0.005 USD of credit; each answer 8,000 output tokens (the models' 8,192 at most) at 1 USD/Mtok.
    const h = await scriptedPair('anthropic', {}, 0.005)
    // Slow enough that all 30 are ranked while the first is in flight (README: a request that comes
    // in the 5 ms between one's end and its charge's commit sees the credit it took).
    scriptedUpstream(h, () => ({
      headerDelayMs: 200,
      json: anthropicJsonAnswer('first-up', 'A long answer.', { input_tokens: 10, output_tokens: 8_000 }),
    }))
    const ask = () =>
      h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: 'svc-pro', max_tokens: 64_000, messages: [{ role: 'user', content: 'write a long file' }] },
      })
    const first = await Promise.all(Array.from({ length: 30 }, ask))
    // Held at the 1,000-token estimate, five were admitted at once: 0.04 USD served on 0.005 (a
    // security audit found 0.6 USD on 0.01 so).
    expect(first.map((r) => r.status).sort()).toEqual([200, ...Array(29).fill(429)])
    // Retried after the second retry-after asks for, the served one's charge has long committed (a
    // ledger read commits it now).
    await h.call('/v1/usage')
    const retried = await Promise.all(Array.from({ length: 29 }, ask))
    expect(new Set(retried.map((r) => r.status))).toEqual(new Set([402]))
    const usage = await (await h.call('/v1/usage')).json()
    expect(usage).toMatchObject({ used_nanos: 5_000_000, remaining_nanos: 0 })
    const served = await requestDetail(h, first.find((r) => r.status === 200)!.headers.get('x-request-id')!)
    // What was served beyond the credit: one request's cost, less the credit it took.
    expect([served.total_cost_nanos, served.charged_nanos]).toEqual([8_010_000, 5_000_000])
  })
})

/** n calls of `ask` at once; the served ones' total cost and charge, and every status, sorted. */
async function atOnce(h: Harness, n: number, ask: () => Promise<Response>) {
  const answers = await Promise.all(Array.from({ length: n }, ask))
  let cost = 0
  let charged = 0
  for (const res of answers.filter((r) => r.status === 200)) {
    await res.text()
    const detail = await endedRequestDetail(h, res.headers.get('x-request-id')!)
    cost += detail.total_cost_nanos
    charged += detail.charged_nanos
  }
  return { statuses: answers.map((r) => r.status).sort(), cost, charged }
}

describe('what a request holds is what its answer can cost', () => {
  test('16-token answers with high effort on a Claude that thinks by budget hold the budget svc adds to max_tokens', async () => {
    // 0.002 USD; each answer bills 4,100 output tokens at 1 USD/Mtok (the budget's thinking and 4
    // tokens of text), where the request asked for at most 16.
    const h = await twoModelGateway({ kind: 'anthropic', grantUsd: 0.002, model: { thinking: true } })
    const sent = scriptedUpstream(h, () => ({
      headerDelayMs: 200,
      json: anthropicJsonAnswer('first-up', 'Yes.', { input_tokens: 10, output_tokens: 4_100 }),
    }))
    const ask = () =>
      h.call('/compat-b/v1/responses', {
        method: 'POST',
        json: { model: 'svc-pro', input: 'is it?', max_output_tokens: 16, reasoning: { effort: 'high' } },
      })
    const { statuses, cost, charged } = await atOnce(h, 20, ask)
    // The budget high effort is sent as, and the answer's 16 above it.
    expect(sent[0]).toMatchObject({ max_tokens: 4_112, thinking: { type: 'enabled', budget_tokens: 4_096 } })
    // Each held 4,112 output tokens, more than the grant: one served, the rest wait. Held at 16, all
    // 20 were served, 41 times the grant (an audit).
    expect(statuses).toEqual([200, ...Array(19).fill(429)])
    expect([cost, charged]).toEqual([4_110_000, 2_000_000])
  })

  test('prompts marked for an hour’s cache hold their writes at the 1-hour price, twice the input', async () => {
    // 1 USD/Mtok in, 2 for an hour's cache write; each ~10,000-token prompt written whole.
    const h = await twoModelGateway({
      kind: 'anthropic',
      grantUsd: 0.03,
      model: { prompt_caching: true, cache_write_usd_per_mtok: 1.25, cache_write_1h_usd_per_mtok: 2 },
    })
    scriptedUpstream(h, () => ({
      headerDelayMs: 200,
      json: anthropicJsonAnswer('first-up', 'ok', {
        input_tokens: 3,
        cache_creation_input_tokens: 10_000,
        cache_creation: { ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 10_000 },
        output_tokens: 2,
      }),
    }))
    const oneRequest = 3 * 1000 + 10_000 * 2000 + 2 * 1000
    let n = 0
    const ask = () =>
      h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: {
          model: 'svc-pro',
          max_tokens: 10,
          system: [
            {
              type: 'text',
              text: `${n++} ${'lorem ipsum '.repeat(3_333)}`,
              cache_control: { type: 'ephemeral', ttl: '1h' },
            },
          ],
          messages: [{ role: 'user', content: 'hi' }],
        },
      })
    const { statuses, cost, charged } = await atOnce(h, 10, ask)
    // Held at the input price, three were served at once on credit for one and a half.
    expect(statuses).toEqual([200, 200, ...Array(8).fill(429)])
    expect(charged).toBe(30_000_000)
    expect(cost - charged).toBeLessThan(oneRequest)
  })
})

describe('holds on the way to a fallback', () => {
  const ask = (h: Harness) =>
    h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: 2000, messages: [{ role: 'user', content: 'hi' }] },
    })

  /**
   * Two models priced alike, the first failing with a 529 and the second answering, on a grant
   * of 3,000,000 nanos: less than one request's ceiling (~4 tokens + 2000 × 2000 nanos).
   */
  async function failingOver(prefix: string): Promise<Harness> {
    const h = await twoPricedModels(prefix)
    await addGrant(h, { amount_nanos: 3_000_000 })
    sim.setScenario(`${prefix}-first`, { fault: { kind: 'status', status: 529 } })
    sim.setScenario(`${prefix}-second`, { text: 'ok', usage: { input: 4, output: 2 } })
    return h
  }

  test('a request that fails inside the gateway after its hold leaves no credit held: the next one is served', async () => {
    const h = await failingOver('hold-leak')
    const get = h.deps.credit.get.bind(h.deps.credit)
    let calls = 0
    h.deps.credit.get = async (id: string) => {
      calls++
      // The fallback's read of the grants fails (a database error): a gateway failure after the hold.
      if (calls === 2) throw new Error('disk I/O error')
      return get(id)
    }
    const first = await ask(h)
    expect(first.status).toBe(500)
    await first.text()
    // The next request: nothing is in flight, the grant is untouched, so it is served.
    const second = await ask(h)
    const body = await second.text()
    expect({ status: second.status, body: second.status === 200 ? 'served' : body }).toEqual({
      status: 200,
      body: 'served',
    })
  })

  test('a grant that expires while the first model fails pays for no fallback: the first model’s failure is the answer', async () => {
    const h = await twoPricedModels('expired-fallback')
    await addGrant(h, { amount_nanos: 10_000_000, expires_at: new Date(h.clock.now + 1_000).toISOString() })
    sim.setScenario('expired-fallback-first', { fault: { kind: 'status', status: 529 } })
    sim.setScenario('expired-fallback-second', { text: 'ok', usage: { input: 4, output: 2 } })
    const upstream = h.deps.fetch
    h.deps.fetch = (async (url: string, init: RequestInit) => {
      const res = await upstream(url, init)
      // Each answer takes two seconds: the first's 529 comes after the grant expired.
      h.clock.advance(2_000)
      return res
    }) as typeof fetch
    const res = await ask(h)
    // Held on the grants of the request's admission, the fallback was served and charged nothing
    // (its leg began after the expiry, which is when a leg's charge is judged).
    expect(res.status).toBe(529)
    const detail = await endedRequestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.usage_events.map((e: { model_id: string; outcome: string }) => [e.model_id, e.outcome])).toEqual([
      ['first', 'failed'],
    ])
    expect(detail.provider_ranks.find((r: { model_id: string }) => r.model_id === 'second')).toMatchObject({
      status: 'skipped',
      reason:
        'not tried as a fallback: no credit is left for second, the next model to try: add a grant that covers it',
    })
  })

  test('a fallback that starts in peak hours is held at their prices: overspend under one request', async () => {
    const h = await twoModelGateway({
      kind: 'anthropic',
      grantUsd: 0.0101,
      // 1 USD/Mtok off-peak, 2 from 10:01 UTC (the harness's clock starts at 10:00).
      model: { peak: { hours_utc: ['10:01-11:00'], input_usd_per_mtok: 2, output_usd_per_mtok: 2 } },
    })
    const atPeak = 10 * 2000 + 1000 * 2000
    h.deps.fetch = (async (_url: string, init: RequestInit) => {
      await Bun.sleep(100)
      if (JSON.parse(String(init.body)).model === 'first-up') {
        // The first model's 529 comes 90 s on: the fallbacks start at 10:01:30, in peak hours.
        h.clock.now = Math.max(h.clock.now, Date.parse('2026-11-22T10:01:30Z'))
        return Response.json({ type: 'error', error: { type: 'overloaded_error', message: 'busy' } }, { status: 529 })
      }
      return Response.json(anthropicJsonAnswer('second-up', 'x', { input_tokens: 10, output_tokens: 1000 }))
    }) as typeof fetch
    const ask = () =>
      h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: 'svc-pro', max_tokens: 1000, messages: [{ role: 'user', content: 'hi' }] },
      })
    const { statuses, cost, charged } = await atOnce(h, 10, ask)
    expect(statuses).toContain(200)
    expect(charged).toBe(10_100_000)
    // Held at off-peak prices, all ten were served: five requests' cost unpaid.
    expect(cost - charged).toBeLessThanOrEqual(atPeak)
  })

  test('a fallback priced as the first model is tried beside another request’s hold: it needs no more unheld credit than the admission did', async () => {
    const h = await failingOver('same-price')
    // Another request of the account in flight holds a third of the grant.
    const grants = await h.deps.ledger.listGrants(h.accountId)
    const other = h.deps.holds.hold(
      grants,
      { routingMode: 'pro', modelId: 'first', providerId: 'anth', costType: 'model_usage', now: h.clock.now },
      1_000_000,
    )
    const res = await ask(h)
    const body = await res.text()
    h.deps.holds.release(other)
    // Admitted on the 2,000,000 left unheld; its fallback costs as much as its first, and the same
    // 2,000,000 are there for it: README, the fallback is held "to what is left ... where that leaves
    // no more unheld than the request's admission did".
    expect({ status: res.status, body: res.status === 200 ? 'served' : body }).toEqual({ status: 200, body: 'served' })
  })
})
