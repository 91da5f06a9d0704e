// count_tokens: asked of an Anthropic upstream of the profile when there is one (its count is
// exact for Claude), else counted with a real tokenizer. Never a made-up zero: Claude Code
// decides when to compact from this number.
import type { Principal } from '../accounts/api-keys'
import type { ProviderConfig } from '../config/load'
import type { Deps } from '../deps'
import { creditPosition } from '../ledger/credit'
import { invalidRequest } from '../lib/errors'
import { decodeAnthropicRequest } from '../protocols/anthropic/decode-anthropic-request'
import { withoutForeignHistory } from '../protocols/anthropic/foreign-history'
import { fitToModel } from '../protocols/anthropic/model-fit'
import { isObject } from '../protocols/wire-values'
import { readAnswerText } from '../providers/bounded-body'
import { codecs } from '../providers/codecs'
import { estimateRequestTokens } from '../router/count-tokens'
import { profileNames, routingModeOf } from '../router/profiles'
import { profileSkipReason } from '../router/rank'
import { providerKeyFor } from '../router/provider-key'
import { isCredibleCount } from './credible-usage'
import { withoutSessionMetadata } from './session'

export async function countTokens(
  deps: Deps,
  input: { body: Record<string, unknown>; headers: Headers; principal: Principal },
): Promise<{ input_tokens: number }> {
  const mode = routingModeOf(String(input.body.model))
  if (!mode) {
    throw invalidRequest(`model must be a routing profile, one of ${Object.keys(profileNames).join(', ')}`, 'model')
  }
  const [byok, grants] = await Promise.all([
    deps.byok.get(input.principal.accountId),
    deps.credit.get(input.principal.accountId),
  ])
  const now = deps.clock()
  // Anthropic counts for free, but on the key's rate limit: an account with no credit left, which
  // could send none of the requests the count is for, is counted locally, not on the platform's key.
  const hasCredit = creditPosition(grants, now).remainingNanos > 0
  const mayAsk = (provider: ProviderConfig) => hasCredit || byok.has(provider.id)
  // A model routing could send the request to (the ranking's own rule: a key, a price, not retired,
  // above the profile's floor), so the count is that model family's.
  const reach = { byokProviders: byok, policy: deps.config.profiles[mode], now }
  const anthropicModel = deps.config.models.find((m) => {
    const provider = deps.config.providers[m.provider]
    return (
      m.profiles.includes(mode) &&
      provider?.kind === 'anthropic' &&
      profileSkipReason(m, provider, reach) === undefined &&
      mayAsk(provider)
    )
  })
  if (anthropicModel) {
    const provider = deps.config.providers[anthropicModel.provider]!
    try {
      const response = await deps.fetch(`${provider.baseUrl}/v1/messages/count_tokens`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...codecs.anthropic.authHeaders(providerKeyFor(provider, byok)!),
          ...(input.headers.get('anthropic-beta') ? { 'anthropic-beta': input.headers.get('anthropic-beta')! } : {}),
        },
        // Fitted as a request to the model is: count_tokens refuses what messages refuses.
        body: JSON.stringify(
          fitToModel(
            withoutForeignHistory(
              withoutSessionMetadata({ ...input.body, model: anthropicModel.upstreamModel }),
              provider,
              anthropicModel.capabilities,
            ),
            anthropicModel.capabilities,
          ),
        ),
        signal: AbortSignal.timeout(deps.config.routing.firstByteTimeoutMs),
        // As for the model call (call-upstream.ts): fetch, used with a proxy, would follow a
        // redirect with the key and the prompt to wherever it points. A 3xx counts locally.
        redirect: 'manual',
      })
      if (!response.ok) await response.body?.cancel().catch(() => {})
      const json: unknown = response.ok ? JSON.parse(await readAnswerText(response)) : undefined
      // Claude Code compacts by this number: a count no count can be is no answer (credible-usage.ts),
      // nor is 0, which Claude never says (it counts a message's framing) and a compatible stub does.
      if (isObject(json) && isCredibleCount(json.input_tokens) && json.input_tokens > 0)
        return { input_tokens: json.input_tokens }
      deps.log.warn('count_tokens upstream failed; counting locally', { status: response.status })
    } catch (err) {
      deps.log.warn('count_tokens upstream unreachable; counting locally', { error: String(err) })
    }
  }
  const exchange = decodeAnthropicRequest({ ...input.body, max_tokens: 1 })
  // Bounded as the routing's count is: a whole count of a 2.5 MB conversation froze every
  // stream for 280 ms (an audit).
  return { input_tokens: estimateRequestTokens(exchange) }
}
