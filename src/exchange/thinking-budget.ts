// Thinking as a token budget (Anthropic's older form) and as an effort (Anthropic's adaptive
// thinking, OpenAI's reasoning effort): the two tables every crossing between them uses.
import type { ModelEffort, ReasoningEffort } from './types'

// An effort as a budget (wire-formats §4.8: litellm's low 1024, medium 2048, high 4096); the efforts
// above high get high's, the largest step the table knows.
const effortBudgets: Record<ReasoningEffort, number> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 4096,
  xhigh: 4096,
  max: 4096,
}

/**
 * The thinking budget for an effort, medium's when there is none or it is not one we know (a
 * pass-through body's raw value: own keys only, so "constructor" does not reach the prototype).
 */
export const budgetForEffort = (effort: unknown): number =>
  typeof effort === 'string' && Object.hasOwn(effortBudgets, effort)
    ? effortBudgets[effort as ReasoningEffort]
    : effortBudgets.medium

/** A budget as an effort, by claude-code-router's thresholds (≤1024 low, ≤8192 medium, else high). */
export function effortForBudget(budgetTokens: number): 'low' | 'medium' | 'high' {
  if (budgetTokens <= 1024) return 'low'
  if (budgetTokens <= 8192) return 'medium'
  return 'high'
}

/**
 * The budget counts toward max_tokens and must stay below it: keep the caller's answer allowance on
 * top. The model's own output limit may cut this back (model-fit.ts, the budget then goes under it).
 */
export const maxTokensAbove = (budget: number, maxTokens: number): number =>
  maxTokens <= budget ? budget + maxTokens : maxTokens

/** Anthropic's least thinking budget: a smaller one is refused with a 400. */
export const minThinkingBudget = 1024

/** A client's budget as svc sends it: whole, and at least the least Anthropic takes. */
export const budgetAsSent = (budgetTokens: number): number => Math.max(minThinkingBudget, Math.floor(budgetTokens))

/**
 * A thinking budget under max_tokens, as Anthropic requires (a 400, "`max_tokens` must be greater
 * than `thinking.budget_tokens`"): as asked when it fits, else max_tokens − 1; undefined where
 * that is below the least budget, and the model answers without thinking.
 */
export function budgetUnder(budget: number, maxTokens: number): number | undefined {
  if (budget < maxTokens) return budget
  return maxTokens - 1 >= minThinkingBudget ? maxTokens - 1 : undefined
}

const effortOrder: readonly ReasoningEffort[] = ['minimal', 'low', 'medium', 'high', 'xhigh', 'max']

/** A raw value (a pass-through body's) that is one of the efforts svc knows. */
export const isReasoningEffort = (value: unknown): value is ReasoningEffort =>
  typeof value === 'string' && effortOrder.includes(value as ReasoningEffort)

/**
 * The effort a model takes nearest to the one asked for: the highest it takes at or below it, else
 * the lowest above. A model answers one outside its list with a 400 (GPT-5.1 refuses `xhigh` and
 * `max`, which Claude Code sends; the GPT-6 generation `minimal`). No list: any effort, as sent.
 * An empty list: the model takes no effort parameter at all (Claude's 4.5 generation), undefined.
 */
export function effortWithin(
  effort: ReasoningEffort,
  supported: readonly ModelEffort[] | undefined,
): ReasoningEffort | undefined {
  if (!supported || supported.includes(effort)) return effort
  // `none` is no reasoning, never the nearest to some: it answers a request for none only.
  const ranked = supported
    .filter((e): e is ReasoningEffort => e !== 'none')
    .sort((a, b) => effortOrder.indexOf(a) - effortOrder.indexOf(b))
  if (ranked.length === 0) return undefined
  const rank = effortOrder.indexOf(effort)
  return ranked.findLast((e) => effortOrder.indexOf(e) <= rank) ?? ranked[0]!
}

/**
 * The effort that asks a model not to reason (the client turned thinking off): OpenAI's `none`
 * where the model takes it, else `minimal`, the least there is (GPT-5 mini and nano). Else
 * undefined, and the model reasons at its default: it takes neither, or its list is unknown and
 * either could be refused (a provider with DeepSeek's thinking toggle is told in its own field).
 */
export function effortWithoutThinking(supported: readonly ModelEffort[] | undefined): 'none' | 'minimal' | undefined {
  if (supported?.includes('none')) return 'none'
  if (supported?.includes('minimal')) return 'minimal'
  return undefined
}
