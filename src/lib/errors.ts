// One error type for the whole gateway. Routes render it in the client's own error shape
// (Anthropic's or OpenAI's); the router reads `retryable` to decide whether to fall back, and the
// client's SDK is told by `permanent` not to send the request again.

export type ErrorKind =
  | 'invalid_request'
  /** The prompt does not fit the model's context window: agents compact the conversation on it. */
  | 'context_exceeded'
  | 'authentication'
  | 'billing'
  | 'permission'
  | 'not_found'
  | 'method_not_allowed'
  | 'request_too_large'
  | 'rate_limit'
  | 'api_error'
  | 'overloaded'
  | 'timeout'

const defaultStatus: Record<ErrorKind, number> = {
  invalid_request: 400,
  context_exceeded: 400,
  authentication: 401,
  billing: 402,
  permission: 403,
  not_found: 404,
  method_not_allowed: 405,
  request_too_large: 413,
  rate_limit: 429,
  api_error: 500,
  overloaded: 529,
  timeout: 504,
}

export class GatewayError extends Error {
  readonly kind: ErrorKind
  readonly status: number
  /** True when another candidate may succeed where this one failed (before any byte was sent). */
  readonly retryable: boolean
  /** Seconds the upstream asked us to wait (429/529 retry-after). */
  readonly retryAfterSeconds?: number
  /** Which request field is wrong, when one is (OpenAI's `param`). */
  readonly param?: string
  /** An OpenAI upstream's own `code` for the failure (`invalid_prompt`), passed on to OpenAI clients. */
  readonly code?: string
  /** The HTTP status the upstream answered, where the client is told another (call-upstream.ts): for the log. */
  readonly upstreamStatus?: number
  /**
   * True when the same request sent again cannot succeed (soon): the client is told
   * `x-should-retry: false`, which the Anthropic and OpenAI SDKs (and Claude Code) obey over their
   * status rule, so they do not back off and retry a 502/503 in vain. Not the same as `retryable`,
   * which is about the router trying another candidate: a provider-account failure is both.
   */
  readonly permanent: boolean
  /**
   * The provider refused the account its key speaks for (401/402/403/404, billing): the
   * gateway's, or an account's own (BYOK). The relay says whose in the message.
   */
  readonly keyRefused: boolean
  /**
   * The gateway itself failed the attempt, not the provider: its egress proxy refused its
   * credentials (407), or it ran out of file descriptors. Says nothing of the provider's health
   * (relay.ts).
   */
  readonly gatewayFault: boolean

  constructor(
    kind: ErrorKind,
    message: string,
    options: {
      status?: number
      retryable?: boolean
      retryAfterSeconds?: number
      param?: string
      code?: string
      upstreamStatus?: number
      permanent?: boolean
      keyRefused?: boolean
      gatewayFault?: boolean
      cause?: unknown
    } = {},
  ) {
    super(message, { cause: options.cause })
    this.name = 'GatewayError'
    this.kind = kind
    this.status = options.status ?? defaultStatus[kind]
    this.retryable = options.retryable ?? false
    this.retryAfterSeconds = options.retryAfterSeconds
    this.param = options.param
    this.code = options.code
    this.upstreamStatus = options.upstreamStatus
    this.permanent = options.permanent ?? false
    this.keyRefused = options.keyRefused ?? false
    this.gatewayFault = options.gatewayFault ?? false
  }

  /** This error without the claim that a retry cannot help (the same request may yet succeed). */
  notPermanent(): GatewayError {
    return this.permanent ? this.with({ permanent: false }) : this
  }

  /** This error saying `message` instead. */
  withMessage(message: string): GatewayError {
    return this.with({ message })
  }

  /** This error without a wait longer than `seconds`: the client's own backoff decides instead. */
  withoutWaitOver(seconds: number): GatewayError {
    return this.retryAfterSeconds !== undefined && this.retryAfterSeconds > seconds
      ? this.with({ retryAfterSeconds: null })
      : this
  }

  /** `retryAfterSeconds: null` takes the wait out. */
  private with(change: { message?: string; permanent?: boolean; retryAfterSeconds?: null }): GatewayError {
    const {
      kind,
      message,
      status,
      retryable,
      retryAfterSeconds,
      param,
      code,
      upstreamStatus,
      permanent,
      keyRefused,
      gatewayFault,
      cause,
    } = this
    return new GatewayError(kind, change.message ?? message, {
      status,
      retryable,
      retryAfterSeconds: change.retryAfterSeconds === null ? undefined : retryAfterSeconds,
      param,
      code,
      upstreamStatus,
      permanent: change.permanent ?? permanent,
      keyRefused,
      gatewayFault,
      cause,
    })
  }
}

export const invalidRequest = (message: string, param?: string) =>
  new GatewayError('invalid_request', message, { param })
