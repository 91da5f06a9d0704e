// One readable sentence from a TypeBox validation error, for config files and request bodies.
import type { ValueError } from '@sinclair/typebox/value'

/** Fields whose value is a secret: an error names what is wrong with them, never what they hold. */
const secretField = /(^|\.)(key|api_key|token|secret|password)$/i
/** A wrong value is quoted back up to this many characters: enough to recognise, not a whole body. */
const quotedChars = 80

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === 'object' && [Object.prototype, null].includes(Object.getPrototypeOf(v))

/**
 * The value as JSON would write it, but numbers as JavaScript writes them: JSON's `null` for
 * Infinity and NaN would name a value nobody wrote (TOML has inf and nan; JSON bodies have neither).
 */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value)
  if (Array.isArray(value)) return `[${value.map(shown).join(',')}]`
  if (isPlainObject(value)) {
    const members = Object.entries(value).filter(([, v]) => v !== undefined)
    return `{${members.map(([k, v]) => `${JSON.stringify(k)}:${shown(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? String(value)
}

function quoted(field: string, value: unknown): string {
  if (value === undefined) return ''
  if (secretField.test(field)) return ' (value not shown: a secret)'
  const text = shown(value)
  return ` (got ${text.length > quotedChars ? `${text.slice(0, quotedChars)}…` : text})`
}

export function describeValueError(error: ValueError): string {
  const field = error.path.replace(/^\//, '').replaceAll('/', '.') || '(top level)'
  const message = error.message.toLowerCase()
  if (message.includes('unexpected property')) {
    // A record whose keys follow a pattern (provider ids): the key is not unknown, it is misspelt.
    const keys = (error.schema as { patternProperties?: Record<string, unknown> }).patternProperties
    const pattern = keys && Object.keys(keys)[0]
    return pattern ? `${field}: not a valid name (must match ${pattern})` : `${field}: unknown key`
  }
  const choices = (error.schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const)
  if (choices?.length && choices.every((c) => typeof c === 'string')) {
    return `${field}: must be one of ${choices.join(', ')}${quoted(field, error.value)}`
  }
  return `${field}: ${message}${quoted(field, error.value)}`
}
