// What a same-shape relay knows of a stream it forwards, whatever its dialect: the usage so far,
// whether the answer began and finished, and the failure the upstream reported in-band.
import type { UpstreamErrorInfo, Usage } from '../exchange/types'

export interface PassThroughMeter {
  /** The upstream's latest cumulative usage; unreported (unreported-usage.ts) until its final counts come. */
  usage(): Usage
  /** The upstream finished the message: its usage is final, not an estimate (a failed answer is not finished). */
  finished(): boolean
  /** The answer has begun: content came (a block, an item, a delta) or it finished, not only its opening. */
  generated(): boolean
  /** Reported output tokens, or ~bytes/4 of the streamed deltas for a stream cut before its usage (token-estimate.ts). */
  estimatedOutputTokens(): number
  /** UTF-8 bytes of the streamed deltas (~, their JSON less its usual envelope). */
  outputBytes(): number
  /** The in-band error the upstream sent, if any. */
  error(): UpstreamErrorInfo | undefined
  /**
   * The stream showed more searches run than its reported usage lists (a compatible server's final
   * usage may list none): the usage is billed with them, and the client must be told it so.
   */
  searchesUnlisted(): boolean
}
