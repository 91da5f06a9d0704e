// Neutral exchange events → Anthropic SSE frames in exactly Anthropic's order, so the official
// SDK and Claude Code accept the stream whatever upstream produced it (wire-formats §1.7, §4.9).

import { encoderOf, type StreamEncoder } from '../../exchange/stream-codec'
import {
  type BlockStart,
  emptyUsage,
  type ExchangeEvent,
  overwriteUsage,
  type StopReason,
  type Usage,
  type WebSearchBlock,
} from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { encodeSse } from '../sse'
import { encodeCitation, encodeServerToolUse, encodeWebSearchResult } from './encode-anthropic-response'
import { encodeAnthropicError, encodeGatewayErrorAsAnthropic } from './errors'
import { encodeAnthropicStopReason } from './stop-reason'
import { sanitizeToolUseId } from './tool-use-id'
import { encodeAnthropicUsage, encodeCacheCreation } from './usage'

interface OpenBlock {
  /** The index the source used. */
  source: number
  /**
   * The index the client sees: dense from 0 in start order. A search is two client blocks, so it
   * is the index of its second, the result, left open for the search's block_stop.
   */
  index: number
  kind: BlockStart['kind']
}

export function anthropicStreamEncoder(opts: { id: string; model: string }): StreamEncoder {
  let started = false
  let nextIndex = 0
  let open: OpenBlock | undefined
  let sawTextOrTool = false
  let finish: { reason: StopReason; stopSequence: string | null } | undefined
  const usage = emptyUsage()

  const start = (startUsage: Partial<Usage> | undefined): string => {
    started = true
    overwriteUsage(usage, startUsage)
    const byTtl = encodeCacheCreation(usage)
    return encodeSse('message_start', {
      type: 'message_start',
      message: {
        id: opts.id,
        type: 'message',
        role: 'assistant',
        model: opts.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        // Chat upstreams know nothing yet; the real counts go into message_delta, which the SDK
        // lets overwrite these.
        usage: {
          input_tokens: usage.input,
          output_tokens: usage.output,
          cache_creation_input_tokens: usage.cacheWrite,
          cache_read_input_tokens: usage.cacheRead,
          ...(byTtl ? { cache_creation: byTtl } : {}),
        },
      },
    })
  }

  const stop = (block: OpenBlock): string => {
    open = undefined
    return encodeSse('content_block_stop', { type: 'content_block_stop', index: block.index })
  }

  /**
   * A delta goes to the open block only if it is the event's block and of the delta's kind: one
   * for a dropped or already closed block would make clients report "Content block not found".
   */
  const pushDelta = (out: string[], index: number, kind: BlockStart['kind'], payload: Record<string, unknown>) => {
    if (open?.source === index && open.kind === kind)
      out.push(encodeSse('content_block_delta', { type: 'content_block_delta', index: open.index, delta: payload }))
  }

  const encode = (event: ExchangeEvent): { frames: string[]; ended: boolean } => {
    if (event.type === 'error')
      return { frames: [encodeErrorFrame(event.error.type, event.error.message)], ended: true }
    const out: string[] = []
    if (!started) out.push(start(event.type === 'start' ? event.usage : undefined))
    switch (event.type) {
      case 'block_start': {
        const kind = event.block.kind
        const isReasoning = kind === 'thinking' || kind === 'redacted_thinking'
        // Thinking after text or a tool call makes Claude Code discard the whole response.
        if (isReasoning && sawTextOrTool) break
        if (open) out.push(stop(open))
        if (!isReasoning) sawTextOrTool = true
        if (event.block.kind === 'web_search') out.push(...encodeServerToolUseFrames(event.block.search, nextIndex++))
        open = { source: event.index, index: nextIndex++, kind }
        out.push(blockStartFrame(open.index, encodeBlockSkeleton(event.block)))
        break
      }
      case 'text_delta':
        pushDelta(out, event.index, 'text', { type: 'text_delta', text: event.text })
        break
      case 'citation':
        // Only into the open text block, as the block's whole (encodeTextBlock): its span cannot
        // split text already sent. One for any other block cannot be placed and is dropped.
        pushDelta(out, event.index, 'text', { type: 'citations_delta', citation: encodeCitation(event.citation) })
        break
      case 'thinking_delta':
        pushDelta(out, event.index, 'thinking', { type: 'thinking_delta', thinking: event.thinking })
        break
      case 'signature_delta':
        pushDelta(out, event.index, 'thinking', { type: 'signature_delta', signature: event.signature })
        break
      case 'tool_args_delta':
        pushDelta(out, event.index, 'tool_use', { type: 'input_json_delta', partial_json: event.partialJson })
        break
      case 'block_stop':
        // Likewise, a stop for a block that is not the open one goes nowhere.
        if (open?.source === event.index) out.push(stop(open))
        break
      case 'usage':
        overwriteUsage(usage, event.usage)
        break
      case 'finish':
        // Held: Chat sends its usage after finish_reason, and message_delta must carry it.
        finish = { reason: event.reason, stopSequence: event.stopSequence ?? null }
        break
    }
    return { frames: out, ended: false }
  }

  const close = (): string[] => {
    if (!finish) return [encodeErrorFrame('api_error', 'upstream stream ended early')]
    if (finish.reason === 'error') return [encodeErrorFrame('api_error', 'upstream reported an error while generating')]
    const out: string[] = []
    if (!started) out.push(start(undefined))
    if (open) out.push(stop(open))
    out.push(
      encodeSse('message_delta', {
        type: 'message_delta',
        delta: { stop_reason: encodeAnthropicStopReason(finish.reason), stop_sequence: finish.stopSequence },
        usage: encodeAnthropicUsage(usage),
      }),
    )
    out.push(encodeSse('message_stop', { type: 'message_stop' }))
    return out
  }

  return encoderOf({ encode, close, failed: (error) => [encodeCaughtError(error)] })
}

const blockStartFrame = (index: number, block: Record<string, unknown>): string =>
  encodeSse('content_block_start', { type: 'content_block_start', index, content_block: block })

/** A search's server_tool_use as Anthropic streams it: opened with an empty input, the query as its one delta. */
function encodeServerToolUseFrames(search: Omit<WebSearchBlock, 'type'>, index: number): string[] {
  const delta = { type: 'input_json_delta', partial_json: JSON.stringify({ query: search.query }) }
  return [
    blockStartFrame(index, encodeServerToolUse(search, {})),
    encodeSse('content_block_delta', { type: 'content_block_delta', index, delta }),
    encodeSse('content_block_stop', { type: 'content_block_stop', index }),
  ]
}

function encodeBlockSkeleton(block: BlockStart): Record<string, unknown> {
  switch (block.kind) {
    case 'text':
      return { type: 'text', text: '' }
    case 'thinking':
      // Claude Code rejects a thinking block whose start lacks the (empty) signature field.
      return { type: 'thinking', thinking: '', signature: '' }
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data }
    case 'tool_use':
      // Arguments travel only as input_json_delta; clients ignore a filled-in start `input`.
      return { type: 'tool_use', id: sanitizeToolUseId(block.id), name: block.name, input: {} }
    case 'web_search':
      // The result block opens whole, its content in the start, as Anthropic sends it.
      return encodeWebSearchResult(block.search)
  }
}

const encodeErrorFrame = (type: string, message: string): string =>
  encodeSse('error', encodeAnthropicError(type, message))

function encodeCaughtError(error: unknown): string {
  if (error instanceof GatewayError) return encodeSse('error', encodeGatewayErrorAsAnthropic(error))
  const detail = error instanceof Error ? error.message : String(error)
  return encodeErrorFrame('api_error', `upstream stream failed: ${detail}`)
}
