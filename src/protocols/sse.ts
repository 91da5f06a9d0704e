// Server-sent events: upstream bytes → frames, and one frame ← (event name, JSON payload or text).

import { isJson, isObject, parseJson } from './wire-values'

export interface SseEvent {
  event?: string
  data: string
  /** The frame as received, through its terminating blank line, so a relay can forward it byte-for-byte. */
  raw: string
}

// A blank line is two consecutive line ends. `\r\n` is one line end, so a lone `\r` may not be
// followed by `\n`, otherwise `data: a\r\ndata: b` would look like a frame end.
const frameEnd = /(?:\r\n|\r(?!\n)|\n)(?:\r\n|\r(?!\n)|\n)/g
const lineEnd = /\r\n|\r|\n/g
const colon = 58
const openingBrace = 123
const space = 32
const carriageReturn = 13
const lineFeed = 10
const streaming = { stream: true }

/**
 * An incremental SSE parser: bytes in, the frames they complete out. Synchronous, so a relay can
 * handle everything one network read brought in a single step rather than a promise per frame.
 *
 * Every provider ends lines with `\n` alone; until a stream shows a `\r`, frames and lines are
 * found with indexOf rather than the regular expressions the general case needs. This runs on
 * every frame of every stream: a delta's parse went from ~1.8 to ~0.7 µs.
 */
export class SseDecoder {
  private readonly decoder = new TextDecoder()
  // Text of the unfinished frame, kept in pieces: a large frame arriving in many chunks is joined
  // once, when its end shows up, and only the new text (plus a 3-char overlap) is searched.
  private pieces: string[] = []
  private tail = ''
  private sawCarriageReturn = false
  /**
   * The last read ended a frame on a `\r`, dispatched at once: a `\n` opening the next read is that
   * line end's second half (`\r\n`), not a line of its own.
   */
  private endedOnCarriageReturn = false
  private pendingChars = 0

  /** Characters of the frame still waiting for its end: what a reader bounds a frame by. */
  get pendingLength(): number {
    return this.pendingChars
  }

  /** The frames completed by this chunk, in order (often none, often several). */
  push(chunk: Uint8Array): readonly SseEvent[] {
    let text = this.decoder.decode(chunk, streaming)
    if (this.endedOnCarriageReturn && text !== '') {
      this.endedOnCarriageReturn = false
      if (text.charCodeAt(0) === lineFeed) text = text.slice(1)
    }
    if (text === '') return noEvents
    if (!this.sawCarriageReturn && text.includes('\r')) this.sawCarriageReturn = true
    const probe = this.tail + text
    if (!this.endsAFrame(probe)) {
      this.pieces.push(text)
      this.pendingChars += text.length
      this.tail = probe.slice(-3)
      return noEvents
    }
    const buffer = this.pieces.length === 0 ? text : this.pieces.join('') + text
    const events: SseEvent[] = []
    const consumed = this.takeFrames(buffer, Math.max(0, buffer.length - probe.length), false, events)
    const rest = buffer.slice(consumed)
    // Emptied in place: most reads end on a frame's end, and this runs for every one of them.
    this.pieces.length = 0
    if (rest !== '') this.pieces.push(rest)
    this.pendingChars = rest.length
    this.tail = rest.slice(-3)
    return events
  }

  /** The frames left when the stream ends, a last one without its blank line included. */
  end(): SseEvent[] {
    const buffer = this.pieces.join('') + this.decoder.decode()
    this.pieces = []
    this.pendingChars = 0
    this.tail = ''
    const events: SseEvent[] = []
    const consumed = this.takeFrames(buffer, 0, true, events)
    // A last frame without its blank line still counts; give it one so a relay forwards a whole
    // frame (after a lone `\r`, `\n` would only complete its line end).
    const rest = buffer.slice(consumed)
    const event = readFrame(rest + (rest.endsWith('\n') ? '\n' : '\n\n'), this.sawCarriageReturn)
    if (event) events.push(event)
    return events
  }

  private endsAFrame(text: string): boolean {
    if (!this.sawCarriageReturn) return text.includes('\n\n')
    frameEnd.lastIndex = 0
    return frameEnd.test(text)
  }

  /**
   * Adds the complete frames of `buffer` to `events`, searching for frame ends from `scanFrom`
   * (nothing ends earlier); returns how much of `buffer` they took.
   */
  private takeFrames(buffer: string, scanFrom: number, final: boolean, events: SseEvent[]): number {
    const general = this.sawCarriageReturn
    let start = 0
    for (;;) {
      const from = Math.max(start, scanFrom)
      let end: number
      if (general) {
        frameEnd.lastIndex = from
        const match = frameEnd.exec(buffer)
        if (!match) return start
        end = match.index + match[0].length
        // A trailing `\r` ends the frame now (a server ending lines in `\r` alone would otherwise
        // have each event wait for the next read), and may be the first half of a `\r\n` in flight.
        if (!final && end === buffer.length && buffer.charCodeAt(end - 1) === carriageReturn) {
          this.endedOnCarriageReturn = true
        }
      } else {
        const at = buffer.indexOf('\n\n', from)
        if (at < 0) return start
        end = at + 2
      }
      const event = readFrame(buffer.slice(start, end), general)
      if (event) events.push(event)
      start = end
    }
  }
}

const noEvents: readonly SseEvent[] = Object.freeze([])

/** One frame's event name and data; `general` when its lines may end in `\r`. */
function readFrame(raw: string, general: boolean): SseEvent | undefined {
  if (raw.charCodeAt(0) === openingBrace) {
    const bare = bareJsonFrame(raw)
    if (bare) return bare
  }
  let event: string | undefined
  let data: string | undefined
  let error: string | undefined
  for (let pos = 0; pos < raw.length; ) {
    let end: number
    let next: number
    if (general) {
      lineEnd.lastIndex = pos
      const match = lineEnd.exec(raw)
      end = match ? match.index : raw.length
      next = match ? end + match[0].length : raw.length
    } else {
      const at = raw.indexOf('\n', pos)
      end = at < 0 ? raw.length : at
      next = end + 1
    }
    // Blank lines and comments carry nothing; of the fields, only data, event and error matter here.
    if (end > pos && raw.charCodeAt(pos) !== colon) {
      const at = raw.indexOf(':', pos)
      const nameEnd = at < 0 || at > end ? end : at
      let valueStart = nameEnd === end ? end : nameEnd + 1
      if (valueStart < end && raw.charCodeAt(valueStart) === space) valueStart++
      const nameLength = nameEnd - pos
      if (nameLength === 4 && raw.startsWith('data', pos)) {
        const value = raw.slice(valueStart, end)
        data = data === undefined ? value : `${data}\n${value}`
      } else if (nameLength === 5 && raw.startsWith('event', pos)) {
        event = raw.slice(valueStart, end)
      } else if (nameLength === 5 && raw.startsWith('error', pos)) {
        error = raw.slice(valueStart, end)
      }
    }
    pos = next
  }
  // Per the SSE spec a frame without data is not dispatched; that also drops comment-only frames.
  if (data === undefined) return error === undefined ? undefined : synthesised(event, errorData(error))
  return event === undefined ? { data, raw } : { event, data, raw }
}

/**
 * A frame svc reads where SSE would read none, under a raw of its own: pass-through relays forward
 * `raw`, and the upstream's text (an `error:` field, a bare object) is one no client parser reads.
 */
const synthesised = (event: string | undefined, data: string): SseEvent => {
  const raw = encodeSseText(event, data)
  return event === undefined ? { data, raw } : { event, data, raw }
}

/**
 * A frame that is a JSON error object rather than fields: the body of a server that answered a
 * stream request with a bare `{"error": …}` (under text/event-stream or none), which SSE would
 * drop: the client was told the stream failed, never why. Read as that object's data frame. Only
 * an error: a server that ignored stream:true and sent its whole answer as JSON was read as one
 * chunk, an empty answer billed as a success; dropped, the stream has no events and falls back.
 */
function bareJsonFrame(text: string): SseEvent | undefined {
  const data = text.trim()
  const parsed = parseJson(data)
  return parsed.ok && isObject(parsed.value) && isErrorMember(parsed.value.error)
    ? synthesised(undefined, data)
    : undefined
}

/** An error object or its message alone; not a whole Responses answer's `"error": null`. */
const isErrorMember = (error: unknown): boolean => isObject(error) || (typeof error === 'string' && error !== '')

/**
 * llama.cpp's server reports a failure in a field of its own (`error: {"code":400,"message":…}`),
 * which SSE would drop: the answer then read as an empty success, billed and never failed over.
 * It becomes the `{"error": …}` data other servers send in-band, which decoders read as a failure.
 */
const errorData = (value: string): string => `{"error":${isJson(value) ? value : JSON.stringify(value)}}`

/** A frame of `dataLines`, under `event` where it has a name. */
const frame = (event: string | undefined, dataLines: string): string =>
  event === undefined ? `${dataLines}\n\n` : `event: ${event}\n${dataLines}\n\n`

/** One frame whose data is `data` as JSON: one `data:` line, as JSON.stringify escapes every line end. */
export const encodeSse = (event: string | undefined, data: unknown): string =>
  frame(event, `data: ${JSON.stringify(data)}`)

/** One frame whose data is `text` as it stands: a `data:` line for each of its lines. */
export const encodeSseText = (event: string | undefined, text: string): string =>
  frame(event, `data: ${text.replaceAll('\n', '\ndata: ')}`)
