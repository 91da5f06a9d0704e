// The streams being served right now. A request reaches the ledger in one write when it ends;
// until then the usage API finds a stream here, so a client can look up the id it got in the
// response headers while the answer is still streaming (status in_progress, legs uncommitted).
// Held in a Set and scanned by id: adding and removing cost nothing to hash, and reads are rare.
import type { GatewayError } from '../lib/errors'
import type { RequestTrace, RunningRequestSnapshot } from './trace'

export class RunningRequests {
  private readonly traces = new Set<RequestTrace>()

  add(trace: RequestTrace): void {
    this.traces.add(trace)
  }

  /** Called once the request's ledger write is queued: from then on the ledger answers for it. */
  remove(trace: RequestTrace): void {
    this.traces.delete(trace)
  }

  /** The running request with this id, if it belongs to the account (others' ids do not exist). */
  find(accountId: string, id: string): RequestTrace | undefined {
    for (const trace of this.traces)
      if (trace.ctx.id === id) return trace.ctx.accountId === accountId ? trace : undefined
    return undefined
  }

  /**
   * Ends every running stream with `why`: each stops its upstream, sends its client an error event
   * in the surface's shape (an SDK then sees an overloaded error to retry, not a reset connection)
   * and is recorded with what flowed. The number cut.
   */
  cutAll(why: GatewayError): number {
    this.cutting = why
    for (const trace of this.traces) trace.cut?.(why)
    return this.traces.size
  }

  /**
   * Why the drain's end cut what was running, once it has: the connections it then closes end the
   * requests not yet streaming (a JSON answer, a stream before its first byte), which must not be
   * recorded as their clients' aborts. They are not registered here to be told in words: held from
   * this long-lived registry, every request's trace cost 1.13 × the CPU of a small request at 64
   * connections, side by side (a handle of its attempt alone, 1.04 ×); a client's SDK retries the
   * reset as it retries any connection error.
   */
  cutting?: GatewayError

  /** The legs of the account's running requests. A scan of them all: reads are rare, requests are not. */
  legsOf(accountId: string): RunningRequestSnapshot['legs'] {
    const legs: RunningRequestSnapshot['legs'] = []
    for (const trace of this.traces) if (trace.ctx.accountId === accountId) legs.push(...trace.snapshot().legs)
    return legs
  }
}
