// One model request end to end: gate → rank → dispatch with fallback → stream back → meter →
// record. Fallback happens only before the client has received a byte; after that a failure
// becomes an error event in the client's stream.
import type { Principal } from '../accounts/api-keys'
import type { Deps } from '../deps'
import { errorResponse } from '../http/errors'
import { GatewayError, invalidRequest } from '../lib/errors'
import { newUlid } from '../lib/ids'
import { withoutSecrets } from '../lib/redact'
import { readRequestFeatures } from '../router/features'
import { keyOwnerOf, type ProbeClaim } from '../router/health'
import { profileNames, routingModeOf } from '../router/profiles'
import { rankCandidates } from '../router/rank'
import { providerKeyFor } from '../router/provider-key'
import type { Admission } from './admission'
import type { AnsweredAttempt } from './attempt'
import { creditCeiling, holdCredit, holdForFallback } from './credit-hold-policy'
import type { CreditHold } from './credit-holds'
import { creditHeld, ledgerRefusingWrites, nothingServes, upstreamWords } from './refusals'
import { promptCacheKeyOf, readSessionAttributes } from './session'
import type { ClientIds, InboundSurface } from './surface'
import { assembledAnswer } from './assembled-answer'
import { jsonAnswer } from './json-answer'
import { countsAgainstProvider, loggableUpstreamError, record, refusesTheRequest } from './outcome'
import { pausedTurnResumer, resumesPausedTurns } from './paused-turn'
import { send } from './send'
import { streamAnswer } from './stream-answer'
import { type LegDraft, RequestTrace } from './trace'

export interface RelayInput {
  surface: InboundSurface
  body: Record<string, unknown>
  headers: Headers
  principal: Principal
  /** Aborts when the client goes away. */
  signal?: AbortSignal
  /** Its place in the memory budget, taken before its body was read (admission.ts). */
  admission?: Admission
}

export async function relay(deps: Deps, input: RelayInput): Promise<Response> {
  const requestId = newUlid()
  const { surface, body } = input
  // The Anthropic SDK reads `request-id` (message._request_id, APIError.requestID), the OpenAI SDK
  // `x-request-id`: either way the id a client logs is the one the usage API looks up.
  const idHeader: Record<string, string> =
    surface.errorShape === 'anthropic'
      ? { 'x-request-id': requestId, 'request-id': requestId }
      : { 'x-request-id': requestId }
  let held: CreditHold | undefined
  // Given back by the catch below whatever throws, the ledger's refusal first among them.
  let admission: Admission | undefined = input.admission
  try {
    // Serving while nothing can be recorded would serve unbilled, and the usage API would never
    // show it: the requests already answered wait for the database, new ones are turned away.
    if (deps.ledger.refusesWrites()) throw ledgerRefusingWrites()
    // Admitted by its size before its body was read (app.ts); a caller that did not, here.
    admission ??= deps.admission.admit(Number(input.headers.get('content-length')) || 0)
    const profile = typeof body.model === 'string' ? body.model : ''
    const mode = routingModeOf(profile)
    if (!mode) {
      throw invalidRequest(
        `model must be a routing profile, one of ${Object.keys(profileNames).join(', ')} (got ${JSON.stringify(body.model)})`,
        'model',
      )
    }
    const exchange = surface.decode(body)
    const features = readRequestFeatures(exchange, mode, deps.config.models)
    const accountId = input.principal.accountId
    const session = readSessionAttributes(input.headers, surface.metadata(body))
    if (session.sessionId) exchange.promptCacheKey = promptCacheKeyOf(accountId, session.sessionId)
    const [grants, byokKeys, nudges, sticky] = await Promise.all([
      deps.credit.get(accountId),
      deps.byok.get(accountId),
      deps.nudges.get(accountId),
      session.sessionId
        ? deps.sessions.lastServed({ accountId, sessionId: session.sessionId, routingMode: mode })
        : undefined,
    ])
    const now = deps.clock()
    // The quota gate sees what the requests already in flight will take (credit-holds.ts).
    const available = deps.holds.available(grants)
    const ranking = rankCandidates({
      accountId,
      mode,
      features,
      models: deps.config.models,
      providers: deps.config.providers,
      byokProviders: byokKeys,
      grants: available,
      grantsBeforeHolds: available === grants ? undefined : grants,
      byokFeePercent: deps.config.billing.byokFeePercent,
      now,
      policy: deps.config.profiles[mode],
      nudges,
      health: deps.health.view,
      messagesThinkingBudget:
        surface.nativeKind === 'anthropic' && exchange.thinking?.type === 'enabled'
          ? exchange.thinking.budgetTokens
          : undefined,
      sticky,
    })
    const trace = new RequestTrace({
      id: requestId,
      accountId,
      apiKeyId: input.principal.keyId,
      surface: surface.name,
      routingMode: mode,
      stream: exchange.stream,
      session,
      sessionServed: sticky,
      ranks: ranking.ranks,
      exchange,
      createdAt: now,
      config: deps.config,
      clock: deps.clock,
      log: deps.log,
    })
    trace.admission = admission
    const ids: ClientIds = { requestId, profile, createdAt: now }

    if (ranking.candidates.length === 0) {
      // Refused for credit that requests in flight hold, not for credit gone: they may leave some.
      const error = ranking.blockedByHeldCredit ? creditHeld() : nothingServes(ranking, profile)
      return failedAs(deps, trace, error, surface, idHeader)
    }

    trace.creditHold = holdCredit(deps, available, ranking.candidates[0]!, mode, now)
    held = trace.creditHold
    // What the request was admitted for (holdForFallback): its first candidate's ceiling and the
    // hold it got. Only a fallback reads them: computed on every request, the shortfall cost ~5 MB
    // of peak RSS at 64 connections side by side, for nothing on the path that serves at once.
    const admittedNanos = creditCeiling(deps, ranking.candidates[0]!)
    const admittedHold = held

    // One listener per request rather than one added and removed per attempt (~0.4 µs an attempt).
    // It is never removed: a client abort after the answer aborts a finished attempt, which does
    // nothing. No `once`: abort fires at most once anyway, and the option made the call ~0.4 µs dearer.
    let current: AbortController | undefined
    input.signal?.addEventListener('abort', () => current?.abort())
    let lastError: GatewayError | undefined
    /** The last failure that was its model's for the moment (a 529, a timeout): sent again, the request may be served. */
    let lastTransient: GatewayError | undefined
    /** Attempts made, and whether each failed for good (GatewayError.permanent). */
    let attempts = 0
    let everyFailurePermanent = true
    for (const candidate of ranking.candidates.slice(0, deps.config.routing.maxAttempts)) {
      // A client that left before this attempt (while svc read its credit, or between attempts) is
      // neither served nor charged: the abort listener stops only an attempt under way.
      if (input.signal?.aborted) {
        const cut = deps.running.cutting
        if (cut) return failedAs(deps, trace, cut, surface, idHeader)
        const error = new GatewayError('api_error', 'client went away', { status: 499 })
        record(deps, trace, { status: 'aborted', httpStatus: 499, error })
        return errorResponse(error, surface.errorShape, idHeader)
      }
      attempts++
      if (attempts > 1) {
        // Judged on the grants as they are now: the first attempt may have taken long enough for the
        // account's other requests to be charged (judged on those it was admitted on, 10 requests
        // whose own key failed 50 ms apart were each served on credit already spent: 3 × it).
        const grantsNow = await deps.credit.get(accountId)
        const rehold = holdForFallback(deps, {
          grants: grantsNow,
          previous: held,
          candidate,
          admission: { ceilingNanos: admittedNanos, hold: admittedHold },
          mode,
          // And at the time as it is now, as a leg is charged at its start: a grant that expired
          // meanwhile pays nothing (the fallback was served uncharged), and peak hours that began
          // meanwhile price it (held at off-peak prices, ten at once spent five requests' cost unpaid).
          now: deps.clock(),
        })
        if (rehold instanceof GatewayError) {
          // Not tried: what it may cost cannot be held (others hold the credit, or it is spent).
          candidate.rank.status = 'skipped'
          candidate.rank.reason = `not tried as a fallback: ${rehold.message}`
          // A model that failed first keeps its word: sent again, the request may be served by it on
          // credit that is still there (a 402 for the fallback's spent grant, which SDKs do not
          // retry, hid a 529 they would).
          if (rehold.kind !== 'billing' || lastError === undefined) lastError = rehold
          everyFailurePermanent &&= rehold.permanent
          held = trace.creditHold = undefined
          continue
        }
        held = trace.creditHold = rehold
      }
      const leg = trace.startLeg(candidate)
      /** The attempt once its upstream answered: its leg is the one under way (a paused turn goes on in another). */
      let attempt: AnsweredAttempt | undefined
      const controller = new AbortController()
      current = controller
      let probe: ProbeClaim = 0
      const keyOwner = keyOwnerOf(candidate.byok, accountId)
      // The ranking passed over every provider without a key this account may use.
      const apiKey = providerKeyFor(candidate.provider, byokKeys)!
      try {
        probe = deps.health.claimProbe(candidate.provider.id, candidate.model.id, keyOwner)
        const pauses = resumesPausedTurns(surface, candidate, exchange)
        // A long answer's client gets JSON, but svc streams it from the upstream (assembled-answer.ts),
        // as it does one whose turn svc may send back (paused-turn.ts: gathered, a message at a time).
        const gathered =
          !exchange.stream && (pauses || candidate.maxTokens > deps.config.routing.streamUpstreamAboveMaxTokens)
        const call = { surface, body, exchange, candidate, apiKey, headers: input.headers, controller }
        const sentAt = performance.now()
        const upstream = await send(deps, { ...call, stream: exchange.stream || gathered })
        const pausedTurn = pauses
          ? pausedTurnResumer(deps, {
              trace,
              first: leg,
              mode,
              // The output limit is the answer's: each message gets what the ones before left of it.
              sendBack: (content, maxTokens, ownController) =>
                send(deps, {
                  ...call,
                  candidate: { ...candidate, maxTokens },
                  controller: ownController,
                  stream: true,
                  pausedTurn: content,
                }),
              attempt: controller.signal,
              probe,
            })
          : undefined
        attempt = { surface, body, trace, leg, upstream, ids, controller, idHeader, apiKey, sentAt, probe, pausedTurn }
        if (exchange.stream) return await streamAnswer(deps, attempt)
        const answer = gathered ? await assembledAnswer(deps, attempt) : await jsonAnswer(deps, attempt)
        // A probe the answer gave no verdict on (a paused turn's message sent back refused for its
        // own reasons, outcome.ts sentBackFailed) is free for the next request; after one it did, a no-op.
        if (probe) deps.health.releaseProbe(candidate.provider.id, candidate.model.id, probe, keyOwner)
        record(deps, trace, { status: 'completed', httpStatus: 200 })
        return answer
      } catch (err) {
        const clientGone = input.signal?.aborted ?? false
        // The drain's end closed the connection (running.ts): svc ended it, not its client, and
        // none of it reached the client: recorded failed, charged nothing.
        const cut = clientGone ? deps.running.cutting : undefined
        const failed = attempt?.leg ?? leg
        if (cut) {
          trace.failLeg(failed, cut)
          if (probe) deps.health.releaseProbe(candidate.provider.id, candidate.model.id, probe, keyOwner)
          return failedAs(deps, trace, cut, surface, idHeader)
        }
        const error = settleFailedAttempt(deps, { trace, leg: failed, err, clientGone, probe, apiKey })
        lastError = error
        if (countsAgainstProvider(error) && !error.permanent) lastTransient = error
        everyFailurePermanent &&= error.permanent
        if (clientGone) {
          record(deps, trace, { status: 'aborted', httpStatus: 499, error })
          return errorResponse(error, surface.errorShape, idHeader)
        }
        if (!error.retryable) break
      }
    }
    // A refusal by the last model tried (a 501, its window too small, a file it does not hold) is not
    // the request's answer where an earlier model failed for the moment: answered with the 400, the
    // SDKs never sent it again, and Claude Code compacted a conversation the first model had room for.
    const last =
      (lastError && lastTransient && refusesTheRequest(lastError) ? lastTransient : lastError) ??
      new GatewayError('overloaded', 'every candidate failed', { status: 503 })
    // The last failure speaks for the request, but it is permanent for the client only if every
    // candidate was tried and each failed for good: after a 429 elsewhere, or with a candidate left
    // untried (max_attempts), the same request sent again may be served.
    // An upstream's wait is its model's (a proxy's may say an hour): the health cools that model for
    // it, and the next request may be served by another, or by it once it answers again. A wait
    // past a minute is not passed on: the Anthropic SDK sleeps any retry-after it is given (two
    // hours for its two retries); the openai SDK ignores one past a minute but obeys one of a
    // minute. Without it, both retry on their own short backoff.
    const error = (
      everyFailurePermanent && attempts === ranking.candidates.length ? last : last.notPermanent()
    ).withoutWaitOver(longestClientWaitSeconds)
    return failedAs(deps, trace, error, surface, idHeader)
  } catch (err) {
    // Not recorded: a refusal before routing (the model field, the decoder, the ledger refusing
    // writes) carries no id the usage API would not find; a bug past the ranking carries the id its
    // log line names, and its hold must not keep the account's credit.
    deps.holds.release(held)
    deps.admission.release(admission)
    if (err instanceof GatewayError) {
      deps.metrics.refused(err.kind)
      return errorResponse(err, surface.errorShape)
    }
    deps.log.error('gateway bug while routing a request', {
      request_id: requestId,
      error: String(err),
      stack: (err as Error)?.stack,
    })
    return errorResponse(err, surface.errorShape, idHeader)
  }
}

/**
 * The request recorded failed with `error`, and the client's answer saying it. The ledger keeps
 * the status the client was sent (an OpenAI client gets 503 for a 529).
 */
function failedAs(
  deps: Deps,
  trace: RequestTrace,
  error: GatewayError,
  surface: InboundSurface,
  idHeader: Record<string, string>,
): Response {
  const response = errorResponse(error, surface.errorShape, idHeader)
  record(deps, trace, { status: 'failed', httpStatus: response.status, error })
  return response
}

/** The longest upstream retry-after passed on to a client (the openai SDK ignores longer ones). */
const longestClientWaitSeconds = 60

/**
 * Books a failed attempt: the leg, the provider's health and the metrics. Providers and codecs
 * raise GatewayErrors; anything else is the gateway's own bug, a 500 that is neither retried
 * elsewhere nor counted against the provider.
 */
function settleFailedAttempt(
  deps: Deps,
  a: { trace: RequestTrace; leg: LegDraft; err: unknown; clientGone: boolean; probe: ProbeClaim; apiKey: string },
): GatewayError {
  const { provider, model } = a.leg.candidate
  const keyOwner = keyOwnerOf(a.leg.candidate.byok, a.trace.ctx.accountId)
  // Whatever failed once the client had gone (an aborted read, say) is the client's leaving, not a bug.
  const internal = !(a.err instanceof GatewayError) && !a.clientGone
  if (internal) {
    deps.log.error('gateway bug during an upstream attempt', {
      request_id: a.trace.ctx.id,
      error: String(a.err),
      stack: (a.err as Error)?.stack,
    })
  }
  const error = a.clientGone
    ? new GatewayError('api_error', 'client went away', { status: 499 })
    : a.err instanceof GatewayError
      ? upstreamWords(a.err, provider.id, a.leg.candidate.byok, a.apiKey)
      : new GatewayError('api_error', 'internal error in the gateway; the request id identifies it in the logs', {
          status: 500,
        })
  if (a.clientGone) a.trace.abandonLeg(a.leg, error)
  else {
    a.trace.failLeg(a.leg, error)
    deps.log.warn('upstream leg failed', {
      request_id: a.trace.ctx.id,
      model: model.id,
      provider: provider.id,
      status: error.upstreamStatus ?? error.status,
      kind: error.kind,
      // The upstream's own words (its key taken out) for the operator: the client and the request's
      // record may have svc's instead (upstreamWords: a rate limit of the platform's key).
      error: loggableUpstreamError(
        error.kind,
        a.err instanceof GatewayError ? withoutSecrets(a.err.message, a.apiKey) : error.message,
      ),
      retryable: error.retryable,
    })
  }
  if (!a.clientGone && !internal && !error.gatewayFault) deps.metrics.upstreamError(provider.id, model.id, error.kind)
  if (!a.clientGone && countsAgainstProvider(error)) {
    deps.health.recordFailure(provider.id, model.id, { retryAfterSeconds: error.retryAfterSeconds }, keyOwner, a.probe)
  } else if (a.probe) {
    // A probe with no verdict (client gone, the client's own 4xx) says nothing about the
    // provider: release it so the next request probes again.
    deps.health.releaseProbe(provider.id, model.id, a.probe, keyOwner)
  }
  return error
}
