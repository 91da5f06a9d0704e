// One model request end to end: gate → rank → dispatch with fallback → stream back → meter →
// record. Fallback happens only before the client has received a byte; after that a failure
// becomes an error event in the client's stream.
import type { Principal } from '../accounts/api-keys'
import type { Deps } from '../deps'
import type { ExchangeRequest, UpstreamErrorInfo, Usage } from '../exchange/types'
import { errorResponse } from '../http/errors'
import { GatewayError, invalidRequest } from '../lib/errors'
import { newUlid } from '../lib/ids'
import { type SseEvent, parseSse } from '../protocols/sse'
import { callUpstream, upstreamFailure, withIdleTimeout } from '../providers/call-upstream'
import { codecs } from '../providers/codecs'
import { readRequestFeatures } from '../router/features'
import { profileNames, routingModeOf } from '../router/profiles'
import { type Candidate, rankCandidates } from '../router/rank'
import { meterEvents, newStreamMeter } from './meter'
import { readSessionAttributes } from './session'
import type { ClientIds, InboundSurface } from './surface'
import { type LegDraft, RequestTrace } from './trace'

export interface RelayInput {
  surface: InboundSurface
  body: Record<string, unknown>
  headers: Headers
  principal: Principal
  /** Aborts when the client goes away. */
  signal?: AbortSignal
}

const sseHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
}

export async function relay(deps: Deps, input: RelayInput): Promise<Response> {
  const requestId = newUlid()
  const idHeader = { 'x-request-id': requestId }
  const { surface, body } = input
  try {
    const profile = typeof body.model === 'string' ? body.model : ''
    const mode = routingModeOf(profile)
    if (!mode) {
      throw invalidRequest(
        `model must be a routing profile, one of ${Object.keys(profileNames).join(', ')} (got ${JSON.stringify(body.model)})`,
        'model',
      )
    }
    const exchange = surface.decode(body)
    const features = readRequestFeatures(exchange)
    const accountId = input.principal.accountId
    const session = readSessionAttributes(input.headers, surface.metadata(body))
    const [grants, byokKeys, nudges, sticky] = await Promise.all([
      deps.credit.get(accountId),
      deps.byok.get(accountId),
      deps.nudges.get(accountId),
      session.sessionId ? deps.sessions.lastServed(accountId, session.sessionId) : undefined,
    ])
    const now = deps.clock()
    const ranking = rankCandidates({
      mode,
      features,
      models: deps.config.models,
      providers: deps.config.providers,
      byokProviders: new Set(byokKeys.keys()),
      grants,
      byokFeePercent: deps.config.billing.byokFeePercent,
      now,
      policy: deps.config.profiles[mode],
      nudges,
      health: deps.health.view,
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
    })
    const ids: ClientIds = { requestId, profile, createdAt: now }

    if (ranking.candidates.length === 0) {
      const error = ranking.blockedByCredit
        ? new GatewayError('billing', `no credit applies to this request under ${profile}: add a grant that covers it`)
        : new GatewayError(
            'overloaded',
            `no model can serve this request under ${profile}: ${summarizeSkips(ranking.ranks) || 'no provider is configured for this profile'}`,
            { status: 503 },
          )
      const response = errorResponse(error, surface.errorShape, idHeader)
      await record(deps, trace, { status: 'failed', httpStatus: response.status, error })
      return response
    }

    let lastError: GatewayError | undefined
    for (const candidate of ranking.candidates.slice(0, deps.config.routing.maxAttempts)) {
      const leg = trace.startLeg(candidate)
      const controller = new AbortController()
      const onClientAbort = () => controller.abort()
      input.signal?.addEventListener('abort', onClientAbort, { once: true })
      let probe = false
      try {
        const apiKey = byokKeys.get(candidate.provider.id) ?? candidate.provider.apiKey!
        probe = deps.health.claimProbe(candidate.provider.id, candidate.model.id)
        const upstream = await send(deps, {
          surface,
          body,
          exchange,
          candidate,
          apiKey,
          headers: input.headers,
          signal: controller.signal,
        })
        if (exchange.stream) {
          return await streamAnswer(deps, {
            surface,
            body,
            trace,
            leg,
            candidate,
            upstream,
            ids,
            controller,
            idHeader,
            onDone: () => input.signal?.removeEventListener('abort', onClientAbort),
          })
        }
        const answer = await jsonAnswer(deps, { surface, body, trace, leg, candidate, upstream, ids })
        input.signal?.removeEventListener('abort', onClientAbort)
        await record(deps, trace, { status: 'completed', httpStatus: 200 })
        return Response.json(answer, { headers: idHeader })
      } catch (err) {
        input.signal?.removeEventListener('abort', onClientAbort)
        // Providers and codecs raise GatewayErrors; anything else is the gateway's own bug: a 500
        // that is neither retried elsewhere nor counted against the provider's health.
        const internal = !(err instanceof GatewayError)
        if (internal)
          deps.log.error('gateway bug during an upstream attempt', {
            request_id: requestId,
            error: String(err),
            stack: (err as Error)?.stack,
          })
        const error = internal
          ? new GatewayError('api_error', 'internal error in the gateway; the request id identifies it in the logs', {
              status: 500,
            })
          : err
        const clientGone = input.signal?.aborted ?? false
        trace.failLeg(leg, error, clientGone ? 'aborted' : 'failed')
        // Only the provider's faults count against its health, not the client's bad request.
        if (!clientGone && !internal) deps.metrics.upstreamError(candidate.provider.id, candidate.model.id, error.kind)
        if (!clientGone && error.retryable) {
          deps.health.recordFailure(candidate.provider.id, candidate.model.id, {
            retryAfterSeconds: error.retryAfterSeconds,
          })
        } else if (probe) {
          // A probe with no verdict (client gone, the client's own 4xx) says nothing about the
          // provider: release it so the next request probes again.
          deps.health.releaseProbe(candidate.provider.id, candidate.model.id)
        }
        lastError = error
        if (clientGone) {
          await record(deps, trace, { status: 'aborted', httpStatus: 499, error })
          return errorResponse(error, surface.errorShape, idHeader)
        }
        deps.log.warn('upstream leg failed', {
          request_id: requestId,
          model: candidate.model.id,
          provider: candidate.provider.id,
          error: error.message,
          retryable: error.retryable,
        })
        if (!error.retryable) break
      }
    }
    const error = lastError ?? new GatewayError('overloaded', 'every candidate failed', { status: 503 })
    // The ledger keeps the status the client was sent (an OpenAI client gets 503 for a 529).
    const response = errorResponse(error, surface.errorShape, idHeader)
    await record(deps, trace, { status: 'failed', httpStatus: response.status, error })
    return response
  } catch (err) {
    return errorResponse(err, surface.errorShape, idHeader)
  }
}

function summarizeSkips(ranks: { model_id: string; provider_id: string; reason: string }[]): string {
  return ranks
    .slice(0, 6)
    .map((r) => `${r.model_id} via ${r.provider_id}: ${r.reason}`)
    .join('; ')
}

async function record(deps: Deps, trace: RequestTrace, result: Parameters<RequestTrace['finish']>[0]) {
  const finished = trace.finish(result)
  deps.metrics.requestEnded(finished)
  const r = finished.request
  // One line per request; never a key or a prompt.
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
  try {
    await deps.ledger.recordRequest(finished)
    deps.credit.invalidate(trace.ctx.accountId)
  } catch (err) {
    // The client's answer stands; the failure to record is an operator problem and is logged loudly.
    deps.log.error('could not record request in the ledger', { request_id: trace.ctx.id, error: String(err) })
  }
}

async function send(
  deps: Deps,
  call: {
    surface: InboundSurface
    body: Record<string, unknown>
    exchange: ExchangeRequest
    candidate: Candidate
    apiKey: string
    headers: Headers
    signal: AbortSignal
  },
): Promise<Response> {
  const { provider, model } = call.candidate
  const codec = codecs[provider.kind]
  const passThrough = provider.kind === call.surface.nativeKind
  const payload = passThrough
    ? call.surface.passThroughBody(call.body, model.upstreamModel, call.candidate.maxTokens)
    : codec.encodeRequest({ ...call.exchange, maxTokens: call.candidate.maxTokens }, model.upstreamModel, provider)
  const headers: Record<string, string> = { 'content-type': 'application/json', ...provider.headers }
  for (const name of codec.forwardedHeaders) {
    const value = call.headers.get(name)
    if (value) headers[name] = value
  }
  Object.assign(headers, codec.authHeaders(call.apiKey))
  if (passThrough) {
    // The client's own version header wins over our default for a same-shape relay.
    const version = call.headers.get('anthropic-version')
    if (version && provider.kind === 'anthropic') headers['anthropic-version'] = version
  }
  return callUpstream(deps.fetch, {
    url: `${provider.baseUrl}${codec.path}`,
    headers,
    body: JSON.stringify(payload),
    signal: call.signal,
    // A streaming upstream sends its headers as soon as it accepts the request, so for streams
    // the wait for headers is bounded by the connect timeout and the first frame by first-byte;
    // a non-streaming answer's headers come with the whole answer, bounded by first-byte.
    timeouts: {
      firstByteMs: call.exchange.stream ? deps.config.routing.connectTimeoutMs : deps.config.routing.firstByteTimeoutMs,
    },
    decodeError: codec.decodeError,
  })
}

function expectContentType(upstream: Response, wanted: string) {
  const type = upstream.headers.get('content-type') ?? ''
  if (!type.includes(wanted)) {
    throw new GatewayError(
      'api_error',
      `upstream answered 200 with content-type ${type || '(none)'}, expected ${wanted}`,
      {
        status: 502,
        retryable: true,
      },
    )
  }
}

/** The client is about to receive its first byte from this leg: no fallback from here on. */
function servedFirstByte(deps: Deps, trace: RequestTrace, leg: LegDraft) {
  const now = deps.clock()
  trace.firstByteAt = now
  trace.markChosen(leg)
  const { provider, model } = leg.candidate
  deps.health.recordSuccess(provider.id, model.id, now - leg.startedAt)
  const sessionId = trace.ctx.session.sessionId
  if (sessionId) deps.sessions.served(trace.ctx.accountId, sessionId, { modelId: model.id, providerId: provider.id })
}

async function jsonAnswer(
  deps: Deps,
  a: {
    surface: InboundSurface
    body: Record<string, unknown>
    trace: RequestTrace
    leg: LegDraft
    candidate: Candidate
    upstream: Response
    ids: ClientIds
  },
) {
  expectContentType(a.upstream, 'json')
  let json: unknown
  try {
    json = await a.upstream.json()
  } catch (err) {
    throw new GatewayError('api_error', 'upstream answered 200 with a body that is not valid JSON', {
      status: 502,
      retryable: true,
      cause: err,
    })
  }
  if (a.candidate.provider.kind === a.surface.nativeKind) {
    const { body, usage } = a.surface.passThroughJson(json, a.ids)
    a.trace.settleLeg(a.leg, 'ok', { usage, reported: true, outputChars: 0 })
    servedFirstByte(deps, a.trace, a.leg)
    return body
  }
  const response = codecs[a.candidate.provider.kind].decodeResponse(json)
  a.trace.settleLeg(a.leg, 'ok', { usage: response.usage, reported: true, outputChars: 0 })
  servedFirstByte(deps, a.trace, a.leg)
  return a.surface.encodeResponse(response, a.ids, a.body)
}

/**
 * Streams the answer. The first client frame is produced before the Response is returned, so a
 * candidate that fails before its first frame still falls back; after that, errors become
 * error events and the leg records what flowed.
 */
async function streamAnswer(
  deps: Deps,
  a: {
    surface: InboundSurface
    body: Record<string, unknown>
    trace: RequestTrace
    leg: LegDraft
    candidate: Candidate
    upstream: Response
    ids: ClientIds
    controller: AbortController
    idHeader: Record<string, string>
    onDone: () => void
  },
): Promise<Response> {
  expectContentType(a.upstream, 'text/event-stream')
  const body = a.upstream.body
  if (!body) throw new GatewayError('api_error', 'upstream sent an empty stream', { status: 502, retryable: true })
  const frames: AsyncIterable<SseEvent> = parseSse(
    withIdleTimeout(body, deps.config.routing.idleTimeoutMs, () => a.controller.abort()),
  )

  const passThrough = a.candidate.provider.kind === a.surface.nativeKind
  let clientFrames: AsyncIterator<string>
  /** What the leg received, and whether the upstream finished the message cleanly. */
  // Translated streams never need one (their encoder reports failures in-stream); kept total for safety.
  let errorFrame: (error: GatewayError) => string = () => ''
  let received: () => {
    usage: Usage
    reported: boolean
    outputChars: number
    clean: boolean
    error?: UpstreamErrorInfo
  }
  /** Why the upstream failed before producing anything (so nothing reached the client), if it did. */
  let failedBeforeStart: () => GatewayError | undefined
  if (passThrough) {
    const stream = a.surface.passThroughStream(a.ids)
    errorFrame = stream.errorFrame
    clientFrames = (async function* () {
      for await (const frame of frames) yield stream.frame(frame)
    })()
    // Checked after the first frame only: an error by then means the first frame was the error.
    failedBeforeStart = () => {
      const error = stream.error()
      return error ? upstreamFailure(error) : undefined
    }
    received = () => {
      const finished = stream.finished()
      const usage = stream.usage()
      if (!finished) usage.output = stream.estimatedOutputTokens()
      return { usage, reported: finished, outputChars: 0, clean: finished && !stream.error(), error: stream.error() }
    }
  } else {
    const meter = newStreamMeter()
    const events = meterEvents(codecs[a.candidate.provider.kind].decodeStream(frames), meter)
    clientFrames = a.surface
      .encodeStream(events, a.ids, { upstreamModel: a.candidate.model.upstreamModel, body: a.body })
      [Symbol.asyncIterator]()
    received = () => ({ ...meter, clean: meter.finished && !meter.error })
    failedBeforeStart = () => {
      if (meter.started) return undefined
      if (meter.error) return upstreamFailure(meter.error)
      return new GatewayError('api_error', 'upstream stream failed before its first event', {
        status: 502,
        retryable: true,
      })
    }
  }

  // Before the first byte: a failure here is the caller's to fall back from.
  let first: IteratorResult<string>
  let firstByteTimer: ReturnType<typeof setTimeout> | undefined
  try {
    const firstByteMs = deps.config.routing.firstByteTimeoutMs
    first = await Promise.race([
      clientFrames.next(),
      new Promise<never>((_, reject) => {
        firstByteTimer = setTimeout(() => {
          a.controller.abort()
          reject(new GatewayError('timeout', `upstream sent no event within ${firstByteMs} ms`, { retryable: true }))
        }, firstByteMs)
      }),
    ])
  } catch (err) {
    clearTimeout(firstByteTimer)
    await clientFrames.return?.(undefined).catch(() => {})
    throw err
  }
  clearTimeout(firstByteTimer)
  if (first.done)
    throw new GatewayError('api_error', 'upstream stream ended before any event', { status: 502, retryable: true })
  // The first client frame may be only our rendering of an upstream that failed at once (an
  // in-band error as its first event, a 200 stream that closed empty). It has not been sent:
  // fall back as for a 5xx rather than answer 200 with nothing but an error event.
  const early = failedBeforeStart()
  if (early) {
    await clientFrames.return?.(undefined).catch(() => {})
    throw early
  }
  servedFirstByte(deps, a.trace, a.leg)

  let done = false
  const finish = async (outcome: 'ok' | 'failed' | 'aborted', error?: GatewayError) => {
    if (done) return
    done = true
    deps.metrics.streamEnded()
    a.onDone()
    a.trace.settleLeg(a.leg, outcome, received(), error)
    const status = outcome === 'ok' ? 'completed' : outcome
    await record(deps, a.trace, { status, httpStatus: outcome === 'aborted' ? 499 : 200, error })
  }
  // A direct stream: one pull that writes each frame as it is produced and flushes it at once,
  // so no frame waits for another (no batching) and no promise round trip per frame.
  const stream = new ReadableStream({
    type: 'direct',
    async pull(controller) {
      const send = (frame: string) => {
        controller.write(frame)
        controller.flush()
      }
      try {
        send(first.value)
        for (;;) {
          const next = await clientFrames.next()
          if (next.done) break
          if (done) return
          send(next.value)
        }
        const end = received()
        if (end.clean) {
          await finish('ok')
        } else {
          const error = end.error
            ? upstreamFailure(end.error)
            : new GatewayError('api_error', 'upstream stream ended before the message was complete', { status: 502 })
          // A translated stream already told the client (the encoder emits the error event);
          // a pass-through stream has relayed the upstream's own frames, so add ours if it sent none.
          if (passThrough && !end.error) send(errorFrame(error))
          await finish('failed', error)
        }
      } catch (err) {
        if (done) return
        const error =
          err instanceof GatewayError
            ? err
            : new GatewayError('api_error', `upstream stream failed: ${String(err)}`, { status: 502 })
        const frame = errorFrame(error)
        if (frame) send(frame)
        await finish('failed', error)
      }
      controller.close()
    },
    async cancel() {
      // The client went away: stop the upstream and record what flowed.
      a.controller.abort()
      await finish('aborted', new GatewayError('api_error', 'client disconnected mid-stream', { status: 499 }))
      await clientFrames.return?.(undefined).catch(() => {})
    },
  })
  deps.metrics.streamStarted()
  return new Response(stream, { headers: { ...sseHeaders, ...a.idHeader } })
}
