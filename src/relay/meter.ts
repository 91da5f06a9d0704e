// Usage metering for translated streams: one tap over the neutral events that keeps the latest
// cumulative usage (overwrite, never add), whether the upstream reported it, how much text flowed
// and how many searches ran, so a cut stream can still be charged for what the client received.
import type { StreamCodec } from '../exchange/stream-codec'
import { utf8Length } from '../exchange/token-estimate'
import { billedAsReported } from './credible-usage'
import { emptyUsage, type ExchangeEvent, overwriteUsage, type UpstreamErrorInfo, type Usage } from '../exchange/types'

export interface StreamMeter {
  usage: Usage
  /**
   * The upstream reported output usage (Anthropic message_delta, Chat usage chunk, Responses
   * completed): the decoders send a usage event only for a usage with numeric counts.
   */
  reported: boolean
  finished: boolean
  /** The upstream opened its message (a start event): what the client gets first, before any content. */
  opened: boolean
  /**
   * The upstream produced content: a block, a delta or the finish. Until then the client has
   * received nothing of this leg but the message's opening, so an in-band error or an empty stream
   * may still fall back (stream-answer.ts).
   */
  started: boolean
  outputBytes: number
  /** Web searches whose results streamed: charged, whatever the usage says, once they ran. */
  searches: number
  error?: UpstreamErrorInfo
}

export const newStreamMeter = (): StreamMeter => ({
  usage: emptyUsage(),
  reported: false,
  finished: false,
  opened: false,
  started: false,
  outputBytes: 0,
  searches: 0,
})

/**
 * The meter as a stream step: every event passes through unchanged, and is counted on the way.
 * `standIn`: the usage to tell the client where the upstream reported none, or counts no usage can
 * have (the estimate the ledger bills): a usage event of its own before the stream's last event
 * (its finish, an in-band error, or its end without either), which the meter does not count, so
 * the leg stays estimated. Without it, a client that tracks its context from usage (Claude Code,
 * Codex) would read zeros and never compact, and a Responses client's `response.failed` said 1
 * output token (message_start's) where dozens were billed.
 */
export const meterStep = (
  meter: StreamMeter,
  standIn?: (meter: StreamMeter) => Usage,
): StreamCodec<ExchangeEvent, ExchangeEvent> => ({
  push(event) {
    observe(meter, event)
    if (standIn && (event.type === 'finish' || event.type === 'error')) return [...standInUsage(meter, standIn), event]
    return [event]
  },
  end: () => (standIn && !meter.finished && !meter.error ? standInUsage(meter, standIn) : []),
  done: false,
})

/** The usage event to tell the client as a stream ends here: none where the upstream's own is billed as reported. */
export const standInUsage = (meter: StreamMeter, standIn: (meter: StreamMeter) => Usage): ExchangeEvent[] =>
  billedAsReported(meter.usage, meter.reported) ? [] : [{ type: 'usage', usage: standIn(meter) }]

function observe(meter: StreamMeter, event: ExchangeEvent): void {
  switch (event.type) {
    case 'start':
      meter.opened = true
      overwriteUsage(meter.usage, event.usage)
      return
    case 'usage':
      overwriteUsage(meter.usage, event.usage)
      if (event.usage.output !== undefined) meter.reported = true
      // The searches the client saw run are charged even where the usage counts fewer.
      if (meter.searches > (meter.usage.webSearches ?? 0)) meter.usage.webSearches = meter.searches
      return
    case 'error':
      meter.error = event.error
      return
    case 'block_start':
      // A search is billed once it has run (an error is not): one that found something has.
      if (event.block.kind === 'web_search' && 'results' in event.block.search.outcome) {
        meter.searches++
        if (meter.searches > (meter.usage.webSearches ?? 0)) meter.usage.webSearches = meter.searches
      }
      break
    case 'text_delta':
      meter.outputBytes += utf8Length(event.text)
      break
    case 'thinking_delta':
      meter.outputBytes += utf8Length(event.thinking)
      break
    case 'tool_args_delta':
      meter.outputBytes += utf8Length(event.partialJson)
      break
    case 'finish':
      // An answer that says it broke off (OpenRouter's finish_reason "error") failed, as an error would.
      if (event.reason === 'error') meter.error ??= brokeOff
      else meter.finished = true
      break
    default:
      break
  }
  // Content (blocks, deltas, the finish): what the client sees as the answer.
  meter.started = true
}

// svc's own words for a broken answer, a fault of the gateway's kind (500), not an upstream's overload.
const brokeOff: UpstreamErrorInfo = { status: 500, type: 'api_error', message: 'upstream answer ended in an error' }
