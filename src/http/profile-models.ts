// The routing profiles as models: the one list both surfaces' models routes render, each in its
// own vendor's shape (Anthropic's on /compat-a, OpenAI's on /compat-b).
import type { Config } from '../config/load'
import type { RoutingMode } from '../config/schema'
import { GatewayError } from '../lib/errors'
import { profileDescriptions, profileNames } from '../router/profiles'
import type { OwnProviderKeys } from '../router/provider-key'
import { profileSkipReason } from '../router/rank'

/** When the profiles were introduced: both vendors' model objects carry a creation time. */
export const profilesCreatedAt = '2026-11-01T00:00:00Z'

/**
 * The most a profile's models take for one account: the largest context window and the largest
 * output among those it can route that account to (a key for the provider, the platform's or the
 * account's own; a known price; not retired; at or above the profile's quality floor: the
 * ranking's own rule, rank.ts profileSkipReason). A prompt over the window is refused, so an agent
 * told it compacts in time (`svc claude`, `svc codex` pass it on); neither agent knows a
 * profile's name, and each assumes a window of its own. Null with no model.
 */
export interface ProfileLimits {
  contextWindow: number | null
  maxOutputTokens: number | null
}

function profileLimits(config: Config, mode: RoutingMode, ownKeys: OwnProviderKeys, now: number): ProfileLimits {
  let contextWindow: number | null = null
  let maxOutputTokens: number | null = null
  const reach = { byokProviders: ownKeys, policy: config.profiles[mode], now }
  for (const model of config.models) {
    const provider = config.providers[model.provider]
    if (!model.profiles.includes(mode) || !provider || profileSkipReason(model, provider, reach)) continue
    contextWindow = Math.max(contextWindow ?? 0, model.contextWindow)
    maxOutputTokens = Math.max(maxOutputTokens ?? 0, model.maxOutputTokens)
  }
  return { contextWindow, maxOutputTokens }
}

export interface ProfileModel extends ProfileLimits {
  id: string
  description: string
}

/**
 * Every profile with what it can take today for an account holding `ownKeys`. A handful of
 * models: computed per call, so config, keys and time are current.
 */
export const profileModelsOf = (config: Config, ownKeys: OwnProviderKeys, now: number): ProfileModel[] =>
  Object.entries(profileNames).map(([id, mode]) => ({
    id,
    description: profileDescriptions[mode],
    ...profileLimits(config, mode, ownKeys, now),
  }))

/** The model named `id`, or a 404 (in the surface's error shape) naming the ones there are. */
export function findProfileModel<T extends { id: string }>(models: T[], id: string): T {
  const model = models.find((m) => m.id === id)
  if (!model) {
    throw new GatewayError('not_found', `no model ${id}: the models are ${Object.keys(profileNames).join(', ')}`)
  }
  return model
}
