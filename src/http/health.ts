// Liveness, readiness and Prometheus metrics, for load balancers, systemd and scrapers.
import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { GatewayError } from '../lib/errors'
import { tokenMatches } from './admin'
import { readApiKey } from './auth'

export const healthRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.health' })
    .get('/healthz', () => ({ status: 'ok' }))
    .get('/readyz', async ({ set }) => {
      const providers = Object.keys(deps.config.providers)
      let database = true
      try {
        // One row, not every account: a probe every few seconds must not cost what a big
        // ledger's account list does (122 ms at 200,000 accounts, holding up model requests).
        await deps.ledger.answersReads()
      } catch {
        database = false
      }
      // A gateway whose database refuses writes turns model requests away: send them elsewhere.
      const recording = !deps.ledger.refusesWrites()
      const ready = database && recording && providers.length > 0
      if (!ready) set.status = 503
      return { status: ready ? 'ready' : 'not_ready', database, recording, providers }
    })
    .get('/metrics', ({ request }) => {
      requireMetricsToken(deps, request.headers)
      return new Response(deps.metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4' } })
    })

/**
 * With a metrics token set, a scraper sends it as a Bearer (Prometheus' `authorization`), or the
 * admin token: the counts are platform-wide (tokens and cost per model), for the operator alone
 * where svc is reachable from outside. Unset, /metrics is open, as a scrape inside a network expects.
 */
function requireMetricsToken(deps: Deps, headers: Headers): void {
  const { metricsToken, adminToken } = deps.config.server
  if (!metricsToken) return
  const given = readApiKey(headers, false)
  if (!given) throw new GatewayError('authentication', 'missing metrics token: send `Authorization: Bearer <token>`')
  if (!tokenMatches(given, metricsToken) && !(adminToken && tokenMatches(given, adminToken)))
    throw new GatewayError('authentication', 'invalid metrics token')
}
