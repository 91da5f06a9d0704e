// Narrowing helpers for untrusted JSON: wire payloads arrive as `unknown`.

export type JsonObject = Record<string, unknown>

export const isRecord = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

export const readString = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)

export const readNumber = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined

export const readArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
