// What OpenAI's two surfaces (Chat Completions and Responses) share: Bearer auth and the
// `{error:{message,type,param,code}}` body (wire-formats §2.7), all four keys always present.

import type { Refusal } from './simulator-plan'

const errors: Record<number, { type: string; code: string | null }> = {
  400: { type: 'invalid_request_error', code: null },
  401: { type: 'invalid_request_error', code: 'invalid_api_key' },
  403: { type: 'invalid_request_error', code: 'unsupported_country_region_territory' },
  404: { type: 'invalid_request_error', code: 'model_not_found' },
  429: { type: 'requests', code: 'rate_limit_exceeded' },
}

export const openaiAuthorized = (headers: Headers, apiKey: string): boolean =>
  headers.get('authorization') === `Bearer ${apiKey}`

export function openaiErrorBody(status: number, message: string, _requestId?: string, refusal?: Refusal) {
  const known = errors[status] ?? { type: status >= 500 ? 'server_error' : 'invalid_request_error', code: null }
  return {
    error: {
      message,
      type: known.type,
      param: refusal?.param ?? null,
      code: refusal?.code !== undefined ? refusal.code : known.code,
    },
  }
}

/** The OpenAI refusal of a request, naming the parameter at fault. */
export const refuse = (message: string, param: string | null, code: string | null = null, status = 400): Refusal => ({
  status,
  message,
  param,
  code,
})

/** OpenAI's function-name rule (Chat `tools[].function.name`, Responses `tools[].name`): ^[a-zA-Z0-9_-]{1,64}$. */
export function badFunctionName(name: unknown, param: string): Refusal | undefined {
  if (typeof name !== 'string') return undefined
  if (name.length > 64)
    return refuse(
      `Invalid '${param}': string too long. Expected a string with maximum length 64, but got a string with length ${name.length} instead.`,
      param,
      'string_above_max_length',
    )
  if (!/^[a-zA-Z0-9_-]+$/.test(name))
    return refuse(
      `Invalid '${param}': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.`,
      param,
      'invalid_value',
    )
  return undefined
}

/** OpenAI's refusal of a key whose organization's quota (prepaid credit) is spent: a 429 that no wait fixes. */
export const insufficientQuota = (): { status: number; body: unknown } => ({
  status: 429,
  body: {
    error: {
      message:
        'You exceeded your current quota, please check your plan and billing details. For more information on this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors.',
      type: 'insufficient_quota',
      param: null,
      code: 'insufficient_quota',
    },
  },
})
