// One attempt whose upstream answered 2xx: what the JSON, streamed and gathered answers all work from.
import type { ProbeClaim } from '../router/health'
import type { ResumePausedTurn } from './paused-turn'
import type { Usage } from '../exchange/types'
import type { ClientIds, InboundSurface } from './surface'
import type { LegDraft, RequestTrace } from './trace'

export interface AnsweredAttempt {
  surface: InboundSurface
  /** The client's body, as parsed. */
  body: Record<string, unknown>
  trace: RequestTrace
  /**
   * This attempt's leg; its candidate names the model and provider. A turn the upstream paused and
   * svc sent back goes on in a leg of its own, which takes this place (paused-turn.ts).
   */
  leg: LegDraft
  upstream: Response
  ids: ClientIds
  /** Aborts the upstream call: when the client goes away, on a timeout. */
  controller: AbortController
  /** The request id's headers, on every answer. */
  idHeader: Record<string, string>
  /** The key the upstream was called with: never in what the client, the log or the ledger get. */
  apiKey: string
  /** When the upstream request went out (performance.now()): a non-streaming answer is due first_byte_timeout_ms after. */
  sentAt: number
  /** The half-open circuit's probe this attempt took, if any (health.ts): its verdict is owed. */
  probe: ProbeClaim
  /**
   * Where svc goes on with a turn the upstream pauses (paused-turn.ts): sends it back, and tells
   * what the answer's legs before one were billed.
   */
  pausedTurn?: { resume: ResumePausedTurn; billedBefore: (leg: LegDraft) => Usage }
}
