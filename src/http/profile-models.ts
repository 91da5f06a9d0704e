// The routing profiles as models: the one list both surfaces' models routes render, each in its
// own vendor's shape (Anthropic's on /compat-a, OpenAI's on /compat-b).
import { GatewayError } from '../lib/errors'
import { profileDescriptions, profileNames } from '../router/profiles'

/** When the profiles were introduced: both vendors' model objects carry a creation time. */
export const profilesCreatedAt = '2026-11-01T00:00:00Z'

export const profileModelSources = Object.entries(profileNames).map(([id, mode]) => ({
  id,
  description: profileDescriptions[mode],
}))

/** The model named `id`, or a 404 (in the surface's error shape) naming the ones there are. */
export function findProfileModel<T extends { id: string }>(models: T[], id: string): T {
  const model = models.find((m) => m.id === id)
  if (!model) {
    throw new GatewayError('not_found', `no model ${id}: the models are ${Object.keys(profileNames).join(', ')}`)
  }
  return model
}
