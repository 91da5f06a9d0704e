// Usage metering for translated streams: one tap over the neutral events that keeps the latest
// cumulative usage (overwrite, never add), whether the upstream reported it, and how much text
// flowed, so a cut stream can still be charged for what the client received.
import type { StreamCodec } from '../exchange/stream-codec'
import { emptyUsage, type ExchangeEvent, overwriteUsage, type UpstreamErrorInfo, type Usage } from '../exchange/types'

export interface StreamMeter {
  usage: Usage
  /** The upstream reported output usage (Anthropic message_delta, Chat usage chunk, Responses completed). */
  reported: boolean
  finished: boolean
  /**
   * The upstream produced some event other than an error. Until then the client has received
   * nothing of this leg, so an in-band error or an empty stream may still fall back.
   */
  started: boolean
  outputChars: number
  error?: UpstreamErrorInfo
}

export const newStreamMeter = (): StreamMeter => ({
  usage: emptyUsage(),
  reported: false,
  finished: false,
  started: false,
  outputChars: 0,
})

/** The meter as a stream step: every event passes through unchanged, and is counted on the way. */
export const meterStep = (meter: StreamMeter): StreamCodec<ExchangeEvent, ExchangeEvent> => ({
  push(event) {
    observe(meter, event)
    return [event]
  },
  end: () => [],
  done: false,
})

function observe(meter: StreamMeter, event: ExchangeEvent): void {
  if (event.type !== 'error') meter.started = true
  switch (event.type) {
    case 'start':
      overwriteUsage(meter.usage, event.usage)
      break
    case 'text_delta':
      meter.outputChars += event.text.length
      break
    case 'thinking_delta':
      meter.outputChars += event.thinking.length
      break
    case 'tool_args_delta':
      meter.outputChars += event.partialJson.length
      break
    case 'usage':
      overwriteUsage(meter.usage, event.usage)
      if (event.usage.output !== undefined) meter.reported = true
      break
    case 'finish':
      meter.finished = true
      break
    case 'error':
      meter.error = event.error
      break
    default:
      break
  }
}

/** ≈ 4 characters a token: the estimate for output the upstream never reported. */
export const estimateTokensFromChars = (chars: number) => Math.ceil(chars / 4)
