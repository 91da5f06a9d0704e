// Stream translation as synchronous steps. A translated stream runs a decoder (upstream frames →
// neutral events), the meter and an encoder (neutral events → client frames). Each is a state
// machine fed one item at a time, so what one network read brought is translated in one call and
// goes out as one write, with no promise or async-generator hop per frame: the chain of four
// async generators this replaced cost ~15 % of a translated stream's codec time, and ~5 % of its
// CPU in svc (bench/README.md, "Session of 2026-11-25, night").

import type { ExchangeEvent } from './types'

/** A stream translation step: feed it inputs in order, then end it. */
export interface StreamCodec<In, Out> {
  /** Outputs for one input. Once `done`, the step ignores further input. */
  push(input: In): Out[]
  /** Outputs for a source that ended without this step's terminal input. */
  end(): Out[]
  /** The step has seen its terminal input: the source need not be read any further. */
  readonly done: boolean
  /**
   * Outputs a step held for what might follow, now that a network read's inputs are all in
   * (nothing more may come for a while). A step that holds nothing has none.
   */
  flush?(): Out[]
  /**
   * Outputs a step still holds, for a source that broke (a read error, a timeout): what came
   * before the break goes out, and is metered, ahead of its error. A step that holds nothing has none.
   */
  release?(): Out[]
}

/** The last step of a translated stream, which tells the client in-stream when its source broke. */
export interface StreamEncoder extends StreamCodec<ExchangeEvent, string> {
  /** Frames for a source that failed: a read error, a timeout, a malformed upstream frame. */
  fail(error: unknown): string[]
}

/** What an encoder is made of; `encoderOf` adds what every encoder shares. */
export interface EncoderParts {
  /** Frames for one event, and whether that event ended the stream (an in-band error). */
  encode(event: ExchangeEvent): { frames: string[]; ended: boolean }
  /** Frames for a source that ended: the terminal event, or an error if the answer was cut short. */
  close(): string[]
  /** Frames for a source that failed. */
  failed(error: unknown): string[]
  /** Frames held for what might follow an event, sent at the end of a read. */
  flush?(): string[]
}

/**
 * What a flush with nothing held returns: one array for every stream and read (a flush runs at the
 * end of every network read of every translated stream). Read only; never pushed to.
 */
const nothingHeld: never[] = []

/** An encoder that says once how the stream ended (a terminal event, the end, a failure), then nothing. */
export function encoderOf(parts: EncoderParts): StreamEncoder {
  let done = false
  const last = (frames: () => string[]): string[] => {
    if (done) return []
    done = true
    return frames()
  }
  return {
    push(event) {
      if (done) return []
      const { frames, ended } = parts.encode(event)
      done = ended
      return frames
    },
    end: () => last(parts.close),
    fail: (error) => last(() => parts.failed(error)),
    flush: () => (done ? nothingHeld : (parts.flush?.() ?? nothingHeld)),
    get done() {
      return done
    },
  }
}

/** `first` feeding `second`: the second's source ends when the first is done or ends. */
export function pipe<A, B, C>(first: StreamCodec<A, B>, second: StreamCodec<B, C>): StreamCodec<A, C> {
  let ended = false
  const feed = (items: B[]): C[] => {
    const out: C[] = []
    for (const item of items) {
      if (second.done) break
      for (const produced of second.push(item)) out.push(produced)
    }
    return out
  }
  /** What the first step held, through the second, then what the second itself held. */
  const heldThrough = (fromFirstStep: B[] | undefined, ofSecond: () => C[] | undefined): C[] => {
    const fromFirst = fromFirstStep === undefined || fromFirstStep.length === 0 ? nothingHeld : feed(fromFirstStep)
    const fromSecond = ofSecond() ?? nothingHeld
    if (fromSecond.length === 0) return fromFirst
    return fromFirst.length === 0 ? fromSecond : [...fromFirst, ...fromSecond]
  }
  const endSecond = (out: C[]): C[] => {
    ended = true
    if (!second.done) for (const produced of second.end()) out.push(produced)
    return out
  }
  return {
    push(input) {
      if (ended || second.done) return []
      const out = feed(first.push(input))
      return first.done ? endSecond(out) : out
    },
    end() {
      if (ended || second.done) return []
      return endSecond(feed(first.end()))
    },
    flush() {
      if (ended || second.done) return nothingHeld
      return heldThrough(first.flush?.(), () => second.flush?.())
    },
    release() {
      if (ended || second.done) return nothingHeld
      return heldThrough(first.release?.(), () => second.release?.())
    },
    get done() {
      return ended || second.done
    },
  }
}
