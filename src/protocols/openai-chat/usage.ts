// Chat Completions usage → exchange Usage. Chat's prompt_tokens includes cache reads and
// writes; the exchange (Anthropic semantics) keeps them apart (openAIUsage).

import type { Usage } from '../../exchange/types'
import { openAIUsage } from '../openai-common'
import { markUnreported } from '../unreported-usage'
import { isObject, readNumber, readObject } from '../wire-values'

/** A usage object's counts; no object (or counts that are not numbers) is an unreported usage. */
export function chatUsage(u: unknown): Usage {
  if (!isObject(u)) return markUnreported({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 })
  const promptDetails = readObject(u, 'prompt_tokens_details')
  const completionDetails = readObject(u, 'completion_tokens_details')
  // DeepSeek reports prompt_cache_hit_tokens, sometimes beside a zero cached_tokens; Moonshot
  // cached_tokens beside prompt_tokens, with no details.
  const cacheRead = firstPositive(
    promptDetails && readNumber(promptDetails, 'cached_tokens'),
    readNumber(u, 'prompt_cache_hit_tokens'),
    readNumber(u, 'cached_tokens'),
  )
  const prompt = readNumber(u, 'prompt_tokens')
  const completion = readNumber(u, 'completion_tokens')
  const reasoning = (completionDetails && readNumber(completionDetails, 'reasoning_tokens')) ?? 0
  return openAIUsage({
    prompt,
    cacheRead,
    cacheWrite: firstPositive(promptDetails && readNumber(promptDetails, 'cache_write_tokens')),
    output:
      completion !== undefined && leavesOutReasoning(u, prompt, completion, reasoning)
        ? completion + reasoning
        : completion,
    reasoning,
  })
}

/**
 * OpenAI counts reasoning inside completion_tokens; bridges from Gemini's own API (which counts its
 * thoughts apart) may count only the visible answer there, the thoughts in reasoning_tokens and in
 * total_tokens. Gemini bills thoughts as output: so does svc, where the counts say they were left
 * out (the total is prompt + completion + reasoning, or the reasoning exceeds the completion).
 */
function leavesOutReasoning(
  u: Record<string, unknown>,
  prompt: number | undefined,
  completion: number,
  reasoning: number,
) {
  if (reasoning <= 0) return false
  if (reasoning > completion) return true
  const total = readNumber(u, 'total_tokens')
  return prompt !== undefined && total === prompt + completion + reasoning
}

const firstPositive = (...values: (number | undefined)[]): number => values.find((v) => v !== undefined && v > 0) ?? 0
