// Routing profiles: the names clients put in `model`, and how each ranks its candidates.
import type { RoutingMode } from '../config/schema'
import { ownEntry } from '../lib/own-entry'

export const profileNames: Record<string, RoutingMode> = {
  'svc-pro': 'pro',
  'svc-max': 'max',
  'svc-ultra-saver': 'ultra_saver',
}

export const profileDescriptions: Record<RoutingMode, string> = {
  max: 'best quality available; price breaks ties',
  pro: 'best quality per cost',
  ultra_saver: 'cheapest model above a quality floor',
}

export const routingModeOf = (profile: string): RoutingMode | undefined => ownEntry(profileNames, profile)
