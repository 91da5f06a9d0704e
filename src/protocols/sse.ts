// Server-sent events: upstream bytes → frames, and one frame ← (event name, JSON payload).

export interface SseEvent {
  event?: string
  data: string
  /** The frame as received, through its terminating blank line, so a relay can forward it byte-for-byte. */
  raw: string
}

// A blank line is two consecutive line ends. `\r\n` is one line end, so a lone `\r` may not be
// followed by `\n`, otherwise `data: a\r\ndata: b` would look like a frame end.
const frameEnd = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)/g
const lineEnd = /\r\n|\r|\n/
const colon = 58
const space = 32

export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder()
  // Text of the unfinished frame, kept in pieces: a large frame arriving in many chunks is joined
  // once, when its end shows up, and only the new text (plus a 3-char overlap) is searched.
  let pieces: string[] = []
  let tail = ''
  for await (const chunk of chunks) {
    const text = decoder.decode(chunk, { stream: true })
    if (text === '') continue
    const probe = tail + text
    frameEnd.lastIndex = 0
    if (!frameEnd.test(probe)) {
      pieces.push(text)
      tail = probe.slice(-3)
      continue
    }
    const buffer = pieces.join('') + text
    const taken = takeFrames(buffer, Math.max(0, buffer.length - probe.length), false)
    for (const event of taken.events) yield event
    const rest = buffer.slice(taken.consumed)
    pieces = rest === '' ? [] : [rest]
    tail = rest.slice(-3)
  }
  const buffer = pieces.join('') + decoder.decode()
  const taken = takeFrames(buffer, 0, true)
  for (const event of taken.events) yield event
  // A last frame without its blank line still counts; give it one so a relay forwards a whole frame.
  const rest = buffer.slice(taken.consumed)
  const event = readFrame(rest)
  if (event) yield { ...event, raw: rest + (/[\r\n]$/.test(rest) ? '\n' : '\n\n') }
}

/** Complete frames of `buffer`, searching for frame ends from `scanFrom` (nothing ends earlier). */
function takeFrames(buffer: string, scanFrom: number, final: boolean): { events: SseEvent[]; consumed: number } {
  const events: SseEvent[] = []
  let start = 0
  for (;;) {
    frameEnd.lastIndex = Math.max(start, scanFrom)
    const match = frameEnd.exec(buffer)
    if (!match) return { events, consumed: start }
    const end = match.index + match[0].length
    // A trailing `\r` may be the first half of a `\r\n` still in flight.
    if (!final && end === buffer.length && buffer.charCodeAt(end - 1) === 13) {
      return { events, consumed: start }
    }
    const event = readFrame(buffer.slice(start, end))
    if (event) events.push(event)
    start = end
  }
}

function readFrame(raw: string): SseEvent | undefined {
  let event: string | undefined
  let data: string | undefined
  for (const line of raw.split(lineEnd)) {
    if (line === '' || line.charCodeAt(0) === colon) continue
    const at = line.indexOf(':')
    const field = at === -1 ? line : line.slice(0, at)
    let value = at === -1 ? '' : line.slice(at + 1)
    if (value.charCodeAt(0) === space) value = value.slice(1)
    if (field === 'data') data = data === undefined ? value : `${data}\n${value}`
    else if (field === 'event') event = value
  }
  // Per the SSE spec a frame without data is not dispatched; that also drops comment-only frames.
  if (data === undefined) return undefined
  return event === undefined ? { data, raw } : { event, data, raw }
}

export function encodeSse(event: string | undefined, data: unknown): string {
  const payload = `data: ${JSON.stringify(data)}\n\n`
  return event === undefined ? payload : `event: ${event}\n${payload}`
}
