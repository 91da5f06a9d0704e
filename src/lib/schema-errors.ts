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

type SchemaNode = {
  anyOf?: SchemaNode[]
  const?: unknown
  type?: string
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  minLength?: number
}

/** What a value must be, in words: "an integer of at least 1, or null". Undefined for a shape too rich to say. */
function expected(schema: SchemaNode): string | undefined {
  if (schema.anyOf) {
    const members = schema.anyOf.map(expected)
    return members.every((m) => m !== undefined) ? members.join(', or ') : undefined
  }
  if (schema.const !== undefined) return JSON.stringify(schema.const)
  const { minimum, maximum, exclusiveMinimum } = schema
  const bounds =
    minimum !== undefined && maximum !== undefined
      ? ` from ${minimum} to ${maximum}`
      : minimum !== undefined
        ? ` of at least ${minimum}`
        : exclusiveMinimum !== undefined
          ? ` above ${exclusiveMinimum}`
          : maximum !== undefined
            ? ` of at most ${maximum}`
            : ''
  switch (schema.type) {
    case 'integer':
      return `an integer${bounds}`
    case 'number':
      return `a number${bounds}`
    case 'string':
      return (schema.minLength ?? 0) > 0 ? 'a non-empty string' : 'a string'
    case 'boolean':
      return 'true or false'
    case 'null':
      return 'null'
    case 'array':
      return 'an array'
    case 'object':
      return 'an object'
    default:
      return undefined
  }
}

/** The field a validation error names, as a config key: `tools.0.name`. */
export const fieldOf = (error: ValueError): string => error.path.replace(/^\//, '').replaceAll('/', '.')

/** The field as OpenAI's `param` names one: `input[0].role`. */
export const paramOf = (error: ValueError): string =>
  error.path
    .split('/')
    .filter((segment) => segment !== '')
    .reduce(
      (param, segment) => (/^\d+$/.test(segment) ? `${param}[${segment}]` : param ? `${param}.${segment}` : segment),
      '',
    )

/**
 * The error to tell: where a union has a member of the value's own kind (an array where a string or
 * an array may stand), what is wrong is inside the value, said by that member's first error.
 */
export function specificError(error: ValueError): ValueError {
  const kind = Array.isArray(error.value)
    ? 'array'
    : error.value !== null && typeof error.value === 'object'
      ? 'object'
      : undefined
  const members = (error.schema as SchemaNode).anyOf
  if (!kind || !members || !error.message.toLowerCase().includes('union')) return error
  const index = members.findIndex((member) => member.type === kind)
  const inside = index < 0 ? undefined : error.errors[index]?.First()
  return inside ? specificError(inside) : error
}

/** `name` says the field: a config key by default (`models.0.id`), a request's param on the routes. */
export function describeValueError(error: ValueError, name: (error: ValueError) => string = fieldOf): string {
  const field = name(error) || '(top level)'
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
  // TypeBox says only "expected union value" of a value none of a union's members takes.
  const wanted = message.includes('union') ? expected(error.schema as SchemaNode) : undefined
  if (wanted) return `${field}: must be ${wanted}${quoted(field, error.value)}`
  return `${field}: ${message}${quoted(field, error.value)}`
}
