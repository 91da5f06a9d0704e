// How a request's outcome reaches the ledger, the metrics and the logs, and the moment a leg
// commits to the client (its first byte), after which there is no fallback.
import type { Deps } from '../deps'
import type { GatewayError } from '../lib/errors'
import { keyOwnerOf, type ProbeClaim } from '../router/health'
import type { FinishedRequest } from '../ledger/ledger'
import type { AnsweredAttempt } from './attempt'
import { promptPrefix } from '../exchange/prompt-prefix'
import { totalInput } from '../exchange/types'
import { cachesAutomatically, type LegDraft, type RequestTrace } from './trace'

/**
 * Books the request: trace, metrics, log line, and its ledger write, queued. The write commits
 * within a few milliseconds, with whatever else ended meanwhile (the writer's commit window), so
 * no answer waits for the disk: at one connection that wait was most of what svc added to a
 * request. Queued is enough for every reader: svc writes the queue before any ledger read and
 * when it shuts down. Only a process killed within the window loses the record (never charging
 * twice; see the README).
 */
export function record(deps: Deps, trace: RequestTrace, result: Parameters<RequestTrace['finish']>[0]): void {
  let finished: FinishedRequest
  try {
    finished = trace.finish(result)
  } catch (err) {
    // A bug in booking it must not hold the account's credit, nor leave the request running, for
    // good (an audit: a tokenizer error on an interrupted stream held credit until a restart,
    // and every later request of the account was refused). Said, as the bug it is.
    deps.holds.release(trace.creditHold)
    deps.admission.release(trace.admission)
    deps.running.remove(trace)
    deps.log.error('gateway bug: a request could not be recorded', {
      request_id: trace.ctx.id,
      error: String(err),
      stack: (err as Error)?.stack,
    })
    throw err
  }
  // Its charge is queued, to commit within milliseconds: the quota gate no longer needs its hold.
  deps.holds.release(trace.creditHold)
  deps.admission.release(trace.admission)
  deps.metrics.requestEnded(finished)
  // A failed request at warn: an operator who logs only warnings still sees every one.
  if (deps.log.enabled(finished.request.status === 'failed' ? 'warn' : 'info')) logRequest(deps, finished)
  deps.ledger.queueRequest(finished)
  // Queued, so every ledger read finds it: the usage API stops looking among the running ones.
  deps.running.remove(trace)
  if (trace.ctx.session.sessionId && finished.request.status === 'completed') rememberPrompt(deps, trace)
}

/**
 * The prompt a session's answer reported, for the estimate of the next one's cached part should it
 * be cut before its usage comes (trace.ts, likelyCachedTokens): the served leg's, where reported,
 * on an upstream that caches by itself.
 */
function rememberPrompt(deps: Deps, trace: RequestTrace) {
  const served = trace.legs.findLast((leg) => leg.outcome === 'ok')
  if (!served || served.estimated || !cachesAutomatically(served.candidate)) return
  const { accountId, routingMode, session, exchange } = trace.ctx
  deps.sessions.prompted(
    { accountId, sessionId: session.sessionId!, routingMode },
    {
      modelId: served.candidate.model.id,
      providerId: served.candidate.provider.id,
      byok: served.candidate.byok,
      tokens: totalInput(served.usage),
      at: served.startedAt,
      prefix: promptPrefix(exchange),
    },
  )
}

/**
 * Whether a failed leg counts against its model's health. A refusal of the request itself (a prompt
 * too long for this model, an item or file it names that this provider does not hold; a 501, this
 * server does not do what the request asks) says nothing of the provider: another model may serve
 * it. Nor does the gateway's own failure (its egress proxy, its file descriptors). A 409 or 425,
 * invalid_request too, is the provider's and counts.
 */
export const countsAgainstProvider = (error: GatewayError): boolean =>
  error.retryable &&
  !requestRefusals.has(error.kind) &&
  !(error.kind === 'invalid_request' && error.upstreamStatus === 501) &&
  !error.gatewayFault

/**
 * A refusal of the request by one model (above) that another may not refuse: answered with it once
 * every model has been tried, a request that an earlier model failed only for the moment (a 529)
 * was never sent again (relay.ts).
 */
export const refusesTheRequest = (error: GatewayError): boolean =>
  error.retryable && !error.gatewayFault && !countsAgainstProvider(error)

/** Retryable failures that are the request's, not the provider's (call-upstream.ts). */
const requestRefusals = new Set(['context_exceeded', 'not_found', 'permission'])

/**
 * Kinds of an upstream's refusal of the request itself. Its words may quote the request: vLLM's
 * 400 for a field it does not take echoes the whole input, prompt and all.
 */
const refusalsOfTheRequest = new Set([
  'invalid_request',
  'context_exceeded',
  'not_found',
  'permission',
  'request_too_large',
])

/**
 * An upstream's error message as the log may hold it: a refusal of the request is told by its
 * length only (the account reads it whole in the request's record, the operator in the ledger).
 */
export function loggableUpstreamError(kind: string | null, message: string | null): string | null {
  return message !== null && kind !== null && refusalsOfTheRequest.has(kind)
    ? `(the upstream refused the request: ${message.length} characters, in the request's record)`
    : message
}

/** One line per request; never a key or a prompt. */
function logRequest(deps: Deps, finished: FinishedRequest) {
  const r = finished.request
  deps.log[r.status === 'failed' ? 'warn' : 'info']('request', {
    request_id: r.id,
    surface: r.surface,
    routing_mode: r.routingMode,
    status: r.status,
    http_status: r.httpStatus,
    model: r.selectedModelId,
    provider: r.selectedProviderId,
    attempts: r.attempts,
    cost_nanos: r.totalCostNanos,
    ttfb_ms: r.firstByteAt === null ? null : r.firstByteAt - r.createdAt,
    duration_ms: r.endedAt === null ? null : r.endedAt - r.createdAt,
    session_id: r.sessionId,
    // Without an attempt, the words are svc's own refusal (a field it could not read, say).
    error: r.attempts > 0 ? loggableUpstreamError(r.errorType, r.errorMessage) : r.errorMessage,
  })
}

/**
 * The client is about to receive its first byte from this leg: no fallback from here on. `whole`:
 * the byte carries the whole answer (JSON), so the provider served it; a stream's verdict waits
 * for its end (`judgeStream`).
 */
export function servedFirstByte(
  deps: Deps,
  a: Pick<AnsweredAttempt, 'trace' | 'leg' | 'sentAt'>,
  whole: boolean,
  /** The upstream's own first byte, where it came before the client's (a stream gathered into JSON). */
  upstreamTtfbMs?: number,
) {
  const { trace, leg } = a
  trace.firstByteAt = trace.since(trace.ctx.createdAt)
  trace.markChosen(leg)
  const { provider, model } = leg.candidate
  const keyOwner = keyOwnerOf(leg.candidate.byok, trace.ctx.accountId)
  // Timed on the monotonic clock: a wall clock stepped back (NTP) made it -600,000 ms (an audit).
  const ttfbMs = upstreamTtfbMs ?? performance.now() - a.sentAt
  deps.health.recordFirstByte(provider.id, model.id, ttfbMs, keyOwner, whole && !sentBackFailed(trace, leg))
  const { accountId, routingMode, session } = trace.ctx
  if (session.sessionId) {
    deps.sessions.served(
      { accountId, sessionId: session.sessionId, routingMode },
      { modelId: model.id, providerId: provider.id },
    )
  }
}

/**
 * A started stream's verdict on its provider, at its end: served whole, or broken by the upstream
 * (an in-band error such as Anthropic's overloaded_error after message_start, a cut, a silence past
 * the idle timeout). Counted like a failure before the first byte: a model whose streams all break
 * once started is as broken as one that refuses them. A client that left, or an error that is the
 * request's own (a 4xx other than 408/429), says nothing of the provider: a probe is released.
 */
export function judgeStream(
  deps: Deps,
  trace: RequestTrace,
  leg: LegDraft,
  probe: ProbeClaim,
  outcome: 'ok' | 'failed' | 'aborted',
  error?: GatewayError,
) {
  const { provider, model } = leg.candidate
  const keyOwner = keyOwnerOf(leg.candidate.byok, trace.ctx.accountId)
  if (outcome === 'ok' && !sentBackFailed(trace, leg)) deps.health.recordSuccess(provider.id, model.id, keyOwner)
  else if (outcome === 'failed' && error && isProvidersFault(error))
    deps.health.recordFailure(provider.id, model.id, { retryAfterSeconds: error.retryAfterSeconds }, keyOwner, probe)
  else if (probe) deps.health.releaseProbe(provider.id, model.id, probe, keyOwner)
}

/**
 * A message of a paused turn sent back after `leg` failed (paused-turn.ts): that failure is the
 * model's verdict, told already. A success booked after it reset the count of failures in a row,
 * and a model that refused every send-back never had its circuit opened.
 */
const sentBackFailed = (trace: RequestTrace, leg: LegDraft): boolean => {
  const last = trace.legs.at(-1)!
  return last !== leg && last.outcome === 'failed' && last.candidate === leg.candidate
}

const isProvidersFault = (error: GatewayError) => error.status >= 500 || error.status === 408 || error.status === 429
