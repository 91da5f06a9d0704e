// An Anthropic stream → the Message its non-streaming call would have answered: for a client that
// did not ask for a stream when svc streamed from Anthropic for it (relay/assembled-answer.ts).
// Generic over block types, as the SDKs' own accumulation is: a block svc has no name for (a
// server tool's call or result, a container) arrives whole in its content_block_start and stays so.
import { parseToolArguments } from '../../exchange/tool-arguments'
import { GatewayError } from '../../lib/errors'
import type { SseEvent } from '../sse'
import { isObject, type JsonObject, parseJson, readNumber, readObject, readString } from '../wire-values'
import { startUsage } from './usage'

/**
 * Far past any answer's blocks. The index places a block in an array: one frame naming index
 * 4,294,967,294 would make billions of empty slots and stall the event loop for a minute.
 */
const maxBlockIndex = 4096

export function anthropicMessageAssembler() {
  let message: JsonObject | undefined
  const content: JsonObject[] = []
  /** A tool call's input as streamed (input_json_delta), by block index, parsed when the block closes. */
  const inputs = new Map<number, string>()
  /** A message_delta gave the output count (Anthropic's always does; some compatible servers' do not). */
  let outputCounted = false

  const closeBlock = (index: number) => {
    const block = content[index]
    const json = inputs.get(index)
    if (!block || json === undefined) return
    inputs.delete(index)
    // A call cut short by max_tokens has no whole input: `{}`, as the JSON answer's decoder reads it.
    if (json.trim() !== '') block.input = parseToolArguments(json)
  }

  const applyDelta = (block: JsonObject, index: number, delta: JsonObject) => {
    switch (delta.type) {
      case 'text_delta':
        block.text = `${readString(block, 'text') ?? ''}${readString(delta, 'text') ?? ''}`
        return
      case 'thinking_delta':
        block.thinking = `${readString(block, 'thinking') ?? ''}${readString(delta, 'thinking') ?? ''}`
        return
      case 'signature_delta':
        block.signature = readString(delta, 'signature') ?? ''
        return
      case 'input_json_delta':
        inputs.set(index, `${inputs.get(index) ?? ''}${readString(delta, 'partial_json') ?? ''}`)
        return
      case 'citations_delta': {
        const citations: unknown[] = Array.isArray(block.citations) ? block.citations : []
        citations.push(delta.citation)
        block.citations = citations
        return
      }
      default:
        return
    }
  }

  return {
    /** One upstream frame (already checked to be JSON by the pass-through meter). */
    push(event: SseEvent) {
      const parsed = parseJson(event.data)
      if (!parsed.ok || !isObject(parsed.value)) return
      const payload = parsed.value
      const index = readNumber(payload, 'index')
      switch (event.event ?? readString(payload, 'type')) {
        case 'message_start': {
          const start = readObject(payload, 'message') ?? {}
          // vLLM's leaves out the fields it did not set: a message is what the client is owed.
          message = { type: 'message', role: 'assistant', ...start, content }
          const usage = startUsage(payload, start)
          if (usage) message.usage = { ...usage }
          return
        }
        case 'content_block_start': {
          const block = readObject(payload, 'content_block')
          if (index === undefined || !block) return
          if (!Number.isInteger(index) || index < 0 || index > maxBlockIndex) {
            throw new GatewayError('api_error', `upstream sent a content block index out of range (${index})`, {
              status: 502,
              retryable: true,
            })
          }
          // As it starts; an uncited text block has no citations member, as in a JSON answer.
          content[index] = { ...block }
          return
        }
        case 'content_block_delta': {
          const delta = readObject(payload, 'delta')
          const block = index === undefined ? undefined : content[index]
          if (block && delta && index !== undefined) applyDelta(block, index, delta)
          return
        }
        case 'content_block_stop':
          if (index !== undefined) closeBlock(index)
          return
        case 'message_delta': {
          if (!message) return
          Object.assign(message, readObject(payload, 'delta'))
          // Cumulative counts: each one the delta has replaces the start's.
          const usage = readObject(payload, 'usage')
          if (usage) message.usage = { ...readObject(message, 'usage'), ...countsGiven(usage) }
          if (typeof usage?.output_tokens === 'number') outputCounted = true
          return
        }
        default:
          return
      }
    },
    /**
     * The message: whole once the pass-through meter says the stream finished. Where no
     * message_delta gave the output count, it says `estimatedOutputTokens`, what the ledger bills
     * (as the streamed relay completes such a delta), not message_start's placeholder.
     */
    json(estimatedOutputTokens: number): unknown {
      for (const index of [...inputs.keys()]) closeBlock(index)
      if (!message) return undefined
      const started = readObject(message, 'usage')
      // No usage at all stays none, as in the upstream's own JSON for such a server.
      const usage = outputCounted || !started ? message.usage : { ...started, output_tokens: estimatedOutputTokens }
      return { ...message, content: content.filter(Boolean), ...(usage ? { usage } : {}) }
    },
  }
}

/** A usage object's members but the nulls (a count the delta does not give keeps the start's, as the SDKs read it). */
const countsGiven = (usage: JsonObject): JsonObject =>
  Object.fromEntries(Object.entries(usage).filter(([, value]) => value !== null))
