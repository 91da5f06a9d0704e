// One readable sentence from a TypeBox validation error, for config files and request bodies.
import type { ValueError } from '@sinclair/typebox/value'

export function describeValueError(error: ValueError): string {
  const field = error.path.replace(/^\//, '').replaceAll('/', '.') || '(top level)'
  const message = error.message.toLowerCase()
  if (message.includes('unexpected property')) return `${field}: unknown key`
  const choices = (error.schema.anyOf as { const?: unknown }[] | undefined)?.map((s) => s.const)
  if (choices?.length && choices.every((c) => typeof c === 'string')) {
    return `${field}: must be one of ${choices.join(', ')} (got ${JSON.stringify(error.value)})`
  }
  return `${field}: ${message}${error.value === undefined ? '' : ` (got ${JSON.stringify(error.value)})`}`
}
