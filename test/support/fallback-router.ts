// A reference router written from the README's "Routing" section, not from src/router: which
// candidates a request under svc-pro tries, in which order, and what each failure does to a
// model's health. test/fallback-conversations.test.ts holds svc to it turn by turn.
//
// The rules it keeps (README, Routing):
//   [score]    pro = quality − 8 × log2(1 + blended), blended = (3 × input + output) / 4 USD per Mtok
//   [breaker]  "a circuit breaker that opens after 3 consecutive failures, lets one probe through
//              after 30 s (doubling to at most 5 min while probes fail) and closes on a success"
//   [cool]     "A 429/529 with retry-after (seconds or an HTTP date, at most an hour) cools the
//              candidate until then, or until it serves an answer … Open and cooling candidates
//              are ranked last, not removed"
//   [sticky]   "a session that a model served under a profile keeps that model there while it
//              stays healthy and eligible" (every session here is under svc-pro alone)
//   [dispatch] "tries the candidates in order (at most max_attempts)", 3 by default (svc init's
//              svc.toml), "falling back on connection errors, … 429, 5xx and 529"
import type { ProviderKind } from '../../src/config/schema'

/** A model under svc-pro: one per dialect, its prices in USD per Mtok. */
export interface RankedModel {
  id: string
  kind: ProviderKind
  quality: number
  prices: { input: number; output: number }
}

/**
 * How an upstream fails before the client has a byte: an HTTP error, or the connection reset
 * `afterMs` after the request arrived.
 */
export type Fault =
  | { kind: 'status'; status: 429 | 500 | 529; retryAfter?: number }
  | { kind: 'reset'; afterMs: number }

export type HealthState = 'closed' | 'open' | 'half_open' | 'cooling'

interface Health {
  consecutiveFailures: number
  /** 0 while closed; past it, half-open (one probe goes through). */
  openUntil: number
  cooldownMs: number
  coolingUntil: number
}

const failuresToOpen = 3
const firstCooldownMs = 30_000
const maxCooldownMs = 300_000
const maxRetryAfterSeconds = 3600
export const maxAttempts = 3
const proPriceWeight = 8

/** [score] */
export function proScore(model: RankedModel): number {
  const blended = (3 * model.prices.input + model.prices.output) / 4
  return model.quality - proPriceWeight * Math.log2(1 + blended)
}

/** What one request did: the ranking it saw, the candidates it tried in order, and who served. */
export interface Dispatch {
  order: string[]
  states: Record<string, HealthState>
  attempts: string[]
  served?: string
}

export class ReferenceRouter {
  private readonly health = new Map<string, Health>()

  constructor(private readonly models: readonly RankedModel[]) {
    for (const m of models)
      this.health.set(m.id, { consecutiveFailures: 0, openUntil: 0, cooldownMs: firstCooldownMs, coolingUntil: 0 })
  }

  private of(id: string): Health {
    return this.health.get(id)!
  }

  /** [breaker] [cool]: an open circuit first, then a retry-after that has not run out. */
  state(id: string, now: number): HealthState {
    const h = this.of(id)
    if (h.openUntil > now) return 'open'
    if (h.coolingUntil > now) return 'cooling'
    if (this.halfOpen(id, now)) return 'half_open'
    return 'closed'
  }

  /** [breaker]: the circuit opened and its wait is over: the next request may probe it. */
  halfOpen(id: string, now: number): boolean {
    const h = this.of(id)
    return h.openUntil > 0 && h.openUntil <= now
  }

  /** [cool]: open and cooling are ranked last; a half-open circuit keeps its place to let its probe through. */
  healthy(id: string, now: number): boolean {
    const state = this.state(id, now)
    return state === 'closed' || state === 'half_open'
  }

  /** [score] [cool] [sticky]: the dispatch order for a session last served by `sticky`. */
  ranked(now: number, sticky?: string): string[] {
    const order = [...this.models]
      .sort((a, b) => Number(this.healthy(b.id, now)) - Number(this.healthy(a.id, now)) || proScore(b) - proScore(a))
      .map((m) => m.id)
    if (sticky === undefined || !this.healthy(sticky, now)) return order
    return [sticky, ...order.filter((id) => id !== sticky)]
  }

  /** [dispatch]: tries the ranking in order until one answers; each outcome moves that model's health. */
  dispatch(now: number, sticky: string | undefined, faults: Partial<Record<string, Fault>>): Dispatch {
    const order = this.ranked(now, sticky)
    const states = Object.fromEntries(this.models.map((m) => [m.id, this.state(m.id, now)]))
    const attempts: string[] = []
    for (const id of order.slice(0, maxAttempts)) {
      attempts.push(id)
      const fault = faults[id]
      if (!fault) {
        this.succeeded(id)
        return { order, states, attempts, served: id }
      }
      this.failed(id, now, fault)
    }
    return { order, states, attempts }
  }

  /** [breaker]: closes, and the next opening waits the first cool-down again. [cool]: no longer cooling. */
  private succeeded(id: string) {
    Object.assign(this.of(id), { consecutiveFailures: 0, openUntil: 0, cooldownMs: firstCooldownMs, coolingUntil: 0 })
  }

  private failed(id: string, now: number, fault: Fault) {
    const h = this.of(id)
    const probe = this.halfOpen(id, now)
    h.consecutiveFailures++
    if (fault.kind === 'status' && fault.retryAfter !== undefined && (fault.status === 429 || fault.status === 529))
      h.coolingUntil = now + Math.min(fault.retryAfter, maxRetryAfterSeconds) * 1000
    if (probe) {
      h.cooldownMs = Math.min(h.cooldownMs * 2, maxCooldownMs)
      h.openUntil = now + h.cooldownMs
    } else if (h.openUntil === 0 && h.consecutiveFailures >= failuresToOpen) {
      h.openUntil = now + h.cooldownMs
    }
  }
}
