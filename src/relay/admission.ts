// How many model requests svc takes on at once, by the memory each is expected to hold. Past the
// budget a request is answered 529 `overloaded_error` (503 on the responses route), which the SDKs
// and the agents retry after a backoff, instead of svc growing until the kernel kills it with every
// stream it holds (an audit: 1,000 agent-sized streams at once in a 256 MiB container). Counted,
// not measured: the process's RSS stays up after a burst (freed memory is kept for reuse), so
// shedding on it would go on refusing long after the burst has gone.
import { GatewayError } from '../lib/errors'

/**
 * What a request holds while in flight, by its body's size: the parsed body, the upstream's copy
 * of it and the answer's buffers, plus the trace and the connections' own. Measured in a container:
 * 1,000 streams of ~100 KB agent requests at once took 301 MB above the idle gateway passed
 * through, 377 MB translated (Responses in, Anthropic upstream), where this says 366 MB; the
 * default budget's reserve (defaultRequestBudget) covers the difference.
 */
export const expectedBytes = (bodyBytes: number): number => perRequestBytes + Math.ceil(perBodyByte * bodyBytes)
const perRequestBytes = 64 * 1024
const perBodyByte = 3

/** A request's place in the budget, given back once (release is idempotent). */
export interface Admission {
  bytes: number
}

/** A request waiting for room in the budget, before the relay reads its body. */
interface Waiter {
  bytes: number
  /** Its body's declared size: Bun reads a waiting request's body into memory all the same. */
  bodyBytes: number
  admitted: (admission: Admission) => void
  refused: (error: GatewayError) => void
  timer: ReturnType<typeof setTimeout>
}

/**
 * At most this many wait at once, their bodies together at most a quarter of the budget (or one
 * body of any size); more are refused at once. Bun reads a waiting request's body as it arrives,
 * unasked: a burst of 1,000 bodies of 1 MB left waiting filled a 256 MiB container and froze svc,
 * where refused at once it served 31 and refused the rest within its limit (measured in a cgroup).
 */
const mostWaiting = 1024
const waitingShareOfBudget = 1 / 4

export class RequestAdmission {
  private heldBytes = 0
  private inFlight = 0
  /** Places taken by a request's headers, before its body is read, until the relay claims them. */
  private readonly taken = new WeakMap<Request, Admission>()
  /** First come, first served: a large request is not passed over for ever by small ones. */
  private readonly waiting: Waiter[] = []
  private waitingBodyBytes = 0

  /**
   * `budgetBytes`: what the requests in flight may hold together (config server.request_memory_mb);
   * `waitMs`: how long a request that does not fit waits for room before its 529
   * (server.request_wait_seconds).
   */
  constructor(
    readonly budgetBytes: number,
    readonly waitMs = 0,
  ) {}

  /** A request alone is always taken, whatever its size: a body over the whole budget is served alone. */
  private fits(bytes: number): boolean {
    return this.inFlight === 0 || this.heldBytes + bytes <= this.budgetBytes
  }

  private take(bytes: number): Admission {
    this.heldBytes += bytes
    this.inFlight++
    return { bytes }
  }

  /** The request's place now, or the 529 that turns it away (a caller with its body read already). */
  admit(bodyBytes: number): Admission {
    const bytes = expectedBytes(bodyBytes)
    if (this.waiting.length > 0 || !this.fits(bytes)) throw this.full()
    return this.take(bytes)
  }

  /**
   * The request's place, taken by its declared size before its body is read (app.ts): a burst of
   * large bodies refused only once read and parsed filled memory all the same (an audit: 1,000
   * bodies of 1 MB killed svc in 256 MiB, and froze it in 512). Where there is no room the request
   * waits for some (Bun reading its body meanwhile), up to waitMs: the SDKs' two retries a second
   * apart gave up on most of a burst whose streams last longer (an audit: 470 of 1,000 failed).
   * Undefined when the place is taken at once (nearly always, and then nothing waits); otherwise a
   * promise of it, rejected with the 529.
   */
  admitBeforeBody(request: Request, bodyBytes: number): Promise<void> | undefined {
    const bytes = expectedBytes(bodyBytes)
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.taken.set(request, this.take(bytes))
      return undefined
    }
    // A client gone already (a large body's key was looked up first) takes no turn.
    if (request.signal.aborted || !this.mayWait(bodyBytes)) return Promise.reject(this.full())
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        bodyBytes,
        admitted: (admission) => {
          request.signal.removeEventListener('abort', leave)
          this.taken.set(request, admission)
          resolve()
        },
        refused: (error) => {
          request.signal.removeEventListener('abort', leave)
          reject(error)
        },
        timer: setTimeout(() => {
          this.leave(waiter)
          request.signal.removeEventListener('abort', leave)
          reject(this.full())
        }, this.waitMs),
      }
      // A client that leaves while it waits gives up its turn.
      const leave = () => {
        this.leave(waiter)
        reject(this.full())
      }
      request.signal.addEventListener('abort', leave, { once: true })
      this.waiting.push(waiter)
      this.waitingBodyBytes += bodyBytes
    })
  }

  private mayWait(bodyBytes: number): boolean {
    return (
      this.waitMs > 0 &&
      this.waiting.length < mostWaiting &&
      // One waits whatever its size, as one is served whatever its size.
      (this.waiting.length === 0 || this.waitingBodyBytes + bodyBytes <= this.budgetBytes * waitingShareOfBudget)
    )
  }

  /** Takes the waiter out of the line; a head that leaves (timed out, its client gone) lets the next go. */
  private leave(waiter: Waiter): void {
    this.dequeue(waiter)
    this.admitWaiting()
  }

  private dequeue(waiter: Waiter): void {
    clearTimeout(waiter.timer)
    const at = this.waiting.indexOf(waiter)
    if (at === -1) return
    this.waiting.splice(at, 1)
    this.waitingBodyBytes -= waiter.bodyBytes
  }

  /** Those waiting go, in their order, while the next fits. */
  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting[0]!
      this.dequeue(next)
      next.admitted(this.take(next.bytes))
    }
  }

  /** At shutdown: every request waiting gets its 529 now (no new upstream call as the drain ends). */
  refuseWaiting(): void {
    for (const waiter of [...this.waiting]) {
      this.dequeue(waiter)
      waiter.refused(this.full())
    }
  }

  /** The place admitBeforeBody took for the request, now the caller's to give back. */
  claim(request: Request): Admission | undefined {
    const admission = this.taken.get(request)
    if (admission) this.taken.delete(request)
    return admission
  }

  /** Gives back a place no relay claimed: the request was refused before it was routed. */
  releaseUnclaimed(request: Request): void {
    this.release(this.claim(request))
  }

  release(admission: Admission | undefined): void {
    if (!admission || admission.bytes === 0) return
    this.heldBytes -= admission.bytes
    this.inFlight--
    admission.bytes = 0
    // The room it leaves goes to those waiting, in their order.
    this.admitWaiting()
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

/**
 * The budget when the config sets none: the memory limit less what the idle gateway takes. In a
 * container that is ~113 MB, ~93 of them the binary's own pages in the page cache, which the cgroup
 * counts (an audit); with 128 MB set aside, 1,000 translated agent streams peaked at 499 of 512 MB.
 */
export function defaultRequestBudget(memoryLimitBytes: number): number {
  return Math.max(memoryLimitBytes / 4, memoryLimitBytes - reservedBytes)
}
const reservedBytes = 160 * 1024 ** 2
