// How many model requests svc takes on at once, by the memory each is expected to hold. Past the
// budget a request is answered 529 `overloaded_error` (503 on the responses route), which the SDKs
// and the agents retry after a backoff, instead of svc growing until the kernel kills it with every
// stream it holds (an audit: 1,000 agent-sized streams at once in a 256 MiB container). Counted,
// not measured: the process's RSS stays up after a burst (freed memory is kept for reuse), so
// shedding on it would go on refusing long after the burst has gone.
import { GatewayError } from '../lib/errors'

/**
 * What a request holds while in flight, by its body's size: the parsed body, the upstream's copy
 * of it and the answer's buffers, plus the trace and the connections' own. Measured in the binary:
 * 1,000 streams of ~100 KB agent requests at once took 273 MB above the idle gateway's RSS, about
 * 2.7 × a body; the estimate leans above that.
 */
export const expectedBytes = (bodyBytes: number): number => perRequestBytes + Math.ceil(perBodyByte * bodyBytes)
const perRequestBytes = 64 * 1024
const perBodyByte = 3

/** A request's place in the budget, given back once (release is idempotent). */
export interface Admission {
  bytes: number
}

export class RequestAdmission {
  private heldBytes = 0
  private inFlight = 0

  /** `budgetBytes`: what the requests in flight may hold together (config server.request_memory_mb). */
  constructor(readonly budgetBytes: number) {}

  /**
   * The request's place, or the 529 that turns it away. A request alone is always taken, whatever
   * its size: a body over the whole budget is still served when nothing else is in flight.
   */
  admit(bodyBytes: number): Admission {
    const bytes = expectedBytes(bodyBytes)
    if (this.inFlight > 0 && this.heldBytes + bytes > this.budgetBytes) throw this.full()
    this.heldBytes += bytes
    this.inFlight++
    return { bytes }
  }

  release(admission: Admission | undefined): void {
    if (!admission || admission.bytes === 0) return
    this.heldBytes -= admission.bytes
    this.inFlight--
    admission.bytes = 0
  }

  private full(): GatewayError {
    const mb = (bytes: number) => Math.round(bytes / 1024 ** 2)
    return new GatewayError(
      'overloaded',
      `svc is serving as many requests as its memory allows (${this.inFlight} in flight, about ${mb(this.heldBytes)} of ${mb(this.budgetBytes)} MB): retry shortly`,
      { retryAfterSeconds: 1, gatewayFault: true },
    )
  }
}

/** The budget when the config sets none: the memory limit less what the idle gateway and its heap's slack take. */
export function defaultRequestBudget(memoryLimitBytes: number): number {
  return Math.max(memoryLimitBytes / 4, memoryLimitBytes - reservedBytes)
}
const reservedBytes = 128 * 1024 ** 2
