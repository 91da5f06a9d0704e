// OpenAI error bodies: upstream errors → neutral info, gateway errors → `{error:{message,type,param,code}}`
// (wire-formats §2.7, §4.12).
import type { ErrorKind, GatewayError } from '../../lib/errors'
import { decodeChatError } from '../openai-chat/errors'

/**
 * A Responses upstream's error body: OpenAI's one envelope, `{error:{message,type,param,code}}`,
 * read as Chat's is (a proxy's `{"error":"…"}` and a body that is none included).
 */
export const decodeResponsesError = decodeChatError

export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null }
}

export const encodeOpenAIError = (opts: {
  message: string
  type: string
  param?: string | null
  code?: string | null
}): OpenAIErrorBody => ({
  error: { message: opts.message, type: opts.type, param: opts.param ?? null, code: opts.code ?? null },
})

/**
 * GatewayError kind → OpenAI `type` / `code`. OpenAI documents only the envelope (§6), so the values
 * follow what its API is seen to send: a wrong key and an unknown path or item are
 * `invalid_request_error` (the key's code `invalid_api_key`), quota `insufficient_quota`, 429
 * `rate_limit_exceeded`, 5xx `server_error`. Where its type varies with the cause (403, and 429's
 * `requests`/`tokens`) the Anthropic-flavoured name stands.
 */
const openAIErrorKinds: Record<ErrorKind, { type: string; code: string | null }> = {
  invalid_request: { type: 'invalid_request_error', code: null },
  // Codex stops at once on this code, saying the context is full; on a 5xx it would retry in vain.
  context_exceeded: { type: 'invalid_request_error', code: 'context_length_exceeded' },
  authentication: { type: 'invalid_request_error', code: 'invalid_api_key' },
  billing: { type: 'insufficient_quota', code: 'insufficient_quota' },
  permission: { type: 'permission_error', code: null },
  not_found: { type: 'invalid_request_error', code: null },
  method_not_allowed: { type: 'invalid_request_error', code: 'method_not_allowed' },
  request_too_large: { type: 'invalid_request_error', code: 'request_too_large' },
  rate_limit: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
  api_error: { type: 'server_error', code: 'server_error' },
  overloaded: { type: 'server_error', code: 'server_overloaded' },
  timeout: { type: 'server_error', code: 'timeout' },
}

export const mapErrorKindToOpenAI = (kind: ErrorKind): { type: string; code: string | null } => openAIErrorKinds[kind]

/**
 * HTTP status for an OpenAI-speaking client: Anthropic's 529 is unknown to OpenAI clients, whose
 * SDKs retry 503 (§4.12). Codex retries every 5xx and 402 whatever x-should-retry says (a
 * coding-agent audit: 30 requests for a refusal no resend can fix), and stops at once on a 4xx
 * other than 429 and on OpenAI's own no-credit answer, 429 `insufficient_quota` ("Quota
 * exceeded"): so no credit is that 429, and another error no resend can fix is a 400.
 */
export function mapErrorStatusToOpenAI(error: GatewayError): number {
  if (error.kind === 'billing') return 429
  if (error.permanent && error.status >= 500) return 400
  return error.status === 529 ? 503 : error.status
}

/**
 * A GatewayError rendered as an OpenAI error body; an OpenAI upstream's own code where it gave one
 * (clients branch on `invalid_prompt`, Codex stops on it).
 */
export function encodeGatewayErrorAsOpenAI(error: GatewayError): OpenAIErrorBody {
  const { type, code } = mapErrorKindToOpenAI(error.kind)
  return encodeOpenAIError({ message: error.message, type, code: error.code ?? code, param: error.param ?? null })
}
