// The requests being served right now. A request reaches the ledger in one write when it ends;
// until then the usage API finds it here, so a client can look up the id it got in a stream's
// response headers while the answer is still streaming (status in_progress, legs uncommitted), and
// the drain's end can end each with an error in its client's shape (cutAll).
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
   * Ends every running request with `why`: each stops its upstream and tells its client in the
   * surface's shape, a stream with an error event, any other with an error answer (an SDK then sees
   * an overloaded error to retry, not a reset connection), and is recorded with what flowed. The
   * number cut.
   */
  cutAll(why: GatewayError): number {
    for (const trace of this.traces) trace.cut?.(why)
    return this.traces.size
  }

  /** The legs of the account's running requests. A scan of them all: reads are rare, requests are not. */
  legsOf(accountId: string): RunningRequestSnapshot['legs'] {
    const legs: RunningRequestSnapshot['legs'] = []
    for (const trace of this.traces) if (trace.ctx.accountId === accountId) legs.push(...trace.snapshot().legs)
    return legs
  }
}
