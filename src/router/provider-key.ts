// Which key calls a provider for an account: the account's own where it stored one (BYOK), else
// the platform's.
import type { ProviderConfig } from '../config/load'

/** provider id → the account's own key; null where one is stored but this gateway cannot open it. */
export type OwnProviderKeys = ReadonlyMap<string, string | null>

/**
 * The key a provider is called with for an account, or undefined when none may be. A stored key
 * that cannot be opened (the master key unset, or not the one it was sealed with) is not replaced
 * by the platform's: the account stored its own to pay only the gateway's fee, and would be
 * charged the whole cost without being told.
 */
export function providerKeyFor(
  provider: Pick<ProviderConfig, 'id' | 'apiKey'>,
  own: OwnProviderKeys,
): string | undefined {
  const stored = own.get(provider.id)
  return stored === undefined ? provider.apiKey : (stored ?? undefined)
}
