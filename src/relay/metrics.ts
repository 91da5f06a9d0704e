// The gateway's own metrics: what /metrics exposes, fed by the relay as requests end.
import type { FinishedRequest } from '../ledger/ledger'
import { type CounterSeries, createMetrics, type HistogramSeries } from '../lib/metrics'

const secondsBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

export function createGatewayMetrics(read: { openCircuits: () => number; ledgerRefusing: () => boolean }) {
  const registry = createMetrics()
  const requests = registry.counter('svc_requests_total', 'Model requests by surface, routing profile and HTTP status.')
  const duration = registry.histogram(
    'svc_request_duration_seconds',
    'Model request duration, to the last byte.',
    secondsBuckets,
  )
  const ttfb = registry.histogram(
    'svc_time_to_first_byte_seconds',
    'Time from the request to the first byte sent to the client.',
    secondsBuckets,
  )
  const tokens = registry.counter(
    'svc_tokens_total',
    'Tokens by model, provider and kind (input, cache_read, cache_write, output).',
  )
  const cost = registry.counter('svc_cost_nanos_total', 'Cost of upstream legs in USD nanos, by model and provider.')
  const upstreamErrors = registry.counter(
    'svc_upstream_errors_total',
    'Failed upstream legs by provider, model and error kind.',
  )
  const refusals = registry.counter(
    'svc_refused_requests_total',
    'Requests svc answered with an error of its own before asking any upstream (a bad key, a malformed body, an unknown route, the ledger refusing writes), by error kind.',
  )
  registry.gauge('svc_open_circuits', 'Provider × model pairs whose circuit breaker is open.', read.openCircuits)
  const inFlight = registry.gauge('svc_streams_in_flight', 'Streams being relayed right now.')
  registry.gauge(
    'svc_ledger_refusing_writes',
    '1 while the database refuses writes (a full disk): model requests are answered 503 meanwhile.',
    () => (read.ledgerRefusing() ? 1 : 0),
  )

  /** Handles per (surface, profile) and per (model, provider): a request looks up two, not seven. */
  const requestSeries = new Map<
    string,
    { statuses: Map<number, CounterSeries>; duration: HistogramSeries; ttfb: HistogramSeries }
  >()
  const requestSeriesOf = (surface: string, profile: string) => {
    const key = `${surface}\u0000${profile}`
    let s = requestSeries.get(key)
    if (!s) {
      const labels = { surface, profile }
      s = { statuses: new Map(), duration: duration.series(labels), ttfb: ttfb.series(labels) }
      requestSeries.set(key, s)
    }
    return s
  }
  const legSeries = new Map<string, Record<'input' | 'cacheRead' | 'cacheWrite' | 'output' | 'cost', CounterSeries>>()
  const legSeriesOf = (model: string, provider: string) => {
    const key = `${model}\u0000${provider}`
    let s = legSeries.get(key)
    if (!s) {
      const labels = { model, provider }
      s = {
        input: tokens.series({ ...labels, kind: 'input' }),
        cacheRead: tokens.series({ ...labels, kind: 'cache_read' }),
        cacheWrite: tokens.series({ ...labels, kind: 'cache_write' }),
        output: tokens.series({ ...labels, kind: 'output' }),
        cost: cost.series(labels),
      }
      legSeries.set(key, s)
    }
    return s
  }

  return {
    render: registry.render,
    streamStarted: () => inFlight.add(1),
    streamEnded: () => inFlight.add(-1),
    upstreamError(providerId: string, modelId: string, kind: string) {
      upstreamErrors.inc({ provider: providerId, model: modelId, kind })
    },
    refused(kind: string) {
      refusals.inc({ kind })
    },
    requestEnded(finished: FinishedRequest) {
      const r = finished.request
      const perRequest = requestSeriesOf(r.surface, r.routingMode)
      const status = r.httpStatus ?? 0
      let byStatus = perRequest.statuses.get(status)
      if (!byStatus) {
        byStatus = requests.series({ surface: r.surface, profile: r.routingMode, status: String(status) })
        perRequest.statuses.set(status, byStatus)
      }
      byStatus.inc()
      if (r.endedAt !== null) perRequest.duration.observe((r.endedAt - r.createdAt) / 1000)
      if (r.firstByteAt !== null) perRequest.ttfb.observe((r.firstByteAt - r.createdAt) / 1000)
      for (const leg of finished.legs) {
        const perLeg = legSeriesOf(leg.modelId, leg.providerId)
        perLeg.input.inc(leg.inputTokens)
        perLeg.cacheRead.inc(leg.cachedInputTokens)
        perLeg.cacheWrite.inc(leg.cacheCreationInputTokens)
        perLeg.output.inc(leg.outputTokens)
        perLeg.cost.inc(leg.costNanos)
      }
    },
  }
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>
