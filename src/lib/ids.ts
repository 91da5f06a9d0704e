// Identifiers: ULIDs, monotonic within a millisecond so ids sort in creation order.
import { incrementBase32, ulid } from 'ulid'

/**
 * ulid's monotonicFactory, with the time part encoded once per millisecond rather than once per
 * id: under load a dozen requests share a millisecond, and the factory's encodeTime (ten string
 * concatenations and four checks) was ~2 % of the request path's samples. Same rule: an id made
 * in or before the last id's millisecond keeps that millisecond and increments its random part.
 */
let lastTime = -1
let timePart = ''
let randomPart = ''

export function newUlid(now: number = Date.now()): string {
  if (now > lastTime) {
    const fresh = ulid(now)
    lastTime = now
    timePart = fresh.slice(0, 10)
    randomPart = fresh.slice(10)
    return fresh
  }
  randomPart = incrementBase32(randomPart)
  return timePart + randomPart
}

/** `acct_…`, `key_…`, `grant_…`: a prefix says what an id names when it shows up in a log. */
export const newId = (prefix: string, now?: number): string => `${prefix}_${newUlid(now)}`
