// Anthropic stop_reason ↔ exchange StopReason; the only renamed value is the context-window one.

import type { StopReason } from '../../exchange/types'

const known = new Set<string>(['end_turn', 'max_tokens', 'tool_use', 'stop_sequence', 'refusal', 'pause_turn'])

export function decodeAnthropicStopReason(reason: unknown): StopReason {
  if (reason === 'model_context_window_exceeded') return 'context_exceeded'
  // GLM's Anthropic endpoint, as its Chat one (finish-reason.ts): its safety review cut the answer.
  if (reason === 'sensitive') return 'refusal'
  if (typeof reason === 'string' && known.has(reason)) return reason as StopReason
  // null only appears before the end; unknown future values are treated as a natural stop.
  return 'end_turn'
}

/** `error` never reaches here: encoders turn it into an error event instead of a stop reason. */
export function encodeAnthropicStopReason(reason: StopReason): string {
  if (reason === 'context_exceeded') return 'model_context_window_exceeded'
  if (reason === 'error') return 'end_turn'
  return reason
}
