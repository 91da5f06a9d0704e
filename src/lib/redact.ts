// Secrets out of text that came from elsewhere (an upstream's error message) before it is shown,
// logged or stored.

/** Key-shaped words: OpenAI's and Anthropic's `sk-…`, svc's own `svc-…`, and bearer credentials. */
const keyShaped = /\b(?:sk|svc)-[A-Za-z0-9_-]{12,}|\bBearer\s+[^\s"',]+/gi

/**
 * `text` without `key` (the one the request used, wherever it is quoted) and without anything
 * shaped like a key. The very string when there is nothing to take out (the usual case).
 */
export function withoutSecrets(text: string, key: string | undefined): string {
  const withoutKey = key && key.length >= 8 && text.includes(key) ? text.replaceAll(key, '[redacted]') : text
  return withoutKey.replace(keyShaped, '[redacted]')
}
