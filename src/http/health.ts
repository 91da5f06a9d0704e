// Liveness, readiness and Prometheus metrics, for load balancers, systemd and scrapers.
import { Elysia } from 'elysia'
import type { Deps } from '../deps'

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
    .get(
      '/metrics',
      () => new Response(deps.metrics.render(), { headers: { 'content-type': 'text/plain; version=0.0.4' } }),
    )
