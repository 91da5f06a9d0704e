// One answer from several upstream messages. Anthropic pauses a long loop of its server tools
// (`stop_reason: "pause_turn"`, after ten searches by default) for its client to send the turn back
// and so let it go on; a client of another dialect (Codex) has no such stop and takes the pause for
// the turn's end. svc sends the turn back itself (relay/paused-turn.ts), and this step, between the
// meter and the client's encoder (or the assembler of a JSON answer), joins the messages into one:
// each later message's blocks numbered on after the earlier ones', its usage added to what the
// earlier ones were billed, its opening dropped, and the pause's finish held until it is known
// whether another message follows.
import type { StreamCodec } from './stream-codec'
import { emptyUsage, type ExchangeEvent, overwriteUsage, type StopReason, type Usage } from './types'

export interface JoinedLegs<T> extends StreamCodec<ExchangeEvent, T> {
  /** The message ended paused: its finish is held, and the stream's end did not reach the encoder. */
  readonly paused: boolean
  /** The next message's events follow; the messages before it were billed `billed` in all. */
  nextLeg(billed: Usage): void
  /**
   * No message follows the pause: the held finish, then the end, as the upstream paused the answer,
   * or as `reason` says (the output limit the messages have spent).
   */
  endPaused(reason?: StopReason): T[]
}

export function joinedLegs<T>(inner: StreamCodec<ExchangeEvent, T>): JoinedLegs<T> {
  let held: ExchangeEvent | undefined
  /** Blocks of the messages before this one: its block indices follow theirs. */
  let offset = 0
  /** This message's blocks so far (its highest index + 1). */
  let blocks = 0
  /** What the messages before this one were billed; undefined for the first, relayed as it comes. */
  let earlier: Usage | undefined
  /** This message's cumulative usage (later messages only). */
  let usage = emptyUsage()

  const push = (event: ExchangeEvent): T[] => {
    if (held) return []
    switch (event.type) {
      case 'start':
        if (earlier === undefined) return inner.push(event)
        overwriteUsage(usage, event.usage)
        return []
      case 'usage':
        if (earlier === undefined) return inner.push(event)
        overwriteUsage(usage, event.usage)
        return inner.push({ type: 'usage', usage: addedUsage(earlier, usage) })
      case 'finish':
        if (event.reason !== 'pause_turn') return inner.push(event)
        held = event
        return []
      case 'error':
        return inner.push(event)
      default:
        blocks = Math.max(blocks, event.index + 1)
        return inner.push(offset === 0 ? event : { ...event, index: event.index + offset })
    }
  }

  return {
    push,
    end: () => (held ? [] : inner.end()),
    flush: () => (held ? [] : (inner.flush?.() ?? [])),
    get done() {
      return inner.done
    },
    get paused() {
      return held !== undefined
    },
    nextLeg(billed) {
      held = undefined
      offset += blocks
      blocks = 0
      earlier = billed
      usage = emptyUsage()
    },
    endPaused(reason) {
      const finish = held
      held = undefined
      if (!finish) return []
      return [...inner.push(reason ? { type: 'finish', reason } : finish), ...inner.end()]
    },
  }
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
