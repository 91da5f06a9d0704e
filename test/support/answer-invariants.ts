// What a client's stream must look like, read from the raw SSE text svc sent it: the order of
// events each official SDK assumes (and throws on, or silently loses content over, when it is
// broken). Each check returns the broken rules as sentences (empty: the stream is well formed);
// every rule names the page that states it.
//
// Sources, cited by key below:
//   [sse]       https://html.spec.whatwg.org/multipage/server-sent-events.html (events end at a blank
//               line; lines end at CR, LF or CRLF; several data lines join with LF)
//   [a-stream]  https://platform.claude.com/docs/en/build-with-claude/streaming (message_start, then
//               per block content_block_start, deltas, content_block_stop, then message_delta and
//               message_stop; every frame named by its event line) and the SDK's MessageStream, which
//               appends each started block and looks its deltas up by index (wire-formats §1.7)
//   [r-stream]  https://platform.openai.com/docs/api-reference/responses-streaming (sequence_number
//               per event; response.created first; output_item.added, its deltas, output_item.done;
//               a terminal response.completed / incomplete) and openai-node's ResponseStream, which
//               throws "missing output at index" for an event of an item never added (§2.6)
//   [r-text]    the same page: output_text.done, content_part.done and output_item.done carry the
//               whole text the deltas streamed; likewise reasoning summaries, function call
//               arguments and custom tool input (svc's own contract where a delta-less item is sent)

type Json = Record<string, unknown>

/** A frame's data as text and as JSON (sse-frames.ts's SseFrame keeps its bytes instead). */
export interface ParsedSseFrame {
  event: string | undefined
  data: string
  /** The data parsed, undefined where it is not JSON (or the `[DONE]` sentinel). */
  json: Json | undefined
}

/** The frames of an SSE body; comments (`:` lines) are skipped as every parser skips them [sse]. */
export function parseSse(text: string): ParsedSseFrame[] {
  const frames: ParsedSseFrame[] = []
  for (const block of text.split(/\r\n\r\n|\n\n|\r\r/)) {
    let event: string | undefined
    const data: string[] = []
    for (const line of block.split(/\r\n|\r|\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim()
      else if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5))
    }
    if (data.length === 0) continue
    const joined = data.join('\n')
    let json: Json | undefined
    try {
      const parsed: unknown = JSON.parse(joined)
      json = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Json) : undefined
    } catch {
      json = undefined
    }
    frames.push({ event, data: joined, json })
  }
  return frames
}

class Problems {
  readonly list: string[] = []
  check(ok: boolean, at: string, rule: string): void {
    if (!ok) this.list.push(`${at}: ${rule}`)
  }
}

// ---- Anthropic Messages --------------------------------------------------------------------------

/** Anthropic's stream order, one block open at a time, every data line JSON [a-stream]. */
export function anthropicStreamProblems(frames: ParsedSseFrame[]): string[] {
  const p = new Problems()
  const events = frames.filter((f) => f.event !== 'ping')
  frames.forEach((f, i) => {
    p.check(f.json !== undefined, `frame ${i}`, `data is JSON [a-stream]: ${f.data.slice(0, 80)}`)
    p.check(f.event === f.json?.type, `frame ${i}`, `event line names its type [a-stream]: ${f.event}`)
    p.check(f.event !== 'error', `frame ${i}`, `no error event: ${f.data.slice(0, 200)}`)
  })
  p.check(events[0]?.event === 'message_start', 'first event', 'message_start [a-stream]')
  p.check(events.at(-1)?.event === 'message_stop', 'last event', 'message_stop [a-stream]')
  p.check(events.at(-2)?.event === 'message_delta', 'next to last event', 'message_delta [a-stream]')
  let started = 0
  let open: number | undefined
  events.forEach((f, i) => {
    const index = f.json?.index
    const at = `event ${i} (${f.event})`
    switch (f.event) {
      case 'message_start':
        p.check(i === 0, at, 'only first [a-stream]')
        break
      case 'content_block_start':
        p.check(open === undefined, at, 'the previous block stopped first [a-stream]')
        p.check(index === started, at, `index ${started}, dense in start order [a-stream] (got ${index})`)
        started++
        open = index as number
        break
      case 'content_block_delta':
        p.check(open !== undefined && index === open, at, `a delta of the open block [a-stream] (got ${index})`)
        break
      case 'content_block_stop':
        p.check(open !== undefined && index === open, at, `stops the open block [a-stream] (got ${index})`)
        open = undefined
        break
      case 'message_delta':
        p.check(open === undefined, at, 'every block stopped before [a-stream]')
        break
    }
  })
  return p.list
}

// ---- OpenAI Responses ----------------------------------------------------------------------------

interface ItemTrack {
  id: string
  type: string
  done: boolean
  /** What each kind of delta streamed, by content or summary index. */
  streamed: Map<string, string>
  /** What each `.done` event said the whole was, by the same key. */
  whole: Map<string, string>
}

const deltaKinds: Record<string, { key: (f: Json) => string; field: string }> = {
  'response.output_text.delta': { key: (f) => `text:${f.content_index}`, field: 'delta' },
  'response.output_text.done': { key: (f) => `text:${f.content_index}`, field: 'text' },
  'response.reasoning_summary_text.delta': { key: (f) => `summary:${f.summary_index}`, field: 'delta' },
  'response.reasoning_summary_text.done': { key: (f) => `summary:${f.summary_index}`, field: 'text' },
  'response.function_call_arguments.delta': { key: () => 'arguments', field: 'delta' },
  'response.function_call_arguments.done': { key: () => 'arguments', field: 'arguments' },
  'response.custom_tool_call_input.delta': { key: () => 'input', field: 'delta' },
  'response.custom_tool_call_input.done': { key: () => 'input', field: 'input' },
}

/** The whole an item ended with, for a key of deltaKinds, as its final (terminal) form has it. */
function finalWhole(item: Json, key: string): string | undefined {
  const [kind, index] = key.split(':')
  const at = Number(index)
  if (kind === 'text') return ((item.content as Json[] | undefined)?.[at]?.text as string | undefined) ?? undefined
  if (kind === 'summary') return (item.summary as Json[] | undefined)?.[at]?.text as string | undefined
  if (kind === 'arguments') return item.arguments as string | undefined
  return item.input as string | undefined
}

/**
 * The Responses stream's order and numbering, and that every whole equals what its deltas said
 * [r-stream] [r-text]. An item's `.done` whole is checked against its deltas only where it had
 * any: a backend may send the whole alone (wire-formats §2.6).
 */
export function responsesStreamProblems(frames: ParsedSseFrame[]): string[] {
  const p = new Problems()
  const items = new Map<number, ItemTrack>()
  let terminal: Json | undefined
  frames.forEach((f, i) => {
    const at = `frame ${i} (${f.event})`
    const json = f.json
    p.check(json !== undefined, at, `data is JSON [r-stream]: ${f.data.slice(0, 80)}`)
    if (!json) return
    p.check(f.event === json.type, at, `event line names its type [r-stream]: ${String(json.type)}`)
    p.check(json.sequence_number === i, at, `sequence_number ${i} [r-stream] (got ${json.sequence_number})`)
    p.check(terminal === undefined, at, 'nothing after the terminal event [r-stream]')
    const type = json.type as string
    if (i === 0) p.check(type === 'response.created', at, 'response.created first [r-stream]')
    if (type === 'error' || type === 'response.failed') p.check(false, at, `no failure: ${f.data.slice(0, 200)}`)
    if (type === 'response.completed' || type === 'response.incomplete') {
      terminal = json.response as Json
      return
    }
    if (json.output_index === undefined) return
    const index = json.output_index as number
    const item = json.item as Json | undefined
    if (type === 'response.output_item.added') {
      p.check(!items.has(index), at, `output_index ${index} added once [r-stream]`)
      p.check(index === items.size, at, `output_index ${items.size}, in order [r-stream] (got ${index})`)
      items.set(index, {
        id: item?.id as string,
        type: item?.type as string,
        done: false,
        streamed: new Map(),
        whole: new Map(),
      })
      return
    }
    const track = items.get(index)
    p.check(track !== undefined, at, `output_index ${index} names an added item [r-stream]`)
    if (!track) return
    p.check(!track.done, at, `after its item's output_item.done [r-stream]`)
    const itemId = type === 'response.output_item.done' ? item?.id : json.item_id
    p.check(itemId === track.id, at, `item_id ${String(itemId)} is the added item's ${track.id} [r-stream]`)
    if (type === 'response.output_item.done') {
      track.done = true
      p.check(item?.type === track.type, at, `the item's type stays ${track.type} [r-stream]`)
      return
    }
    const kind = deltaKinds[type]
    if (!kind) return
    const key = kind.key(json)
    const value = json[kind.field]
    p.check(typeof value === 'string', at, `${kind.field} is a string [r-stream]`)
    if (type.endsWith('.delta')) track.streamed.set(key, (track.streamed.get(key) ?? '') + String(value))
    else track.whole.set(key, String(value))
  })
  p.check(terminal !== undefined, 'the stream', 'ends with response.completed or response.incomplete [r-stream]')
  for (const [index, track] of items) {
    const at = `output_index ${index} (${track.type})`
    p.check(track.done, at, 'output_item.done before the terminal event [r-stream]')
    const final = (terminal?.output as Json[] | undefined)?.[index]
    p.check(final?.id === track.id, at, `the terminal output has the item at its index [r-stream]`)
    for (const [key, streamed] of track.streamed) {
      const whole = track.whole.get(key)
      p.check(whole === streamed, at, `${key}: the .done whole is its deltas joined [r-text]`)
      if (final)
        p.check(finalWhole(final, key) === streamed, at, `${key}: the final item has its deltas joined [r-text]`)
    }
  }
  return p.list
}
