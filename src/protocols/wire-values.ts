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

/** Parses JSON, returning undefined instead of throwing (callers decide what a bad frame means). */
export const parseJson = (text: string): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) }
  } catch {
    return { ok: false }
  }
}

// The same narrowing for a value already in hand (an array element, a nested field).
export const asString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

export const asNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined

/** An array, or an empty one: for optional lists that are simply iterated. */
export const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
