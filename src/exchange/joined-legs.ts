// One answer from several upstream messages. Anthropic pauses a long loop of its server tools
// (`stop_reason: "pause_turn"`, after ten searches by default) for its client to send the turn back
// and so let it go on; a client of another dialect (Codex) has no such stop and takes the pause for
// the turn's end. svc sends the turn back itself (relay/paused-turn.ts), and this step, between the
// meter and the client's encoder (or the assembler of a JSON answer), joins the messages into one:
// each later message's blocks numbered on after the earlier ones', its usage added to what the
// earlier ones were billed, its opening dropped, and the pause's finish held until it is known
// whether another message follows.
import type { StreamCodec } from './stream-codec'
import {
  emptyUsage,
  type ExchangeEvent,
  overwriteUsage,
  type StopReason,
  type UpstreamErrorInfo,
  type Usage,
} from './types'

export interface JoinedLegs<T> extends StreamCodec<ExchangeEvent, T> {
  /** The message ended paused: its finish is held, and the stream's end did not reach the encoder. */
  readonly paused: boolean
  /**
   * A later message failed before its first block (an overloaded_error after its opening): its
   * error, held with its usage, so that the answer may end at the pause before it instead.
   */
  readonly failedBeforeContent: UpstreamErrorInfo | undefined
  /** The next message's events follow; the messages before it were billed `billed` in all. */
  nextLeg(billed: Usage): void
  /**
   * No message follows the pause (or the one that did failed before its content): the pause's
   * finish, then the end, as the upstream paused the answer, or as `reason` says (the output limit
   * the messages have spent).
   */
  endPaused(reason?: StopReason): T[]
}

export function joinedLegs<T>(inner: StreamCodec<ExchangeEvent, T>): JoinedLegs<T> {
  /** The message ended paused: its finish is held (a pause's carries nothing but its reason). */
  let held = false
  let failed: UpstreamErrorInfo | undefined
  /** This message's finish (not a pause) has gone to the encoder. */
  let finished = false
  /** Blocks of the messages before this one: its block indices follow theirs. */
  let offset = 0
  /** This message's blocks so far (its highest index + 1). */
  let blocks = 0
  /** What the messages before this one were billed; undefined for the first, relayed as it comes. */
  let earlier: Usage | undefined
  /** This message's cumulative usage (later messages only). */
  let usage = emptyUsage()

  /** A later message's usage is told once it has content (its first block, or its finish). */
  const withheld = () => earlier !== undefined && blocks === 0
  const laterUsage = (): ExchangeEvent => ({ type: 'usage', usage: addedUsage(earlier!, usage) })

  const push = (event: ExchangeEvent): T[] => {
    if (held || failed) return []
    switch (event.type) {
      case 'start':
        if (earlier === undefined) return inner.push(event)
        overwriteUsage(usage, event.usage)
        return []
      case 'usage':
        if (earlier === undefined) return inner.push(event)
        overwriteUsage(usage, event.usage)
        return withheld() ? [] : inner.push(laterUsage())
      case 'finish': {
        // A later message of no blocks at all: its usage is told with its finish.
        const told = withheld() ? inner.push(laterUsage()) : []
        if (event.reason === 'pause_turn') held = true
        else {
          finished = true
          for (const frame of inner.push(event)) told.push(frame)
        }
        return told
      }
      case 'error':
        if (withheld()) {
          failed = event.error
          return []
        }
        return inner.push(event)
      default: {
        const told = withheld() ? inner.push(laterUsage()) : []
        blocks = Math.max(blocks, event.index + 1)
        for (const frame of inner.push(offset === 0 ? event : { ...event, index: event.index + offset }))
          told.push(frame)
        return told
      }
    }
  }

  return {
    push,
    end: () => {
      if (held || failed) return []
      // A later message whose body ended before its content (and its finish) failed as one whose error said so.
      if (withheld() && !finished) {
        failed = endedBeforeContent
        return []
      }
      return inner.end()
    },
    flush: () => (held || failed ? [] : (inner.flush?.() ?? [])),
    get done() {
      return inner.done
    },
    get paused() {
      return held
    },
    get failedBeforeContent() {
      return failed
    },
    nextLeg(billed) {
      held = false
      offset += blocks
      blocks = 0
      earlier = billed
      usage = emptyUsage()
      finished = false
    },
    endPaused(reason = 'pause_turn') {
      held = false
      failed = undefined
      return [...inner.push({ type: 'finish', reason, stopSequence: null }), ...inner.end()]
    },
  }
}

const endedBeforeContent: UpstreamErrorInfo = {
  status: 502,
  type: 'api_error',
  message: 'upstream stream ended before its answer began',
}

/** Two usages added count by count: the messages of one answer, billed each on its own. */
export function addedUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    input: a.input + b.input,
    cacheRead: a.cacheRead + b.cacheRead,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    output: a.output + b.output,
    reasoning: a.reasoning + b.reasoning,
  }
  if (a.cacheWrite1h !== undefined || b.cacheWrite1h !== undefined)
    sum.cacheWrite1h = (a.cacheWrite1h ?? 0) + (b.cacheWrite1h ?? 0)
  if (a.webSearches !== undefined || b.webSearches !== undefined)
    sum.webSearches = (a.webSearches ?? 0) + (b.webSearches ?? 0)
  return sum
}
