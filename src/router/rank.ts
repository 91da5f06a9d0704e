// Ranking: which concrete models may serve this request under this profile, best first, and a
// record of every candidate considered (provider_ranks) so a user can read why.
import { type CatalogModel, isRetired, isRoutedClaude, type ProviderConfig } from '../config/load'
import type { RoutingMode } from '../config/schema'
import { applicableCreditNanos, type ChargeScope, type GrantState } from '../ledger/credit'
import { hourCacheWriteNanos, type TokenPrices, tokenPricesFor } from '../ledger/pricing'
import { budgetUnder, maxTokensAbove, minThinkingBudget } from '../exchange/thinking-budget'
import { thinkingFormFor } from '../protocols/anthropic/model-fit'
import type { ExclusiveTool, RequestFeatures } from './features'
import { type HealthView, keyOwnerOf } from './health'
import { nudgeKey } from './nudges'
import { type OwnProviderKeys, providerKeyFor } from './provider-key'

/**
 * Scores, higher is better, in "quality points" so feedback nudges and weights read alike:
 * - max:         quality − priceWeight × log2(1 + blended)   (priceWeight 0: price only breaks ties)
 * - pro:         quality − priceWeight × log2(1 + blended)   (priceWeight 8)
 * - ultra_saver: − priceWeight × log2(1 + blended)            (priceWeight 10; quality only as a floor)
 * where blended = (3 × input + output) / 4 in USD per Mtok, and every mode skips models below
 * qualityFloor. Both knobs are set per profile in svc.toml ([profiles.pro] price_weight = 8).
 */
export interface RankPolicy {
  priceWeight: number
  qualityFloor: number
}

export interface Candidate {
  model: CatalogModel
  provider: ProviderConfig
  byok: boolean
  /** max_tokens to send: the request's, clamped to the model's max output. */
  maxTokens: number
  score: number
  estimatedCostNanos: number
  /**
   * The most it can cost: the estimated prompt and the whole max_tokens. What a request holds on
   * the credit while it runs (credit-hold-policy.ts): holding the 1,000-token estimate let many
   * long answers started at once spend many times a small grant.
   */
  mostCostNanos: number
  /** The request's estimated prompt, which `mostCostNanos` holds (features.ts). */
  promptTokens: number
  /** The thinking budget this model is sent above max_tokens, if any (thinkingBudgetAbove). */
  thinkingBudgetAbove: number | undefined
  /** The request marks a cache for an hour: its prompt may be written at the 1-hour price. */
  hourCacheWrites: boolean
  /** The searches a message of it may run as its holds count them: the request's, if it runs the search; else 0. */
  searchesAtMost: number
  rank: RankEntry
}

/**
 * The most one upstream message can cost: its prompt, all at the dearest price a prompt token can
 * be billed at, its whole output limit and every search it may run, at the prices of `now` (the
 * prompt's tier, peak hours). A prompt token costs most as a cache write: 1.25 × input on Claude,
 * written wherever the client or svc marks a breakpoint, and 2 × where a mark asks for an hour
 * (`hourWrites`; an audit: 60 requests at once of a 10,000-token prompt marked for an hour, each
 * held at the input price, spent twice a grant the holds kept within one request's cost). The
 * models that write no cache price writes at the input price (models.ts).
 */
export function mostLegCostNanos(
  model: CatalogModel,
  prompt: { tokens: number; hourWrites: boolean },
  outputTokens: number,
  searches: number,
  now: number,
): number {
  const price = model.price!
  const promptTokens = prompt.tokens
  const tokens = tokenPricesFor(price, promptTokens, now)
  const writeNanosPerToken = prompt.hourWrites ? hourCacheWriteNanos(price, tokens) : tokens.cacheWriteNanosPerToken
  const promptNanosPerToken = Math.max(tokens.inputNanosPerToken, writeNanosPerToken)
  return (
    promptTokens * promptNanosPerToken + outputTokens * tokens.outputNanosPerToken + searches * price.webSearchNanos
  )
}

/**
 * The most the candidate's leg can cost if it starts at `now`: its `mostCostNanos` at that time's
 * prices. A fallback that starts in the provider's peak hours is charged at their prices, though
 * the request was ranked before them.
 */
export const candidateCostAtMost = (
  c: Pick<
    Candidate,
    'model' | 'promptTokens' | 'hourCacheWrites' | 'thinkingBudgetAbove' | 'maxTokens' | 'searchesAtMost'
  >,
  now: number,
): number =>
  mostLegCostNanos(
    c.model,
    { tokens: c.promptTokens, hourWrites: c.hourCacheWrites },
    outputTokensAtMost(c.model, c.thinkingBudgetAbove, c.maxTokens),
    c.searchesAtMost,
    now,
  )

/**
 * The most output a message of `model` may bill, asked for `maxTokens`: with a thinking budget sent
 * above them, both, within the model's output limit (model-fit.ts clamps max_tokens to it).
 */
export const outputTokensAtMost = (model: CatalogModel, thinkingBudget: number | undefined, maxTokens: number) =>
  thinkingBudget === undefined ? maxTokens : Math.min(model.maxOutputTokens, maxTokensAbove(thinkingBudget, maxTokens))

/**
 * The thinking budget svc sends this model above the answer's max_tokens, if any. Anthropic counts
 * thinking within max_tokens and wants max_tokens above the budget, so the encoders raise it where
 * the model is sent a budget (encode-anthropic-request.ts, model-fit.ts; a routed Claude's
 * `reasoning`, encode-chat-request.ts). OpenAI counts reasoning within max_output_tokens. Holding
 * only max_tokens, 20 requests at once of 16 tokens with high effort, each answered with 4,100,
 * spent 600 × a 0.002 USD grant (an audit).
 */
function thinkingBudgetAbove(
  features: RequestFeatures,
  model: CatalogModel,
  provider: ProviderConfig,
): number | undefined {
  // The encoders send thinking whatever the catalog row's `thinking` says (it defaults to false
  // for a row of the operator's own): so is it held. A forced tool choice goes without it to
  // Anthropic (encode-anthropic-request.ts canThink), which refuses the two together.
  const asked = features.thinkingBudget
  if (asked === undefined) return undefined
  if (provider.kind === 'anthropic')
    return !features.forcedToolChoice && thinkingFormFor(asked.form, model.capabilities) === 'enabled'
      ? asked.tokens
      : undefined
  const routedClaudeBudget = provider.kind === 'openai-chat' && provider.anthropicCacheControl && isRoutedClaude(model)
  return routedClaudeBudget && asked.form === 'enabled' ? asked.tokens : undefined
}

export interface RankEntry {
  model_id: string
  provider_id: string
  upstream_model: string
  score: number | null
  estimated_cost_nanos: number | null
  byok: boolean
  quality: number
  /** Points this account's feedback added to (or took from) the score. */
  nudge: number
  health: HealthView
  /** candidate → chosen | failed | not_tried after dispatch; skipped never dispatched. */
  status: 'candidate' | 'chosen' | 'failed' | 'aborted' | 'not_tried' | 'skipped'
  reason: string
}

export interface RankInput {
  accountId: string
  mode: RoutingMode
  features: RequestFeatures
  models: readonly CatalogModel[]
  providers: Readonly<Record<string, ProviderConfig>>
  /**
   * The account's own provider keys (BYOK): the relay hands its key map as it is, rather than
   * building a Set of its keys per request.
   */
  byokProviders: OwnProviderKeys
  /** The grants as the quota gate sees them: less what the account's requests in flight hold. */
  grants: readonly GrantState[]
  /**
   * The same grants before those holds: a model whose credit the holds take is skipped as held
   * (the client is told to retry), not as uncovered. Absent: nothing is held.
   */
  grantsBeforeHolds?: readonly GrantState[]
  byokFeePercent: number
  now: number
  policy: RankPolicy
  /** Feedback nudges by nudgeKey(mode, model). */
  nudges?: ReadonlyMap<string, number>
  /** `keyOwner` is set where the account's own key would serve (BYOK): its health is its own. */
  health?: (providerId: string, modelId: string, keyOwner?: string) => HealthView
  /**
   * The thinking budget of a Messages body (thinking `enabled`), which an Anthropic model that
   * takes budgets is sent as the client wrote it: noted where it goes lower, under the candidate's
   * max_tokens, or off, with no room for the least budget (model-fit.ts).
   */
  messagesThinkingBudget?: number
  /** The model and provider that served this session last under this mode: kept while healthy and eligible. */
  sticky?: { modelId: string; providerId: string }
}

export interface Ranking {
  candidates: Candidate[]
  ranks: RankEntry[]
  /** True when some model could serve but no credit applies: the gate answers 402, not 503. */
  blockedByCredit: boolean
  /** True when nothing can serve only because the account's requests in flight hold its credit (a 429). */
  blockedByHeldCredit: boolean
  /**
   * True when nothing can serve and some model was passed over only because the request names
   * files in Anthropic's store: the request, not the gateway, is what cannot be served (a 400).
   */
  blockedByFiles: boolean
  /**
   * Set when nothing can serve and some model was passed over only because the request offers a
   * tool only one provider's API has: that tool, for the client's 400.
   */
  blockedByExclusiveTool: ExclusiveTool | undefined
  /**
   * Set when nothing can serve because the prompt fits no model's context window (every model
   * that got as far as that check was passed over by it): the one with the largest window, for
   * the client's own "too long" error, on which agents compact the conversation.
   */
  contextExceeded?: ContextOverflow
}

export interface ContextOverflow {
  inputTokens: number
  outputTokens: number
  contextWindow: number
}

/**
 * Typical agent traffic is input-heavy: three input tokens for each output token. At the prices the
 * request would pay (a long prompt's tier, the provider's peak hours).
 */
const blendedUsdPerMtok = (prices: TokenPrices) =>
  (3 * prices.inputNanosPerToken + prices.outputNanosPerToken) / 4 / 1000

/**
 * The output a model is asked for. A client's own limit stands (capped at the model's): Anthropic
 * refuses a prompt and max_tokens over the window, and an agent that sets one, as Claude Code does,
 * compacts by it. A request without one (Codex sends none) gets what room the window leaves the
 * prompt, so that a long conversation is not turned away while most of the window is free: at most
 * the model's own limit, at least enough for an answer. The prompt's size is an estimate, so 5 %
 * of the window is kept back.
 */
function outputFor(features: RequestFeatures, model: CatalogModel): number {
  const ceiling = Math.min(features.maxTokens, model.maxOutputTokens)
  if (!features.openOutput) return ceiling
  const room = Math.floor(model.contextWindow * (1 - estimateMargin)) - features.estimatedInputTokens
  return Math.min(ceiling, Math.max(room, minimumOpenOutput))
}
const estimateMargin = 0.05
export const minimumOpenOutput = 8192

/** The output the estimate assumes: the request's max_tokens, capped at a typical 1,000-token answer. */
const expectedOutputTokens = (maxTokens: number) => Math.min(maxTokens, 1000)

function scoreOf(mode: RoutingMode, quality: number, prices: TokenPrices, policy: RankPolicy): number {
  const pricePenalty = policy.priceWeight * Math.log2(1 + blendedUsdPerMtok(prices))
  return mode === 'ultra_saver' ? -pricePenalty : quality - pricePenalty
}

/** Why no credit serves the model: none applies, or what applies is held by the account's requests in flight. */
function creditSkipReason(byok: boolean, held: boolean): string {
  const what = byok ? 'the BYOK fee for this model' : 'this model'
  if (held)
    return `the credit that applies to ${what} is held by this account's requests in flight (retry when they finish)`
  return byok ? `no credit applies to ${what}` : `no credit applies to ${what} (grant scopes or expiry)`
}

/** What becomes of a Messages body's thinking budget beside the max_tokens this model is sent (model-fit.ts). */
function budgetNotes(budget: number, maxTokens: number, model: CatalogModel): string[] {
  if (model.capabilities.budgetThinking === false) return []
  const fitted = budgetUnder(budget, maxTokens)
  if (fitted === budget) return []
  return [
    fitted === undefined
      ? `thinking off: max_tokens ${maxTokens} leaves no room for the least thinking budget, ${minThinkingBudget}`
      : `thinking budget lowered from ${budget} to ${fitted}, under max_tokens`,
  ]
}

const closedHealth: HealthView = { state: 'closed', ttfb_ms: null, error_rate: 0 }
const isHealthy = (h: HealthView) => h.state === 'closed' || h.state === 'half_open'

const round2 = (n: number) => Math.round(n * 100) / 100

/** Anthropic's own API (`anthropic_signatures`), not a server that speaks its dialect (DeepSeek's, Kimi's). */
const isAnthropicItself = (provider: ProviderConfig): boolean =>
  provider.kind === 'anthropic' && provider.anthropicSignatures !== false

/**
 * Whether the provider runs a tool only its API has: Anthropic itself for Anthropic's, OpenAI itself
 * for OpenAI's. A server that speaks the dialect does not: DeepSeek's `/anthropic` documents
 * `mcp_servers` as ignored, and a Responses-compatible server takes functions only.
 */
const runsExclusiveTool = (provider: ProviderConfig, tool: ExclusiveTool): boolean =>
  tool.of === 'Anthropic'
    ? isAnthropicItself(provider)
    : provider.kind === 'openai-responses' && provider.openaiItself !== false

export const exclusiveToolServers: Record<ExclusiveTool['of'], string> = {
  Anthropic: 'Anthropic itself',
  OpenAI: 'OpenAI itself',
}

type SearchNeed = NonNullable<RequestFeatures['webSearch']>

/**
 * How fully a provider runs the web search a request offers (the search runs inside the provider):
 * 2 as asked, 1 without the domains it blocks (OpenAI cannot exclude any), 0 not at all (Chat, and
 * Responses-compatible servers: the search is OpenAI's own).
 */
const searchFit = (provider: ProviderConfig, need: SearchNeed) => {
  if (provider.kind === 'anthropic') return 2
  if (provider.kind === 'openai-responses' && provider.openaiItself !== false) return need === 'any' ? 2 : 1
  return 0
}

/**
 * The searches a message of a candidate may run, as its credit hold counts them. Anthropic's
 * `max_uses` where the client set one, else ten, where Anthropic pauses its loop; a search deferred
 * behind a tool search too, which Anthropic loads and runs once the model looks for it. OpenAI takes no
 * limit (max_uses is left out there): ten is what svc holds for its searches, live or limited to
 * its cache, which only OpenAI itself runs. A provider without the search runs none.
 */
const searchesHeld = (provider: ProviderConfig, features: RequestFeatures): number => {
  if ((features.webSearch || features.deferredWebSearch) && provider.kind === 'anthropic')
    return features.searchLimit ?? 10
  const openaiItself = provider.kind === 'openai-responses' && provider.openaiItself !== false
  return openaiItself && (features.webSearch || features.cachedWebSearch) ? 10 : 0
}

const searchSkipReason = [
  'request offers web search; this provider has none (an Anthropic model or OpenAI itself serves it)',
  'request offers web search with blocked domains, which only an Anthropic provider can exclude',
]
const searchNote = [
  'web search offered; no model that could serve it runs one, so this one answers without searching',
  'web search offered with blocked domains; no Anthropic model could serve it, so this one searches without excluding them',
]

/**
 * A request offering web search goes to the candidates that run it most fully. Where none runs it
 * as asked, the best there is serves, with a note, rather than a 503: Codex offers a search on
 * every request, and a profile of Chat models must still serve Codex.
 */
function keepBestSearchers(eligible: Candidate[], skipped: RankEntry[], need: SearchNeed): void {
  keepBestFits(eligible, skipped, (c) => searchFit(c.provider, need), searchSkipReason, searchNote)
}

/**
 * Claude Code's auto and plan modes ask Anthropic's API to judge each tool call the model makes
 * (`safeguards` in, `safeguard_results` out): without a verdict Claude Code refuses the action and
 * blames the gateway (an audit: every action refused, exit 1, on a Chat or Responses model). Only
 * Anthropic itself judges, so such a request goes to Anthropic's models where the profile has one;
 * where it has none, the best there is serves, with a note.
 */
function keepSafeguardJudges(eligible: Candidate[], skipped: RankEntry[]): void {
  keepBestFits(
    eligible,
    skipped,
    (c) => (isAnthropicItself(c.provider) ? 1 : 0),
    ['request asks Anthropic to judge its tool calls (Claude Code’s safeguards), which only Anthropic does'],
    [
      'Claude Code’s safeguards asked; no Anthropic model could serve it, so Claude Code gets no verdicts and refuses the actions',
    ],
  )
}

/**
 * Keeps the candidates that fit a need best (`fit`: 0 not at all, up to the top of `notes`); the
 * others are skipped with `skipReasons[fit]`, and those kept below a full fit carry `notes[fit]`.
 */
function keepBestFits(
  eligible: Candidate[],
  skipped: RankEntry[],
  fitOf: (candidate: Candidate) => number,
  skipReasons: readonly string[],
  notes: readonly string[],
): void {
  const fits = eligible.map(fitOf)
  const best = Math.max(...fits)
  for (let i = eligible.length - 1; i >= 0; i--) {
    const { rank } = eligible[i]!
    const fit = fits[i]!
    if (fit === best) {
      if (fit < notes.length) rank.reason += `; ${notes[fit]}`
      continue
    }
    eligible.splice(i, 1)
    Object.assign(rank, { status: 'skipped', score: null, estimated_cost_nanos: null, reason: skipReasons[fit] })
    skipped.unshift(rank)
  }
}

/** What decides, request aside, whether a model of a profile can serve an account. */
export type ProfileReach = Pick<RankInput, 'byokProviders' | 'policy' | 'now'>

/**
 * Why a model of the profile cannot serve this account whatever the request asks, or undefined
 * when it can: no key, no price, retired, below the profile's floor. The ranking skips the model
 * for it, and the models routes leave it out of the profile's limits (http/profile-models.ts), so
 * that a window they advertise is one a request can get.
 */
export function profileSkipReason(
  model: CatalogModel,
  provider: ProviderConfig,
  reach: ProfileReach,
): string | undefined {
  if (!providerKeyFor(provider, reach.byokProviders)) {
    return reach.byokProviders.has(provider.id)
      ? 'the account’s own key for this provider cannot be opened (the gateway’s master key is unset or not the one it was sealed with); the platform’s key is not used in its place'
      : 'no key for this provider (neither the platform’s nor the account’s own)'
  }
  if (!model.price) return 'no known price (no price, no route)'
  if (isRetired(model, reach.now))
    return `retired by its provider on ${new Date(model.retiresAt!).toISOString().slice(0, 10)}`
  if (model.quality < reach.policy.qualityFloor) {
    return `quality ${model.quality} is below the profile floor ${reach.policy.qualityFloor}`
  }
  return undefined
}

export function rankCandidates(input: RankInput): Ranking {
  const { features, policy } = input
  const eligible: Candidate[] = []
  const skipped: RankEntry[] = []
  let blockedByCredit = false
  let blockedByHeldCredit = false
  let blockedByFiles = false
  let blockedByExclusiveTool = false
  let largestOverflow: ContextOverflow | undefined
  let someModelFits = false

  for (const model of input.models) {
    if (!model.profiles.includes(input.mode)) continue
    const provider = input.providers[model.provider]
    if (!provider) continue
    const byok = input.byokProviders.has(provider.id)
    const nudge = input.nudges?.get(nudgeKey(input.mode, model.id)) ?? 0
    const entry: RankEntry = {
      model_id: model.id,
      provider_id: provider.id,
      upstream_model: model.upstreamModel,
      score: null,
      estimated_cost_nanos: null,
      byok,
      quality: model.quality,
      nudge,
      health: input.health?.(provider.id, model.id, keyOwnerOf(byok, input.accountId)) ?? closedHealth,
      status: 'skipped',
      reason: '',
    }
    const skip = (reason: string) => {
      entry.reason = reason
      skipped.push(entry)
    }
    const unservable = profileSkipReason(model, provider, input)
    if (unservable) {
      skip(unservable)
      continue
    }
    if (features.tools && !model.capabilities.tools) {
      skip('request uses tools; model does not support them')
      continue
    }
    if (features.images && !model.capabilities.vision) {
      skip('request has images or files; model has no vision')
      continue
    }
    // Newer reasoning models answer both with a 400; the request goes to a model that takes it.
    if (features.forcedToolChoice && model.capabilities.forcedToolChoice === false) {
      skip('request forces a tool call; model refuses forced tool choice')
      continue
    }
    if (
      features.assistantPrefill &&
      model.capabilities.assistantPrefill === false &&
      !(features.continuesPausedTurn && isAnthropicItself(provider))
    ) {
      skip('request ends with an assistant turn to continue (a prefill); model refuses prefills')
      continue
    }
    if (features.endsOnBlankText && provider.kind === 'anthropic') {
      skip('request ends with a user message of blank text, which Anthropic refuses')
      continue
    }
    // Ruled out here rather than refused by the encoder, so that a Claude candidate further down
    // serves. A file id names a file in the workspace of the key that stored it: the account's own
    // (BYOK). With the platform's key it would name a file of the platform's workspace, which no
    // account stored (svc has no files route), or find nothing.
    if (features.anthropicFiles && (provider.kind !== 'anthropic' || !byok)) {
      blockedByFiles = true
      skip(
        provider.kind !== 'anthropic'
          ? 'request names files stored with Anthropic (file_id); only an Anthropic provider can read them'
          : 'request names files stored with Anthropic (file_id); only the account’s own key for this provider (BYOK) reaches its files, never the platform’s',
      )
      continue
    }
    if (features.exclusiveTool && !runsExclusiveTool(provider, features.exclusiveTool)) {
      blockedByExclusiveTool = true
      const { type, of } = features.exclusiveTool
      skip(`request offers ${type}, a tool only ${of}'s API has; only ${exclusiveToolServers[of]} serves it`)
      continue
    }
    if (features.otherFileType && provider.kind !== 'openai-responses') {
      skip(`request has a file of type ${features.otherFileType}; this provider takes PDF and text files only`)
      continue
    }
    const maxTokens = outputFor(features, model)
    if (features.estimatedInputTokens + maxTokens > model.contextWindow) {
      if (!largestOverflow || model.contextWindow > largestOverflow.contextWindow) {
        const inputTokens = features.estimatedInputTokens
        largestOverflow = { inputTokens, outputTokens: maxTokens, contextWindow: model.contextWindow }
      }
      skip(`~${features.estimatedInputTokens} input tokens do not fit the ${model.contextWindow}-token context window`)
      continue
    }
    someModelFits = true
    const costType = byok ? 'byok_fee' : 'model_usage'
    const needsCredit = !(byok && input.byokFeePercent === 0)
    const scope: ChargeScope = {
      routingMode: input.mode,
      modelId: model.id,
      providerId: provider.id,
      costType,
      now: input.now,
    }
    if (needsCredit && applicableCreditNanos(input.grants, scope) <= 0) {
      blockedByCredit = true
      const held = !!input.grantsBeforeHolds && applicableCreditNanos(input.grantsBeforeHolds, scope) > 0
      blockedByHeldCredit ||= held
      skip(creditSkipReason(byok, held))
      continue
    }
    // profileSkipReason passed over every model without a price.
    const tokenPrices = tokenPricesFor(model.price!, features.estimatedInputTokens, input.now)
    const promptCostNanos = features.estimatedInputTokens * tokenPrices.inputNanosPerToken
    const estimatedCostNanos = promptCostNanos + expectedOutputTokens(maxTokens) * tokenPrices.outputNanosPerToken
    const searchesAtMost = searchesHeld(provider, features)
    const budgetAbove = thinkingBudgetAbove(features, model, provider)
    const promptTokens = features.estimatedInputTokens
    const hourCacheWrites = features.hourCacheWrites
    const mostCostNanos = candidateCostAtMost(
      { model, promptTokens, hourCacheWrites, thinkingBudgetAbove: budgetAbove, maxTokens, searchesAtMost },
      input.now,
    )
    const score = scoreOf(input.mode, model.quality, tokenPrices, policy) + nudge
    entry.score = round2(score)
    entry.estimated_cost_nanos = estimatedCostNanos
    entry.status = 'candidate'
    const notes = ['eligible']
    // An open output's ceiling is svc's, not the client's: nothing the client asked for was cut.
    if (maxTokens < features.maxTokens && !features.openOutput) {
      notes.push(`max_tokens clamped from ${features.maxTokens} to ${maxTokens}`)
    }
    if (features.thinking && !model.capabilities.thinking)
      notes.push('thinking requested; this model answers without it')
    else if (input.messagesThinkingBudget !== undefined && provider.kind === 'anthropic')
      notes.push(...budgetNotes(input.messagesThinkingBudget, maxTokens, model))
    if (nudge !== 0) notes.push(`feedback nudge ${nudge > 0 ? '+' : ''}${nudge}`)
    if (!isHealthy(entry.health))
      notes.push(
        `ranked last: circuit ${entry.health.state}${entry.health.until ? ` until ${entry.health.until}` : ''}`,
      )
    entry.reason = notes.join('; ')
    eligible.push({
      model,
      provider,
      byok,
      maxTokens,
      score,
      estimatedCostNanos,
      mostCostNanos,
      promptTokens,
      hourCacheWrites,
      thinkingBudgetAbove: budgetAbove,
      searchesAtMost,
      rank: entry,
    })
  }

  if (features.webSearch) keepBestSearchers(eligible, skipped, features.webSearch)
  if (features.anthropicSafeguards) keepSafeguardJudges(eligible, skipped)

  // Healthy before unhealthy; then higher score; then cheaper; then higher quality; then by id so
  // ties never flap.
  eligible.sort(
    (a, b) =>
      Number(isHealthy(b.rank.health)) - Number(isHealthy(a.rank.health)) ||
      b.score - a.score ||
      a.estimatedCostNanos - b.estimatedCostNanos ||
      b.model.quality - a.model.quality ||
      (a.model.id + a.provider.id).localeCompare(b.model.id + b.provider.id),
  )
  // A session stays on the model that served it (prompt caches and thinking signatures are per
  // model family) while that model is healthy and eligible under this profile.
  const sticky = input.sticky
  const stickyAt = sticky
    ? eligible.findIndex(
        (c) => c.model.id === sticky.modelId && c.provider.id === sticky.providerId && isHealthy(c.rank.health),
      )
    : -1
  if (stickyAt > 0) {
    const [kept] = eligible.splice(stickyAt, 1)
    eligible.unshift(kept!)
  }
  if (stickyAt >= 0) eligible[0]!.rank.reason += '; session sticks to the model that served it'
  // A session that had to leave its model (circuit open, cooling, no longer eligible) for another
  // says so on that model's entry, next to the reason it was passed over; with no other to go to
  // it moved nowhere (the words reached the client's no-model error).
  const left =
    sticky && stickyAt < 0 && eligible.length > 0
      ? [...eligible.map((c) => c.rank), ...skipped].find(
          (e) => e.model_id === sticky.modelId && e.provider_id === sticky.providerId,
        )
      : undefined
  if (left) left.reason += '; session moved off this model'
  return {
    candidates: eligible,
    ranks: [...eligible.map((c) => c.rank), ...skipped],
    blockedByCredit: eligible.length === 0 && blockedByCredit,
    blockedByHeldCredit: eligible.length === 0 && blockedByHeldCredit,
    blockedByFiles: eligible.length === 0 && blockedByFiles,
    blockedByExclusiveTool: eligible.length === 0 && blockedByExclusiveTool ? features.exclusiveTool : undefined,
    ...(eligible.length === 0 && !someModelFits && largestOverflow ? { contextExceeded: largestOverflow } : {}),
  }
}
