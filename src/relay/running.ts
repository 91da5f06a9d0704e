// The requests being served right now, by id. A request reaches the ledger in one write when it
// ends; until then the usage API finds it here, so a client can look up the id it got in the
// response headers while the answer is still streaming (status in_progress, legs uncommitted).
import type { RequestTrace, RunningRequestSnapshot } from './trace'

export class RunningRequests {
  private readonly byId = new Map<string, RequestTrace>()

  add(trace: RequestTrace): void {
    this.byId.set(trace.ctx.id, trace)
  }

  /** Called once the request's ledger write is queued: from then on the ledger answers for it. */
  remove(id: string): void {
    this.byId.delete(id)
  }

  /** The running request with this id, if it belongs to the account (others' ids do not exist). */
  find(accountId: string, id: string): RequestTrace | undefined {
    const trace = this.byId.get(id)
    return trace?.ctx.accountId === accountId ? trace : undefined
  }

  /** The legs of the account's running requests. A scan of them all: reads are rare, requests are not. */
  legsOf(accountId: string): RunningRequestSnapshot['legs'] {
    const legs: RunningRequestSnapshot['legs'] = []
    for (const trace of this.byId.values()) if (trace.ctx.accountId === accountId) legs.push(...trace.snapshot().legs)
    return legs
  }
}
