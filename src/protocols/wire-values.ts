// Narrowing helpers for JSON read off the wire: decoders take `unknown` and never trust a shape.

export type JsonObject = Record<string, unknown>

export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export const readString = (object: JsonObject, key: string): string | undefined => {
  const value = object[key]
  return typeof value === 'string' ? value : undefined
}

export const readNumber = (object: JsonObject, key: string): number | undefined => {
  const value = object[key]
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined
}

export const readBoolean = (object: JsonObject, key: string): boolean | undefined => {
  const value = object[key]
  return typeof value === 'boolean' ? value : undefined
}

export const readObject = (object: JsonObject, key: string): JsonObject | undefined => {
  const value = object[key]
  return isObject(value) ? value : undefined
}

export const readArray = (object: JsonObject, key: string): unknown[] | undefined => {
  const value = object[key]
  return Array.isArray(value) ? value : undefined
}

/** Whether `text` is JSON. For the check every relayed frame gets: no result object to collect. */
export const isJson = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Parses JSON, returning undefined instead of throwing (callers decide what a bad frame means). */
export const parseJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

/**
 * `text` (JSON, or SSE frames carrying it) with the member `"name":"from"` turned into
 * `"name":"to"`, every other byte as it was; undefined unless the member occurs exactly once, as
 * written compactly (then the caller serializes again). A string value cannot hold the member
 * unescaped, so one occurrence is the member itself. For the ids a relay puts in place of the
 * upstream's, without serializing what it relays.
 */
export function replaceStringMember(text: string, name: string, from: string, to: string): string | undefined {
  const member = `"${name}":${JSON.stringify(from)}`
  const at = text.indexOf(member)
  if (at < 0 || text.includes(member, at + 1)) return undefined
  return `${text.slice(0, at)}"${name}":${JSON.stringify(to)}${text.slice(at + member.length)}`
}

// The same narrowing for a value already in hand (an array element, a nested field).
export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

export const asNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined

/** An array, or an empty one: for optional lists that are simply iterated. */
export const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
