// A Messages body as the Claude model it goes to takes it. Claude generations refuse with a 400
// what others take (a thinking budget, `adaptive`, `disabled`, sampling parameters), and clients
// send the same body whatever model svc routes them to: Claude Code sends adaptive thinking, a
// script its temperature. Both routes end here, a pass-through body as the client wrote it and a
// translated one as the encoder wrote it, so one set of rules serves both.
import { budgetForEffort, effortForBudget, maxTokensAbove } from '../../exchange/thinking-budget'
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
}

// `between_tools` is refused with these efforts: such a request thinks adaptively instead.
const effortsAboveHigh = new Set(['xhigh', 'max'])

/** The body, fitted to the model; the very object when nothing needed changing (the common case). */
export function fitToModel(body: Record<string, unknown>, rules: AnthropicModelRules): Record<string, unknown> {
  const fitted = isObject(body.thinking) ? fitThinking(body, body.thinking, rules) : body
  if (rules.samplingParameters !== false) return fitted
  if (fitted.temperature === undefined && fitted.top_p === undefined && fitted.top_k === undefined) return fitted
  const { temperature: _t, top_p: _p, top_k: _k, ...rest } = fitted
  return rest
}

function fitThinking(
  body: Record<string, unknown>,
  thinking: Record<string, unknown>,
  rules: AnthropicModelRules,
): Record<string, unknown> {
  const { effort, ...otherOutputConfig } = isObject(body.output_config) ? body.output_config : {}
  const withOutputConfig = (out: Record<string, unknown>, config: Record<string, unknown>) => {
    if (Object.keys(config).length > 0) out.output_config = config
    else delete out.output_config
    return out
  }

  if (thinking.type === 'adaptive' && !rules.adaptiveThinking) {
    // The effort's budget; the effort itself would be refused by a model without adaptive thinking.
    const budget = budgetForEffort(effort)
    const out: Record<string, unknown> = {
      ...body,
      thinking: { ...thinking, type: 'enabled', budget_tokens: budget },
      max_tokens: maxTokensAbove(budget, body.max_tokens as number),
    }
    return withOutputConfig(out, otherOutputConfig)
  }
  if (thinking.type === 'enabled' && rules.budgetThinking === false) {
    // Adaptive with the budget's effort, unless the client named one.
    const { budget_tokens: budget, ...rest } = thinking
    const out: Record<string, unknown> = { ...body, thinking: { ...rest, type: 'adaptive' } }
    const chosen = effort ?? (typeof budget === 'number' ? effortForBudget(budget) : undefined)
    return withOutputConfig(out, chosen === undefined ? otherOutputConfig : { ...otherOutputConfig, effort: chosen })
  }
  if (
    thinking.type === 'disabled' &&
    rules.thinkingOff === 'between_tools' &&
    !effortsAboveHigh.has(effort as string)
  ) {
    return { ...body, thinking: { type: 'between_tools' } }
  }
  if (thinking.type === 'disabled' && (rules.thinkingOff ?? 'disabled') !== 'disabled') {
    const { thinking: _off, ...rest } = body
    return rest
  }
  return body
}
