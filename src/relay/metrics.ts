// The gateway's own metrics: what /metrics exposes, fed by the relay as requests end.
import type { FinishedRequest } from '../ledger/ledger'
import { createMetrics } from '../lib/metrics'

const secondsBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

export function createGatewayMetrics(read: { openCircuits: () => number }) {
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
  registry.gauge('svc_open_circuits', 'Provider × model pairs whose circuit breaker is open.', read.openCircuits)
  const inFlight = registry.gauge('svc_streams_in_flight', 'Streams being relayed right now.')

  return {
    render: registry.render,
    streamStarted: () => inFlight.add(1),
    streamEnded: () => inFlight.add(-1),
    upstreamError(providerId: string, modelId: string, kind: string) {
      upstreamErrors.inc({ provider: providerId, model: modelId, kind })
    },
    requestEnded(finished: FinishedRequest) {
      const r = finished.request
      requests.inc({ surface: r.surface, profile: r.routingMode, status: String(r.httpStatus ?? 0) })
      if (r.endedAt !== null)
        duration.observe({ surface: r.surface, profile: r.routingMode }, (r.endedAt - r.createdAt) / 1000)
      if (r.firstByteAt !== null)
        ttfb.observe({ surface: r.surface, profile: r.routingMode }, (r.firstByteAt - r.createdAt) / 1000)
      for (const leg of finished.legs) {
        const labels = { model: leg.modelId, provider: leg.providerId }
        tokens.inc({ ...labels, kind: 'input' }, leg.inputTokens)
        tokens.inc({ ...labels, kind: 'cache_read' }, leg.cachedInputTokens)
        tokens.inc({ ...labels, kind: 'cache_write' }, leg.cacheCreationInputTokens)
        tokens.inc({ ...labels, kind: 'output' }, leg.outputTokens)
        cost.inc(labels, leg.costNanos)
      }
    },
  }
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>
