// How a request's outcome reaches the ledger, the metrics and the logs, and the moment a leg
// commits to the client (its first byte), after which there is no fallback.
import type { Deps } from '../deps'
import { keyOwnerOf } from '../router/health'
import type { FinishedRequest } from '../ledger/ledger'
import type { LegDraft, RequestTrace } from './trace'

/**
 * Books the request: trace, metrics, log line, and its ledger write, queued. The write commits
 * within a few milliseconds, with whatever else ended meanwhile (the writer's commit window), so
 * no answer waits for the disk: at one connection that wait was most of what svc added to a
 * request. Queued is enough for every reader: svc writes the queue before any ledger read and
 * when it shuts down. Only a process killed within the window loses the record (never charging
 * twice; see the README).
 */
export function record(deps: Deps, trace: RequestTrace, result: Parameters<RequestTrace['finish']>[0]): void {
  const finished = trace.finish(result)
  // Its charge is queued, to commit within milliseconds: the quota gate no longer needs its hold.
  deps.holds.release(trace.creditHold)
  deps.metrics.requestEnded(finished)
  if (deps.log.enabled('info')) logRequest(deps, finished)
  deps.ledger.queueRequest(finished)
  // Queued, so every ledger read finds it: the usage API stops looking among the running ones.
  deps.running.remove(trace)
}

/** One line per request; never a key or a prompt. */
function logRequest(deps: Deps, finished: FinishedRequest) {
  const r = finished.request
  deps.log.info('request', {
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
    error: r.errorMessage,
  })
}

/** The client is about to receive its first byte from this leg: no fallback from here on. */
export function servedFirstByte(deps: Deps, trace: RequestTrace, leg: LegDraft) {
  const now = deps.clock()
  trace.firstByteAt = now
  trace.markChosen(leg)
  const { provider, model } = leg.candidate
  deps.health.recordSuccess(
    provider.id,
    model.id,
    now - leg.startedAt,
    keyOwnerOf(leg.candidate.byok, trace.ctx.accountId),
  )
  const sessionId = trace.ctx.session.sessionId
  if (sessionId) deps.sessions.served(trace.ctx.accountId, sessionId, { modelId: model.id, providerId: provider.id })
}
