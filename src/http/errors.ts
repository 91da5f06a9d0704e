// Errors at the edge: one GatewayError, rendered in the shape of the surface the client spoke.
// Anthropic's shape serves the messages, usage and admin routes; OpenAI's the responses route.
import { GatewayError, type ErrorKind } from '../lib/errors'

export type Surface = 'anthropic' | 'openai'

const anthropicType: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  authentication: 'authentication_error',
  billing: 'billing_error',
  permission: 'permission_error',
  not_found: 'not_found_error',
  method_not_allowed: 'invalid_request_error',
  request_too_large: 'request_too_large',
  rate_limit: 'rate_limit_error',
  api_error: 'api_error',
  overloaded: 'overloaded_error',
  timeout: 'timeout_error',
}

/** OpenAI's error `type` and `code` for each kind (its SDKs key retries and messages on these). */
const openaiType: Record<ErrorKind, { type: string; code: string | null }> = {
  invalid_request: { type: 'invalid_request_error', code: null },
  authentication: { type: 'invalid_request_error', code: 'invalid_api_key' },
  billing: { type: 'insufficient_quota', code: 'insufficient_quota' },
  permission: { type: 'invalid_request_error', code: 'permission_denied' },
  not_found: { type: 'invalid_request_error', code: 'not_found' },
  method_not_allowed: { type: 'invalid_request_error', code: 'method_not_allowed' },
  request_too_large: { type: 'invalid_request_error', code: 'request_too_large' },
  rate_limit: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  api_error: { type: 'server_error', code: 'server_error' },
  overloaded: { type: 'server_error', code: 'overloaded' },
  timeout: { type: 'server_error', code: 'timeout' },
}

export const anthropicErrorType = (kind: ErrorKind) => anthropicType[kind]

export function errorBody(error: GatewayError, surface: Surface): unknown {
  if (surface === 'openai') {
    const { type, code } = openaiType[error.kind]
    return { error: { message: error.message, type, param: error.param ?? null, code } }
  }
  return { type: 'error', error: { type: anthropicType[error.kind], message: error.message } }
}

/** Anything thrown that is not a GatewayError is our bug: say so without leaking its details. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err
  return new GatewayError('api_error', 'internal error in the gateway; the request id identifies it in the logs')
}

export function errorResponse(err: unknown, surface: Surface, headers: Record<string, string> = {}): Response {
  const error = toGatewayError(err)
  const extra: Record<string, string> = { ...headers }
  if (error.retryAfterSeconds !== undefined) extra['retry-after'] = String(Math.ceil(error.retryAfterSeconds))
  if (error.kind === 'method_not_allowed' && error.cause && typeof error.cause === 'string') extra.allow = error.cause
  return Response.json(errorBody(error, surface), { status: error.status, headers: extra })
}
