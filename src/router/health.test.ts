// The breaker state machine and moving averages, on a fake clock: no test waits for time.
import { describe, expect, test } from 'bun:test'
import { createHealth, defaultHealthPolicy } from './health'

const T0 = Date.parse('2026-11-22T10:00:00.000Z')
const iso = (ms: number) => new Date(ms).toISOString()

function setup(policy = defaultHealthPolicy) {
  const clock = { now: T0 }
  const health = createHealth({ elapsed: () => clock.now, wall: () => clock.now }, policy)
  const advance = (ms: number) => {
    clock.now += ms
  }
  const fail = (times = 1, opts: { retryAfterSeconds?: number } = {}) => {
    for (let i = 0; i < times; i++) health.recordFailure('p1', 'm1', opts)
  }
  /** The probe's own failure: the request that claimed it fails. */
  const probeFails = () => health.recordFailure('p1', 'm1', {}, undefined, health.claimProbe('p1', 'm1'))
  const state = () => health.view('p1', 'm1').state
  return { clock, health, advance, fail, probeFails, state }
}

describe('circuit breaker', () => {
  test('an unknown candidate is closed with no measurements', () => {
    const { health } = setup()
    expect(health.view('p1', 'm1')).toEqual({ state: 'closed', ttfb_ms: null, error_rate: 0 })
    expect(health.openCircuits()).toBe(0)
  })

  test('closed → open after 3 consecutive failures → half_open after the cooldown → probe → success closes', () => {
    const { health, advance, fail, state, clock } = setup()
    fail(2)
    expect(state()).toBe('closed')
    fail()
    expect(health.view('p1', 'm1')).toEqual({
      state: 'open',
      ttfb_ms: null,
      error_rate: 0.488,
      until: iso(T0 + 30_000),
    })
    expect(health.openCircuits()).toBe(1)

    advance(29_999)
    expect(state()).toBe('open')
    advance(1)
    expect(health.view('p1', 'm1')).toEqual({ state: 'half_open', ttfb_ms: null, error_rate: 0.488 })
    // Half-open is not counted as open: the next request may go there.
    expect(health.openCircuits()).toBe(0)

    health.claimProbe('p1', 'm1')
    // While the probe is in flight nobody else is sent there.
    expect(health.view('p1', 'm1')).toMatchObject({ state: 'open', until: 'after the probe in flight' })
    expect(health.openCircuits()).toBe(1)

    // A stream's first byte is no verdict: the probe is still in flight until it ends.
    health.recordFirstByte('p1', 'm1', 250)
    expect(health.view('p1', 'm1')).toMatchObject({ state: 'open', until: 'after the probe in flight' })
    health.recordSuccess('p1', 'm1')
    expect(health.view('p1', 'm1')).toEqual({ state: 'closed', ttfb_ms: 250, error_rate: 0.39 })
    expect(health.openCircuits()).toBe(0)

    // The cooldown is back to its base: three more failures open it for 30 s again.
    fail(3)
    expect(health.view('p1', 'm1').until).toBe(iso(clock.now + 30_000))
  })

  test('a failed probe reopens with a doubled cooldown, capped at the maximum', () => {
    const { health, advance, fail, probeFails, state, clock } = setup()
    fail(3)
    const cooldowns: number[] = []
    for (let i = 0; i < 6; i++) {
      const until = Date.parse(health.view('p1', 'm1').until!)
      cooldowns.push(until - clock.now)
      advance(until - clock.now)
      expect(state()).toBe('half_open')
      probeFails()
      expect(state()).toBe('open')
    }
    expect(cooldowns).toEqual([30_000, 60_000, 120_000, 240_000, 300_000, 300_000])
  })

  test('failures while open neither extend the cooldown nor close it', () => {
    const { health, advance, fail } = setup()
    fail(3)
    advance(10_000)
    fail(5)
    expect(health.view('p1', 'm1')).toMatchObject({ state: 'open', until: iso(T0 + 30_000) })
  })

  test('failures must be consecutive: a success in between resets the count', () => {
    const { health, fail, state } = setup()
    fail(2)
    health.recordSuccess('p1', 'm1')
    fail(2)
    expect(state()).toBe('closed')
    fail()
    expect(state()).toBe('open')
  })

  test('claimProbe does nothing on a closed circuit nor before the cooldown ends', () => {
    const { health, advance, fail, state } = setup()
    health.claimProbe('p1', 'm1')
    expect(state()).toBe('closed')
    fail(3)
    advance(1000)
    health.claimProbe('p1', 'm1')
    advance(29_000)
    // No probe was taken while open, so the circuit is half-open now, not stuck behind a probe.
    expect(state()).toBe('half_open')
  })

  test('only one probe at a time: a second claim gets nothing', () => {
    const { health, advance, fail, state } = setup()
    expect(health.claimProbe('p1', 'm1')).toBe(0)
    fail(3)
    expect(health.claimProbe('p1', 'm1')).toBe(0)
    advance(30_000)
    expect(health.claimProbe('p1', 'm1')).toBeGreaterThan(0)
    expect(health.claimProbe('p1', 'm1')).toBe(0)
    expect(state()).toBe('open')
  })

  test('a probe released without a verdict goes back to half-open, for the next request to probe', () => {
    const { health, advance, fail, state } = setup()
    fail(3)
    advance(30_000)
    health.releaseProbe('p1', 'm1', health.claimProbe('p1', 'm1'))
    expect(state()).toBe('half_open')
    const claim = health.claimProbe('p1', 'm1')
    expect(claim).toBeGreaterThan(0)
    health.recordSuccess('p1', 'm1')
    expect(state()).toBe('closed')
    // Releasing an unknown or closed candidate changes nothing.
    health.releaseProbe('p9', 'm9', claim)
    expect(health.view('p9', 'm9').state).toBe('closed')
  })

  test('a late release frees only its own probe, not one a later request claimed since', () => {
    const { health, advance, fail, state } = setup()
    fail(3)
    advance(30_000)
    // A long answer took the probe; its first message's success closed the circuit.
    const early = health.claimProbe('p1', 'm1')
    health.recordSuccess('p1', 'm1')
    // A new outage, and after its cool-down another request probes.
    fail(3)
    advance(30_000)
    const later = health.claimProbe('p1', 'm1')
    expect(later).toBeGreaterThan(0)
    // The long answer ends and releases what it claimed: the later probe stays in flight.
    health.releaseProbe('p1', 'm1', early)
    expect(state()).toBe('open')
    expect(health.claimProbe('p1', 'm1')).toBe(0)
    // Nor does its failure end that probe, nor a request's that claimed none.
    health.recordFailure('p1', 'm1', {}, undefined, early)
    fail()
    advance(300_000)
    expect(health.claimProbe('p1', 'm1')).toBe(0)
    health.releaseProbe('p1', 'm1', later)
    expect(state()).toBe('half_open')
  })

  test('health is kept per provider × model', () => {
    const { health, fail } = setup()
    fail(3)
    expect(health.view('p1', 'm1').state).toBe('open')
    expect(health.view('p2', 'm1').state).toBe('closed')
    expect(health.view('p1', 'm2').state).toBe('closed')
  })

  test('the policy is configurable', () => {
    const { health, advance, fail, probeFails, state } = setup({
      failuresToOpen: 1,
      cooldownMs: 1000,
      maxCooldownMs: 1500,
    })
    fail()
    expect(state()).toBe('open')
    advance(1000)
    probeFails()
    expect(health.view('p1', 'm1').until).toBe(iso(T0 + 1000 + 1500))
  })
})

describe('retry-after', () => {
  test('a 429 with retry-after cools the candidate until then, without opening the circuit', () => {
    const { health, advance, fail, state } = setup()
    fail(1, { retryAfterSeconds: 20 })
    expect(health.view('p1', 'm1')).toEqual({
      state: 'cooling',
      ttfb_ms: null,
      error_rate: 0.2,
      until: iso(T0 + 20_000),
    })
    expect(health.openCircuits()).toBe(0)
    advance(19_999)
    expect(state()).toBe('cooling')
    advance(1)
    expect(state()).toBe('closed')
  })

  test('an answer served ends the cooling a retry-after asked for (a proxy may ask an hour)', () => {
    const { health, advance, fail, state } = setup()
    fail(1, { retryAfterSeconds: 3600 })
    advance(60_000)
    expect(state()).toBe('cooling')
    health.recordSuccess('p1', 'm1')
    expect(state()).toBe('closed')
  })

  test('an open circuit shows as open even while cooling', () => {
    const { health, fail } = setup()
    fail(2)
    fail(1, { retryAfterSeconds: 120 })
    expect(health.view('p1', 'm1')).toMatchObject({ state: 'open', until: iso(T0 + 30_000) })
  })

  test('a retry-after outlasting the open circuit keeps it cooling, not half-open, until it passes', () => {
    const { health, advance, fail, state } = setup()
    fail(2)
    fail(1, { retryAfterSeconds: 600 })
    advance(300_000)
    // Past the breaker's 30 s wait, within the provider's 600 s: ranked last, as cooling.
    expect(health.view('p1', 'm1')).toMatchObject({ state: 'cooling', until: iso(T0 + 600_000) })
    advance(300_000)
    expect(state()).toBe('half_open')
  })

  test('a half-open probe that succeeds within the retry-after closes the circuit and ends the cooling', () => {
    const { health, advance, fail, state } = setup()
    fail(2)
    fail(1, { retryAfterSeconds: 120 })
    advance(30_000)
    health.claimProbe('p1', 'm1')
    health.recordSuccess('p1', 'm1')
    // It served: the rate limit is over, whatever the 120 s said.
    expect(state()).toBe('closed')
  })
})

describe('moving averages', () => {
  test('time to first byte: the first sample, then 20 % weight for each new one', () => {
    const { health } = setup()
    health.recordFirstByte('p1', 'm1', 100)
    expect(health.view('p1', 'm1').ttfb_ms).toBe(100)
    health.recordFirstByte('p1', 'm1', 200) // 100 + 0.2 × 100
    expect(health.view('p1', 'm1').ttfb_ms).toBe(120)
    health.recordFirstByte('p1', 'm1', 50) // 120 − 0.2 × 70
    expect(health.view('p1', 'm1').ttfb_ms).toBe(106)
  })

  test('error rate: 20 % weight per outcome, rounded to 3 decimals; failures leave ttfb alone', () => {
    const { health } = setup()
    const rates: number[] = []
    health.recordFirstByte('p1', 'm1', 100)
    health.recordSuccess('p1', 'm1')
    for (const ok of [false, false, true, false]) {
      if (ok) health.recordSuccess('p1', 'm1')
      else health.recordFailure('p1', 'm1')
      rates.push(health.view('p1', 'm1').error_rate)
    }
    // 0.2, 0.36, 0.288, 0.4304
    expect(rates).toEqual([0.2, 0.36, 0.288, 0.43])
    expect(health.view('p1', 'm1').ttfb_ms).toBe(100)
  })
})

describe('whose key', () => {
  test('an account’s own key is a line of its own: neither its failures nor the platform’s cross over', () => {
    const { health, fail } = setup()
    for (let i = 0; i < 3; i++) health.recordFailure('p1', 'm1', {}, 'acct_bob')
    expect(health.view('p1', 'm1', 'acct_bob').state).toBe('open')
    expect(health.view('p1', 'm1').state).toBe('closed')
    expect(health.view('p1', 'm1', 'acct_carol').state).toBe('closed')
    fail(1, { retryAfterSeconds: 60 })
    expect(health.view('p1', 'm1').state).toBe('cooling')
    expect(health.view('p1', 'm1', 'acct_carol').state).toBe('closed')
    expect(health.openCircuits()).toBe(1)
  })
})

describe('a wall clock stepped back (NTP)', () => {
  test('the cool-down runs on elapsed time: half-open 30 s later, its `until` told in the wall clock’s new time', () => {
    const clock = { elapsed: 5_000, wall: T0 }
    const health = createHealth({ elapsed: () => clock.elapsed, wall: () => clock.wall })
    for (let i = 0; i < 3; i++) health.recordFailure('p1', 'm1', { retryAfterSeconds: 20 })
    clock.wall -= 600_000
    clock.elapsed += 10_000
    expect(health.view('p1', 'm1')).toMatchObject({ state: 'open', until: iso(T0 - 600_000 + 20_000) })
    clock.elapsed += 21_000
    clock.wall += 21_000
    expect(health.view('p1', 'm1').state).toBe('half_open')
    expect(health.claimProbe('p1', 'm1')).toBeGreaterThan(0)
  })
})
