// Anthropic error bodies: upstream error → UpstreamErrorInfo, and the body/event we send clients.

import type { UpstreamErrorInfo } from '../../exchange/types'
import type { ErrorKind, GatewayError } from '../../lib/errors'
import { describeUpstreamBody } from '../upstream-error-body'
import { isObject, parseJson, readObject, readString } from '../wire-values'
import { ownEntry } from '../../lib/own-entry'

export interface AnthropicErrorBody {
  type: 'error'
  error: { type: string; message: string }
}

/** Anthropic's error type for an HTTP status (also used to classify other dialects' errors). */
export function anthropicErrorTypeForStatus(status: number): string {
  if (status === 401) return 'authentication_error'
  if (status === 402) return 'billing_error'
  if (status === 403) return 'permission_error'
  if (status === 404) return 'not_found_error'
  if (status === 408 || status === 504) return 'timeout_error'
  if (status === 413) return 'request_too_large'
  if (status === 429) return 'rate_limit_error'
  if (status === 502 || status === 503 || status === 529) return 'overloaded_error'
  if (status >= 500) return 'api_error'
  return 'invalid_request_error'
}

const statusByType: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
}

/** The HTTP status Anthropic pairs with an error type; in-band stream errors carry only the type. */
export const statusForAnthropicErrorType = (type: string): number => ownEntry(statusByType, type) ?? 500

const typeByKind: Record<ErrorKind, string> = {
  invalid_request: 'invalid_request_error',
  context_exceeded: 'invalid_request_error',
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

const kindByType: Record<string, ErrorKind> = {
  invalid_request_error: 'invalid_request',
  authentication_error: 'authentication',
  billing_error: 'billing',
  permission_error: 'permission',
  not_found_error: 'not_found',
  request_too_large: 'request_too_large',
  rate_limit_error: 'rate_limit',
  api_error: 'api_error',
  overloaded_error: 'overloaded',
  timeout_error: 'timeout',
}

/** The kind of a failure named in the neutral (Anthropic) vocabulary; a type outside it is an api_error. */
export const errorKindForAnthropicType = (type: string): ErrorKind => ownEntry(kindByType, type) ?? 'api_error'

// Anthropic's words for a prompt over the context window (the prompt alone; the prompt and
// max_tokens), by which Claude Code knows to compact the conversation or to ask for less output.
const anthropicContextWording = /prompt is too long|exceed context limit/i

/**
 * A GatewayError rendered as an Anthropic error body. Another provider's words for a prompt over
 * the context window get Anthropic's in front, so that Claude Code compacts on them too.
 */
export function encodeGatewayErrorAsAnthropic(error: GatewayError): AnthropicErrorBody {
  const message =
    error.kind === 'context_exceeded' && !anthropicContextWording.test(error.message)
      ? `prompt is too long: ${error.message}`
      : error.message
  return encodeAnthropicError(typeByKind[error.kind], message)
}

export function decodeAnthropicError(status: number, bodyText: string): UpstreamErrorInfo {
  const parsed = parseJson(bodyText)
  const error = parsed.ok && isObject(parsed.value) ? readObject(parsed.value, 'error') : undefined
  const type = (error && readString(error, 'type')) || anthropicErrorTypeForStatus(status)
  const message = (error && readString(error, 'message')) || describeUpstreamBody(status, bodyText)
  return { status, type, message }
}

export const encodeAnthropicError = (type: string, message: string): AnthropicErrorBody => ({
  type: 'error',
  error: { type, message },
})
