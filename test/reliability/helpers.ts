// Shared by the reliability suite: SSE frames as the client sees them, bounded polling, ledger
// reads through the usage API, and the checks every error body must pass.
import { expect } from 'bun:test'

export { remainingNanos, requestDetail } from '../support/harness'
export { parseFrames, type SseFrame } from '../support/sse-frames'

export const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/

/**
 * Polls `check` until it returns a value other than undefined, yielding to the event loop between
 * tries; fails after `timeoutMs`. Waits for a condition, never for a length of time.
 */
export async function waitFor<T>(
  what: string,
  check: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 5_000,
): Promise<T> {
  const deadline = performance.now() + timeoutMs
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

/** A port nobody listens on: bound once, then released. */
export function closedPort(): number {
  const server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() })
  const port = server.port!
  server.stop(true)
  return port
}

/** What must never reach a client: stack frames, source paths, module paths. */
const leaks = [/\n\s+at /, /\bat .*:\d+:\d+/, /\/work\//, /\/src\//, /node_modules/, /\.tsx?:\d+/, /file:\/\//]

export function expectNoLeaks(text: string) {
  for (const pattern of leaks)
    expect({ leaked: pattern.test(text), pattern: String(pattern), text: text.slice(0, 500) }).toMatchObject({
      leaked: false,
    })
}

export const anthropicErrorTypes = [
  'invalid_request_error',
  'authentication_error',
  'billing_error',
  'permission_error',
  'not_found_error',
  'request_too_large',
  'rate_limit_error',
  'api_error',
  'overloaded_error',
  'timeout_error',
]

/** `{type:'error', error:{type, message}}` and nothing else. */
export function isAnthropicError(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  const e = b.error as Record<string, unknown> | undefined
  return (
    Object.keys(b).sort().join() === 'error,type' &&
    b.type === 'error' &&
    typeof e === 'object' &&
    e !== null &&
    Object.keys(e).sort().join() === 'message,type' &&
    anthropicErrorTypes.includes(e.type as string) &&
    typeof e.message === 'string' &&
    e.message !== ''
  )
}

/** `{error:{message, type, param, code}}` and nothing else. */
export function isOpenAIError(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false
  const b = body as Record<string, unknown>
  const e = b.error as Record<string, unknown> | undefined
  return (
    Object.keys(b).join() === 'error' &&
    typeof e === 'object' &&
    e !== null &&
    Object.keys(e).sort().join() === 'code,message,param,type' &&
    typeof e.message === 'string' &&
    e.message !== '' &&
    typeof e.type === 'string' &&
    (e.param === null || typeof e.param === 'string') &&
    (e.code === null || typeof e.code === 'string')
  )
}
