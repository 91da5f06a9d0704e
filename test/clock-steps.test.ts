// The wall clock stepping back under a running gateway, as NTP does to a drifted machine: what it
// dates may stand still for the step, but nothing waits for it or runs backwards (an audit).
import { expect, test } from 'bun:test'
import { createDeviceLogin } from '../src/accounts/device-login'
import { createHarness } from './support/harness'
import { anthropicTextAnswer, twoModelGateway } from './support/scripted-upstream'

const tenMinutes = 600_000

/**
 * A gateway whose sign-in limits run on `monotonic` (as a serving gateway's run on performance.now())
 * while its wall clock is the harness's, moved by hand; at most `cap` codes waiting.
 */
async function signInGateway(cap?: number, intervalSeconds = 0) {
  const h = await createHarness({ config: { server: { device_poll_interval_seconds: intervalSeconds } } })
  const monotonic = { now: 1_000 }
  h.deps.deviceLogin = createDeviceLogin({
    ledger: h.deps.ledger,
    clock: h.deps.clock,
    elapsed: () => monotonic.now,
    intervalSeconds,
    maxWaitingCodes: cap,
  })
  /** Real time passes: both clocks move on. */
  const pass = (ms: number) => {
    h.clock.advance(ms)
    monotonic.now += ms
  }
  const start = (device_name: string) =>
    h.call('/v1/auth/device/code', { method: 'POST', json: { device_name }, key: null })
  const approve = (user_code: string) =>
    h.call('/login', {
      method: 'POST',
      body: new URLSearchParams({ user_code, api_key: h.key, decision: 'approve' }),
      key: null,
    })
  return { h, pass, start, approve }
}

test('a right sign-in code after a step back is taken: the wrong-code limit counts wrong codes, not the step', async () => {
  const { h, pass, start, approve } = await signInGateway()
  const first = (await (await start('first')).json()) as { user_code: string }
  expect((await approve(first.user_code)).status).toBe(200)

  h.clock.now -= tenMinutes
  pass(30_000)
  const { user_code } = (await (await start('second')).json()) as { user_code: string }
  expect((await h.call(`/login?code=${user_code}`, { key: null })).status).toBe(200)
  const approved = await approve(user_code)
  expect(approved.status).toBe(200)
  expect(approved.headers.get('retry-after')).toBeNull()
})

test('a place among the waiting codes frees when its code’s ten minutes have passed, whatever the wall clock did', async () => {
  const { h, pass, start } = await signInGateway(1)
  expect((await start('first')).status).toBe(200)
  expect((await start('second')).status).toBe(429)
  h.clock.now -= tenMinutes
  pass(601_000)
  expect((await start('third')).status).toBe(200)
})

test('a device polling at its interval across a step back is not told to slow down', async () => {
  const { h, pass } = await signInGateway(undefined, 5)
  const started = await h.deps.deviceLogin.start('laptop')
  expect(await h.deps.deviceLogin.poll(started.deviceCode)).toMatchObject({ error: 'authorization_pending' })
  h.clock.now -= tenMinutes
  pass(6_000)
  expect(await h.deps.deviceLogin.poll(started.deviceCode)).toMatchObject({ error: 'authorization_pending' })
})

test('a stream the step lands in is recorded with times that never run backwards, in the usage API and /metrics', async () => {
  const h = await twoModelGateway({ kind: 'anthropic' })
  let stepped = false
  h.deps.fetch = (async (_url: string, init: RequestInit) => {
    const { model } = JSON.parse(String(init.body)) as { model: string }
    if (!stepped) {
      h.clock.now -= tenMinutes
      stepped = true
    }
    const frames = anthropicTextAnswer(model)
    return new Response(frames.join(''), { headers: { 'content-type': 'text/event-stream' } })
  }) as typeof fetch
  const ask = () =>
    h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hello' }] },
    })

  const res = await ask()
  expect(res.status).toBe(200)
  await res.text()
  const id = res.headers.get('x-request-id')!
  const row = (await (await h.call(`/v1/usage/requests/${id}`)).json()) as {
    created_at: string
    first_byte_at: string
    ended_at: string
    time_to_first_byte_ms: number
    duration_ms: number
    usage_events: { created_at: string; ended_at: string }[]
  }
  expect(row.time_to_first_byte_ms).toBe(0)
  expect(row.duration_ms).toBe(0)
  expect([row.first_byte_at, row.ended_at]).toEqual([row.created_at, row.created_at])
  expect(row.usage_events.map((leg) => leg.ended_at >= leg.created_at)).toEqual([true])

  const metrics = await (await h.call('/metrics', { key: null })).text()
  const sums = metrics
    .split('\n')
    .filter((line) => /^svc_(request_duration|time_to_first_byte)_seconds_sum/.test(line))
    .map((line) => Number(line.split(' ').at(-1)))
  expect(sums.length).toBeGreaterThan(0)
  expect(sums.every((sum) => sum >= 0)).toBe(true)

  // The routing's time to first byte is timed on the monotonic clock: what the next request sees.
  const next = await ask()
  await next.text()
  const ranks = (
    (await (await h.call(`/v1/usage/requests/${next.headers.get('x-request-id')}`)).json()) as {
      provider_ranks: { health: { ttfb_ms: number | null } }[]
    }
  ).provider_ranks
  const measured = ranks.map((rank) => rank.health.ttfb_ms).filter((ms) => ms !== null)
  expect(measured).toHaveLength(1)
  expect(measured[0]).toBeGreaterThanOrEqual(0)
  expect(measured[0]).toBeLessThan(5_000)
})
