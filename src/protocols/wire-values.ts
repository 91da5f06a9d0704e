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
