// What a client's stream must look like when the upstream's answer broke part-way: read from the raw
// SSE text svc sent, it ends either as a clean stream (checked by answer-invariants.ts) or with the
// surface's own error event after a well-formed prefix, and nothing follows its terminal event.
// Each check returns the broken rules as sentences (empty: the stream holds). Also: which upstream
// frames carry the final usage, so a test can tell whether the upstream reported any before a fault.
//
// Sources, cited by key below:
//   [a-stream]  https://platform.claude.com/docs/en/build-with-claude/streaming (message_start first;
//               per block content_block_start, deltas, content_block_stop; an `error` event may
//               arrive mid-stream: `{type: "error", error: {type, message}}`)
//   [r-stream]  https://platform.openai.com/docs/api-reference/responses-streaming (sequence_number per
//               event; response.created first; `response.failed` and `error` events end a stream)
//   [svc]       README "Fallback happens only before the client received a byte": after it, a failure is
//               an `error` event (messages) or an `error` event / `response.failed` (responses)
import { isAnthropicError } from '../reliability/helpers'
import { anthropicStreamProblems, responsesStreamProblems, type ParsedSseFrame } from './answer-invariants'
import type { DialectName, Frame } from './simulator-plan'

type Json = Record<string, unknown>

export type Ending = 'clean' | 'error' | 'none'

const anthropicTerminal = new Set(['message_stop', 'error'])
const responsesTerminal = new Set(['response.completed', 'response.incomplete', 'response.failed', 'error'])

/** How the stream ended: its surface's normal end, its error event, or neither (a broken stream). */
export function endingOf(surface: 'messages' | 'responses', frames: ParsedSseFrame[]): Ending {
  const last = frames.at(-1)?.json?.type
  if (surface === 'messages') return last === 'message_stop' ? 'clean' : last === 'error' ? 'error' : 'none'
  if (last === 'response.completed' || last === 'response.incomplete') return 'clean'
  return last === 'response.failed' || last === 'error' ? 'error' : 'none'
}

/** The problems of a stream that must end with exactly one terminal event, its last frame [svc]. */
export function faultedStreamProblems(surface: 'messages' | 'responses', frames: ParsedSseFrame[]): string[] {
  const terminal = surface === 'messages' ? anthropicTerminal : responsesTerminal
  const problems: string[] = []
  const ends = frames.flatMap((f, i) => (terminal.has(String(f.json?.type ?? f.event)) ? [i] : []))
  if (ends.length !== 1 || ends[0] !== frames.length - 1)
    problems.push(
      `exactly one terminal event, the last frame [svc]: terminal at ${JSON.stringify(ends)} of ${frames.length} (${frames
        .slice(-3)
        .map((f) => f.event)
        .join(', ')})`,
    )
  const ending = endingOf(surface, frames)
  if (ending === 'none') return [...problems, `the stream ends with its surface's end or error event [svc]`]
  if (ending === 'clean' && problems.length === 0)
    return surface === 'messages' ? anthropicStreamProblems(frames) : responsesStreamProblems(frames)
  return [...problems, ...(surface === 'messages' ? anthropicPrefixProblems(frames) : responsesPrefixProblems(frames))]
}

/** An Anthropic stream cut by an error event: a well-formed start, then the error [a-stream]. */
function anthropicPrefixProblems(frames: ParsedSseFrame[]): string[] {
  const problems: string[] = []
  const events = frames.filter((f) => f.event !== 'ping')
  frames.forEach((f, i) => {
    if (f.json === undefined) problems.push(`frame ${i}: data is JSON [a-stream]: ${f.data.slice(0, 80)}`)
    else if (f.event !== f.json.type) problems.push(`frame ${i}: event line names its type [a-stream]: ${f.event}`)
  })
  if (events[0]?.event !== 'message_start') problems.push('message_start first [a-stream]')
  const error = events.at(-1)?.json
  if (!isAnthropicError(error)) problems.push(`the error event is {type, error: {type, message}} [a-stream]`)
  let started = 0
  let open: number | undefined
  for (const f of events.slice(0, -1)) {
    const index = f.json?.index
    if (f.event === 'content_block_start') {
      if (open !== undefined || index !== started) problems.push(`content_block_start ${index} in order [a-stream]`)
      started++
      open = index as number
    } else if (f.event === 'content_block_delta' && (open === undefined || index !== open)) {
      problems.push(`a delta of the open block [a-stream] (got ${index})`)
    } else if (f.event === 'content_block_stop') {
      if (open === undefined || index !== open) problems.push(`stops the open block [a-stream] (got ${index})`)
      open = undefined
    }
  }
  return problems
}

/** A Responses stream that failed: numbered without a gap, items in order, then the failure [r-stream]. */
function responsesPrefixProblems(frames: ParsedSseFrame[]): string[] {
  const problems: string[] = []
  const added = new Map<number, string>()
  const done = new Set<number>()
  frames.forEach((f, i) => {
    const json = f.json
    if (!json) {
      problems.push(`frame ${i}: data is JSON [r-stream]: ${f.data.slice(0, 80)}`)
      return
    }
    if (f.event !== json.type) problems.push(`frame ${i}: event line names its type [r-stream]`)
    if (json.sequence_number !== i)
      problems.push(`frame ${i}: sequence_number ${i} [r-stream] (got ${json.sequence_number})`)
    if (i === 0 && json.type !== 'response.created') problems.push('response.created first [r-stream]')
    const index = json.output_index as number | undefined
    if (index === undefined) return
    const item = json.item as Json | undefined
    if (json.type === 'response.output_item.added') {
      if (index !== added.size) problems.push(`frame ${i}: output_index ${added.size} in order [r-stream]`)
      added.set(index, String(item?.id))
      return
    }
    if (!added.has(index)) problems.push(`frame ${i}: output_index ${index} names an added item [r-stream]`)
    if (done.has(index)) problems.push(`frame ${i}: after its item's output_item.done [r-stream]`)
    if (json.type === 'response.output_item.done') done.add(index)
  })
  const last = frames.at(-1)?.json ?? {}
  if (last.type === 'error') {
    if (typeof last.message !== 'string' || last.message === '' || !('code' in last))
      problems.push(`the error event has code and message [r-stream]: ${JSON.stringify(last).slice(0, 200)}`)
  } else {
    const response = (last.response ?? {}) as Json
    const error = (response.error ?? {}) as Json
    if (response.status !== 'failed' || typeof error.message !== 'string' || typeof error.code !== 'string')
      problems.push(`response.failed has status failed and an error [r-stream]: ${JSON.stringify(last).slice(0, 200)}`)
  }
  return problems
}

/** Whether one of these upstream frames carries the answer's final usage (its output count). */
export function reportsUsage(dialect: DialectName, frames: Frame[]): boolean {
  return frames.some((f) =>
    dialect === 'anthropic'
      ? f.text.startsWith('event: message_delta')
      : dialect === 'chat'
        ? f.text.includes('"completion_tokens"')
        : /"type":"response\.(completed|incomplete)"/.test(f.text),
  )
}
