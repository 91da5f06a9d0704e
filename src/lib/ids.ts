// Identifiers: ULIDs, monotonic within a millisecond so ids sort in creation order.
import { monotonicFactory } from 'ulid'

const nextUlid = monotonicFactory()

export const newUlid = (now?: number): string => nextUlid(now)

/** `acct_…`, `key_…`, `grant_…`: a prefix says what an id names when it shows up in a log. */
export const newId = (prefix: string, now?: number): string => `${prefix}_${nextUlid(now)}`
