// Secrets out of text that came from elsewhere (an upstream's error message) before it is shown,
// logged or stored.
import type { GatewayError } from './errors'

/**
 * Key-shaped words: OpenAI's and Anthropic's `sk-…`, svc's own `svc-…`, bearer credentials, and a
 * key as a provider masks it when refusing it (any `sk-`/`svc-` word with an asterisk in it, OpenAI's
 * "sk-proj-****…WXYZ", `gsk_ab****wxyz`,
 * DeepSeek's "****6789", and xAI's "na***ys", three asterisks between two characters a side, a
 * shape narrow enough to leave "f***ing" and "char***argv" as said): its first and last characters are the operator's key's, which no client
 * is shown. The masked form is matched from a word's start only, its parts bounded: upstream text
 * may quote a client's prompt, and `[\w-]+` tried at every position of a 64 KB `a-a-a-…` took a second.
 */
const keyShaped =
  /\b(?:sk|svc)-[A-Za-z0-9_*-]{12,}|\b(?:sk|svc)-[\w-]{0,64}\*[\w*-]{0,64}|\bBearer\s+[^\s"',]+|(?<![\w*-])[\w-]{0,64}\*{4,}[\w-]{1,64}(?![\w*-])|(?<![\w*-])[\w-]{2}\*{3}[\w-]{2}(?![\w*-])/gi

/**
 * `text` without `key` (the one the request used, wherever it is quoted) and without anything
 * shaped like a key. The very string when there is nothing to take out (the usual case).
 */
export function withoutSecrets(text: string, key: string | undefined): string {
  const withoutKey = key && key.length >= 8 && text.includes(key) ? text.replaceAll(key, '[redacted]') : text
  return withoutKey.replace(keyShaped, '[redacted]')
}

/** An upstream's failure in words that can be shown, logged and stored: withoutSecrets of its message. */
export function errorWithoutSecrets(error: GatewayError, key: string | undefined): GatewayError {
  const said = withoutSecrets(error.message, key)
  return said === error.message ? error : error.withMessage(said)
}

/**
 * A frame the relay writes without `key` (one long enough to be one: a keyless local server's empty
 * key is in every text), the very string when it does not quote it (one `includes` a frame). Only
 * the key itself goes: the frame is JSON, and withoutSecrets' patterns could eat an escaped quote.
 */
export const frameWithoutKey = (frame: string, key: string): string =>
  key.length >= 8 && frame.includes(key) ? frame.replaceAll(key, '[redacted]') : frame
