// The admin API under /v1/admin: the CLI's verbs over HTTP, guarded by the admin token
// (`Authorization: Bearer $SVC_ADMIN_TOKEN`). Without a configured token the API is off.
import { createHash, timingSafeEqual } from 'node:crypto'
import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { GatewayError } from '../lib/errors'
import { grantView, usageSummaryView } from '../ledger/views'
import type { ApiKeyRecord, ProviderKeyRecord } from '../ledger/ledger'
import { readApiKey } from './auth'
import { pathId, readLimit } from './params'
import { usageLimits } from './usage'

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString())

export const apiKeyView = (k: ApiKeyRecord) => ({
  id: k.id,
  account_id: k.accountId,
  name: k.name,
  prefix: k.prefix,
  created_at: iso(k.createdAt),
  revoked_at: iso(k.revokedAt),
})

export const accountView = (a: { id: string; name: string; createdAt: number }) => ({
  id: a.id,
  name: a.name,
  created_at: iso(a.createdAt),
})

/**
 * A stored provider key as the admin sees it: never the key, only its last four characters, and in
 * a list whether this gateway's master key opens it (one that does not serves no one).
 */
export const providerKeyView = (k: ProviderKeyRecord & { opens?: boolean }) => ({
  id: k.id,
  account_id: k.accountId,
  provider_id: k.providerId,
  hint: `…${k.hint}`,
  created_at: iso(k.createdAt),
  ...(k.opens === undefined ? {} : { opens: k.opens }),
})

export function requireAdmin(deps: Deps, headers: Headers) {
  const expected = deps.config.server.adminToken
  if (!expected) {
    throw new GatewayError('permission', 'the admin API is disabled: set SVC_ADMIN_TOKEN (or [server] admin_token_env)')
  }
  const given = readApiKey(headers, false)
  if (!given)
    throw new GatewayError('authentication', 'missing admin token: send `Authorization: Bearer <admin token>`')
  if (!tokenMatches(given, expected)) throw new GatewayError('authentication', 'invalid admin token')
}

/**
 * Whether `given` is the operator's token `expected`: the admin token (the admin API, the /login
 * page's operator approval) or the metrics token (/metrics). Compared as digests: equal lengths
 * whatever was sent, so the time taken tells nothing, not even the token's length.
 */
export function tokenMatches(given: string, expected: string): boolean {
  const digest = (token: string) => createHash('sha256').update(token).digest()
  return timingSafeEqual(digest(given), digest(expected))
}

const Names = t.Optional(t.Array(t.String({ minLength: 1 })))

export const adminRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.admin', prefix: '/v1/admin' })
    .onBeforeHandle(({ request }) => requireAdmin(deps, request.headers))
    .get('/accounts', async () => (await deps.admin.listAccounts()).map(accountView))
    .post(
      '/accounts',
      async ({ body, set }) => {
        set.status = 201
        return accountView(await deps.admin.createAccount(body.name))
      },
      { body: t.Object({ name: t.String() }) },
    )
    .get('/keys', async ({ query }) => (await deps.admin.listKeys({ account: query.account })).map(apiKeyView))
    .post(
      '/keys',
      async ({ body, set }) => {
        const { key, record } = await deps.admin.createKey({ account: body.account, name: body.name })
        set.status = 201
        return { ...apiKeyView(record), key }
      },
      { body: t.Object({ account: t.String(), name: t.Optional(t.String()) }) },
    )
    .post('/keys/:id/revoke', async ({ params, request }) => {
      const key = await deps.admin.revokeKey(pathId(params.id, request, '/keys/'))
      deps.auth.forgetKey(key.id)
      return apiKeyView(key)
    })
    .get('/grants', async ({ query }) => {
      if (!query.account) throw new GatewayError('invalid_request', 'account is required', { param: 'account' })
      return (await deps.admin.listGrants(query.account)).map(grantView)
    })
    .post(
      '/grants',
      async ({ body, set }) => {
        const grant = await deps.admin.addGrant({
          account: body.account,
          usd: body.usd,
          amountNanos: body.amount_nanos,
          costType: body.scope_cost_type,
          routingModes: body.scope_routing_modes,
          models: body.scope_models,
          providers: body.scope_providers,
          expiresAt: body.expires_at,
          source: body.source,
        })
        set.status = 201
        return grantView(grant)
      },
      {
        body: t.Object({
          account: t.String(),
          // A string is read to the nano as written; a number as a double keeps it (admin.ts).
          usd: t.Optional(t.Union([t.Number(), t.String()])),
          amount_nanos: t.Optional(t.Integer()),
          scope_cost_type: t.Optional(t.String()),
          scope_routing_modes: Names,
          scope_models: Names,
          scope_providers: Names,
          expires_at: t.Optional(t.String()),
          source: t.Optional(t.String()),
        }),
      },
    )
    .get('/usage', async ({ query }) => {
      if (!query.account) throw new GatewayError('invalid_request', 'account is required', { param: 'account' })
      const account = await deps.admin.findAccount(query.account)
      return usageSummaryView(deps.ledger, account.id, {
        limit: readLimit(query.limit, usageLimits.usage),
        now: deps.clock(),
        running: deps.running.legsOf(account.id),
      })
    })
    .get('/provider-keys', async ({ query }) =>
      (await deps.admin.listProviderKeys({ account: query.account })).map(providerKeyView),
    )
    .post(
      '/provider-keys',
      async ({ body, set }) => {
        set.status = 201
        return providerKeyView(await deps.admin.addProviderKey(body))
      },
      { body: t.Object({ account: t.String(), provider: t.String(), key: t.String() }) },
    )
    // The CLI's `provider-keys remove`: the account's requests to that provider go back to the
    // platform's key (or to other providers) from the next one.
    .delete('/provider-keys', async ({ query }) => {
      if (!query.account || !query.provider) {
        throw new GatewayError('invalid_request', 'account and provider are required', {
          param: query.account ? 'provider' : 'account',
        })
      }
      await deps.admin.removeProviderKey({ account: query.account, provider: query.provider })
      return { account: query.account, provider_id: query.provider, removed: true }
    })
