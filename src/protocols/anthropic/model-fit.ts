// A Messages body as the Claude model it goes to takes it. Claude generations refuse with a 400
// what others take (a thinking budget, `adaptive`, `disabled`, sampling parameters), and clients
// send the same body whatever model svc routes them to: Claude Code sends adaptive thinking, a
// script its temperature. Both routes end here, a pass-through body as the client wrote it and a
// translated one as the encoder wrote it, so one set of rules serves both.
import {
  budgetForEffort,
  budgetUnder,
  effortForBudget,
  effortWithin,
  isReasoningEffort,
  maxTokensAbove,
} from '../../exchange/thinking-budget'
import type { ModelEffort } from '../../exchange/types'
import { isObject } from '../wire-values'

/** What the model takes; the fields are the catalog's capabilities (absent: the 4.5 generation's). */
export interface AnthropicModelRules {
  /** Takes `thinking: {type: "adaptive"}` + output_config.effort. Absent: false. */
  adaptiveThinking?: boolean
  /** Takes `thinking: {type: "enabled", budget_tokens}`. Absent: true. */
  budgetThinking?: boolean
  /** How it runs without up-front thinking (schema.ts ThinkingOff). Absent: `disabled`. */
  thinkingOff?: 'disabled' | 'between_tools' | 'unsupported'
  /** Takes temperature, top_p and top_k. Absent: true. */
  samplingParameters?: boolean
  /** The efforts it takes; another goes as the nearest (thinking-budget.ts). Absent: any; empty: none. */
  reasoningEfforts?: readonly ModelEffort[]
}

// `between_tools` is refused with these efforts: such a request thinks adaptively instead.
const effortsAboveHigh = new Set(['xhigh', 'max'])

/**
 * The body, fitted to the model; the very object when nothing needed changing (the common case).
 * `maxOutputTokens`: the most output it gives, where max_tokens raised for a thinking budget stops.
 */
export function fitToModel(
  body: Record<string, unknown>,
  rules: AnthropicModelRules,
  maxOutputTokens?: number,
): Record<string, unknown> {
  const thought = isObject(body.thinking) ? fitBudget(fitThinking(body, body.thinking, rules), maxOutputTokens) : body
  const fitted = rules.reasoningEfforts ? fitEffort(thought, rules.reasoningEfforts) : thought
  if (rules.samplingParameters !== false) return fitted
  if (fitted.temperature === undefined && fitted.top_p === undefined && fitted.top_k === undefined) return fitted
  const { temperature: _t, top_p: _p, top_k: _k, ...rest } = fitted
  return rest
}

/**
 * The form a request's thinking of `type` reaches the model in: adaptive goes as a budget to a
 * model without adaptive thinking, a budget as adaptive to one that takes no budget.
 */
export function thinkingFormFor(type: unknown, rules: AnthropicModelRules): unknown {
  if (type === 'adaptive' && !rules.adaptiveThinking) return 'enabled'
  if (type === 'enabled' && rules.budgetThinking === false) return 'adaptive'
  return type
}

// Each case copies the body only when it applies: most requests already suit their model.
function fitThinking(
  body: Record<string, unknown>,
  thinking: Record<string, unknown>,
  rules: AnthropicModelRules,
): Record<string, unknown> {
  const effort = isObject(body.output_config) ? body.output_config.effort : undefined
  const form = thinkingFormFor(thinking.type, rules)
  if (thinking.type === 'adaptive' && form === 'enabled') {
    // The effort's budget; the effort itself would be refused by a model without adaptive thinking.
    const budget = budgetForEffort(effort)
    return withEffort(
      {
        ...body,
        thinking: { ...thinking, type: 'enabled', budget_tokens: budget },
        max_tokens: maxTokensAbove(budget, body.max_tokens as number),
      },
      undefined,
    )
  }
  if (thinking.type === 'enabled' && form === 'adaptive') {
    // Adaptive with the budget's effort, unless the client named one.
    const { budget_tokens: budget, ...rest } = thinking
    const chosen = effort ?? (typeof budget === 'number' ? effortForBudget(budget) : undefined)
    return withEffort({ ...body, thinking: { ...rest, type: 'adaptive' } }, chosen)
  }
  if (thinking.type !== 'disabled' || (rules.thinkingOff ?? 'disabled') === 'disabled') return body
  if (rules.thinkingOff === 'between_tools' && !effortsAboveHigh.has(effort as string)) {
    return { ...body, thinking: { type: 'between_tools' } }
  }
  const { thinking: _off, ...rest } = body
  return rest
}

/**
 * A thinking budget Anthropic takes beside max_tokens: max_tokens within the model's output (the
 * encoder and an adaptive request's budget raise it over the budget, maybe past the model's
 * limit), and the budget under max_tokens, which clamping to that limit may have left it at or
 * above (a 400 the client could do nothing about). Where not even the least budget fits, this leg
 * goes without thinking; for a Messages body the ranking says which (rank.ts budgetNotes).
 */
function fitBudget(body: Record<string, unknown>, maxOutputTokens: number | undefined): Record<string, unknown> {
  const { thinking, max_tokens: asked } = body
  if (!isObject(thinking) || thinking.type !== 'enabled') return body
  if (typeof thinking.budget_tokens !== 'number' || typeof asked !== 'number') return body
  const maxTokens = Math.min(asked, maxOutputTokens ?? asked)
  const budget = budgetUnder(thinking.budget_tokens, maxTokens)
  if (budget === thinking.budget_tokens && maxTokens === asked) return body
  if (budget === undefined) {
    const { thinking: _off, ...rest } = body
    return { ...rest, max_tokens: maxTokens }
  }
  return { ...body, max_tokens: maxTokens, thinking: { ...thinking, budget_tokens: budget } }
}

/**
 * output_config.effort within the model's efforts, or gone for a model that takes none (the 4.5
 * generation answers any effort with a 400); an effort svc does not know is otherwise left as sent.
 */
function fitEffort(body: Record<string, unknown>, supported: readonly ModelEffort[]): Record<string, unknown> {
  const effort = isObject(body.output_config) ? body.output_config.effort : undefined
  if (effort === undefined) return body
  if (supported.length === 0) return withEffort({ ...body }, undefined)
  if (!isReasoningEffort(effort)) return body
  const within = effortWithin(effort, supported)
  return within === effort ? body : withEffort({ ...body }, within)
}

/** `out` (a copy of the body) with output_config's effort set to `effort`, or removed; its other fields kept. */
function withEffort(out: Record<string, unknown>, effort: unknown): Record<string, unknown> {
  const { effort: _old, ...config } = isObject(out.output_config) ? out.output_config : {}
  const next = effort === undefined ? config : { ...config, effort }
  if (Object.keys(next).length > 0) out.output_config = next
  else delete out.output_config
  return out
}
