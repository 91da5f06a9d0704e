// One model request end to end: gate → rank → dispatch with fallback → stream back → meter →
// record. Fallback happens only before the client has received a byte; after that a failure
// becomes an error event in the client's stream.
import type { Principal } from '../accounts/api-keys'
import type { Deps } from '../deps'
import { errorResponse } from '../http/errors'
import { GatewayError, invalidRequest } from '../lib/errors'
import { newUlid } from '../lib/ids'
import { errorWithoutSecrets, withoutSecrets } from '../lib/redact'
import { refusingWritesError } from '../ledger/write-refusals'
import { applicableCreditNanos, byokFeeNanos, type ChargeScope } from '../ledger/credit'
import type { GrantRecord } from '../ledger/ledger'
import { readRequestFeatures } from '../router/features'
import { keyOwnerOf } from '../router/health'
import { profileNames, routingModeOf } from '../router/profiles'
import {
  type Candidate,
  type ContextOverflow,
  exclusiveToolServers,
  type Ranking,
  rankCandidates,
} from '../router/rank'
import { providerKeyFor } from '../router/provider-key'
import type { Admission } from './admission'
import type { CreditHold } from './credit-holds'
import { promptCacheKeyOf, readSessionAttributes } from './session'
import type { ClientIds, InboundSurface } from './surface'
import { assembledAnswer } from './assembled-answer'
import { jsonAnswer } from './json-answer'
import { loggableUpstreamError, record } from './outcome'
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
  let admission: Admission | undefined
  try {
    // Serving while nothing can be recorded would serve unbilled, and the usage API would never
    // show it: the requests already answered wait for the database, new ones are turned away.
    if (deps.ledger.refusesWrites()) throw ledgerRefusingWrites()
    // Turned away before it costs anything more when the requests in flight fill svc's memory.
    admission = deps.admission.admit(Number(input.headers.get('content-length')) || 0)
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
          now,
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
      const controller = new AbortController()
      current = controller
      let probe = false
      // The ranking passed over every provider without a key this account may use.
      const apiKey = providerKeyFor(candidate.provider, byokKeys)!
      try {
        probe = deps.health.claimProbe(candidate.provider.id, candidate.model.id, keyOwnerOf(candidate.byok, accountId))
        // A long answer's client gets JSON, but svc streams it from the upstream (assembled-answer.ts).
        const gathered = !exchange.stream && candidate.maxTokens > deps.config.routing.streamUpstreamAboveMaxTokens
        const sentAt = performance.now()
        const upstream = await send(deps, {
          surface,
          body,
          exchange,
          candidate,
          apiKey,
          headers: input.headers,
          controller,
          stream: exchange.stream || gathered,
        })
        const attempt = { surface, body, trace, leg, upstream, ids, controller, idHeader, apiKey, sentAt }
        if (exchange.stream) return await streamAnswer(deps, attempt, probe)
        const answer = gathered ? await assembledAnswer(deps, attempt) : await jsonAnswer(deps, attempt)
        record(deps, trace, { status: 'completed', httpStatus: 200 })
        return answer
      } catch (err) {
        const clientGone = input.signal?.aborted ?? false
        // The drain's end closed the connection (running.ts): svc ended it, not its client, and
        // none of it reached the client: recorded failed, charged nothing.
        const cut = clientGone ? deps.running.cutting : undefined
        if (cut) {
          trace.failLeg(leg, cut)
          if (probe)
            deps.health.releaseProbe(candidate.provider.id, candidate.model.id, keyOwnerOf(candidate.byok, accountId))
          return failedAs(deps, trace, cut, surface, idHeader)
        }
        const error = settleFailedAttempt(deps, { trace, leg, err, clientGone, probe, apiKey })
        lastError = error
        everyFailurePermanent &&= error.permanent
        if (clientGone) {
          record(deps, trace, { status: 'aborted', httpStatus: 499, error })
          return errorResponse(error, surface.errorShape, idHeader)
        }
        if (!error.retryable) break
      }
    }
    const last = lastError ?? new GatewayError('overloaded', 'every candidate failed', { status: 503 })
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
 * The most a candidate can charge the account's credit: its estimated prompt and whole max_tokens,
 * or, served with the account's own key, the fee on that.
 */
const creditCeiling = (deps: Deps, candidate: Candidate) =>
  candidate.byok ? byokFeeNanos(candidate.mostCostNanos, deps.config.billing.byokFeePercent) : candidate.mostCostNanos

/** What a hold holds, over its grants. */
const heldNanos = (hold: CreditHold | undefined) => hold?.parts.reduce((sum, part) => sum + part.amountNanos, 0) ?? 0

const chargeScopeOf = (candidate: Candidate, mode: string, now: number): ChargeScope => ({
  routingMode: mode,
  modelId: candidate.model.id,
  providerId: candidate.provider.id,
  costType: candidate.byok ? 'byok_fee' : 'model_usage',
  now,
})

/**
 * Holds the most the first candidate can charge on the grants that would pay it, or what they have
 * left if less: requests started together cannot each spend the same credit, so overspend stays
 * within one request's cost. Released when the request is recorded; a fallback holds anew
 * (holdForFallback).
 */
function holdCredit(deps: Deps, available: GrantRecord[], first: Candidate, mode: string, now: number) {
  const amountNanos = creditCeiling(deps, first)
  if (amountNanos <= 0) return undefined
  return deps.holds.hold(available, chargeScopeOf(first, mode, now), amountNanos)
}

/**
 * The request's hold made what the fallback candidate can charge, on the grants that would pay it
 * (as they are now), or, if it cannot be, the error a request gets at the gate: the 429 when others
 * hold the credit, the 402 when none is left (the candidate is then not tried; relay() answers a
 * 402 with the failure before it).
 *
 * A request held only what its first candidate could charge: with the account's own key, the fee.
 * Its fallback to the platform's key then cost the full price, so 30 requests at once on a 0.05 USD
 * grant, each holding a 0.003 USD fee while its own key was refused, were each served at 0.06 USD
 * (an audit: 17 served, 1.02 USD). The hold is topped up before such a leg instead. In full where
 * the credit is there; in part (what is left, as the gate admits a request) only where no other
 * request holds that credit, or where it leaves unheld no more than the request's admission did
 * (its first cost less what it could hold then). Otherwise the credit others hold may be theirs to
 * spend, each a fee-holder that falls back in its turn. Judged on the admission's cost instead,
 * requests held in full on a grant scoped to their first model each took a small general grant
 * whole as they fell back, all served in full beyond it (an audit: 20 requests at once, two
 * requests' cost unpaid, where README promises about one).
 */
function holdForFallback(
  deps: Deps,
  a: {
    grants: GrantRecord[]
    previous: CreditHold | undefined
    candidate: Candidate
    admission: { ceilingNanos: number; hold: CreditHold | undefined }
    mode: string
    now: number
  },
): CreditHold | undefined | GatewayError {
  deps.holds.release(a.previous)
  const amountNanos = creditCeiling(deps, a.candidate)
  if (amountNanos <= 0) return undefined
  const scope = chargeScopeOf(a.candidate, a.mode, a.now)
  const available = deps.holds.available(a.grants)
  const left = applicableCreditNanos(available, scope)
  const total = applicableCreditNanos(a.grants, scope)
  const nobodyElseHolds = left === total
  // What the gate let the request start without holding (its hold's parts outlive its release).
  const admittedShortNanos = a.admission.ceilingNanos - heldNanos(a.admission.hold)
  if (left >= amountNanos || (left > 0 && (nobodyElseHolds || amountNanos - left <= admittedShortNanos))) {
    return deps.holds.hold(available, scope, amountNanos)
  }
  // Spent since the request was admitted (by its own first attempt or the account's others): the
  // gate's answer for no credit. Otherwise others hold what is left, for now.
  if (total === 0) {
    return new GatewayError(
      'billing',
      `no credit is left for ${a.candidate.model.id}, the next model to try: add a grant that covers it`,
    )
  }
  return creditHeld()
}

/**
 * The account's credit is taken, for now, by what its requests in flight are expected to cost: a
 * 429 that the SDKs and agents retry after a pause, by when those may have ended and left some.
 */
const creditHeld = () =>
  new GatewayError(
    'rate_limit',
    "this account's remaining credit is held by its requests in flight; retry when they have finished",
    { retryAfterSeconds: 1 },
  )

const ledgerRefusingWrites = () =>
  refusingWritesError(
    'svc cannot record usage right now (its database refuses writes: is the disk full?), so it serves no model requests until it can; retry later',
  )

/**
 * Why no model can serve, in the error the client gets. None of these changes on a retry (no
 * credit, a prompt too long, files only Claude reads, no vision…): each is permanent, so SDKs do
 * not back off and resend the request.
 */
function nothingServes(ranking: Ranking, profile: string): GatewayError {
  if (ranking.contextExceeded) return contextExceeded(ranking.contextExceeded)
  if (ranking.blockedByCredit) {
    const message = `no credit applies to this request under ${profile}: add a grant that covers it`
    return new GatewayError('billing', message, { permanent: true })
  }
  if (ranking.blockedByFiles) {
    return new GatewayError(
      'invalid_request',
      `this request names files stored with Anthropic (file_id), which only an Anthropic model served with your own Anthropic key (BYOK) can read, and none under ${profile} can serve it: send the file's content instead, or add your Anthropic key`,
      { permanent: true },
    )
  }
  if (ranking.blockedByExclusiveTool) {
    const { type, of } = ranking.blockedByExclusiveTool
    return new GatewayError(
      'invalid_request',
      `this request offers ${type}, a tool only ${of}'s API has, and no model of ${exclusiveToolServers[of]} under ${profile} can serve it`,
      { permanent: true, param: 'tools' },
    )
  }
  // Not `overloaded`: Claude Code retries any error whose body says overloaded_error for minutes,
  // whatever x-should-retry says (a coding-agent audit: 11 requests over 3 minutes).
  return new GatewayError(
    'api_error',
    `no model can serve this request under ${profile}: ${summarizeSkips(ranking.ranks) || 'no model on this gateway can serve it (the operator’s startup log says why)'}`,
    { status: 503, permanent: true },
  )
}

/**
 * A prompt no model under the profile can take, in Anthropic's very words for it: Claude Code
 * matches them, reads the counts and compacts the conversation (the prompt alone too long) or
 * asks for less output (the prompt and max_tokens). A Responses client gets OpenAI's code for it,
 * on which Codex stops and says the context is full (errors.ts). The counts are the router's
 * estimate against the profile's largest window; provider_ranks has each model's reason.
 */
function contextExceeded(overflow: ContextOverflow): GatewayError {
  const { inputTokens, outputTokens, contextWindow } = overflow
  const message =
    inputTokens > contextWindow
      ? `prompt is too long: ${inputTokens} tokens > ${contextWindow} maximum`
      : `input length and \`max_tokens\` exceed context limit: ${inputTokens} + ${outputTokens} > ${contextWindow}, decrease input length or \`max_tokens\` and try again`
  return new GatewayError('context_exceeded', message, { permanent: true })
}

/**
 * Books a failed attempt: the leg, the provider's health and the metrics. Providers and codecs
 * raise GatewayErrors; anything else is the gateway's own bug, a 500 that is neither retried
 * elsewhere nor counted against the provider.
 */
function settleFailedAttempt(
  deps: Deps,
  a: { trace: RequestTrace; leg: LegDraft; err: unknown; clientGone: boolean; probe: boolean; apiKey: string },
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
  // A refusal of the request itself (a prompt too long for this model, an item or file it names
  // that this provider does not hold) says nothing of the provider's health: another model may
  // serve it. Nor does the gateway's own failure (its egress proxy, its file descriptors).
  if (
    !a.clientGone &&
    error.retryable &&
    !refusesTheRequest.has(error.kind) &&
    !notImplemented(error) &&
    !error.gatewayFault
  ) {
    deps.health.recordFailure(provider.id, model.id, { retryAfterSeconds: error.retryAfterSeconds }, keyOwner)
  } else if (a.probe) {
    // A probe with no verdict (client gone, the client's own 4xx) says nothing about the
    // provider: release it so the next request probes again.
    deps.health.releaseProbe(provider.id, model.id, keyOwner)
  }
  return error
}

/**
 * Retryable failures that are the request's, not the provider's (call-upstream.ts), and so is an
 * upstream's 501 (this server does not do what the request asks). A 409 or 425, invalid_request
 * too, is the provider's and counts.
 */
const refusesTheRequest = new Set(['context_exceeded', 'not_found', 'permission'])
const notImplemented = (error: GatewayError) => error.kind === 'invalid_request' && error.upstreamStatus === 501

/**
 * A provider's failure in the words the client and the ledger get (the log keeps the provider's
 * own, settleFailedAttempt): never the key that called it (a compatible server may quote the
 * request's headers in its error), and, for a refused key, whose key it was.
 */
function upstreamWords(error: GatewayError, providerId: string, byok: boolean, apiKey: string): GatewayError {
  // A rate limit of the platform's key is told in svc's words: the provider's name the gateway's
  // organization (OpenAI's org-…, Anthropic's id), its limits and what every account on the key used
  // together, and send the reader to a console that is not theirs.
  if (error.kind === 'rate_limit' && !byok) return error.withMessage(platformRateLimit(providerId))
  const said = errorWithoutSecrets(error, apiKey)
  return error.keyRefused ? error.withMessage(keyRefusal(providerId, byok, said.message)) : said
}

const platformRateLimit = (providerId: string) =>
  `${providerId} is rate-limiting the gateway's own account there (a limit its users share, not your svc key's): retry shortly`

/**
 * Whose key the provider refused, said before the provider's words: its "invalid x-api-key" alone
 * reads, to a client that just sent svc an x-api-key, as if svc refused the client's own.
 */
const keyRefusal = (providerId: string, byok: boolean, said: string) => {
  // Claude Code reads any error that says "x-api-key" (Anthropic's "invalid x-api-key") as its own
  // sign-in gone and tells the user to log in to Anthropic: the very thing svc claude spares them.
  // Anthropic's "Your credit balance is too low…" (call-upstream.ts) is the key's account's, not the
  // client's svc credit. Clients match the phrase (Claude Code shows "Credit balance too low · Add
  // funds" and Anthropic's billing page), which for the platform's key is an account not the user's.
  const words = said
    .replace(/x-api-key/gi, 'API key')
    .replace(/\byour credit balance is too low/gi, 'its credit balance ran too low')
  return byok
    ? `${providerId} refused the key stored for this account (BYOK; the stored key needs replacing): ${words}`
    : `${providerId} refused the gateway's own account there (for the gateway's operator to fix; your svc key is fine): ${words}`
}

function summarizeSkips(ranks: { model_id: string; provider_id: string; reason: string }[]): string {
  return ranks
    .slice(0, 6)
    .map((r) => `${r.model_id} via ${r.provider_id}: ${r.reason}`)
    .join('; ')
}
