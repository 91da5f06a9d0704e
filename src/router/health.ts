// Upstream health per provider × model × whose key, in memory: time to first byte and error rate
// as exponentially weighted averages, and a circuit breaker. The breaker opens after consecutive
// failures, lets one probe through after a cool-down (doubling while probes fail), and closes on
// a success. A 429/529 with retry-after keeps the candidate cooling until that time.
//
// An account's own key (BYOK) is tracked apart from the platform's: it has its own rate limits,
// quota and validity, so one account's revoked or exhausted key must not steer every other
// account away from the model, nor the platform key's rate limit send a BYOK account to another
// model at the full price. The cost: each BYOK account learns of a provider's outage by itself.

export interface HealthPolicy {
  failuresToOpen: number
  cooldownMs: number
  maxCooldownMs: number
}

export const defaultHealthPolicy: HealthPolicy = { failuresToOpen: 3, cooldownMs: 30_000, maxCooldownMs: 300_000 }

interface Entry {
  ttfbMs: number | null
  errorRate: number
  consecutiveFailures: number
  openUntil: number
  cooldownMs: number
  /** The claim holding the half-open circuit's probe; 0 while none is in flight. */
  probe: ProbeClaim
  retryAfterUntil: number
}

/**
 * A request's claim on a half-open circuit's probe, 0 for none. Each claim has its own number, so
 * a request releasing its probe late (a long answer's end) cannot free a later request's probe of
 * the same model: that would let a third request through to a model still suspect.
 */
export type ProbeClaim = number

export interface HealthView {
  state: 'closed' | 'open' | 'half_open' | 'cooling'
  ttfb_ms: number | null
  error_rate: number
  /** When the candidate may be tried normally again (open circuit or retry-after). */
  until?: string
}

/** Weight of the newest observation in the moving averages. */
const alpha = 0.2

/** Whose key a candidate is served with, as health tracks it: the account's own, or the platform's (undefined). */
export const keyOwnerOf = (byok: boolean, accountId: string) => (byok ? accountId : undefined)

/**
 * `elapsed` times the cool-downs (monotonic: performance.now() when serving), `wall` dates them for
 * the ranking's `until`. Timed by the wall clock, a cool-down that began just before NTP stepped it
 * back 10 minutes kept its model last for 10.5 minutes instead of 30 s (an audit).
 */
export interface HealthClocks {
  elapsed: () => number
  wall: () => number
}

export function createHealth({ elapsed: clock, wall }: HealthClocks, policy: HealthPolicy = defaultHealthPolicy) {
  /** A deadline on the elapsed clock, as the wall-clock time the ranking shows. */
  const wallTime = (deadline: number, now: number) => new Date(wall() + (deadline - now)).toISOString()
  const entries = new Map<string, Entry>()
  let claims = 0
  /** `keyOwner`: the account whose own key serves the model; undefined for the platform's key. */
  const keyOf = (providerId: string, modelId: string, keyOwner?: string) =>
    keyOwner === undefined ? `${providerId}\u0000${modelId}` : `${providerId}\u0000${modelId}\u0000${keyOwner}`
  const entry = (providerId: string, modelId: string, keyOwner?: string): Entry => {
    const key = keyOf(providerId, modelId, keyOwner)
    let e = entries.get(key)
    if (!e) {
      e = {
        ttfbMs: null,
        errorRate: 0,
        consecutiveFailures: 0,
        openUntil: 0,
        cooldownMs: policy.cooldownMs,
        probe: 0,
        retryAfterUntil: 0,
      }
      entries.set(key, e)
    }
    return e
  }

  const succeeded = (e: Entry) => {
    e.errorRate += alpha * (0 - e.errorRate)
    e.consecutiveFailures = 0
    e.openUntil = 0
    // An answer served says the rate limit is over, whatever retry-after asked (a proxy may ask an hour).
    e.retryAfterUntil = 0
    e.probe = 0
    e.cooldownMs = policy.cooldownMs
  }

  return {
    /** Whether to try this candidate in its ranked place, or only after every healthy one. */
    view(providerId: string, modelId: string, keyOwner?: string): HealthView {
      const e = entries.get(keyOf(providerId, modelId, keyOwner))
      if (!e) return { state: 'closed', ttfb_ms: null, error_rate: 0 }
      const now = clock()
      const base = {
        ttfb_ms: e.ttfbMs === null ? null : Math.round(e.ttfbMs),
        error_rate: Math.round(e.errorRate * 1000) / 1000,
      }
      if (e.openUntil > now) return { ...base, state: 'open', until: wallTime(e.openUntil, now) }
      // The provider's own retry-after outlasts the breaker's wait: no probe before it has passed.
      if (e.retryAfterUntil > now) return { ...base, state: 'cooling', until: wallTime(e.retryAfterUntil, now) }
      if (e.openUntil > 0 && !e.probe) return { ...base, state: 'half_open' }
      if (e.openUntil > 0 && e.probe) return { ...base, state: 'open', until: 'after the probe in flight' }
      return { ...base, state: 'closed' }
    },

    /**
     * A half-open circuit lets exactly one request through; the relay claims it before sending.
     * A claim (non-zero) when this call took the probe: the caller then owes a verdict (success,
     * failure or a release with that claim).
     */
    claimProbe(providerId: string, modelId: string, keyOwner?: string): ProbeClaim {
      const e = entry(providerId, modelId, keyOwner)
      if (e.openUntil === 0 || e.openUntil > clock() || e.probe) return 0
      e.probe = ++claims
      return e.probe
    },

    /**
     * A probe that ended with no verdict on the provider (the client went away, or the upstream
     * rejected the client's own request): without this the circuit would stay "open after the
     * probe in flight" for good. Back to half-open, so the next request probes again. A no-op once
     * a verdict ended the claim, and so for a probe another request has claimed since.
     */
    releaseProbe(providerId: string, modelId: string, claim: ProbeClaim, keyOwner?: string) {
      const e = entries.get(keyOf(providerId, modelId, keyOwner))
      if (e && claim && e.probe === claim) e.probe = 0
    },

    /**
     * How long the candidate took to its first byte: no verdict yet, as a stream may still fail.
     * `whole`: the byte carries the whole answer (JSON), so it is the success as well, in one lookup.
     */
    recordFirstByte(providerId: string, modelId: string, ttfbMs: number, keyOwner?: string, whole = false) {
      const e = entry(providerId, modelId, keyOwner)
      e.ttfbMs = e.ttfbMs === null ? ttfbMs : e.ttfbMs + alpha * (ttfbMs - e.ttfbMs)
      if (whole) succeeded(e)
    },

    /** The candidate served its answer whole (a stream to its end). */
    recordSuccess(providerId: string, modelId: string, keyOwner?: string) {
      succeeded(entry(providerId, modelId, keyOwner))
    },

    /**
     * `claim`: the probe the failed request took, if any. Only its own failure ends a probe: a
     * request that claimed before a success closed the circuit, failing after a new outage
     * reopened it, ended the probe in flight, and the next cool-down let a second one through.
     */
    recordFailure(
      providerId: string,
      modelId: string,
      opts: { retryAfterSeconds?: number } = {},
      keyOwner?: string,
      claim: ProbeClaim = 0,
    ) {
      const e = entry(providerId, modelId, keyOwner)
      const now = clock()
      e.errorRate += alpha * (1 - e.errorRate)
      e.consecutiveFailures++
      if (opts.retryAfterSeconds !== undefined) e.retryAfterUntil = now + opts.retryAfterSeconds * 1000
      if (e.probe && e.probe === claim) {
        // The probe failed: stay open, and wait longer before the next one.
        e.cooldownMs = Math.min(e.cooldownMs * 2, policy.maxCooldownMs)
        e.openUntil = now + e.cooldownMs
        e.probe = 0
      } else if (e.consecutiveFailures >= policy.failuresToOpen && e.openUntil === 0) {
        e.openUntil = now + e.cooldownMs
      }
    },

    /**
     * Forgets what the account's own key for the provider taught, on every model: the account
     * stored another key there, or removed it. The old key's failures (a revoked key, an account
     * out of credit) said nothing of the new one, and an open circuit would have kept the new key
     * untried for up to maxCooldownMs, the platform's key serving meanwhile at the full price.
     */
    forgetOwnKey(providerId: string, accountId: string) {
      for (const key of entries.keys()) {
        const [provider, , owner] = key.split('\u0000')
        if (provider === providerId && owner === accountId) entries.delete(key)
      }
    },

    openCircuits(): number {
      const now = clock()
      let n = 0
      for (const e of entries.values()) if (e.openUntil > now || e.probe) n++
      return n
    },
  }
}

export type Health = ReturnType<typeof createHealth>
