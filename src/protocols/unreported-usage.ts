// A Usage that stands in for counts the upstream never reported: no usage object, or one whose
// counts are not numbers (a compatible server's `"10"`). Its counts are zeros where nothing came,
// and the relay estimates the leg instead of billing them (relay/trace.ts). The usage decoders
// mark it where they build it; the mark is a symbol, so a copy made by spreading keeps it, JSON
// never shows it, and a reported usage (the usual case) carries nothing at all.
import type { Usage } from '../exchange/types'

const unreported = Symbol('usage the upstream never reported')

type Marked = { [unreported]?: true }

/** `usage`, marked as standing in for counts the upstream never sent. */
export function markUnreported<T extends Partial<Usage>>(usage: T): T {
  ;(usage as T & Marked)[unreported] = true
  return usage
}

/** Whether `usage` holds counts the upstream reported (as decoded: credible or not, credible-usage.ts decides). */
export const isReported = (usage: Partial<Usage>): boolean => (usage as Marked)[unreported] !== true
