// One HTTP call to an upstream: timeouts, cancellation, and failures turned into GatewayErrors
// that say whether another candidate may be tried (only ever before the client got a byte).
import type { UpstreamErrorInfo } from '../exchange/types'
import { type ErrorKind, GatewayError } from '../lib/errors'
import { ownEntry } from '../lib/own-entry'
import { anthropicErrorTypeForStatus } from '../protocols/anthropic/errors'
import { readTextPrefix } from './bounded-body'
import { forwardedByProxy } from './http1/client'
import { certificateFailure } from './http1/connection'
import { OutOfDescriptors } from './http1/pool'

export interface UpstreamTimeouts {
  /** Until the response headers arrive (named for what it bounds in the non-streaming case). */
  firstByteMs: number
}

/**
 * Statuses below 500 after which another candidate may well succeed: the fault is this provider's.
 * Any 5xx is, too: besides 500–504 and Anthropic's 529, a front's own (Cloudflare's 520–524 when the
 * origin fails or times out), a 501 or 507 of a compatible server.
 */
const retryableStatuses = new Set([408, 409, 425, 429])

const kindForType: Record<string, ErrorKind> = {
  invalid_request_error: 'invalid_request',
  request_too_large: 'request_too_large',
  rate_limit_error: 'rate_limit',
  overloaded_error: 'overloaded',
  timeout_error: 'timeout',
  api_error: 'api_error',
}

/**
 * Failures of the gateway's own account at the provider: its key (401), its bill (402; OpenAI's
 * 429 `insufficient_quota` is decoded as `billing_error`; Anthropic's 400 below). Our
 * misconfiguration, not the client's.
 */
const accountStatuses = new Set([401, 402])
const accountTypes = new Set(['authentication_error', 'billing_error'])

/**
 * A 403 or 404 is the account's too, its permissions or the upstream model it names, unless the
 * upstream blames something the request itself referenced. That is the client's to fix, and says
 * nothing of the provider: OpenAI's 404 "Item with id 'rs_…' not found" for a reasoning item
 * replayed without its content (`param: "input"`), "Previous response with id 'resp_…' not found"
 * (`previous_response_id`), a `file_id` Anthropic's store does not hold (`not_found_error` naming
 * the file). So: a `param` other than `model`, or words naming an item, file, conversation or
 * container, make it the client's; any mention of the model, a key or a permission (Anthropic's
 * `model: …`, OpenAI's `model_not_found`, "does not have permission") keeps it the account's, as
 * does a 404 that says neither (a wrong base_url, a proxy's page), for the operator to look at.
 */
const refusalStatuses = new Set([403, 404])
const refusalTypes = new Set(['permission_error', 'not_found_error'])
const aboutTheAccount = /\bmodel\b|api[ _-]?key|permission/i
const aboutTheRequest = /\b(?:items?|files?|conversations?|containers?)\b|\bfile[_-]\w/i

const blamesTheRequest = (info: UpstreamErrorInfo) =>
  info.code !== 'model_not_found' &&
  info.param !== 'model' &&
  !aboutTheAccount.test(info.message) &&
  (info.param !== undefined || aboutTheRequest.test(info.message))

/**
 * Anthropic answers a key whose organization has run out of prepaid credit with a 400
 * `invalid_request_error`, "Your credit balance is too low to access the Anthropic API. Please go
 * to Plans & Billing…", not with a 402 `billing_error`: it is the key's account that cannot pay,
 * as a 402 says, and another model may serve. Matched by that sentence from its start, on that 400
 * only: Anthropic quotes a request's values in its refusals ("Unexpected value(s) `…` for the
 * `anthropic-beta` header"), and a client's header saying the phrase opened the circuit on a model
 * for everyone (a review of this rule's first form).
 */
const creditBalanceTooLow = (info: UpstreamErrorInfo) =>
  info.status === 400 &&
  info.type === 'invalid_request_error' &&
  /^your credit balance is too low to access the anthropic api/i.test(info.message)

const isProviderAccountFailure = (info: UpstreamErrorInfo) =>
  accountStatuses.has(info.status) ||
  accountTypes.has(info.type) ||
  creditBalanceTooLow(info) ||
  ((refusalStatuses.has(info.status) || refusalTypes.has(info.type)) && !blamesTheRequest(info))

/**
 * Each provider's words for a prompt over the model's context window: Anthropic's "prompt is too
 * long" and "input length and `max_tokens` exceed context limit", OpenAI's "exceeds the context
 * window" (code context_length_exceeded), the "maximum context length" of OpenAI's Chat,
 * DeepSeek, OpenRouter and vLLM, GLM's "Prompt exceeds max length", Kimi's "exceeded model token
 * limit: 262144" and DashScope's "Range of input length should be [1, 129024]" (its "Range of
 * max_tokens should be …" is the request's own mistake, not the window's), and llama.cpp's "the
 * request exceeds the available context size".
 */
const contextOverflowWording = new RegExp(
  [
    'prompt is too long',
    'exceed context limit',
    'context window',
    'maximum context length',
    'prompt exceeds max length',
    'exceeded model token limit',
    'range of input length',
    'available context size',
  ].join('|'),
  'i',
)

/**
 * An upstream's error as the gateway's. A provider-account failure surfaces as a 502 api_error so
 * the client is not told its own key or credit is wrong; another candidate may well serve
 * (retryable), but the same request sent again meets the same account (permanent).
 */
export function upstreamFailure(info: UpstreamErrorInfo, retryAfterSeconds?: number): GatewayError {
  if (isProviderAccountFailure(info)) {
    return new GatewayError('api_error', info.message, {
      status: 502,
      upstreamStatus: info.status,
      retryable: true,
      permanent: true,
      keyRefused: true,
    })
  }
  // The request's own refusal, in the provider's words. Another candidate is still tried: a reasoning
  // item another OpenAI organization made is refused here but read (or dropped) by another model,
  // and a file one model's store lacks is the same for every model of the store, a wasted try at
  // worst. It says nothing of the provider's health (relay.ts). Should every candidate refuse, the
  // client hears this, in its dialect; the param stays behind, being the upstream dialect's field
  // name and not necessarily the client's.
  if (refusalStatuses.has(info.status) || refusalTypes.has(info.type)) {
    const kind = info.status === 404 || info.type === 'not_found_error' ? 'not_found' : 'permission'
    return new GatewayError(kind, info.message, { status: info.status, retryable: true, retryAfterSeconds })
  }
  // The router's estimate of the prompt let a model whose window it overflows try: one with a
  // larger window may yet serve (retryable), and the client hears it as its dialect says it. Once
  // every candidate has refused it, the same request sent again would be too (permanent).
  if (info.status === 400 && contextOverflowWording.test(info.message)) {
    return new GatewayError('context_exceeded', info.message, { retryable: true, permanent: true })
  }
  // A 501: this server does not do what the request asks (logprobs, a tool type). Another model may
  // (retryable), and like the refusals above it says nothing of the provider's health: one client's
  // odd request opened the model's circuit for everyone. A 400 if every candidate says it.
  if (info.status === 501) {
    return new GatewayError('invalid_request', info.message, {
      upstreamStatus: 501,
      retryable: true,
      retryAfterSeconds,
    })
  }
  // The client hears the status its dialect pairs with the failure (wire-formats §4.12), not one
  // its provider never sends: a FastAPI server's 422 is a 400, a proxy's 408 a 504 timeout, a 502
  // or 503 an overload (529; 503 on the responses route). A 409 and a 425 keep theirs: the SDKs
  // retry those, and would not a 400. An error type the upstream names outside Anthropic's is read
  // from its status, and so is the catch-all `api_error` (a proxy's 503 naming it is an overload).
  const byStatus = ownEntry(kindForType, anthropicErrorTypeForStatus(info.status))
  const byType = ownEntry(kindForType, info.type)
  const kind = (byType === 'api_error' ? byStatus : byType) ?? byStatus ?? 'api_error'
  return new GatewayError(kind, info.message, {
    code: info.code,
    upstreamStatus: info.status,
    status: info.status === 409 || info.status === 425 ? info.status : undefined,
    retryable: info.status >= 500 || retryableStatuses.has(info.status),
    retryAfterSeconds,
  })
}

export interface UpstreamRequest {
  url: string
  headers: Record<string, string>
  body: string
  /**
   * The attempt's: the caller aborts it when the client goes away (and, for a stream, on an
   * idle upstream); the header timeout here aborts it too. One controller per attempt, as
   * every AbortController and listener costs on the hot path.
   */
  controller: AbortController
  timeouts: UpstreamTimeouts
  decodeError: (status: number, text: string) => UpstreamErrorInfo
}

/** Sends the request; resolves with a 2xx Response, or throws a GatewayError. */
export async function callUpstream(fetchImpl: typeof fetch, req: UpstreamRequest): Promise<Response> {
  // The timeout must stop at a 2xx's headers: a signal handed to fetch also governs the body, so an
  // AbortSignal.timeout there would cut every stream that outlives it. A timer we clear instead.
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    req.controller.abort()
  }, req.timeouts.firstByteMs)
  let response: Response
  try {
    response = await fetchImpl(req.url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      signal: req.controller.signal,
      // A redirect is an upstream error (below), as svc's own client never follows one; fetch (used
      // with a proxy) would, resending the request and its key to wherever it points.
      redirect: 'manual',
    })
  } catch (err) {
    clearTimeout(timer)
    if (timedOut) {
      throw new GatewayError('timeout', `upstream sent no response within ${req.timeouts.firstByteMs} ms`, {
        retryable: true,
        cause: err,
      })
    }
    if (req.controller.signal.aborted)
      throw new GatewayError('api_error', 'client went away', { status: 499, cause: err })
    throw unreachable(err)
  }
  if (response.ok) {
    clearTimeout(timer)
    return response
  }
  if (response.status >= 300 && response.status < 400) {
    clearTimeout(timer)
    response.body?.cancel().catch(() => {})
    throw redirected(response, req.url)
  }
  // Proxy authentication: never the client's request to fix. An HTTP proxy's own answer to a
  // request it forwards in absolute form (through CONNECT, the same refusal is a fetch error:
  // unreachable) is the operator's proxy; any other is a proxy on the way to that upstream
  // (an intercepting one), which fails it as a provider's outage does.
  if (response.status === 407) {
    clearTimeout(timer)
    response.body?.cancel().catch(() => {})
    if (forwardedByProxy(req.url)) throw proxyRefused(407)
    throw new GatewayError(
      'api_error',
      'upstream answered HTTP 407: a proxy on the way to it asks for credentials svc was not given',
      // Not permanent: an outage's words to the client (a permanent 5xx reads to an OpenAI client as its own 400).
      { status: 502, retryable: true, upstreamStatus: 407 },
    )
  }
  // Enough of the body to quote its message; an error body has no business being longer. The
  // timer runs on over it: a head whose body then stalls would otherwise hold the attempt (and the
  // client) for good. Past the limit the abort ends the read and closes the connection, and the
  // error is the head's status alone: the status is the upstream's verdict (a 429's retry-after,
  // a 401's refused key, a 503's retryability), the body only its words, so a timeout would lose it.
  const text = await readTextPrefix(response, maxErrorBodyBytes).catch(() => '')
  clearTimeout(timer)
  const info = req.decodeError(response.status, timedOut ? '' : text)
  const said = timedOut
    ? { ...info, message: `${info.message} (its body did not come within ${req.timeouts.firstByteMs} ms)` }
    : info
  throw upstreamFailure(said, retryAfterSeconds(response.headers.get('retry-after')))
}

/**
 * An upstream's 3xx: its fault, not the client's (a base_url on http where the server wants https,
 * a missing or extra path segment, a moved host), so another candidate is tried (retryable), and
 * the same request sent again would be redirected again (permanent), as for the other faults of a
 * provider's configuration. Like those, it counts against the provider's health. The message names
 * where it pointed by scheme only (http to https is the usual case): a Location's path or query may
 * carry a token, and its host is the operator's business, as in the connect and TLS errors.
 */
function redirected(response: Response, requestUrl: string): GatewayError {
  const location = response.headers.get('location')
  let to = ''
  if (location) {
    try {
      const url = new URL(location, requestUrl)
      to = ` to an ${url.protocol}// URL`
    } catch {}
  }
  return new GatewayError(
    'api_error',
    `upstream redirected (HTTP ${response.status}${to}), and svc does not follow redirects: check the provider's base_url`,
    { status: 502, retryable: true, permanent: true },
  )
}

const maxErrorBodyBytes = 64 * 1024

/**
 * A longer wait than any rate-limit window a provider announces: a larger `retry-after` (a
 * misconfigured proxy's) would keep the candidate ranked last for as long as the process runs.
 */
const maxRetryAfterSeconds = 3600

/**
 * `retry-after` in seconds: delay-seconds (what Anthropic and OpenAI send) or an HTTP-date (what
 * proxies and CDNs in front of compatible servers may send, RFC 9110 §10.2.3); undefined when
 * absent, past or unreadable.
 */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | undefined {
  if (!value) return undefined
  const seconds = /^\s*\d+(\.\d+)?\s*$/.test(value) ? Number(value) : (Date.parse(value) - now) / 1000
  if (!Number.isFinite(seconds) || seconds <= 0) return undefined
  return Math.min(seconds, maxRetryAfterSeconds)
}

/**
 * Why fetch reached no answer. With a proxy in the environment (the only time svc calls through
 * fetch), a tunnel the proxy would not open is the proxy's verdict: 407, its credentials (the
 * operator's, never the provider's: counted against no provider's health, an audit saw every
 * proxied model's circuit open and stay open after the proxy was fixed); another status, the
 * proxy could not reach the provider, which may be the provider's outage and counts as one. A
 * certificate problem is named as svc's own client names it.
 */
function unreachable(err: unknown): GatewayError {
  // The gateway's own shortage, not the provider's: overloaded, which the SDKs retry.
  if (err instanceof OutOfDescriptors)
    return new GatewayError('overloaded', err.message, { status: 529, retryable: true, gatewayFault: true, cause: err })
  if ((err as { code?: unknown })?.code === 'ERR_PROXY_TUNNEL') {
    const status = Number(/tunnel: (\d{3})/.exec(String((err as Error).message))?.[1])
    if (status === 407) return proxyRefused(407, err)
    return new GatewayError(
      'api_error',
      `the gateway's egress proxy could not reach the upstream (HTTP ${status || 'error'})`,
      {
        status: 502,
        retryable: true,
        cause: err,
      },
    )
  }
  const said = certificateFailure(err) ?? `upstream unreachable: ${describeFetchError(err)}`
  return new GatewayError('api_error', said, { status: 502, retryable: true, cause: err })
}

/** The gateway's egress proxy refused its credentials: the operator's to fix, not the provider's. */
const proxyRefused = (status: number, cause?: unknown) =>
  new GatewayError(
    'api_error',
    `the gateway's egress proxy refused its credentials (HTTP ${status}): for the gateway's operator to fix (HTTPS_PROXY, HTTP_PROXY)`,
    { status: 502, retryable: true, permanent: true, gatewayFault: true, upstreamStatus: status, cause },
  )

/**
 * Bun's fetch errors name the URL (`… fetching "https://host/v1/…"`) and end with a hint for
 * developers ("pass `verbose: true`…"): neither is for clients. The address is the operator's
 * business, as the pool's own connect errors keep it (pool.ts); the log line names the provider.
 */
const describeFetchError = (err: unknown) =>
  String((err as Error)?.message ?? err)
    .replace(/\s*For more information, pass `verbose: true`.*$/s, '')
    .replace(/\s*fetching "[^"]*"\.?/g, '')
