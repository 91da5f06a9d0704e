// Errors at the edge: one GatewayError, rendered in the shape of the surface the client spoke.
// Anthropic's shape serves the messages, usage and admin routes; OpenAI's the responses route.
import { databaseRefusesWrites, refusingWritesError } from '../ledger/write-refusals'
import { GatewayError } from '../lib/errors'
import { encodeGatewayErrorAsAnthropic } from '../protocols/anthropic/errors'
import { encodeGatewayErrorAsOpenAI, mapErrorStatusToOpenAI } from '../protocols/openai-responses/errors'

export type Surface = 'anthropic' | 'openai'

export function errorBody(error: GatewayError, surface: Surface): unknown {
  return surface === 'openai' ? encodeGatewayErrorAsOpenAI(error) : encodeGatewayErrorAsAnthropic(error)
}

/**
 * Anything thrown that is not a GatewayError is our bug (say so without leaking its details), but
 * for the database refusing a write (an admin's grant on a full disk): the operator's to fix, and
 * the same call succeeds once it is.
 */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err
  if (databaseRefusesWrites(err)) return refusingWritesError()
  return new GatewayError('api_error', 'internal error in the gateway; the request id identifies it in the logs')
}

export function errorResponse(err: unknown, surface: Surface, headers: Record<string, string> = {}): Response {
  const error = toGatewayError(err)
  const extra: Record<string, string> = { ...headers }
  if (error.retryAfterSeconds !== undefined) extra['retry-after'] = String(Math.ceil(error.retryAfterSeconds))
  if (error.kind === 'method_not_allowed' && typeof error.cause === 'string') extra.allow = error.cause
  // The Anthropic and OpenAI SDKs obey this over their status rule (they retry any 5xx): without it
  // they back off and resend a request that is bound to fail the same way. Never sent as `true`:
  // where a retry may help, the SDK's own rule decides.
  if (error.permanent) extra['x-should-retry'] = 'false'
  const status = surface === 'openai' ? mapErrorStatusToOpenAI(error) : error.status
  return Response.json(errorBody(error, surface), { status, headers: extra })
}
