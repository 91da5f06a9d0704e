// What OpenAI's two surfaces (Chat Completions and Responses) share: Bearer auth and the
// `{error:{message,type,param,code}}` body (wire-formats §2.7), all four keys always present.

const errors: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
}

export const openaiAuthorized = (headers: Headers, apiKey: string): boolean =>
  headers.get('authorization') === `Bearer ${apiKey}`

export function openaiErrorBody(status: number, message: string) {
  const known = errors[status] ?? { type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null }
  return { error: { message, type: known.type, param: null, code: known.code } }
}
