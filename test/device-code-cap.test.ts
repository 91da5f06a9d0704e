// POST /v1/auth/device/code needs no credentials, so the codes waiting for approval are capped:
// past the cap a 429 in the route's error shape says when to come back, and expiry or approval
// (not denial, which needs no credentials either) frees a place. Expired codes are deleted in time;
// neither they nor used ones can be approved.
// The user codes are short, so wrong ones on /login are rate-limited gateway-wide (RFC 8628 §5.1).
import { describe, expect, test } from 'bun:test'
import { createDeviceLogin, wrongCodeBurst, wrongCodesPerSecond } from '../src/accounts/device-login'
import { createHarness, type Harness } from './support/harness'

/** A gateway whose device sign-in holds at most `cap` waiting codes, on the harness's clock. */
async function gatewayWithCap(cap: number): Promise<Harness> {
  const h = await createHarness({ config: { server: { device_poll_interval_seconds: 0 } } })
  h.deps.deviceLogin = createDeviceLogin({
    ledger: h.deps.ledger,
    clock: h.deps.clock,
    intervalSeconds: 0,
    maxWaitingCodes: cap,
  })
  return h
}

const askForCode = (h: Harness) =>
  h.call('/v1/auth/device/code', { method: 'POST', json: { device_name: 'laptop' }, key: null })

async function newCode(h: Harness): Promise<{ device_code: string; user_code: string }> {
  const res = await askForCode(h)
  expect(res.status).toBe(200)
  return res.json()
}

async function expectFull(h: Harness, freeInSeconds: number, cap: number) {
  const res = await askForCode(h)
  expect({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() }).toEqual({
    status: 429,
    retryAfter: String(freeInSeconds),
    body: {
      type: 'error',
      error: {
        type: 'rate_limit_error',
        message: `${cap} sign-ins are already waiting for approval, the most this gateway holds; one frees up in ${freeInSeconds} s`,
      },
    },
  })
}

const decide = (h: Harness, fields: Record<string, string>) =>
  h.call('/login', { method: 'POST', body: new URLSearchParams(fields), key: null })

const poll = async (h: Harness, deviceCode: string) =>
  (await h.call('/v1/auth/device/token', { method: 'POST', json: { device_code: deviceCode }, key: null })).json()

describe('device sign-in: the cap on waiting codes', () => {
  test('past the cap a 429 says when the soonest code expires; once it has, a code is given again', async () => {
    const h = await gatewayWithCap(3)
    await newCode(h)
    h.clock.advance(100_000)
    await newCode(h)
    await newCode(h)
    // The first code expires 600 s after it was given, 500 s from now.
    await expectFull(h, 500, 3)

    h.clock.advance(500_000)
    await newCode(h)
    await expectFull(h, 100, 3)
  })

  test('approving a code frees its place; denying one does not, since anyone may deny', async () => {
    const h = await gatewayWithCap(2)
    const approved = await newCode(h)
    await newCode(h)
    await expectFull(h, 600, 2)

    const approval = await decide(h, { user_code: approved.user_code, api_key: h.key, decision: 'approve' })
    expect(approval.status).toBe(200)
    const denied = await newCode(h)
    expect((await decide(h, { user_code: denied.user_code, decision: 'deny' })).status).toBe(200)
    await expectFull(h, 600, 2)
  })

  test('an expired code answers expired_token for 10 minutes, then is deleted when a code is next asked for', async () => {
    const h = await gatewayWithCap(3)
    const old = await newCode(h)
    h.clock.advance(601_000)
    expect(await poll(h, old.device_code)).toMatchObject({ error: 'expired_token' })
    h.clock.advance(600_000)
    await newCode(h)
    expect(await poll(h, old.device_code)).toMatchObject({ error: 'invalid_grant' })
  })
})

describe('device sign-in: a code that can no longer be approved', () => {
  test('once its 10 minutes are up: /login says it is unknown or expired, approves nothing, and the device hears expired_token', async () => {
    const h = await gatewayWithCap(3)
    const late = await newCode(h)
    h.clock.advance(600_000)
    for (const res of [
      await h.call(`/login?code=${late.user_code}`, { key: null }),
      await decide(h, { user_code: late.user_code, api_key: h.key, decision: 'approve' }),
    ]) {
      expect(res.status).toBe(404)
      expect(await res.text()).toContain('unknown or expired code: run `svc login` again')
    }
    expect(await poll(h, late.device_code)).toMatchObject({ error: 'expired_token' })
  })

  test('already approved or denied: its link says the code was used, not which device asked', async () => {
    const h = await gatewayWithCap(3)
    const approved = await newCode(h)
    expect((await decide(h, { user_code: approved.user_code, api_key: h.key, decision: 'approve' })).status).toBe(200)
    const denied = await newCode(h)
    expect((await decide(h, { user_code: denied.user_code, decision: 'deny' })).status).toBe(200)
    for (const { user_code } of [approved, denied]) {
      const page = await h.call(`/login?code=${user_code}`, { key: null })
      expect(page.status).toBe(400)
      const html = await page.text()
      expect(html).toContain('this code was already used')
      expect(html).not.toContain('laptop')
    }
  })
})

test('a device name with control characters names its key without them', async () => {
  const h = await gatewayWithCap(3)
  const res = await h.call('/v1/auth/device/code', {
    method: 'POST',
    json: { device_name: 'lap\ttop\r\nx\u0007' },
    key: null,
  })
  const { device_code, user_code } = await res.json()
  expect((await decide(h, { user_code, api_key: h.key, decision: 'approve' })).status).toBe(200)
  const granted = await poll(h, device_code)
  const keys = await h.deps.ledger.listApiKeys(granted.account.id)
  expect(keys.find((k) => k.id === granted.key_id)?.name).toBe('device: lap top x')
})

describe('device sign-in: wrong codes on /login are rate-limited', () => {
  const wrongCode = 'BBBB-BBBB'
  const limited = (waitSeconds: number) => ({
    status: 429,
    retryAfter: String(waitSeconds),
    says: `too many wrong codes on this gateway: try again in ${waitSeconds} s`,
  })
  async function answer(res: Response) {
    const html = await res.text()
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      says: html.match(/<p><strong>([^<]*)<\/strong><\/p>/)?.[1] ?? html,
    }
  }

  test('after a burst of wrong guesses even the right code waits, on the page and in its form; then one guess per refill', async () => {
    const h = await gatewayWithCap(3)
    const real = await newCode(h)
    for (let i = 0; i < wrongCodeBurst; i++) {
      const res = await decide(h, { user_code: wrongCode, decision: 'deny' })
      expect(res.status).toBe(404)
    }
    const waitSeconds = Math.ceil(1 / wrongCodesPerSecond)
    // The right code is refused too: otherwise a guesser could tell a hit while limited.
    expect(await answer(await decide(h, { user_code: real.user_code, api_key: h.key, decision: 'approve' }))).toEqual(
      limited(waitSeconds),
    )
    expect(await answer(await h.call(`/login?code=${real.user_code}`, { key: null }))).toEqual(limited(waitSeconds))
    expect(await poll(h, real.device_code)).toMatchObject({ error: 'authorization_pending' })

    h.clock.advance(waitSeconds * 1000)
    // One wrong guess spends the refill...
    expect((await decide(h, { user_code: wrongCode, decision: 'deny' })).status).toBe(404)
    expect((await decide(h, { user_code: real.user_code, decision: 'deny' })).status).toBe(429)
    // ...and a right code after the next refill goes through.
    h.clock.advance(waitSeconds * 1000)
    const approval = await decide(h, { user_code: real.user_code, api_key: h.key, decision: 'approve' })
    expect(approval.status).toBe(200)
    expect(await poll(h, real.device_code)).toMatchObject({ token_type: 'bearer' })
  })

  test('right codes spend nothing: a team signing many devices in never meets the limit', async () => {
    const h = await gatewayWithCap(wrongCodeBurst + 5)
    for (let i = 0; i < wrongCodeBurst + 5; i++) {
      const { user_code } = await newCode(h)
      expect((await h.call(`/login?code=${user_code}`, { key: null })).status).toBe(200)
      expect((await decide(h, { user_code, api_key: h.key, decision: 'approve' })).status).toBe(200)
    }
  })
})
