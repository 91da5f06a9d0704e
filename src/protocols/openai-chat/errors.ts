// OpenAI's error envelope (Chat Completions and Responses; OpenRouter's and vLLM's shapes) →
// UpstreamErrorInfo in Anthropic's error vocabulary, classified by HTTP status (wire-formats §3.4, §4.12).

import type { UpstreamErrorInfo } from '../../exchange/types'
import { anthropicErrorTypeForStatus } from '../anthropic/errors'
import { describeUpstreamBody } from '../upstream-error-body'
import { isObject, type JsonObject, parseJson, readNumber, readObject, readString } from '../wire-values'

export function decodeChatError(status: number, bodyText: string): UpstreamErrorInfo {
  const parsed = parseJson(bodyText)
  if (parsed.ok && isObject(parsed.value)) {
    const info = decodeChatErrorPayload(status, parsed.value)
    if (info) return info
  }
  return { status, type: anthropicErrorTypeForStatus(status), message: describeUpstreamBody(status, bodyText) }
}

/**
 * Reads `{error:{message,type,code}}` (OpenAI, OpenRouter) or `{object:"error",message,…}` (vLLM),
 * also as sent in-band in a stream. `status` is the HTTP status, used when the body names none.
 */
export function decodeChatErrorPayload(status: number, payload: JsonObject): UpstreamErrorInfo | undefined {
  // Some proxies send the error as its message alone: `{"error": "…"}`.
  const said: JsonObject | undefined =
    typeof payload.error === 'string' && payload.error !== '' ? { message: payload.error } : undefined
  const error = readObject(payload, 'error') ?? said ?? (payload.object === 'error' ? payload : undefined)
  if (!error) return undefined
  // OpenRouter and vLLM put the HTTP status in `code`; in-band errors come under a 200.
  const code = readNumber(error, 'code')
  const effective = status >= 400 ? status : code !== undefined && code >= 400 && code < 600 ? code : 500
  const message = readString(error, 'message') || `upstream returned HTTP ${effective}`
  // A 429 that is really an empty account is a billing problem, and retrying won't help.
  const quota = error.code === 'insufficient_quota' || error.type === 'insufficient_quota'
  const type = quota ? 'billing_error' : anthropicErrorTypeForStatus(effective)
  return withBlame({ status: effective, type, message }, error)
}

/** OpenAI's `param` and string `code`, where set: whether a 403 or 404 is the client's (call-upstream.ts). */
function withBlame(info: UpstreamErrorInfo, error: JsonObject): UpstreamErrorInfo {
  const param = readString(error, 'param')
  const code = readString(error, 'code')
  if (param) info.param = param
  if (code) info.code = code
  return info
}
