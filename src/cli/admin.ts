// The operator's verbs on the command line: accounts, keys, grants, provider keys, usage.
// They open the database directly (WAL lets them run beside a serving gateway) and call the same
// functions as the admin HTTP API.
import type { Config } from '../config/load'
import { accountView, apiKeyView, providerKeyView } from '../http/admin'
import { readLimit } from '../http/params'
import { usageLimits } from '../http/usage'
import { formatUsd } from '../ledger/pricing'
import { grantView, usageSummaryView } from '../ledger/views'
import { GatewayError } from '../lib/errors'
import { type Io, parseFlags, print, table, UsageError, withAdmin } from './context'
import { scopeText } from './grant-scope'

const need = (value: string | undefined, what: string): string => {
  if (!value) throw new UsageError(`${what} is required`)
  return value
}

export async function runAccounts(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, {})
  const [verb, name] = positionals
  return withAdmin(io, values, async (deps) => {
    if (verb === 'create') {
      const account = accountView(await deps.admin.createAccount(need(name, 'an account NAME')))
      print(
        io,
        values.json,
        account,
        () => `created account ${account.name} (${account.id}); it has no credit until you add a grant`,
      )
    } else if (verb === 'list') {
      const accounts = (await deps.admin.listAccounts()).map(accountView)
      print(io, values.json, accounts, () => table(accounts, ['name', 'id', 'created_at']))
    } else throw new UsageError('usage: svc accounts create NAME | svc accounts list')
    return 0
  })
}

export async function runKeys(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, { account: { type: 'string' }, name: { type: 'string' } })
  const [verb, id] = positionals
  return withAdmin(io, values, async (deps) => {
    if (verb === 'create') {
      const { key, record } = await deps.admin.createKey({
        account: need(values.account, '--account'),
        name: values.name,
      })
      print(io, values.json, { ...apiKeyView(record), key }, () =>
        [
          `${key}`,
          '',
          `API key ${record.id} (${record.name}) for account ${values.account}.`,
          'It is shown once: store it now.',
        ].join('\n'),
      )
    } else if (verb === 'list') {
      const keys = (await deps.admin.listKeys({ account: values.account })).map(apiKeyView)
      print(io, values.json, keys, () =>
        table(keys, ['id', 'account_id', 'name', 'prefix', 'created_at', 'revoked_at']),
      )
    } else if (verb === 'revoke') {
      const key = apiKeyView(await deps.admin.revokeKey(need(id, 'a key ID')))
      print(io, values.json, key, () => `revoked ${key.id} (${key.prefix}…)`)
    } else
      throw new UsageError(
        'usage: svc keys create --account NAME [--name LABEL] | svc keys list [--account NAME] | svc keys revoke ID',
      )
    return 0
  })
}

export async function runGrants(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    account: { type: 'string' },
    usd: { type: 'string' },
    'routing-mode': { type: 'string', multiple: true },
    model: { type: 'string', multiple: true },
    provider: { type: 'string', multiple: true },
    'cost-type': { type: 'string' },
    expires: { type: 'string' },
    source: { type: 'string' },
  })
  return withAdmin(io, values, async (deps) => {
    if (positionals[0] === 'add') {
      const grant = grantView(
        await deps.admin.addGrant({
          account: need(values.account, '--account'),
          // As typed: the admin reads it exactly (plain decimals, whole nanos), as for the API.
          usd: need(values.usd, '--usd'),
          costType: values['cost-type'],
          routingModes: values['routing-mode'],
          models: values.model,
          providers: values.provider,
          expiresAt: values.expires,
          source: values.source ?? 'cli',
        }),
      )
      print(
        io,
        values.json,
        grant,
        () => `granted ${formatUsd(grant.amount_nanos)} USD to ${values.account} (${grant.id})`,
      )
      for (const warning of unknownScopes(deps.config, values.model, values.provider)) io.err(`svc: ${warning}`)
    } else if (positionals[0] === 'list') {
      const grants = (await deps.admin.listGrants(need(values.account, '--account'))).map(grantView)
      print(io, values.json, grants, () =>
        table(
          grants.map((g) => ({
            ...g,
            amount_usd: formatUsd(g.amount_nanos),
            remaining_usd: formatUsd(g.remaining_nanos),
            scope: scopeText(g),
          })),
          ['id', 'amount_usd', 'remaining_usd', 'scope', 'source', 'expires_at'],
        ),
      )
    } else {
      throw new UsageError(
        'usage: svc grants add --account NAME --usd AMOUNT [--routing-mode M]… [--model ID]… [--provider ID]… [--cost-type all|model_usage|byok_fee] [--expires RFC3339] [--source TEXT] | svc grants list --account NAME',
      )
    }
    return 0
  })
}

export async function runUsage(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, { account: { type: 'string' }, limit: { type: 'string' } })
  const limit = cliLimit(values.limit)
  return withAdmin(io, values, async (deps) => {
    const account = await deps.admin.findAccount(need(values.account, '--account'))
    const summary = await usageSummaryView(deps.ledger, account.id, {
      limit,
      now: deps.clock(),
    })
    print(io, values.json, summary, () =>
      [
        `account ${account.name}: ${formatUsd(summary.used_nanos)} of ${formatUsd(summary.limit_nanos)} USD used, ${formatUsd(summary.remaining_nanos)} left`,
        '',
        table(
          summary.recent_events.map((e) => ({ ...e, cost_usd: formatUsd(e.cost_nanos) })),
          [
            'created_at',
            'request_id',
            'model_id',
            'provider_id',
            'input_tokens',
            'cached_input_tokens',
            'output_tokens',
            'cost_usd',
          ],
        ),
      ].join('\n'),
    )
    return 0
  })
}

export async function runProviderKeys(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, {
    account: { type: 'string' },
    provider: { type: 'string' },
    'old-master-key-env': { type: 'string' },
  })
  return withAdmin(io, values, async (deps) => {
    if (positionals[0] === 'add') {
      // The key comes on stdin, never as an argument: arguments show in `ps` and shell history.
      const key = (await (io.stdin?.() ?? Promise.resolve(''))).trim()
      if (!key)
        throw new UsageError(
          'pipe the provider key on standard input, e.g. `printenv MY_KEY | svc provider-keys add …`',
        )
      const stored = providerKeyView(
        await deps.admin.addProviderKey({
          account: need(values.account, '--account'),
          provider: need(values.provider, '--provider'),
          key,
        }),
      )
      print(
        io,
        values.json,
        stored,
        () => `stored ${stored.provider_id} key ${stored.hint} for ${values.account} (encrypted)`,
      )
    } else if (positionals[0] === 'list') {
      const keys = (await deps.admin.listProviderKeys({ account: values.account })).map(providerKeyView)
      print(io, values.json, keys, () =>
        table(keys, ['id', 'account_id', 'provider_id', 'hint', 'created_at', 'opens']),
      )
    } else if (positionals[0] === 'remove') {
      await deps.admin.removeProviderKey({
        account: need(values.account, '--account'),
        provider: need(values.provider, '--provider'),
      })
      print(io, values.json, { removed: true }, () => 'removed')
    } else if (positionals[0] === 'reseal') {
      // The old master key comes from a variable, as the current one does: never an argument.
      const from = need(values['old-master-key-env'], '--old-master-key-env')
      const oldMasterKey = io.env[from]
      if (!oldMasterKey)
        throw new UsageError(`${from} is not set: it must hold the master key the keys were sealed with`)
      const result = await deps.admin.resealProviderKeys(oldMasterKey)
      print(io, values.json, result, () =>
        [
          `resealed ${result.resealed} key(s) under the current master key`,
          `${result.current} already were`,
          `${result.unopenable} open with neither key and were left as they are`,
        ].join('; '),
      )
      return result.unopenable > 0 ? 1 : 0
    } else {
      throw new UsageError(
        'usage: svc provider-keys add --account NAME --provider ID < key | list [--account NAME] | remove --account NAME --provider ID | reseal --old-master-key-env VAR',
      )
    }
    return 0
  })
}

/**
 * --limit read as the admin route reads `limit` (an integer, 1–200): `Number()` listed everything
 * for "abc", nothing for 0 or 1.5, and passed 1e20 to SQLite. A wrong value is a usage mistake.
 */
function cliLimit(raw: string | undefined): number {
  try {
    return readLimit(raw, { ...usageLimits.usage, name: '--limit' })
  } catch (err) {
    throw err instanceof GatewayError ? new UsageError(err.message) : err
  }
}

/**
 * Scopes naming a model or provider this config does not have. Not refused: a grant may be made
 * for a model added later. But a typo'd id makes a grant that pays for nothing, so it is said.
 */
function unknownScopes(config: Config, models: string[] = [], providers: string[] = []): string[] {
  const knownModels = new Set(config.models.map((m) => m.id))
  return [
    ...models
      .filter((id) => !knownModels.has(id))
      .map((id) => `no model ${id} is configured: the grant pays for it only once one is`),
    ...providers
      .filter((id) => !config.providers[id])
      .map((id) => `no provider ${id} is configured: the grant pays for it only once one is`),
  ]
}
