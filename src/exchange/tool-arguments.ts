// Tool-call arguments arrive as JSON text (OpenAI's `arguments`, any upstream's streamed
// fragments); the exchange wants the input object.

import { isObject, parseJson } from '../protocols/wire-values'

/**
 * Unparseable or non-object arguments become `{}`: the client's tool then fails its schema check
 * and the model sees an error it can retry from, instead of the whole response failing here.
 * A string holding JSON (double-encoded by some providers) is unwrapped once.
 */
export function parseToolArguments(raw: string): Record<string, unknown> {
  if (raw.trim() === '') return {}
  const parsed = parseJson(raw)
  if (!parsed.ok) return {}
  if (isObject(parsed.value)) return parsed.value
  if (typeof parsed.value === 'string') {
    const inner = parseJson(parsed.value)
    if (inner.ok && isObject(inner.value)) return inner.value
  }
  return {}
}
