// Query-string bounds, checked by hand so a 400 can say exactly which bound was broken.
import { invalidRequest } from '../lib/errors'
import { parseRfc3339 } from '../lib/timestamps'

export function readLimit(
  raw: string | undefined,
  bounds: { name?: string; min: number; max: number; fallback: number },
): number {
  const name = bounds.name ?? 'limit'
  if (raw === undefined || raw === '') return bounds.fallback
  if (!/^-?\d+$/.test(raw)) throw invalidRequest(`${name} must be an integer from ${bounds.min} to ${bounds.max}`, name)
  const value = Number(raw)
  if (value < bounds.min || value > bounds.max) {
    throw invalidRequest(`${name} must be from ${bounds.min} to ${bounds.max} (got ${raw})`, name)
  }
  return value
}

/** One of `allowed`, or `fallback` when absent; anything else a 400 that lists them. */
export function oneOf<T extends string, F extends T | undefined>(
  raw: string | undefined,
  allowed: readonly T[],
  fallback: F,
  name: string,
): T | F {
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) {
    throw invalidRequest(`${name} must be one of ${allowed.join(', ')} (got ${raw})`, name)
  }
  return raw as T
}

/** RFC 3339 with a time zone, e.g. 2026-11-22T10:00:00.123Z or …+02:00, of a day and time that exist. */
export function readTimestamp(raw: string, name: string): number {
  const ms = parseRfc3339(raw)
  if (ms === undefined) {
    throw invalidRequest(`${name} must be an RFC 3339 timestamp such as 2026-11-22T10:00:00.000Z`, name)
  }
  return ms
}

/**
 * A path's id as the client sent it. Elysia gives null for one whose percent-encoding does not
 * decode (`%FF`), which a 404 then named "null": the segment after `before` is named instead.
 */
export function pathId(id: string | null | undefined, request: Request, before: string): string {
  if (typeof id === 'string') return id
  const path = new URL(request.url).pathname
  const at = path.indexOf(before)
  return at < 0 ? '' : (path.slice(at + before.length).split('/')[0] ?? '')
}
