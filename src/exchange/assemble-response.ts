// Neutral stream events → the one ExchangeResponse they describe: what a non-streaming client gets
// when svc streamed from the upstream for it (relay/assembled-answer.ts). The last step of a
// translated chain, after the decoder and the meter; it produces no frames of its own.
import type { StreamCodec } from './stream-codec'
import { parseToolArguments } from './tool-arguments'
import { emptyUsage, type ExchangeEvent, type ExchangeResponse, type OutputBlock, type StopReason } from './types'

export interface ResponseAssembler extends StreamCodec<ExchangeEvent, never> {
  /** The answer so far; whole once the stream has finished (a `finish` event). */
  response(): ExchangeResponse
}

export function responseAssembler(): ResponseAssembler {
  let id = ''
  let model = ''
  const content: OutputBlock[] = []
  /** Tool call arguments as streamed, by block index, parsed when the block closes. */
  const args = new Map<number, string>()
  let stopReason: StopReason = 'end_turn'
  let stopSequence: string | null = null
  let finished = false

  const closeToolCall = (index: number) => {
    const block = content[index]
    const json = args.get(index)
    if (block?.type !== 'tool_use' || json === undefined) return
    args.delete(index)
    // As the JSON decoders read a call's arguments: a call cut short by the output limit is `{}`.
    block.input = parseToolArguments(json)
  }

  const take = (event: ExchangeEvent) => {
    switch (event.type) {
      case 'start':
        id = event.id
        model = event.model
        return
      case 'block_start': {
        const b = event.block
        if (b.kind === 'text')
          content[event.index] = b.refusal ? { type: 'text', text: '', refusal: true } : { type: 'text', text: '' }
        else if (b.kind === 'thinking') content[event.index] = { type: 'thinking', thinking: '' }
        else if (b.kind === 'redacted_thinking') content[event.index] = { type: 'redacted_thinking', data: b.data }
        else if (b.kind === 'tool_use') {
          content[event.index] = { type: 'tool_use', id: b.id, name: b.name, input: {} }
          args.set(event.index, '')
        } else content[event.index] = { type: 'web_search', ...b.search }
        return
      }
      case 'text_delta': {
        const block = content[event.index]
        if (block?.type === 'text') block.text += event.text
        return
      }
      case 'citation': {
        const block = content[event.index]
        if (block?.type === 'text') block.citations = [...(block.citations ?? []), event.citation]
        return
      }
      case 'thinking_delta': {
        const block = content[event.index]
        if (block?.type === 'thinking') block.thinking += event.thinking
        return
      }
      case 'signature_delta': {
        const block = content[event.index]
        if (block?.type === 'thinking') block.signature = (block.signature ?? '') + event.signature
        return
      }
      case 'tool_args_delta': {
        const sofar = args.get(event.index)
        if (sofar !== undefined) args.set(event.index, sofar + event.partialJson)
        return
      }
      case 'block_stop':
        closeToolCall(event.index)
        return
      case 'finish':
        stopReason = event.reason
        stopSequence = event.stopSequence ?? null
        finished = true
        return
      default:
        // usage: the meter before this step keeps it; error: the relay reads it off the meter.
        return
    }
  }

  return {
    push(event) {
      take(event)
      return []
    },
    end: () => [],
    get done() {
      return false
    },
    response() {
      // A block the upstream never closed before its finish still has its arguments.
      if (finished) for (const index of [...args.keys()]) closeToolCall(index)
      const blocks = content.filter(Boolean)
      titleSearchResults(blocks)
      return { id, model, content: blocks, stopReason, stopSequence, usage: emptyUsage() }
    },
  }
}

/**
 * Search results known only by their URL (OpenAI names no title for a source) take the title the
 * answer's citations give the page, as a decoder of the whole answer titles them: a stream's
 * results come before the text that cites them.
 */
function titleSearchResults(blocks: OutputBlock[]) {
  const titles = new Map<string, string>()
  for (const block of blocks) {
    if (block.type !== 'text') continue
    for (const { url, title } of block.citations ?? []) if (title !== url && !titles.has(url)) titles.set(url, title)
  }
  if (titles.size === 0) return
  for (const block of blocks) {
    if (block.type !== 'web_search' || !('results' in block.outcome)) continue
    for (const result of block.outcome.results) {
      if (result.title === result.url) result.title = titles.get(result.url) ?? result.url
    }
  }
}
