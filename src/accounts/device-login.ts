// Device sign-in, after RFC 8628: the CLI asks for a code pair, the user approves the short code
// on /login with proof of who they are, and the CLI's next poll receives a new API key of that
// account named after the device. Codes expire, are single-use, and polling too fast slows down.
import { randomBytes } from 'node:crypto'
import type { DeviceCodeRecord, Ledger } from '../ledger/ledger'
import { GatewayError } from '../lib/errors'
import { hashApiKey, issueApiKey } from './api-keys'

/** No vowels or look-alikes, so a code never spells a word or gets misread (RFC 8628 §6.1). */
const userCodeAlphabet = 'BCDFGHJKLMNPQRSTVWXZ'
export const deviceCodeLifetimeSeconds = 600
/** How much a poller that ignores `interval` is slowed each time (RFC 8628 §3.5). */
const slowDownStepSeconds = 5
/**
 * Asking for a code needs no credentials, so without a cap anyone could fill the table. A thousand
 * sign-ins waiting at once is far beyond what a team's CLIs start in ten minutes.
 */
export const maxWaitingDeviceCodes = 1000
/** An expired code is kept this long, so that a poll arriving late hears expired_token, not invalid_grant. */
const expiredCodeRetentionMs = deviceCodeLifetimeSeconds * 1000
/**
 * Wrong user codes on /login, gateway-wide (RFC 8628 §5.1: a short code must be rate-limited). A
 * typo or two never meets the limit; a guesser gets one try in two seconds after the first 30, so
 * finding one of 1,000 waiting codes among 20^8 takes about 1.6 years instead of hours. Counted for
 * the whole gateway, not per client: behind a proxy every client has the proxy's address. While
 * someone guesses, real users wait too, and an operator can still sign a device in with
 * `svc keys create`.
 */
export const wrongCodeBurst = 30
export const wrongCodesPerSecond = 0.5

export type PollResult =
  | { ok: true; key: string; keyId: string; account: { id: string; name: string } }
  | {
      ok: false
      error: 'authorization_pending' | 'slow_down' | 'expired_token' | 'access_denied' | 'invalid_grant'
      description: string
    }

function newUserCode(): string {
  const bytes = randomBytes(8)
  let code = ''
  for (const byte of bytes) code += userCodeAlphabet[byte % userCodeAlphabet.length]
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/** Users type codes with or without the dash, in any case. */
export const normalizeUserCode = (input: string) => {
  const letters = input.toUpperCase().replace(/[^A-Z]/g, '')
  return letters.length === 8 ? `${letters.slice(0, 4)}-${letters.slice(4)}` : letters
}

export function createDeviceLogin(deps: {
  ledger: Ledger
  /** Dates the codes (their rows' expiry, polls). */
  clock: () => number
  /**
   * Times the limits held in memory (waiting places, wrong codes): monotonic when serving, so a
   * wall clock that NTP steps back neither holds a place nor locks sign-ins out for the step.
   * The clock unless given (a test's, moved by hand).
   */
  elapsed?: () => number
  intervalSeconds: number
  /** How many codes may wait for approval at once; maxWaitingDeviceCodes unless given. */
  maxWaitingCodes?: number
}) {
  const { ledger, clock } = deps
  const elapsed = deps.elapsed ?? clock
  const maxWaiting = deps.maxWaitingCodes ?? maxWaitingDeviceCodes
  /**
   * Codes this process issued that are neither expired nor approved: device-code hash → when its
   * place frees (on the elapsed clock).
   * A denied code keeps its place until it expires, since anyone may deny a code they started.
   * Counted in memory by the issuing process: a restart starts afresh, and the codes from before
   * it expire within ten minutes.
   */
  const waiting = new Map<string, number>()
  const wrongCodes = tokenBucket(wrongCodeBurst, wrongCodesPerSecond, elapsed)

  /**
   * Takes a place for a new code, or refuses it while every place is taken, until the soonest
   * expires. Checked and taken in one synchronous step, so concurrent requests cannot overshoot.
   */
  function takeWaitingPlace(deviceCodeHash: string) {
    const now = elapsed()
    for (const [hash, expiry] of waiting) if (expiry <= now) waiting.delete(hash)
    if (waiting.size >= maxWaiting) {
      const freeInSeconds = Math.ceil((Math.min(...waiting.values()) - now) / 1000)
      throw new GatewayError(
        'rate_limit',
        `${maxWaiting} sign-ins are already waiting for approval, the most this gateway holds; one frees up in ${freeInSeconds} s`,
        { retryAfterSeconds: freeInSeconds },
      )
    }
    waiting.set(deviceCodeHash, now + deviceCodeLifetimeSeconds * 1000)
  }

  async function pendingByUserCode(userCode: string): Promise<DeviceCodeRecord> {
    // Checked before the lookup: while the limit holds, a right guess cannot be told from a wrong one.
    const waitSeconds = wrongCodes.secondsUntilNext()
    if (waitSeconds > 0)
      throw new GatewayError('rate_limit', `too many wrong codes on this gateway: try again in ${waitSeconds} s`, {
        retryAfterSeconds: waitSeconds,
      })
    const row = await ledger.findDeviceCode({ userCode: normalizeUserCode(userCode) })
    if (!row || row.expiresAt <= clock()) {
      wrongCodes.take()
      throw new GatewayError('not_found', 'unknown or expired code: run `svc login` again')
    }
    if (row.status !== 'pending') throw new GatewayError('invalid_request', 'this code was already used')
    return row
  }

  return {
    async start(deviceName: string) {
      const deviceCode = randomBytes(32).toString('base64url')
      const userCode = newUserCode()
      const now = clock()
      const deviceCodeHash = hashApiKey(deviceCode)
      const expiresAt = now + deviceCodeLifetimeSeconds * 1000
      takeWaitingPlace(deviceCodeHash)
      // Each sign-in sweeps codes long expired: with creation capped, the table stays small.
      await ledger.purgeDeviceCodes(now - expiredCodeRetentionMs)
      await ledger.insertDeviceCode({
        deviceCodeHash,
        userCode,
        // It names the device's API key: no control characters (they break `svc keys list`), as key names.
        deviceName:
          deviceName
            .replace(/[\p{Cc}\u2028\u2029]+/gu, ' ')
            .trim()
            .slice(0, 100) || 'device',
        status: 'pending',
        accountId: null,
        createdAt: now,
        expiresAt,
        lastPollAt: null,
        intervalSeconds: deps.intervalSeconds,
      })
      return { deviceCode, userCode, expiresIn: deviceCodeLifetimeSeconds, interval: deps.intervalSeconds }
    },

    /** Shows what is being approved before the user decides. */
    describe: async (userCode: string) => {
      const row = await pendingByUserCode(userCode)
      return { userCode: row.userCode, deviceName: row.deviceName }
    },

    async decide(userCode: string, decision: { approve: true; accountId: string } | { approve: false }) {
      const row = await pendingByUserCode(userCode)
      const moved = await ledger.transitionDeviceCode(
        row.deviceCodeHash,
        'pending',
        decision.approve ? { status: 'approved', accountId: decision.accountId } : { status: 'denied' },
      )
      if (!moved) throw new GatewayError('invalid_request', 'this code was already used')
      if (decision.approve) waiting.delete(row.deviceCodeHash)
      return { deviceName: row.deviceName }
    },

    async poll(deviceCode: string): Promise<PollResult> {
      const hash = hashApiKey(deviceCode)
      const row = await ledger.findDeviceCode({ deviceCodeHash: hash })
      const now = clock()
      if (!row || row.status === 'consumed') {
        return { ok: false, error: 'invalid_grant', description: 'unknown or already used device code' }
      }
      if (row.expiresAt <= now)
        return { ok: false, error: 'expired_token', description: 'the code expired: run `svc login` again' }
      if (row.status === 'denied') return { ok: false, error: 'access_denied', description: 'the sign-in was denied' }
      if (row.status === 'pending') {
        // A wall clock stepped back since the last poll is no poll too soon.
        const sinceLast = row.lastPollAt === null ? Number.POSITIVE_INFINITY : now - row.lastPollAt
        const tooSoon = sinceLast >= 0 && sinceLast < row.intervalSeconds * 1000
        await ledger.transitionDeviceCode(hash, 'pending', {
          lastPollAt: now,
          ...(tooSoon ? { intervalSeconds: row.intervalSeconds + slowDownStepSeconds } : {}),
        })
        return tooSoon
          ? {
              ok: false,
              error: 'slow_down',
              description: `poll at most every ${row.intervalSeconds + slowDownStepSeconds} s`,
            }
          : { ok: false, error: 'authorization_pending', description: 'waiting for approval on the /login page' }
      }
      // Approved: exactly one poll wins the key.
      const consumed = await ledger.transitionDeviceCode(hash, 'approved', { status: 'consumed' })
      if (!consumed?.accountId) return { ok: false, error: 'invalid_grant', description: 'already used device code' }
      const account = await ledger.getAccount(consumed.accountId)
      if (!account) return { ok: false, error: 'invalid_grant', description: 'the approving account no longer exists' }
      const { key, record } = await issueApiKey(ledger, account.id, `device: ${consumed.deviceName}`)
      return { ok: true, key, keyId: record.id, account: { id: account.id, name: account.name } }
    },
  }
}

export type DeviceLogin = ReturnType<typeof createDeviceLogin>

/** Up to `burst` events at once, refilled at `perSecond`; `secondsUntilNext` is 0 while one is left. */
function tokenBucket(burst: number, perSecond: number, elapsed: () => number) {
  let tokens = burst
  let at = elapsed()
  const refill = () => {
    const now = elapsed()
    tokens = Math.min(burst, tokens + ((now - at) / 1000) * perSecond)
    at = now
  }
  return {
    secondsUntilNext() {
      refill()
      return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / perSecond)
    },
    take() {
      refill()
      tokens = Math.max(0, tokens - 1)
    },
  }
}
