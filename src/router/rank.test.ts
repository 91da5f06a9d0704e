// rankCandidates on hand-built catalogs: each profile's order, every eligibility rule with the
// reason a user reads in provider_ranks, scoped credit, BYOK, stickiness, nudges and health.
import { describe, expect, test } from 'bun:test'
import type { CatalogModel, ProviderConfig } from '../config/load'
import type { RoutingMode } from '../config/schema'
import type { GrantState } from '../ledger/credit'
import type { RequestFeatures } from './features'
import type { HealthView } from './health'
import { computeNudges, type FeedbackSignal, nudgeKey } from './nudges'
import { mostLegCostNanos, type RankInput, type Ranking, rankCandidates } from './rank'

const T0 = Date.parse('2026-11-22T10:00:00.000Z')

/** USD per Mtok → nanos per token is × 1000; cache prices do not enter the ranking. */
const price = (inputUsd: number, outputUsd: number) => ({
  inputNanosPerToken: Math.round(inputUsd * 1000),
  outputNanosPerToken: Math.round(outputUsd * 1000),
  cacheReadNanosPerToken: Math.round(inputUsd * 100),
  cacheWriteNanosPerToken: Math.round(inputUsd * 1250),
  webSearchNanos: 10_000_000,
})

const model = (id: string, over: Partial<CatalogModel> = {}): CatalogModel => ({
  id,
  provider: 'p1',
  upstreamModel: `${id}-up`,
  displayName: id,
  profiles: ['max', 'pro', 'ultra_saver'],
  quality: 80,
  price: price(1, 5),
  contextWindow: 100_000,
  maxOutputTokens: 8_000,
  capabilities: { tools: true, vision: true, thinking: true, promptCaching: true },
  ...over,
})

const provider = (id: string, apiKey: string | undefined): ProviderConfig => ({
  id,
  kind: 'anthropic',
  baseUrl: 'http://127.0.0.1:9',
  apiKey,
  headers: {},
  maxTokensField: 'max_tokens',
  reasoningContent: false,
  thinkingToggle: false,
  systemMessages: 'in_place',
  anthropicCacheControl: false,
})

const providers: Record<string, ProviderConfig> = {
  p1: provider('p1', 'platform-key-p1'),
  p2: provider('p2', 'platform-key-p2'),
  // Configured without a platform key: usable only with the account's own key.
  own: provider('own', undefined),
  chat: { ...provider('chat', 'platform-key-chat'), kind: 'openai-chat' },
  responses: { ...provider('responses', 'platform-key-responses'), kind: 'openai-responses' },
  /** A Responses-compatible server (llama.cpp, vLLM): OpenAI's hosted tools are not there. */
  compatible: { ...provider('compatible', 'platform-key-c'), kind: 'openai-responses', openaiItself: false },
}

const grant = (over: Partial<GrantState> = {}): GrantState => ({
  id: 'g1',
  amountNanos: 1_000_000_000,
  remainingNanos: 1_000_000_000,
  scopeCostType: 'all',
  scopeRoutingModes: null,
  scopeModels: null,
  scopeProviders: null,
  expiresAt: null,
  createdAt: T0,
  ...over,
})

const features = (over: Partial<RequestFeatures> = {}): RequestFeatures => ({
  tools: false,
  images: false,
  anthropicFiles: false,
  otherFileType: undefined,
  exclusiveTool: undefined,
  anthropicSafeguards: false,
  thinking: false,
  thinkingBudget: undefined,
  hourCacheWrites: false,
  forcedToolChoice: false,
  webSearch: undefined,
  deferredWebSearch: false,
  searchLimit: undefined,
  cachedWebSearch: false,
  assistantPrefill: false,
  continuesPausedTurn: false,
  endsOnBlankText: false,
  openOutput: false,
  estimatedInputTokens: 1000,
  maxTokens: 1000,
  ...over,
})

const defaultPolicy: Record<RoutingMode, RankInput['policy']> = {
  max: { priceWeight: 0, qualityFloor: 0 },
  pro: { priceWeight: 8, qualityFloor: 0 },
  ultra_saver: { priceWeight: 10, qualityFloor: 60 },
}

/** The account's own keys by provider id, shaped as the relay passes them (its key map). */
const ownKeys = (...providerIds: string[]) => new Map(providerIds.map((id) => [id, `sk-own-${id}`]))

const rank = (over: Partial<RankInput> & { models: CatalogModel[] }) =>
  rankCandidates({
    accountId: 'acct_1',
    mode: 'pro',
    features: features(),
    providers,
    byokProviders: ownKeys(),
    grants: [grant()],
    byokFeePercent: 5,
    now: T0,
    policy: defaultPolicy[over.mode ?? 'pro'],
    ...over,
  })

const order = (r: ReturnType<typeof rankCandidates>) => r.candidates.map((c) => c.model.id)
const entryOf = (r: ReturnType<typeof rankCandidates>, id: string) => {
  const e = r.ranks.find((x) => x.model_id === id)
  if (!e) throw new Error(`${id} is not in provider_ranks`)
  return e
}

// A catalog shaped like the real one, prices in USD per Mtok (input / output):
const catalog = [
  model('opus', { quality: 96, price: price(5, 25) }), //       blended 10     → log2 11
  model('sonnet', { quality: 92, price: price(3, 15) }), //     blended 6      → log2 7
  model('haiku', { quality: 80, price: price(1, 5) }), //       blended 2      → log2 3
  model('mini', { quality: 82, price: price(0.25, 2) }), //     blended 0.6875
  model('nano', { quality: 66, price: price(0.05, 0.4) }), //   blended 0.1375
  model('tiny', { quality: 50, price: price(0.01, 0.02) }), //  blended 0.0125
]

/** The documented score: quality − w × log2(1 + (3 × input + output) / 4), rounded to 0.01. */
const proScore = (quality: number, inputUsd: number, outputUsd: number, weight: number) =>
  Math.round((quality - weight * Math.log2(1 + (3 * inputUsd + outputUsd) / 4)) * 100) / 100

describe('profile order', () => {
  test.each([
    ['max: best quality first', 'max' as const, defaultPolicy.max, ['opus', 'sonnet', 'mini', 'haiku', 'nano', 'tiny']],
    [
      'pro: quality per cost at the default price_weight 8',
      'pro' as const,
      defaultPolicy.pro,
      ['mini', 'sonnet', 'opus', 'haiku', 'nano', 'tiny'],
    ],
    [
      'pro: a custom price_weight 2 leans to quality',
      'pro' as const,
      { priceWeight: 2, qualityFloor: 0 },
      ['opus', 'sonnet', 'mini', 'haiku', 'nano', 'tiny'],
    ],
    [
      'pro: a custom price_weight 30 leans to price',
      'pro' as const,
      { priceWeight: 30, qualityFloor: 0 },
      ['nano', 'mini', 'tiny', 'haiku', 'sonnet', 'opus'],
    ],
    [
      'ultra_saver: cheapest first, above the floor 60',
      'ultra_saver' as const,
      defaultPolicy.ultra_saver,
      ['nano', 'mini', 'haiku', 'sonnet', 'opus'],
    ],
    [
      'ultra_saver: a floor of 81 keeps only the good ones',
      'ultra_saver' as const,
      { priceWeight: 10, qualityFloor: 81 },
      ['mini', 'sonnet', 'opus'],
    ],
    ['max: a quality floor applies too', 'max' as const, { priceWeight: 0, qualityFloor: 90 }, ['opus', 'sonnet']],
  ])('%s', (_name, mode, policy, expected) => {
    expect(order(rank({ mode, policy, models: catalog }))).toEqual(expected)
  })

  test('pro scores follow the documented formula, estimated cost is input + expected output at list price', () => {
    const r = rank({ mode: 'pro', models: catalog })
    expect(r.ranks.slice(0, 3).map((e) => [e.model_id, e.score, e.estimated_cost_nanos])).toEqual([
      // 1000 input tokens × input price + min(max_tokens, 1000) output tokens × output price
      ['mini', proScore(82, 0.25, 2, 8), 1000 * 250 + 1000 * 2000],
      ['sonnet', proScore(92, 3, 15, 8), 1000 * 3000 + 1000 * 15_000],
      ['opus', proScore(96, 5, 25, 8), 1000 * 5000 + 1000 * 25_000],
    ])
    expect(entryOf(r, 'sonnet').score).toBe(69.54)
    expect(entryOf(r, 'mini').score).toBe(75.96)
  })

  test('a model with a long-prompt tier is scored and estimated at the tier the prompt reaches', () => {
    // Claude Haiku 5.5's shape: 0.1/0.5 up to 100,000 prompt tokens, 0.5/2.5 above.
    const tiered = model('tiered', {
      quality: 84,
      contextWindow: 1_000_000,
      price: { ...price(0.1, 0.5), longPrompt: { ...price(0.5, 2.5), aboveTokens: 100_000 } },
    })
    const mid = model('mid', { quality: 76, contextWindow: 1_000_000, price: price(0.28, 0.42) })
    const at = (estimatedInputTokens: number) =>
      rank({
        mode: 'ultra_saver',
        policy: defaultPolicy.ultra_saver,
        models: [mid, tiered],
        features: features({ estimatedInputTokens }),
      })

    const short = at(100_000)
    expect(order(short)).toEqual(['tiered', 'mid'])
    expect(entryOf(short, 'tiered').estimated_cost_nanos).toBe(100_000 * 100 + 1000 * 500)
    const long = at(100_001)
    expect(order(long)).toEqual(['mid', 'tiered'])
    expect(entryOf(long, 'tiered').estimated_cost_nanos).toBe(100_001 * 500 + 1000 * 2500)
  })

  test('max: equal quality → the cheaper one first, whatever the catalog order', () => {
    const r = rank({
      mode: 'max',
      models: [
        model('sonnet', { quality: 92, price: price(3, 15) }),
        model('sonnet', { provider: 'p2', quality: 92, price: price(2.5, 12) }),
        model('opus', { quality: 96, price: price(5, 25) }),
      ],
    })
    expect(r.candidates.map((c) => [c.model.id, c.provider.id, c.score])).toEqual([
      ['opus', 'p1', 96],
      ['sonnet', 'p2', 92],
      ['sonnet', 'p1', 92],
    ])
  })

  test('ultra_saver scores are minus the price penalty only', () => {
    const r = rank({ mode: 'ultra_saver', models: [model('nano', { quality: 66, price: price(0.05, 0.4) })] })
    expect(entryOf(r, 'nano').score).toBe(Math.round(-10 * Math.log2(1 + 0.1375) * 100) / 100)
  })

  test('a model outside the profile is not considered at all', () => {
    const r = rank({ mode: 'pro', models: [model('maxonly', { profiles: ['max'] }), model('haiku')] })
    expect(r.ranks.map((e) => e.model_id)).toEqual(['haiku'])
  })

  test('a model whose provider is not configured is not considered at all', () => {
    const r = rank({ models: [model('ghost', { provider: 'nowhere' }), model('haiku')] })
    expect(r.ranks.map((e) => e.model_id)).toEqual(['haiku'])
  })
})

describe('eligibility: every skip says why', () => {
  const ok = model('ok')
  test.each([
    [
      'no key at all',
      model('x', { provider: 'own' }),
      {},
      'no key for this provider (neither the platform’s nor the account’s own)',
    ],
    ['no known price', model('x', { price: null }), {}, 'no known price (no price, no route)'],
    [
      'tools without tool support',
      model('x', { capabilities: { tools: false, vision: true, thinking: true, promptCaching: false } }),
      { features: features({ tools: true }) },
      'request uses tools; model does not support them',
    ],
    [
      'images without vision',
      model('x', { capabilities: { tools: true, vision: false, thinking: true, promptCaching: false } }),
      { features: features({ images: true }) },
      'request has images or files; model has no vision',
    ],
    [
      'Anthropic file ids on another provider',
      model('x', { provider: 'chat' }),
      { features: features({ anthropicFiles: true }) },
      'request names files stored with Anthropic (file_id); only an Anthropic provider can read them',
    ],
    [
      'a file neither PDF nor text on an Anthropic provider',
      model('x'),
      { features: features({ otherFileType: 'application/msword' }) },
      'request has a file of type application/msword; this provider takes PDF and text files only',
    ],
    [
      'a file neither PDF nor text on a Chat provider',
      model('x', { provider: 'chat' }),
      { features: features({ otherFileType: 'application/msword' }) },
      'request has a file of type application/msword; this provider takes PDF and text files only',
    ],
    [
      'below the quality floor',
      model('x', { quality: 59 }),
      { mode: 'ultra_saver' as const, policy: defaultPolicy.ultra_saver },
      'quality 59 is below the profile floor 60',
    ],
    [
      'prompt plus clamped output larger than the context window',
      model('x', { contextWindow: 8000, maxOutputTokens: 4000 }),
      { features: features({ estimatedInputTokens: 5000, maxTokens: 20_000 }) },
      '~5000 input tokens do not fit the 8000-token context window',
    ],
    ['no grant at all', model('x'), { grants: [] }, 'no credit applies to this model (grant scopes or expiry)'],
    [
      'an expired grant',
      model('x'),
      { grants: [grant({ expiresAt: T0 })] },
      'no credit applies to this model (grant scopes or expiry)',
    ],
    [
      'a spent grant',
      model('x'),
      { grants: [grant({ remainingNanos: 0 })] },
      'no credit applies to this model (grant scopes or expiry)',
    ],
  ] as [string, CatalogModel, Partial<RankInput>, string][])('%s', (_name, bad, over, reason) => {
    const r = rank({ ...over, models: [ok, bad] })
    expect(entryOf(r, 'x')).toMatchObject({ status: 'skipped', reason, score: null, estimated_cost_nanos: null })
    expect(r.candidates.map((c) => c.model.id)).not.toContain('x')
    // Skipped entries follow every candidate in provider_ranks.
    expect(r.ranks.at(-1)?.model_id).toBe('x')
  })

  describe('a request without an output limit gets the room the context window leaves', () => {
    const window = model('x', { contextWindow: 200_000, maxOutputTokens: 64_000 })
    const open = (estimatedInputTokens: number) =>
      rank({ models: [window], features: features({ estimatedInputTokens, maxTokens: 128_000, openOutput: true }) })

    test('a short prompt: the model’s own output limit, with no clamp noted (the client set none)', () => {
      const r = open(10_000)
      expect(r.candidates[0]?.maxTokens).toBe(64_000)
      expect(entryOf(r, 'x').reason).toBe('eligible')
    })

    test('a long one: what the window leaves it, 5 % held back for the estimate', () => {
      // 190,000 of the window, less the prompt.
      expect(open(150_000).candidates[0]?.maxTokens).toBe(40_000)
    })

    test('near the end: at least 8,192, while that fits; past it, the window is what the prompt missed', () => {
      expect(open(185_000).candidates[0]?.maxTokens).toBe(8192)
      const r = open(195_000)
      expect(r.candidates).toHaveLength(0)
      expect(r.contextExceeded).toEqual({ inputTokens: 195_000, outputTokens: 8192, contextWindow: 200_000 })
    })

    test('a limit the client set stands: the model is passed over instead', () => {
      const r = rank({ models: [window], features: features({ estimatedInputTokens: 150_000, maxTokens: 64_000 }) })
      expect(r.candidates).toHaveLength(0)
      expect(entryOf(r, 'x').reason).toBe('~150000 input tokens do not fit the 200000-token context window')
    })
  })

  describe('web search goes to the candidates that run it most fully', () => {
    const chat = model('chat-m', { provider: 'chat', quality: 99 })
    const responses = model('resp-m', { provider: 'responses', quality: 95 })
    const claude = model('claude-m', { quality: 90 })
    const order = (r: Ranking) => r.candidates.map((c) => c.model.id)

    test('without blocked domains: Anthropic and Responses alike; Chat is passed over, and says why', () => {
      const r = rank({ models: [chat, responses, claude], features: features({ webSearch: 'any' }) })
      expect(order(r)).toEqual(['resp-m', 'claude-m'])
      expect(entryOf(r, 'chat-m')).toMatchObject({
        status: 'skipped',
        score: null,
        estimated_cost_nanos: null,
        reason: 'request offers web search; this provider has none (an Anthropic model or OpenAI itself serves it)',
      })
    })

    test('a Responses-compatible server runs no search: passed over as Chat is', () => {
      const local = model('local-m', { provider: 'compatible', quality: 99 })
      const r = rank({ models: [local, claude], features: features({ webSearch: 'any' }) })
      expect(order(r)).toEqual(['claude-m'])
      expect(entryOf(r, 'local-m')?.reason).toBe(
        'request offers web search; this provider has none (an Anthropic model or OpenAI itself serves it)',
      )
    })

    test('with blocked domains: Anthropic only, while there is one', () => {
      const r = rank({ models: [chat, responses, claude], features: features({ webSearch: 'anthropic' }) })
      expect(order(r)).toEqual(['claude-m'])
      expect(entryOf(r, 'resp-m')?.reason).toBe(
        'request offers web search with blocked domains, which only an Anthropic provider can exclude',
      )
    })

    test('the best there is serves, with a note, rather than nothing', () => {
      const blocked = rank({ models: [chat, responses], features: features({ webSearch: 'anthropic' }) })
      expect(order(blocked)).toEqual(['resp-m'])
      expect(entryOf(blocked, 'resp-m')?.reason).toContain(
        'no Anthropic model could serve it, so this one searches without excluding them',
      )
      const none = rank({ models: [chat], features: features({ webSearch: 'any' }) })
      expect(order(none)).toEqual(['chat-m'])
      expect(entryOf(none, 'chat-m')?.reason).toContain('so this one answers without searching')
    })
  })

  describe('Claude Code’s safeguards go to a model Anthropic judges', () => {
    const chat = model('chat-m', { provider: 'chat', quality: 99 })
    const responses = model('resp-m', { provider: 'responses', quality: 95 })
    const claude = model('claude-m', { quality: 90 })
    const compatibleClaude = model('compat-m', { provider: 'compat-anthropic', quality: 97 })
    const withCompatible = {
      ...providers,
      'compat-anthropic': { ...provider('compat-anthropic', 'k'), anthropicSignatures: false },
    }
    const order = (r: Ranking) => r.candidates.map((c) => c.model.id)

    test('Anthropic’s own models only, while the profile has one; the others say why', () => {
      const r = rank({
        models: [chat, responses, compatibleClaude, claude],
        providers: withCompatible,
        features: features({ anthropicSafeguards: true }),
      })
      expect(order(r)).toEqual(['claude-m'])
      for (const id of ['chat-m', 'resp-m', 'compat-m']) {
        expect(entryOf(r, id)).toMatchObject({
          status: 'skipped',
          reason:
            'request asks Anthropic to judge its tool calls (Claude Code’s safeguards), which only Anthropic does',
        })
      }
    })

    test('with none, the best there is serves, with a note', () => {
      const r = rank({ models: [chat, responses], features: features({ anthropicSafeguards: true }) })
      expect(order(r)).toEqual(['chat-m', 'resp-m'])
      expect(entryOf(r, 'chat-m')?.reason).toContain('no Anthropic model could serve it')
    })
  })

  // A server speaking Anthropic's dialect is not Anthropic: DeepSeek's documents mcp_servers as ignored.
  test('a tool only Anthropic has goes to Anthropic itself, not to a server that speaks its dialect', () => {
    const withCompatible = {
      ...providers,
      'compat-anthropic': { ...provider('compat-anthropic', 'k'), anthropicSignatures: false },
    }
    const r = rank({
      models: [model('compat-m', { provider: 'compat-anthropic', quality: 97 }), model('claude-m', { quality: 90 })],
      providers: withCompatible,
      features: features({ exclusiveTool: { type: 'web_fetch_20250910', of: 'Anthropic' } }),
    })
    expect(r.candidates.map((c) => c.model.id)).toEqual(['claude-m'])
    expect(entryOf(r, 'compat-m').reason).toBe(
      "request offers web_fetch_20250910, a tool only Anthropic's API has; only Anthropic itself serves it",
    )
  })

  // Resumed by Anthropic as sent; translated for any other, the server-tool blocks are gone and
  // what is left ends on the assistant: a prefill, which a model that refuses one refuses.
  test('a turn Anthropic paused in its server tools is no prefill to Anthropic itself only', () => {
    const noPrefill = { tools: true, vision: true, thinking: true, promptCaching: true, assistantPrefill: false }
    const r = rank({
      models: [
        model('claude-m', { quality: 90, capabilities: noPrefill }),
        model('chat-m', { provider: 'chat', quality: 99, capabilities: noPrefill }),
      ],
      features: features({ assistantPrefill: true, continuesPausedTurn: true }),
    })
    expect(r.candidates.map((c) => c.model.id)).toEqual(['claude-m'])
    expect(entryOf(r, 'chat-m').reason).toContain('prefill')
  })

  test('the context check uses max_tokens clamped to the model: exactly full still fits', () => {
    const r = rank({
      models: [model('x', { contextWindow: 8000, maxOutputTokens: 1000 })],
      features: features({ estimatedInputTokens: 7000, maxTokens: 50_000 }),
    })
    expect(order(r)).toEqual(['x'])
  })

  test('max_tokens is clamped to the model’s max output and the note is recorded', () => {
    const r = rank({ models: [model('x', { maxOutputTokens: 8000 })], features: features({ maxTokens: 16_000 }) })
    expect(r.candidates[0]?.maxTokens).toBe(8000)
    expect(entryOf(r, 'x')).toMatchObject({
      status: 'candidate',
      reason: 'eligible; max_tokens clamped from 16000 to 8000',
    })
    // The estimate assumes a typical answer of at most 1,000 tokens.
    expect(entryOf(r, 'x').estimated_cost_nanos).toBe(1000 * 1000 + 1000 * 5000)
  })

  test('a small max_tokens is sent as is and bounds the estimate', () => {
    const r = rank({ models: [model('x')], features: features({ maxTokens: 200 }) })
    expect(r.candidates[0]?.maxTokens).toBe(200)
    expect(r.candidates[0]?.estimatedCostNanos).toBe(1000 * 1000 + 200 * 5000)
    expect(entryOf(r, 'x').reason).toBe('eligible')
  })

  test('thinking on a model without it is eligible, with a note', () => {
    const r = rank({
      models: [model('x', { capabilities: { tools: true, vision: true, thinking: false, promptCaching: false } })],
      features: features({ thinking: true }),
    })
    expect(entryOf(r, 'x').reason).toBe('eligible; thinking requested; this model answers without it')
  })
})

describe('scoped credit', () => {
  const models = [model('a', { provider: 'p1' }), model('b', { provider: 'p2' })]
  const creditSkip = 'no credit applies to this model (grant scopes or expiry)'
  test.each([
    ['scoped to model a', grant({ scopeModels: ['a'] }), ['a']],
    ['scoped to provider p2', grant({ scopeProviders: ['p2'] }), ['b']],
    ['scoped to this routing mode', grant({ scopeRoutingModes: ['pro'] }), ['a', 'b']],
    ['scoped to model_usage', grant({ scopeCostType: 'model_usage' }), ['a', 'b']],
    ['expiring a millisecond from now', grant({ expiresAt: T0 + 1 }), ['a', 'b']],
  ] as [string, GrantState, string[]][])('%s → only the covered candidates', (_name, g, eligible) => {
    const r = rank({ models, grants: [g] })
    expect(order(r).sort()).toEqual(eligible)
    for (const e of r.ranks) if (!eligible.includes(e.model_id)) expect(e.reason).toBe(creditSkip)
    expect(r.blockedByCredit).toBe(false)
  })

  test.each([
    ['scoped to another routing mode', grant({ scopeRoutingModes: ['ultra_saver'] })],
    ['scoped to a model outside the profile', grant({ scopeModels: ['elsewhere'] })],
    ['scoped to BYOK fees only', grant({ scopeCostType: 'byok_fee' })],
    ['expired', grant({ expiresAt: T0 - 1 })],
  ] as [string, GrantState][])('%s → nothing eligible, blocked by credit', (_name, g) => {
    const r = rank({ models, grants: [g] })
    expect(r.candidates).toEqual([])
    expect(r.ranks.map((e) => e.reason)).toEqual([creditSkip, creditSkip])
    expect(r.blockedByCredit).toBe(true)
  })

  test('blockedByCredit only when nothing is eligible and credit is what stopped some candidate', () => {
    const noVision = model('text', {
      capabilities: { tools: true, vision: false, thinking: false, promptCaching: false },
    })
    const images = features({ images: true })
    // Nothing eligible, and no skip was about credit: a 503, not a 402.
    expect(rank({ models: [noVision], features: images, grants: [] }).blockedByCredit).toBe(false)
    // The only model that could take images lacks credit: credit is what is missing.
    expect(rank({ models: [noVision, model('seer')], features: images, grants: [] }).blockedByCredit).toBe(true)
    // Something eligible: never blocked, even though another candidate lacked credit.
    expect(rank({ models, grants: [grant({ scopeModels: ['a'] })] }).blockedByCredit).toBe(false)
    // Ineligible for reasons other than credit, with credit in hand.
    expect(rank({ models: [model('x', { price: null })] }).blockedByCredit).toBe(false)
  })
})

describe('credit held by requests in flight', () => {
  const held = [grant({ remainingNanos: 0 })]
  const before = [grant()]

  test('a model whose credit the holds take says so, and the ranking is refused for held credit', () => {
    const r = rank({ models: [model('x')], grants: held, grantsBeforeHolds: before })
    expect(entryOf(r, 'x')).toMatchObject({
      status: 'skipped',
      reason:
        "the credit that applies to this model is held by this account's requests in flight (retry when they finish)",
    })
    expect(r).toMatchObject({ blockedByCredit: true, blockedByHeldCredit: true })
  })

  test('a model no grant covers even before the holds is not held, only uncovered', () => {
    const scoped = [grant({ remainingNanos: 0, scopeModels: ['x'] })]
    const r = rank({
      models: [model('x'), model('y')],
      grants: scoped,
      grantsBeforeHolds: [grant({ scopeModels: ['x'] })],
    })
    expect(entryOf(r, 'y').reason).toBe('no credit applies to this model (grant scopes or expiry)')
    expect(entryOf(r, 'x').reason).toContain('held by this account')
    expect(r.blockedByHeldCredit).toBe(true)
  })

  test('with no credit left even before the holds: uncovered, not held', () => {
    const r = rank({ models: [model('x')], grants: held, grantsBeforeHolds: held })
    expect(entryOf(r, 'x').reason).toBe('no credit applies to this model (grant scopes or expiry)')
    expect(r).toMatchObject({ blockedByCredit: true, blockedByHeldCredit: false })
  })
})

describe('a Messages body’s thinking budget beside the max_tokens sent', () => {
  const thinking = features({ thinking: true, maxTokens: 64_000 })
  const reasonOf = (over: Pick<RankInput, 'messagesThinkingBudget'>, m = model('x', { maxOutputTokens: 32_000 })) =>
    entryOf(rank({ ...over, models: [m], features: thinking }), 'x').reason

  test('a budget at or above the clamped max_tokens is noted as lowered under it', () => {
    expect(reasonOf({ messagesThinkingBudget: 40_000 })).toBe(
      'eligible; max_tokens clamped from 64000 to 32000; thinking budget lowered from 40000 to 31999, under max_tokens',
    )
    expect(reasonOf({ messagesThinkingBudget: 10_000 })).toBe('eligible; max_tokens clamped from 64000 to 32000')
  })

  test('no room for the least budget: thinking off, noted', () => {
    const r = rank({
      models: [model('x')],
      features: features({ thinking: true, maxTokens: 1000 }),
      messagesThinkingBudget: 1024,
    })
    expect(entryOf(r, 'x').reason).toBe(
      'eligible; thinking off: max_tokens 1000 leaves no room for the least thinking budget, 1024',
    )
  })

  test('nothing noted where no budget is sent: another provider kind, or a model that takes none', () => {
    const chat = model('x', { provider: 'chat', maxOutputTokens: 32_000 })
    expect(reasonOf({ messagesThinkingBudget: 40_000 }, chat)).toBe('eligible; max_tokens clamped from 64000 to 32000')
    const adaptiveOnly = model('x', {
      maxOutputTokens: 32_000,
      capabilities: { ...model('x').capabilities, budgetThinking: false, adaptiveThinking: true },
    })
    expect(reasonOf({ messagesThinkingBudget: 40_000 }, adaptiveOnly)).toBe(
      'eligible; max_tokens clamped from 64000 to 32000',
    )
  })
})

describe('BYOK', () => {
  const own = model('own-model', { provider: 'own', quality: 99 })
  const shared = model('shared', { provider: 'p1', quality: 70 })

  test('a provider without a platform key is eligible only with the account’s own key', () => {
    const without = rank({ models: [own, shared] })
    expect(order(without)).toEqual(['shared'])
    expect(entryOf(without, 'own-model')).toMatchObject({ byok: false, status: 'skipped' })

    const withKey = rank({ models: [own, shared], byokProviders: ownKeys('own') })
    expect(order(withKey)).toEqual(['own-model', 'shared'])
    expect(withKey.candidates[0]?.byok).toBe(true)
    expect(entryOf(withKey, 'own-model')).toMatchObject({ byok: true, status: 'candidate', reason: 'eligible' })
    expect(entryOf(withKey, 'shared').byok).toBe(false)
  })

  test('the account’s own key wins over the platform’s for the same provider', () => {
    const r = rank({ models: [shared], byokProviders: ownKeys('p1') })
    expect(r.candidates[0]?.byok).toBe(true)
  })

  test.each([
    ['a byok_fee grant pays the fee', [grant({ scopeCostType: 'byok_fee' })], 5, ['own-model']],
    ['an all grant pays the fee', [grant()], 5, ['own-model', 'shared']],
    ['a model_usage grant does not', [grant({ scopeCostType: 'model_usage' })], 5, ['shared']],
    ['a 0% fee needs no credit at all', [], 0, ['own-model']],
    ['a 0% fee: platform-key models still need credit', [grant({ scopeCostType: 'byok_fee' })], 0, ['own-model']],
  ] as [string, GrantState[], number, string[]][])('%s', (_name, grants, byokFeePercent, eligible) => {
    const r = rank({ models: [own, shared], byokProviders: ownKeys('own'), grants, byokFeePercent })
    expect(order(r)).toEqual(eligible)
    if (!eligible.includes('own-model'))
      expect(entryOf(r, 'own-model').reason).toBe('no credit applies to the BYOK fee for this model')
  })

  test('no credit for the BYOK fee → blocked by credit', () => {
    const r = rank({
      models: [own],
      byokProviders: ownKeys('own'),
      grants: [grant({ scopeCostType: 'model_usage' })],
    })
    expect(r.blockedByCredit).toBe(true)
  })
})

describe('stickiness', () => {
  // pro order without stickiness: mini, sonnet, opus, haiku.
  const models = catalog.slice(0, 4)
  const sticks = '; session sticks to the model that served it'

  test('the model that served the session moves first, and says so', () => {
    const r = rank({ models, sticky: { modelId: 'opus', providerId: 'p1' } })
    expect(order(r)).toEqual(['opus', 'mini', 'sonnet', 'haiku'])
    expect(entryOf(r, 'opus').reason).toBe(`eligible${sticks}`)
    expect(r.ranks[0]?.model_id).toBe('opus')
  })

  test('already first: stays first, with the reason', () => {
    const r = rank({ models, sticky: { modelId: 'mini', providerId: 'p1' } })
    expect(order(r)).toEqual(['mini', 'sonnet', 'opus', 'haiku'])
    expect(entryOf(r, 'mini').reason).toBe(`eligible${sticks}`)
  })

  test('not when the sticky model’s circuit is open', () => {
    const open: HealthView = { state: 'open', ttfb_ms: null, error_rate: 0.5, until: '2026-11-22T10:00:30.000Z' }
    const r = rank({
      models,
      sticky: { modelId: 'opus', providerId: 'p1' },
      health: (_p, m) => (m === 'opus' ? open : { state: 'closed', ttfb_ms: null, error_rate: 0 }),
    })
    expect(order(r)).toEqual(['mini', 'sonnet', 'haiku', 'opus'])
    expect(entryOf(r, 'opus').reason).toBe(
      'eligible; ranked last: circuit open until 2026-11-22T10:00:30.000Z; session moved off this model',
    )
    expect(r.ranks.some((e) => e.reason.includes(sticks))).toBe(false)
  })

  test('not when the sticky model is no longer eligible (its skip reason says the session moved)', () => {
    const r = rank({
      models: models.map((m) => (m.id === 'opus' ? { ...m, capabilities: { ...m.capabilities, vision: false } } : m)),
      features: features({ images: true }),
      sticky: { modelId: 'opus', providerId: 'p1' },
    })
    expect(order(r)).toEqual(['mini', 'sonnet', 'haiku'])
    expect(entryOf(r, 'opus')).toMatchObject({
      status: 'skipped',
      reason: 'request has images or files; model has no vision; session moved off this model',
    })
  })

  test('with nowhere else to go, the session moved nowhere: no such words (they reached the client’s error)', () => {
    const r = rank({
      models: models.map((m) => ({ ...m, capabilities: { ...m.capabilities, vision: false } })),
      features: features({ images: true }),
      sticky: { modelId: 'opus', providerId: 'p1' },
    })
    expect(r.candidates).toEqual([])
    expect(entryOf(r, 'opus').reason).toBe('request has images or files; model has no vision')
  })

  test('not when the sticky model is not in this profile, nor for the same model on another provider', () => {
    for (const sticky of [
      { modelId: 'elsewhere', providerId: 'p1' },
      { modelId: 'opus', providerId: 'p2' },
    ]) {
      const r = rank({ models, sticky })
      expect(order(r)).toEqual(['mini', 'sonnet', 'opus', 'haiku'])
      expect(r.ranks.map((e) => e.reason)).toEqual(['eligible', 'eligible', 'eligible', 'eligible'])
    }
  })

  test('a cooling sticky model is passed over too', () => {
    const cooling: HealthView = { state: 'cooling', ttfb_ms: 80, error_rate: 0.2, until: '2026-11-22T10:00:20.000Z' }
    const r = rank({
      models,
      sticky: { modelId: 'mini', providerId: 'p1' },
      health: (_p, m) => (m === 'mini' ? cooling : { state: 'closed', ttfb_ms: null, error_rate: 0 }),
    })
    expect(order(r)).toEqual(['sonnet', 'opus', 'haiku', 'mini'])
    expect(entryOf(r, 'mini').reason).toBe(
      'eligible; ranked last: circuit cooling until 2026-11-22T10:00:20.000Z; session moved off this model',
    )
  })
})

describe('feedback nudges', () => {
  test('a nudge changes the order when scores are close, and shows in the entry', () => {
    // pro: mini 75.96, sonnet 69.54 → sonnet +10 overtakes.
    const nudges = new Map([[nudgeKey('pro', 'sonnet'), 10]])
    const r = rank({ models: catalog.slice(0, 4), nudges })
    expect(order(r)).toEqual(['sonnet', 'mini', 'opus', 'haiku'])
    expect(entryOf(r, 'sonnet')).toMatchObject({ nudge: 10, score: 79.54, reason: 'eligible; feedback nudge +10' })
    expect(entryOf(r, 'mini')).toMatchObject({ nudge: 0, reason: 'eligible' })
  })

  test('a negative nudge pushes a model down', () => {
    const r = rank({ mode: 'max', models: catalog.slice(0, 2), nudges: new Map([[nudgeKey('max', 'opus'), -10]]) })
    expect(order(r)).toEqual(['sonnet', 'opus'])
    expect(entryOf(r, 'opus')).toMatchObject({ nudge: -10, score: 86, reason: 'eligible; feedback nudge -10' })
  })

  test('a nudge for another profile does nothing here', () => {
    const r = rank({ mode: 'max', models: catalog.slice(0, 2), nudges: new Map([[nudgeKey('pro', 'opus'), -10]]) })
    expect(order(r)).toEqual(['opus', 'sonnet'])
    expect(entryOf(r, 'opus').nudge).toBe(0)
  })

  const signal = (over: Partial<FeedbackSignal>): FeedbackSignal => ({
    routingMode: 'pro',
    modelId: 'sonnet',
    rating: null,
    reason: null,
    ...over,
  })
  test.each([
    ['stronger_model_needed', [signal({ reason: 'stronger_model_needed' })], -4],
    ['wrong_model', [signal({ reason: 'wrong_model' })], -4],
    ['too_expensive', [signal({ reason: 'too_expensive' })], -3],
    ['too_slow', [signal({ reason: 'too_slow' })], -2],
    ['great_value', [signal({ reason: 'great_value' })], 3],
    ['thumbs up', [signal({ rating: 'up' })], 1],
    ['thumbs down', [signal({ rating: 'down' })], -1],
    ['reason and rating add up', [signal({ reason: 'too_expensive', rating: 'up' })], -2],
    ['clamped at −10', Array.from({ length: 5 }, () => signal({ reason: 'stronger_model_needed' })), -10],
    ['clamped at +10', Array.from({ length: 15 }, () => signal({ rating: 'up' })), 10],
  ] as [string, FeedbackSignal[], number][])('computeNudges: %s', (_name, signals, points) => {
    expect(computeNudges(signals)).toEqual(new Map([[nudgeKey('pro', 'sonnet'), points]]))
  })

  test('computeNudges ignores feedback with no model or no points, and keeps profiles apart', () => {
    const nudges = computeNudges([
      signal({ modelId: null, reason: 'too_slow' }),
      signal({ reason: null, rating: null }),
      signal({ routingMode: 'max', reason: 'great_value' }),
      signal({ reason: 'too_slow' }),
    ])
    expect(nudges).toEqual(
      new Map([
        [nudgeKey('max', 'sonnet'), 3],
        [nudgeKey('pro', 'sonnet'), -2],
      ]),
    )
  })
})

describe('health', () => {
  const closed: HealthView = { state: 'closed', ttfb_ms: 120, error_rate: 0 }
  const views: Record<string, HealthView> = {
    mini: { state: 'open', ttfb_ms: 300, error_rate: 0.488, until: '2026-11-22T10:00:30.000Z' },
    sonnet: { state: 'cooling', ttfb_ms: 90, error_rate: 0.2, until: '2026-11-22T10:00:20.000Z' },
    opus: { state: 'half_open', ttfb_ms: null, error_rate: 0.488 },
  }
  const health = (_p: string, m: string) => views[m] ?? closed

  test('open and cooling candidates rank last but stay in the list; half-open keeps its place', () => {
    const r = rank({ models: catalog.slice(0, 4), health })
    // Healthy by score: opus 68.33 (half-open), haiku 67.32; then unhealthy by score: mini, sonnet.
    expect(order(r)).toEqual(['opus', 'haiku', 'mini', 'sonnet'])
    expect(r.ranks.map((e) => [e.model_id, e.status, e.health.state, e.reason])).toEqual([
      ['opus', 'candidate', 'half_open', 'eligible'],
      ['haiku', 'candidate', 'closed', 'eligible'],
      ['mini', 'candidate', 'open', 'eligible; ranked last: circuit open until 2026-11-22T10:00:30.000Z'],
      ['sonnet', 'candidate', 'cooling', 'eligible; ranked last: circuit cooling until 2026-11-22T10:00:20.000Z'],
    ])
    expect(entryOf(r, 'mini').health).toEqual(views.mini!)
  })

  test('a nudge does not lift an unhealthy candidate above a healthy one', () => {
    const r = rank({ models: catalog.slice(0, 4), health, nudges: new Map([[nudgeKey('pro', 'mini'), 10]]) })
    expect(order(r).slice(-2)).toEqual(['mini', 'sonnet'])
  })

  test('without a health source every candidate is closed', () => {
    const r = rank({ models: [model('x')] })
    expect(entryOf(r, 'x').health).toEqual({ state: 'closed', ttfb_ms: null, error_rate: 0 })
  })
})

describe('the most a leg can cost (what a request holds)', () => {
  test('a long prompt is priced at the long-prompt tier, output and searches included', () => {
    const longPrompt = { ...price(5, 25), cacheWriteNanosPerToken: 5_000, aboveTokens: 100_000 }
    const tiered = model('tiered', { price: { ...price(1, 5), cacheWriteNanosPerToken: 1_000, longPrompt } })
    expect(mostLegCostNanos(tiered, { tokens: 150_000, hourWrites: true }, 1_000, 2, T0)).toBe(
      150_000 * 5_000 + 1_000 * 25_000 + 2 * 10_000_000,
    )
    expect(mostLegCostNanos(tiered, { tokens: 50_000, hourWrites: true }, 1_000, 0, T0)).toBe(
      50_000 * 1_000 + 1_000 * 5_000,
    )
  })

  test('a prompt is priced as the dearest cache write the model prices: an hour’s only where every tier has one', () => {
    // price(): cache writes at 1.25 × input.
    expect(mostLegCostNanos(model('five-minutes'), { tokens: 1_000, hourWrites: true }, 10, 0, T0)).toBe(
      1_000 * 1_250 + 10 * 5_000,
    )
    const hour = model('hour', { price: { ...price(1, 5), cacheWrite1hNanosPerToken: 2_000 } })
    expect(mostLegCostNanos(hour, { tokens: 1_000, hourWrites: true }, 10, 0, T0)).toBe(1_000 * 2_000 + 10 * 5_000)
    // No mark asks for an hour (a Responses request routed to Claude carries svc's own, of 5 minutes).
    expect(mostLegCostNanos(hour, { tokens: 1_000, hourWrites: false }, 10, 0, T0)).toBe(1_000 * 1_250 + 10 * 5_000)
    // A tier without an hour's price: no request to it asks for one (pricing.ts pricesHourCacheWrites).
    const longPrompt = { ...price(2, 10), aboveTokens: 100_000 }
    const partly = model('partly', { price: { ...price(1, 5), cacheWrite1hNanosPerToken: 2_000, longPrompt } })
    expect(mostLegCostNanos(partly, { tokens: 1_000, hourWrites: true }, 10, 0, T0)).toBe(1_000 * 1_250 + 10 * 5_000)
  })

  describe('thinking svc sends above max_tokens is held as output', () => {
    const held = (features_: Partial<RequestFeatures>, m: CatalogModel, providerId = 'p1') => {
      const r = rank({ models: [{ ...m, provider: providerId }], features: features({ maxTokens: 16, ...features_ }) })
      const c = r.candidates[0]!
      return (c.mostCostNanos - 1000 * 1_250) / 5_000
    }
    const high = { thinking: true, thinkingBudget: { form: 'adaptive' as const, tokens: 4_096 } }
    const enabled = { thinking: true, thinkingBudget: { form: 'enabled' as const, tokens: 2_000 } }
    const byBudget = model('by-budget')
    const adaptive = model('adaptive', {
      capabilities: { ...byBudget.capabilities, adaptiveThinking: true, budgetThinking: false },
    })

    test('a Claude that thinks by budget: the budget and the answer, within the model’s output', () => {
      expect(held(high, byBudget)).toBe(4_112)
      expect(held(enabled, byBudget)).toBe(2_016)
      // A budget the answer's max_tokens already exceeds is sent within them.
      expect(held({ ...enabled, maxTokens: 3_000 }, byBudget)).toBe(3_000)
      expect(held({ ...enabled, maxTokens: 7_000 }, byBudget)).toBe(7_000)
      expect(held({ ...high, maxTokens: 4_000 }, byBudget)).toBe(8_000)
    })

    test('no budget above max_tokens where thinking counts within them, or none is asked', () => {
      expect(held(high, adaptive)).toBe(16)
      expect(held(enabled, adaptive)).toBe(16)
      expect(held(high, byBudget, 'responses')).toBe(16)
      expect(held(high, byBudget, 'chat')).toBe(16)
      expect(held({}, byBudget)).toBe(16)
      expect(held({ ...high, forcedToolChoice: true }, byBudget)).toBe(16)
    })

    test('a model whose row does not say it thinks is sent the budget all the same: held', () => {
      const noThinking = model('plain', { capabilities: { ...byBudget.capabilities, thinking: false } })
      expect(held(high, noThinking)).toBe(4_112)
    })

    test('a routed Claude sent OpenRouter’s reasoning budget', () => {
      const routed = model('routed', { upstreamModel: 'anthropic/claude-x' })
      const r = rank({
        models: [{ ...routed, provider: 'router' }],
        providers: { ...providers, router: { ...providers.chat!, id: 'router', anthropicCacheControl: true } },
        features: features({ maxTokens: 16, ...enabled }),
      })
      expect((r.candidates[0]!.mostCostNanos - 1000 * 1_250) / 5_000).toBe(2_016)
    })
  })
})
