// The CLI's requests to its gateway (sign-in, whoami, the launchers' look at a profile). One that
// cannot reach it (a wrong URL, svc not running) is the user's to fix: said in a line that names
// the gateway, not as a stack trace.
import { GatewayError } from '../lib/errors'

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
 * The gateway answered 401 to the signed-in key (revoked, or the account's): the agent would start
 * and fail every request, telling the user to sign in to its vendor; whoami would show nothing.
 */
export const refusedKey = (gateway: string) =>
  new GatewayError('authentication', `${gateway} refused the signed-in key (revoked?): run \`svc login\` again`)

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
