// The CLI's requests to its gateway (sign-in, whoami, the launchers' look at a profile). One that
// cannot reach it (a wrong URL, svc not running) is the user's to fix: said in a line that names
// the gateway, not as a stack trace.
import { GatewayError } from '../lib/errors'
import type { KeySource } from './credentials'

/** The gateway did not answer; `timedOut` when it was there but too slow, not refused. */
export class Unreachable extends GatewayError {
  constructor(
    gateway: string,
    reason: string,
    readonly timedOut: boolean,
  ) {
    super('api_error', `cannot reach the gateway at ${gateway}: ${reason}`)
  }
}

/**
 * The gateway answered 401 to the key (revoked, or the account's): the agent would start and fail
 * every request, telling the user to sign in to its vendor; whoami would show nothing. A key from
 * $SVC_API_KEY wins over any sign-in, so `svc login` would not mend it: the variable is named
 * instead (never its value).
 */
export const refusedKey = (gateway: string, keyFrom: KeySource) =>
  new GatewayError(
    'authentication',
    keyFrom === 'SVC_API_KEY'
      ? `${gateway} refused the key in $SVC_API_KEY (revoked, or not a key of this gateway?): set SVC_API_KEY to a valid key, or unset it to use the stored sign-in`
      : `${gateway} refused the signed-in key (revoked?): run \`svc login\` again`,
  )

/** `timeoutMs`: an address that drops packets answers never. */
export async function reach(gateway: string, path: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  try {
    return await fetch(`${gateway}${path}`, { ...init, signal: AbortSignal.timeout(timeoutMs) })
  } catch (err) {
    const timedOut = (err as Error).name === 'TimeoutError'
    const reason =
      (err as { code?: string }).code === 'ECONNREFUSED'
        ? 'connection refused (is svc running there?)'
        : timedOut
          ? `no answer within ${timeoutMs / 1000} s`
          : (err as Error).message
    throw new Unreachable(gateway, reason, timedOut)
  }
}
