// The operator's verbs: accounts, keys, grants, usage. The CLI and the admin HTTP API both call
// these, so the two can never disagree on a rule.
import type { Config } from '../config/load'
import { type ScopeCostType, scopeCostTypes } from '../ledger/credit'
import type { Account, Ledger, ProviderKeyRecord } from '../ledger/ledger'
import { formatUsd } from '../ledger/pricing'
import { mostNanos, UsdAmountError, usdNumberToNanos, usdTextToNanos } from '../ledger/usd-amount'
import { GatewayError, invalidRequest } from '../lib/errors'
import { ownEntry } from '../lib/own-entry'
import { parseRfc3339 } from '../lib/timestamps'
import { issueApiKey, readKeyName } from './api-keys'
import { openProviderKey, providerKeyHint, sealProviderKey } from './provider-keys'

export interface GrantInput {
  account: string
  /** Exactly one of usd or amountNanos: USD as the CLI's text, or as the API's JSON number. */
  usd?: string | number
  amountNanos?: number
  costType?: string
  routingModes?: string[]
  models?: string[]
  providers?: string[]
  /** RFC 3339 */
  expiresAt?: string
  source?: string
}

const routingModes = ['pro', 'max', 'ultra_saver']

const notPositive = () => invalidRequest('the amount must be more than zero', 'amount')

/** The grant's `usd`, the CLI's text or the API's JSON number, in nanos; a refusal names the field at fault. */
function readUsd(usd: string | number): number {
  try {
    return typeof usd === 'string' ? usdTextToNanos(usd) : usdNumberToNanos(usd)
  } catch (error) {
    if (!(error instanceof UsdAmountError)) throw error
    if (error.refusal === 'not_positive') throw notPositive()
    if (error.refusal === 'too_many_digits') {
      throw invalidRequest(
        `the amount ${usd} USD has more digits than a JSON number keeps exactly: send usd as a string ("${usd}") or amount_nanos`,
        'usd',
      )
    }
    throw invalidRequest(error.message, 'usd')
  }
}

/** The API's `amount_nanos`: a JSON integer beyond 2^53 arrives rounded, so it is refused as too large, not read. */
function readAmountNanos(nanos: number): number {
  if (nanos > mostNanos) {
    throw invalidRequest(
      `amount_nanos is too large: a grant holds at most ${mostNanos} nanos (${formatUsd(mostNanos)} USD)`,
      'amount_nanos',
    )
  }
  if (!Number.isSafeInteger(nanos) || nanos <= 0) throw notPositive()
  return nanos
}

/** Longer than any provider's key (Anthropic's are ~110 characters); a header line of 1 MB is no key. */
const longestProviderKey = 1024

/**
 * A provider key as it goes into a header: surrounding whitespace trimmed (a pasted key's line
 * break), then visible ASCII only, 8 to 1,024 characters. A key holding a line break (a second
 * line piped in with it), a space or a character from outside ASCII (a pasted ellipsis, a
 * zero-width space) was stored, and every request through that provider then failed with a 502
 * blaming the provider. The error says what is wrong and where, never the key itself.
 */
function readProviderKey(given: string): string {
  const key = given.trim()
  if (key.length > longestProviderKey) {
    throw invalidRequest(
      `the provider key is ${key.length} characters long; a key is at most ${longestProviderKey}`,
      'key',
    )
  }
  const at = key.search(/[^\x21-\x7e]/)
  if (at >= 0) {
    throw invalidRequest(
      `the provider key holds ${describeCharacter(key.codePointAt(at)!)} at character ${at + 1} of ${key.length}: a key is visible ASCII characters only, on one line (store the key alone)`,
      'key',
    )
  }
  if (key.length < 8) throw invalidRequest('the provider key looks too short', 'key')
  return key
}

const describeCharacter = (code: number) =>
  code === 0x0a || code === 0x0d
    ? 'a line break'
    : code === 0x20
      ? 'a space'
      : code === 0x09
        ? 'a tab'
        : code < 0x20 || code === 0x7f
          ? `a control character (U+${hex(code)})`
          : `a character outside ASCII (U+${hex(code)})`

const hex = (code: number) => code.toString(16).toUpperCase().padStart(4, '0')

export function createAdmin(deps: {
  ledger: Ledger
  config: Config
  clock: () => number
  /** Called after a write that changes what an account may spend or which keys it routes with. */
  onAccountChanged?: (accountId: string) => void
}) {
  const { ledger, config } = deps
  const changed = (accountId: string) => deps.onAccountChanged?.(accountId)

  async function findAccount(nameOrId: string): Promise<Account> {
    const account = (await ledger.getAccountByName(nameOrId)) ?? (await ledger.getAccount(nameOrId))
    if (!account) throw new GatewayError('not_found', `no account named ${JSON.stringify(nameOrId)}`)
    return account
  }

  function requireMasterKey(): string {
    if (!config.server.masterKey) {
      throw new GatewayError(
        'invalid_request',
        `provider keys need a master key: set ${config.server.masterKeyEnv} before storing one`,
      )
    }
    return config.server.masterKey
  }

  /** A stored key's plaintext, or null when this gateway cannot open it (GCM refuses a wrong key). */
  function openSealed(row: ProviderKeyRecord): string | null {
    if (!config.server.masterKey) return null
    try {
      return openProviderKey(config.server.masterKey, row.sealed, row.accountId)
    } catch {
      return null
    }
  }

  /**
   * openProviderKeys's keys, with each one as sealed in the database: sealing draws a fresh IV, so a
   * key stored again (even the same key) seals differently, and a changed sealed form says the
   * account replaced its key, from this process or another (deps.ts).
   */
  async function ownProviderKeys(accountId: string) {
    const keys = new Map<string, string | null>()
    const sealed = new Map<string, string>()
    for (const row of await ledger.listProviderKeys(accountId)) {
      if (!config.providers[row.providerId]) continue
      keys.set(row.providerId, openSealed(row))
      sealed.set(row.providerId, row.sealed)
    }
    return { keys, sealed }
  }

  return {
    findAccount,

    async createAccount(name: string) {
      if (!/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/.test(name)) {
        throw invalidRequest(
          'account name: 1–64 characters of letters, digits, . _ @ -, starting with a letter or digit',
          'name',
        )
      }
      if (await ledger.getAccountByName(name)) throw invalidRequest(`account ${name} already exists`, 'name')
      return ledger.createAccount(name)
    },

    listAccounts: () => ledger.listAccounts(),

    async createKey(input: { account: string; name?: string }) {
      const name = readKeyName(input.name?.trim() || 'default')
      const account = await findAccount(input.account)
      return issueApiKey(ledger, account.id, name)
    },

    async listKeys(input: { account?: string }) {
      const account = input.account ? await findAccount(input.account) : undefined
      return ledger.listApiKeys(account?.id)
    },

    async revokeKey(id: string) {
      const key = await ledger.getApiKey(id)
      if (!key) throw new GatewayError('not_found', `no API key with id ${id}`)
      return (await ledger.revokeApiKey(id)) ?? key
    },

    async addGrant(input: GrantInput) {
      const account = await findAccount(input.account)
      if ((input.usd === undefined) === (input.amountNanos === undefined)) {
        throw invalidRequest('give the amount once: usd or amount_nanos', 'amount')
      }
      const amountNanos =
        input.amountNanos !== undefined ? readAmountNanos(input.amountNanos) : readUsd(input.usd ?? Number.NaN)
      const costType = (input.costType ?? 'all') as ScopeCostType
      if (!scopeCostTypes.includes(costType)) {
        throw invalidRequest(`scope_cost_type must be one of ${scopeCostTypes.join(', ')}`, 'scope_cost_type')
      }
      for (const mode of input.routingModes ?? []) {
        if (!routingModes.includes(mode)) {
          throw invalidRequest(`routing mode ${mode} is not one of ${routingModes.join(', ')}`, 'routing_modes')
        }
      }
      let expiresAt: number | null = null
      if (input.expiresAt !== undefined) {
        const parsed = parseRfc3339(input.expiresAt)
        if (parsed === undefined) {
          throw invalidRequest(
            'expires_at must be an RFC 3339 timestamp with its time zone, such as 2099-01-01T00:00:00Z',
            'expires_at',
          )
        }
        expiresAt = parsed
        // A typo'd year would make a grant that pays for nothing, and looks granted.
        if (expiresAt <= deps.clock()) {
          throw invalidRequest(
            `expires_at ${input.expiresAt} is not in the future: an expired grant pays for nothing`,
            'expires_at',
          )
        }
      }
      const grant = await ledger.addGrant({
        accountId: account.id,
        amountNanos,
        scopeCostType: costType,
        source: input.source?.trim() || 'admin',
        scopeRoutingModes: input.routingModes ?? null,
        scopeModels: input.models ?? null,
        scopeProviders: input.providers ?? null,
        expiresAt,
      })
      changed(account.id)
      return grant
    },

    async listGrants(accountName: string) {
      const account = await findAccount(accountName)
      return ledger.listGrants(account.id)
    },

    async addProviderKey(input: { account: string; provider: string; key: string }) {
      const masterKey = requireMasterKey()
      const account = await findAccount(input.account)
      if (!ownEntry(config.providers, input.provider)) {
        throw invalidRequest(
          `provider ${input.provider} is not configured (known: ${Object.keys(config.providers).join(', ') || 'none'})`,
          'provider',
        )
      }
      const key = readProviderKey(input.key)
      const stored = await ledger.putProviderKey({
        accountId: account.id,
        providerId: input.provider,
        sealed: sealProviderKey(masterKey, key, account.id),
        hint: providerKeyHint(key),
      })
      changed(account.id)
      return stored
    },

    /** The stored keys, each with whether this gateway's master key opens it (the others serve no one). */
    async listProviderKeys(input: { account?: string }) {
      const account = input.account ? await findAccount(input.account) : undefined
      return (await ledger.listProviderKeys(account?.id)).map((row) => ({ ...row, opens: openSealed(row) !== null }))
    },

    /**
     * A master key rotation: every stored key the current master key does not open but
     * `oldMasterKey` does is sealed again under the current one, in one transaction. Keys the
     * current key opens already are left, so running it twice does no harm; keys neither opens are
     * left as they are, and counted.
     */
    async resealProviderKeys(oldMasterKey: string) {
      const masterKey = requireMasterKey()
      const updates: { id: string; sealed: string; accountId: string }[] = []
      let current = 0
      let unopenable = 0
      for (const row of await ledger.listProviderKeys()) {
        if (openSealed(row) !== null) {
          current++
          continue
        }
        let plaintext: string
        try {
          plaintext = openProviderKey(oldMasterKey, row.sealed, row.accountId)
        } catch {
          unopenable++
          continue
        }
        updates.push({
          id: row.id,
          sealed: sealProviderKey(masterKey, plaintext, row.accountId),
          accountId: row.accountId,
        })
      }
      await ledger.resealProviderKeys(updates)
      for (const accountId of new Set(updates.map((u) => u.accountId))) changed(accountId)
      return { resealed: updates.length, current, unopenable }
    },

    async removeProviderKey(input: { account: string; provider: string }) {
      const account = await findAccount(input.account)
      if (!(await ledger.deleteProviderKey(account.id, input.provider))) {
        throw new GatewayError('not_found', `account ${input.account} has no key for ${input.provider}`)
      }
      changed(account.id)
    },

    /**
     * provider id → the account's own key (plaintext; never logged, never returned), for the
     * providers this gateway has configured; `null` where a key is stored but cannot be opened
     * (no master key set, or not the one it was sealed with). Such a provider must not serve the
     * account on the platform's key instead: the account stored its own to be charged only the fee.
     */
    openProviderKeys: async (accountId: string): Promise<Map<string, string | null>> =>
      (await ownProviderKeys(accountId)).keys,

    ownProviderKeys,

    /** The stored provider keys this gateway cannot open, of configured providers: said at startup. */
    async unopenableProviderKeys(): Promise<ProviderKeyRecord[]> {
      const rows = await ledger.listProviderKeys()
      return rows.filter((row) => config.providers[row.providerId] && openSealed(row) === null)
    },

    /**
     * On an empty database: a first account with a key and the configured starter grant, so a
     * fresh `svc serve` is usable at once. Returns undefined when accounts already exist.
     */
    async bootstrap() {
      if ((await ledger.listAccounts()).length > 0) return undefined
      const account = await ledger.createAccount('default')
      const { key } = await issueApiKey(ledger, account.id, 'first key')
      const starter = config.billing.starterGrant
      const grant = starter
        ? await ledger.addGrant({
            accountId: account.id,
            amountNanos: starter.nanos,
            scopeCostType: 'all',
            source: 'starter',
            expiresAt: starter.expiresInDays ? deps.clock() + starter.expiresInDays * 86_400_000 : null,
          })
        : undefined
      return { account, key, grant }
    },
  }
}

export type Admin = ReturnType<typeof createAdmin>
