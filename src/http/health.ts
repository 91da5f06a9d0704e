// Liveness and readiness for load balancers and systemd.
import { Elysia } from 'elysia'
import type { Deps } from '../deps'

export const healthRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.health' })
    .get('/healthz', () => ({ status: 'ok' }))
    .get('/readyz', async ({ set }) => {
      const providers = Object.keys(deps.config.providers)
      let database = true
      try {
        await deps.ledger.listAccounts()
      } catch {
        database = false
      }
      const ready = database && providers.length > 0
      if (!ready) set.status = 503
      return { status: ready ? 'ready' : 'not_ready', database, providers }
    })
