// A Responses body as the OpenAI model it goes to takes it: what a reasoning model refuses with a
// 400 (sampling parameters; an effort outside its list, Codex's `minimal` on the GPT-6 generation,
// its `none` on GPT-5 mini) becomes what it takes. The encoder's output and a client's
// pass-through body both end here.
import { effortWithin, effortWithoutThinking, isReasoningEffort } from '../../exchange/thinking-budget'
import type { ModelEffort } from '../../exchange/types'
import { isObject } from '../wire-values'

/** The catalog's capabilities that bear on a Responses body. */
export interface ResponsesModelRules {
  /** false: temperature and top_p are left out. */
  samplingParameters?: boolean
  /** The efforts the model takes (absent: any; empty: none, and the effort is left out). */
  reasoningEfforts?: readonly ModelEffort[]
}

/** Fits `body` in place: each caller holds its own copy of what it sends. */
export function fitResponsesToModel(body: Record<string, unknown>, rules: ResponsesModelRules): void {
  if (rules.samplingParameters === false) {
    delete body.temperature
    delete body.top_p
  }
  const reasoning = body.reasoning
  if (!rules.reasoningEfforts || !isObject(reasoning)) return
  const { effort } = reasoning
  let within: string | undefined
  if (effort === 'none') within = effortWithoutThinking(rules.reasoningEfforts)
  else if (isReasoningEffort(effort)) within = effortWithin(effort, rules.reasoningEfforts)
  else return
  if (within === effort) return
  const { effort: _asked, ...rest } = reasoning
  body.reasoning = within === undefined ? rest : { ...rest, effort: within }
}
