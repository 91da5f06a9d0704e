// Feedback closes the loop: each account's recent feedback on a profile nudges the score of the
// model that answered, within ±10 points (about a doubling of price in pro, or ten quality
// points in max). Simple on purpose: a user can read in provider_ranks exactly what moved.
import { ownEntry } from '../lib/own-entry'

export const nudgeLimit = 10
/** The most recent feedback rows an account's nudges are computed from. */
export const nudgeWindow = 200

const reasonPoints: Record<string, number> = {
  stronger_model_needed: -4,
  wrong_model: -4,
  too_expensive: -3,
  too_slow: -2,
  great_value: 3,
}
const ratingPoints: Record<string, number> = { up: 1, down: -1 }

export interface FeedbackSignal {
  routingMode: string
  modelId: string | null
  rating: string | null
  reason: string | null
}

export const nudgeKey = (routingMode: string, modelId: string) => `${routingMode}\u0000${modelId}`

export function computeNudges(signals: readonly FeedbackSignal[]): Map<string, number> {
  const nudges = new Map<string, number>()
  for (const s of signals) {
    if (!s.modelId) continue
    const points =
      (s.reason ? (ownEntry(reasonPoints, s.reason) ?? 0) : 0) +
      (s.rating ? (ownEntry(ratingPoints, s.rating) ?? 0) : 0)
    if (points === 0) continue
    const key = nudgeKey(s.routingMode, s.modelId)
    nudges.set(key, (nudges.get(key) ?? 0) + points)
  }
  for (const [key, value] of nudges) nudges.set(key, Math.max(-nudgeLimit, Math.min(nudgeLimit, value)))
  return nudges
}
