// Usage accounting for the Anthropic byte pass-through relay, and the frames it changes. Only the
// few frames that carry usage, ids or errors are parsed. message_start goes under the gateway's
// message id (with the usage svc bills where it had none), a message_delta's usage is replaced
// where svc bills other counts, and a message_stop is made up for a stream that ended cleanly after
// its stop reason; every other frame is forwarded untouched.

import { reportedOrEstimatedOutput, utf8Length } from '../../exchange/token-estimate'
import { emptyUsage, overwriteUsage, type UpstreamErrorInfo } from '../../exchange/types'
import { encodeSse, type SseEvent } from '../sse'
import { isObject, parseJson, readObject, readString, replaceStringMember } from '../wire-values'
import { statusForAnthropicErrorType } from './errors'
import { markUnreported } from '../unreported-usage'
import type { PassThroughMeter } from '../pass-through-meter'
import { type AnthropicUsage, anthropicUsage, anthropicUsagePartial, startUsage } from './usage'

/**
 * Usage is zeros until message_start, and unreported until a message_delta gives the output count
 * (message_start's is 1); finished once message_stop went by, with its usage or not.
 */
export interface AnthropicPassThroughMeter extends PassThroughMeter {
  observe(event: SseEvent): void
  /**
   * The body ended cleanly without message_stop, as some compatible servers and proxies end right
   * after message_delta: the message is finished if that delta named a stop reason (message_stop
   * carries nothing). Returns the message_stop the client should still get (the SDK's stream helper
   * waits for it), or '' when the message is not whole.
   */
  closeCleanly(): string
}

// The JSON around a delta's text, e.g. {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}
const deltaEnvelopeBytes = 80

const messageStop = encodeSse('message_stop', { type: 'message_stop' })

export function createAnthropicPassThroughMeter(): AnthropicPassThroughMeter {
  const usage = emptyUsage()
  /** A message_delta gave the output count: the usage is the upstream's final one. */
  let reported = false
  let stopped = false
  /** A message_delta named a stop reason: the answer is whole, whether message_stop follows or not. */
  let stopNamed = false
  /** A block started or a delta came (a compatible server may leave out content_block_start). */
  let contentCame = false
  let deltaBytes = 0
  let searchResults = 0
  let upstreamError: UpstreamErrorInfo | undefined

  return {
    observe(event) {
      switch (event.event) {
        case 'content_block_delta':
          contentCame = true
          deltaBytes += Math.max(0, utf8Length(event.data) - deltaEnvelopeBytes)
          return
        case 'content_block_start':
          contentCame = true
          // A web search is billed once it has run (an error is not), and its result block shows
          // it ran: counted for a stream cut before message_delta reports the total.
          if (event.data.includes('"web_search_tool_result"')) {
            const block = readObject(parseObject(event.data), 'content_block')
            if (block?.type === 'web_search_tool_result' && Array.isArray(block.content)) searchResults++
          }
          return
        case 'message_start': {
          const payload = parseObject(event.data)
          const message = readObject(payload, 'message')
          if (message) overwriteUsage(usage, anthropicUsage(startUsage(payload, message)))
          return
        }
        case 'message_delta': {
          const payload = parseObject(event.data)
          if (isObject(payload.usage)) {
            const counts = anthropicUsagePartial(payload.usage)
            overwriteUsage(usage, counts)
            if (counts.output !== undefined) reported = true
          }
          if (typeof readObject(payload, 'delta')?.stop_reason === 'string') stopNamed = true
          return
        }
        case 'message_stop':
          stopped = true
          return
        case 'error': {
          const error = readObject(parseObject(event.data), 'error') ?? {}
          const type = readString(error, 'type') ?? 'api_error'
          const message = readString(error, 'message') ?? 'upstream stream error'
          upstreamError = { status: statusForAnthropicErrorType(type), type, message }
          return
        }
      }
    },
    usage: () => {
      const counted = { ...usage }
      // What ran so far, until message_delta reports the total (message_start may say 0), and after
      // it where it lists fewer: a compatible server's may leave server_tool_use out, and each
      // result block is a search the provider bills.
      if (searchResults > (counted.webSearches ?? 0)) counted.webSearches = searchResults
      return reported ? counted : markUnreported(counted)
    },
    finished: () => stopped,
    closeCleanly: () => {
      // A stream cut before its stop reason (or whose delta says null) is still cut.
      if (stopped || !stopNamed) return ''
      stopped = true
      return messageStop
    },
    generated: () => contentCame || stopped,
    estimatedOutputTokens: () => reportedOrEstimatedOutput(usage.output, reported, deltaBytes),
    outputBytes: () => deltaBytes,
    error: () => upstreamError,
    searchesUnlisted: () => reported && searchResults > (usage.webSearches ?? 0),
  }
}

/**
 * message_start under the gateway's message id, put in place of the upstream's (serialized again
 * only where that cannot be done). The model stays as the upstream said. A frame that isn't JSON is
 * forwarded unchanged.
 */
export function rewriteMessageStart(
  event: SseEvent,
  opts: { id: string; estimatedUsage?: () => AnthropicUsage },
): string {
  const payload = parseObject(event.data)
  const message = readObject(payload, 'message')
  if (!message) return event.raw
  // A compatible server's message_start without usage in its message: the SDK's stream throws at
  // message_delta without one, so the client is told the count the server put beside the message
  // (vLLM), or else the prompt svc bills (an estimate). vLLM's leaves out `type` and `role` as well,
  // which the SDK's final message would lack.
  if (!isObject(message.usage) || message.type === undefined || message.role === undefined) {
    const usage = startUsage(payload, message) ?? opts.estimatedUsage?.()
    return encodeSse(event.event, {
      ...payload,
      message: { type: 'message', role: 'assistant', ...message, id: opts.id, ...(usage ? { usage } : {}) },
    })
  }
  const upstreamId = readString(message, 'id')
  const inPlace = upstreamId === undefined ? undefined : replaceStringMember(event.raw, 'id', upstreamId, opts.id)
  return inPlace ?? encodeSse(event.event, { ...payload, message: { ...message, id: opts.id } })
}

/** A message_delta whose usage svc replaces with the counts it bills; the rest of the frame stays. */
export function replaceMessageDeltaUsage(event: SseEvent, billed: AnthropicUsage): string {
  const payload = parseObject(event.data)
  const usage = isObject(payload.usage) ? payload.usage : {}
  return encodeSse(event.event, { ...payload, usage: { ...usage, ...billed } })
}

// The meter must never break a relay that is only forwarding bytes: bad JSON reads as {}.
function parseObject(data: string): Record<string, unknown> {
  const parsed = parseJson(data)
  return parsed.ok && isObject(parsed.value) ? parsed.value : {}
}
