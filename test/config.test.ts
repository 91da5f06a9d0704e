import { describe, expect, test } from 'bun:test'
import { ConfigError, resolveConfig } from '../src/config/load'

const load = (raw: unknown, env: Record<string, string> = {}) => resolveConfig(raw, { env, source: 'svc.toml' })

describe('config', () => {
  test('the database path is resolved against the working directory, but :memory: is kept as SQLite names it', () => {
    const database = (overrides: { database?: string }, env: Record<string, string> = {}) =>
      resolveConfig({}, { env, cwd: '/srv/svc', overrides }).server.database
    expect(database({})).toBe('/srv/svc/.svc/svc.db')
    expect(database({ database: 'data/ledger.db' })).toBe('/srv/svc/data/ledger.db')
    // Resolved, it became a file named ":memory:" in the working directory (`svc serve --db :memory:`).
    expect(database({ database: ':memory:' })).toBe(':memory:')
    expect(database({}, { SVC_DATABASE: ':memory:' })).toBe(':memory:')
  })

  test('the database is --db, else SVC_DATABASE, else the file, else .svc/svc.db (README, CLI)', () => {
    const database = (raw: unknown, overrides: { database?: string }, env: Record<string, string> = {}) =>
      resolveConfig(raw, { env, cwd: '/srv/svc', overrides }).server.database
    const file = { server: { database: 'file.db' } }
    const env = { SVC_DATABASE: '/var/lib/svc/env.db' }
    expect(database(file, { database: 'flag.db' }, env)).toBe('/srv/svc/flag.db')
    expect(database(file, {}, env)).toBe('/var/lib/svc/env.db')
    expect(database(file, {}, { SVC_DATABASE: '' })).toBe('/srv/svc/file.db')
    expect(database({}, {})).toBe('/srv/svc/.svc/svc.db')
  })

  test.each<[unknown, string]>([
    [{ server: { prot: 8080 } }, 'svc.toml: server.prot: unknown key'],
    [{ server: { port: '8080' } }, 'svc.toml: server.port: expected integer (got "8080")'],
    [
      { providers: { x: { kind: 'grpc', base_url: 'http://x' } } },
      'providers.x.kind: must be one of anthropic, openai-chat, openai-responses',
    ],
    [
      { providers: { x: { kind: 'anthropic' } } },
      'svc.toml: providers.x.base_url: required (only anthropic, openai, openrouter, deepseek have one by default)',
    ],
    // Requests go to `{base_url}/v1/messages` and the like: each of these failed every one upstream.
    ...['not a url', '127.0.0.1:9', 'ftp://x', 'http://[::1', 'http://', ' http://x'].map((url): [unknown, string] => [
      { providers: { x: { kind: 'anthropic', base_url: url } } },
      `svc.toml: providers.x.base_url: not an absolute http(s) URL with a host (got ${JSON.stringify(url)})`,
    ]),
    // The ledger counts whole nanos below 2^53: this escaped as a RangeError naming neither file nor key.
    [
      { billing: { starter_grant: { usd: 10_000_000 } } },
      'svc.toml: billing.starter_grant.usd: the amount 10000000 USD is too large: a grant holds at most 9007199.254740991 USD',
    ],
    // TOML's inf and nan, which JSON would have shown as null.
    [
      { billing: { starter_grant: { usd: Number.POSITIVE_INFINITY } } },
      'billing.starter_grant.usd: expected number (got Infinity)',
    ],
    [
      { models: [{ id: 'm', provider: 'p', quality: Number.NaN }] },
      'svc.toml: models.0.quality: expected number (got NaN)',
    ],
    [
      { models: [{ id: 'm', provider: 'p', profiles: ['cheap'] }] },
      'models.0.profiles.0: must be one of pro, max, ultra_saver',
    ],
    [{ models: [{ id: 'new-model', provider: 'p' }] }, 'profiles is required'],
    [
      {
        models: [
          {
            id: 'm',
            provider: 'p',
            profiles: ['pro'],
            quality: 50,
            input_usd_per_mtok: 0.0001,
            output_usd_per_mtok: 1,
          },
        ],
      },
      'svc.toml: models.0.input_usd_per_mtok: price 0.0001 USD/Mtok is not a whole number of nanos per token (step 0.001)',
    ],
    // Every price given is checked and named by its key: a built-in row's override, a model priced in part.
    [
      { models: [{ id: 'claude-opus-5-5', provider: 'anthropic', cache_write_usd_per_mtok: 0.0001 }] },
      'svc.toml: models.0.cache_write_usd_per_mtok: price 0.0001 USD/Mtok is not a whole number',
    ],
    [
      { models: [{ id: 'm', provider: 'p', profiles: [], quality: 0, output_usd_per_mtok: 0.0001 }] },
      'svc.toml: models.0.output_usd_per_mtok: price 0.0001',
    ],
    // Half a nano a token: finer than a nano, however close to a whole USD/Mtok.
    [
      { models: [{ id: 'claude-opus-5-5', provider: 'anthropic', input_usd_per_mtok: 3.0000005 }] },
      'svc.toml: models.0.input_usd_per_mtok: price 3.0000005 USD/Mtok is not a whole number of nanos per token (step 0.001)',
    ],
    [
      { models: [{ id: 'claude-opus-5-5', provider: 'anthropic', cache_write_1h_usd_per_mtok: 8.0005 }] },
      'svc.toml: models.0.cache_write_1h_usd_per_mtok: price 8.0005 USD/Mtok is not a whole number of nanos per token (step 0.001)',
    ],
    [
      {
        models: [
          {
            id: 'claude-haiku-5-5',
            provider: 'anthropic',
            long_prompt: {
              above_tokens: 1,
              input_usd_per_mtok: 1,
              output_usd_per_mtok: 1,
              cache_write_1h_usd_per_mtok: 0.0001,
            },
          },
        ],
      },
      'svc.toml: models.0.long_prompt.cache_write_1h_usd_per_mtok: price 0.0001',
    ],
    [
      { models: [{ id: 'claude-opus-5-5', provider: 'anthropic', cache_write_1h_usd_per_mtok: -2 }] },
      'svc.toml: models.0.cache_write_1h_usd_per_mtok: expected number to be greater or equal to 0 (got -2)',
    ],
    [
      { models: [{ id: 'm', provider: 'p', profiles: [], quality: 0, input_usd_per_mtok: 1.0005 }] },
      'svc.toml: models.0.input_usd_per_mtok: price 1.0005',
    ],
    [{ billing: { byok_fee_percent: 120 } }, 'billing.byok_fee_percent'],
    // A keep-alive must come before the client connection's own idle limit (255 s) cuts the stream.
    [{ routing: { ping_interval_ms: 300_000 } }, 'routing.ping_interval_ms'],
    // Misspelt, the DeepSeek replay switch would silently stay off and every tool loop would 400.
    [
      { providers: { x: { kind: 'openai-chat', base_url: 'http://x', reasoning_contents: true } } },
      'providers.x.reasoning_contents: unknown key',
    ],
    [
      { providers: { x: { kind: 'openai-chat', base_url: 'http://x', reasoning_content: 'yes' } } },
      'providers.x.reasoning_content: expected boolean (got "yes")',
    ],
  ])('%j is refused: %s', (raw, message) => {
    expect(() => load(raw)).toThrow(ConfigError)
    expect(() => load(raw)).toThrow(message)
  })

  test('usual environment keys configure providers with no file; a model is in the catalog only once priced', () => {
    const config = load(
      {},
      { ANTHROPIC_API_KEY: 'a', OPENROUTER_API_KEY: 'o', DEEPSEEK_API_KEY: 'd', OPENAI_API_KEY: 'k' },
    )
    expect(Object.values(config.providers).map((p) => [p.id, p.kind, p.baseUrl])).toEqual([
      ['anthropic', 'anthropic', 'https://api.anthropic.com'],
      // Responses: OpenAI's Chat endpoint refuses tools with reasoning from GPT-5.6 on.
      ['openai', 'openai-responses', 'https://api.openai.com/v1'],
      ['openrouter', 'openai-chat', 'https://openrouter.ai/api/v1'],
      ['deepseek', 'openai-chat', 'https://api.deepseek.com'],
    ])
    expect(config.providers.openai?.maxTokensField).toBe('max_completion_tokens')
    const sonnet = config.models.find((m) => m.id === 'claude-sonnet-4-5' && m.provider === 'anthropic')
    expect(sonnet?.price).toEqual({
      inputNanosPerToken: 3000,
      outputNanosPerToken: 15000,
      cacheReadNanosPerToken: 300,
      cacheWriteNanosPerToken: 3750,
      // A 1-hour cache write: 2 × input, as Anthropic lists it.
      cacheWrite1hNanosPerToken: 6000,
      // 10 USD per 1,000 searches, Anthropic's list price, by default.
      webSearchNanos: 10_000_000,
    })
  })

  test('[[models]] overrides a built-in row field by field, adds new ones, removes with enabled=false, and builtin=false drops the catalog', () => {
    const config = load({
      models: [
        { id: 'claude-sonnet-4-5', provider: 'anthropic', output_usd_per_mtok: 14 },
        { id: 'claude-opus-4-5', provider: 'anthropic', enabled: false },
        {
          id: 'local-coder',
          provider: 'local',
          profiles: ['ultra_saver'],
          quality: 60,
          input_usd_per_mtok: 0,
          output_usd_per_mtok: 0,
        },
      ],
    })
    const sonnet = config.models.find((m) => m.id === 'claude-sonnet-4-5' && m.provider === 'anthropic')
    expect(sonnet?.price?.outputNanosPerToken).toBe(14000)
    expect(sonnet?.price?.inputNanosPerToken).toBe(3000)
    expect(config.models.some((m) => m.id === 'claude-opus-4-5' && m.provider === 'anthropic')).toBe(false)
    expect(config.models.find((m) => m.id === 'local-coder')).toMatchObject({
      upstreamModel: 'local-coder',
      price: { inputNanosPerToken: 0 },
    })

    const only = load({
      catalog: { builtin: false },
      models: [{ id: 'x', provider: 'p', profiles: ['pro'], quality: 1 }],
    })
    expect(only.models.map((m) => [m.id, m.price])).toEqual([['x', null]])
  })

  test('a new [[models]] entry takes what it leaves out from a built-in row of its id, never from another entry of the file', () => {
    const config = load({
      models: [
        { id: 'm', provider: 'elsewhere', profiles: [], quality: 0, context_window: 1024, cache_read_usd_per_mtok: 0 },
        { id: 'm', provider: 'sim', profiles: ['pro'], quality: 50, input_usd_per_mtok: 1, output_usd_per_mtok: 1 },
        // A built-in override changes its own id and provider only: not what another provider is lent.
        { id: 'claude-sonnet-5-5', provider: 'anthropic', quality: 1, input_usd_per_mtok: 9 },
        // A built-in model served by a provider of one's own: the built-in row's facts, under its own name.
        { id: 'claude-sonnet-5-5', provider: 'myrouter' },
      ],
    })
    const row = (id: string, provider: string) => config.models.find((m) => m.id === id && m.provider === provider)
    // Lent the first's, it had no cache-write price (so no price, no route) and a 1,024-token window.
    expect(row('m', 'sim')).toMatchObject({
      contextWindow: 128_000,
      price: {
        inputNanosPerToken: 1000,
        outputNanosPerToken: 1000,
        cacheReadNanosPerToken: 1000,
        cacheWriteNanosPerToken: 1000,
      },
    })
    const builtin = load({}).models.find((m) => m.id === 'claude-sonnet-5-5' && m.provider === 'anthropic')
    expect(row('claude-sonnet-5-5', 'myrouter')).toEqual({
      ...builtin!,
      provider: 'myrouter',
      upstreamModel: 'claude-sonnet-5-5',
    })
    // With the catalog off there is no built-in row to lend anything.
    expect(() =>
      load({ catalog: { builtin: false }, models: [{ id: 'claude-sonnet-5-5', provider: 'myrouter' }] }),
    ).toThrow('svc.toml: models.0: profiles is required for a model that is not in the built-in catalog')
  })

  test('[[models]] entries whose provider nothing configures are listed for svc serve to name; built-in rows are not', () => {
    const config = load(
      {
        providers: { sim: { kind: 'anthropic', base_url: 'http://127.0.0.1:9' } },
        models: [
          { id: 'typo', provider: 'smi', profiles: ['pro'], quality: 50 },
          { id: 'ok', provider: 'sim', profiles: ['pro'], quality: 50 },
          // A built-in row overridden for a provider with no key variable set: the override does nothing.
          { id: 'deepseek-flash', provider: 'deepseek', quality: 1 },
          // Keyed from the environment alone: configured.
          { id: 'claude-opus-5-5', provider: 'anthropic', quality: 1 },
          { id: 'gone', provider: 'nowhere', profiles: ['pro'], quality: 50 },
          { id: 'gone', provider: 'nowhere', enabled: false },
        ],
      },
      { ANTHROPIC_API_KEY: 'a' },
    )
    expect(config.modelsWithoutProvider).toEqual([
      { id: 'deepseek-flash', provider: 'deepseek' },
      { id: 'typo', provider: 'smi' },
    ])
    expect(load({}).modelsWithoutProvider).toEqual([])
  })

  test('web_search_usd_per_1k: 10 unless [[models]] prices it; a price finer than a nano a search is refused', () => {
    const config = load({
      models: [
        { id: 'gpt-5.1', provider: 'openai', web_search_usd_per_1k: 25 },
        {
          id: 'local-coder',
          provider: 'local',
          profiles: ['pro'],
          quality: 60,
          input_usd_per_mtok: 0,
          output_usd_per_mtok: 0,
        },
      ],
    })
    const searchNanos = (id: string, provider: string) =>
      config.models.find((m) => m.id === id && m.provider === provider)?.price?.webSearchNanos
    expect(searchNanos('gpt-5.1', 'openai')).toBe(25_000_000)
    expect(searchNanos('gpt-5.1', 'openrouter')).toBe(10_000_000)
    expect(searchNanos('claude-opus-4-5', 'anthropic')).toBe(10_000_000)
    // A model svc knows nothing of: never free by omission.
    expect(searchNanos('local-coder', 'local')).toBe(10_000_000)
    expect(() => load({ models: [{ id: 'gpt-5.1', provider: 'openai', web_search_usd_per_1k: 0.0000001 }] })).toThrow(
      'svc.toml: models.0.web_search_usd_per_1k: price 1e-7 USD per 1,000 searches is not a whole number of nanos per search',
    )
  })

  test('cache_write_1h_usd_per_mtok: 2 × input on every built-in Claude row and tier; set per model and tier; unset, none', () => {
    for (const m of load({}).models.filter((m) => m.id.startsWith('claude-'))) {
      const tiers = [m.price!, ...(m.price!.longPrompt ? [m.price!.longPrompt] : [])]
      for (const tier of tiers) expect(tier.cacheWrite1hNanosPerToken).toBe(2 * tier.inputNanosPerToken)
    }
    const haiku = load({}).models.find((m) => m.id === 'claude-haiku-5-5' && m.provider === 'anthropic')!.price!
    expect([haiku.cacheWrite1hNanosPerToken, haiku.longPrompt?.cacheWrite1hNanosPerToken]).toEqual([200, 1000])
    const config = load({
      models: [
        // A built-in row's price overridden; what the entry leaves out stays the row's.
        { id: 'claude-opus-5-5', provider: 'anthropic', cache_write_1h_usd_per_mtok: 7.5 },
        { id: 'claude-sonnet-5-5', provider: 'anthropic', input_usd_per_mtok: 3 },
        {
          id: 'tiered',
          provider: 'anthropic',
          profiles: ['max'],
          quality: 80,
          input_usd_per_mtok: 1,
          output_usd_per_mtok: 4,
          cache_write_1h_usd_per_mtok: 2,
          long_prompt: {
            above_tokens: 1000,
            input_usd_per_mtok: 2,
            output_usd_per_mtok: 6,
            cache_write_1h_usd_per_mtok: 4,
          },
        },
        // A model configured without it (DeepSeek's Anthropic-compatible API, say): no 1-hour price.
        {
          id: 'plain',
          provider: 'anthropic',
          profiles: ['max'],
          quality: 80,
          input_usd_per_mtok: 1,
          output_usd_per_mtok: 4,
        },
      ],
    })
    const priceOf = (id: string) => config.models.find((m) => m.id === id && m.provider === 'anthropic')!.price!
    expect(priceOf('claude-opus-5-5').cacheWrite1hNanosPerToken).toBe(7500)
    expect(priceOf('claude-sonnet-5-5')).toMatchObject({ inputNanosPerToken: 3000, cacheWrite1hNanosPerToken: 4000 })
    expect(priceOf('tiered')).toMatchObject({
      cacheWrite1hNanosPerToken: 2000,
      longPrompt: { cacheWrite1hNanosPerToken: 4000 },
    })
    expect(priceOf('plain')).not.toHaveProperty('cacheWrite1hNanosPerToken')
    expect(priceOf('plain').cacheWriteNanosPerToken).toBe(1000)
    // GPT and DeepSeek rows bill no 1-hour cache write.
    for (const m of load({}).models.filter((m) => !m.id.startsWith('claude-'))) {
      expect(m.price).not.toHaveProperty('cacheWrite1hNanosPerToken')
    }
  })

  test('adaptive_thinking: off for the built-in Claude 4.5 models and for a new model, on where [[models]] sets it', () => {
    const config = load({
      models: [
        { id: 'claude-opus-4-5', provider: 'anthropic', adaptive_thinking: true },
        {
          id: 'claude-opus-4-6',
          provider: 'anthropic',
          profiles: ['max'],
          quality: 97,
          input_usd_per_mtok: 5,
          output_usd_per_mtok: 25,
        },
      ],
    })
    const flag = (id: string, provider: string) =>
      config.models.find((m) => m.id === id && m.provider === provider)?.capabilities.adaptiveThinking
    for (const provider of ['anthropic', 'openrouter']) {
      for (const id of ['claude-sonnet-4-5', 'claude-haiku-4-5']) expect(flag(id, provider)).toBe(false)
    }
    expect(flag('claude-opus-4-5', 'openrouter')).toBe(false)
    // The override turns it on for its own id and provider only; the rest of the row stays built-in.
    expect(flag('claude-opus-4-5', 'anthropic')).toBe(true)
    expect(config.models.find((m) => m.id === 'claude-opus-4-5' && m.provider === 'anthropic')).toMatchObject({
      upstreamModel: 'claude-opus-4-5-20251101',
      capabilities: { thinking: true, tools: true },
    })
    expect(flag('claude-opus-4-6', 'anthropic')).toBe(false)
    expect(() =>
      load({ models: [{ id: 'claude-opus-4-5', provider: 'anthropic', adaptive_thinking: 'yes' }] }),
    ).toThrow('models.0.adaptive_thinking: expected boolean')
  })

  test('the Claude 5.5 rows carry the rules their API enforces; Sonnet 4.5 its retirement; [[models]] sets either', () => {
    const config = load({
      models: [
        { id: 'claude-sonnet-5-5', provider: 'anthropic', sampling_parameters: true },
        { id: 'claude-haiku-4-5', provider: 'anthropic', retires_on: '2027-02-01', thinking_off: 'unsupported' },
      ],
    })
    const row = (id: string, provider: string) => config.models.find((m) => m.id === id && m.provider === provider)
    const rules55 = { adaptiveThinking: true, budgetThinking: false, forcedToolChoice: false, assistantPrefill: false }
    expect(row('claude-sonnet-5-5', 'openrouter')).toMatchObject({
      upstreamModel: 'anthropic/claude-sonnet-5.5',
      contextWindow: 1_000_000,
      maxOutputTokens: 128_000,
      capabilities: { ...rules55, thinkingOff: 'between_tools', samplingParameters: false },
    })
    expect(row('claude-opus-5-5', 'anthropic')).toMatchObject({
      upstreamModel: 'claude-opus-5-5',
      capabilities: { ...rules55, thinkingOff: 'unsupported', samplingParameters: false },
    })
    // The override changes its own field only.
    expect(row('claude-sonnet-5-5', 'anthropic')?.capabilities).toMatchObject({ ...rules55, samplingParameters: true })
    expect(row('claude-sonnet-4-5', 'anthropic')?.retiresAt).toBe(Date.parse('2026-11-30T00:00:00Z'))
    expect(row('claude-haiku-4-5', 'anthropic')).toMatchObject({
      retiresAt: Date.parse('2027-02-01T00:00:00Z'),
      capabilities: { thinkingOff: 'unsupported', budgetThinking: true, samplingParameters: true },
    })
    expect(row('gpt-5.1', 'openai')?.capabilities.samplingParameters).toBe(false)
    expect(row('gpt-5.1', 'openai')?.retiresAt).toBe(Date.parse('2027-04-01T00:00:00Z'))
    for (const [id, provider] of [
      ['gpt-5-mini', 'openai'],
      ['gpt-5-mini', 'openrouter'],
      ['gpt-5-nano', 'openai'],
    ]) {
      expect(row(id!, provider!)?.retiresAt).toBe(Date.parse('2026-12-11T00:00:00Z'))
    }
    expect(row('claude-opus-4-5', 'anthropic')?.retiresAt).toBeUndefined()

    expect(() =>
      load({ models: [{ id: 'claude-haiku-4-5', provider: 'anthropic', retires_on: '2027-02-30' }] }),
    ).toThrow('svc.toml: models.0.retires_on: 2027-02-30 is not a date (YYYY-MM-DD)')
    expect(() => load({ models: [{ id: 'claude-haiku-4-5', provider: 'anthropic', retires_on: 'soon' }] })).toThrow(
      'models.0.retires_on',
    )
    expect(() => load({ models: [{ id: 'claude-haiku-4-5', provider: 'anthropic', thinking_off: 'off' }] })).toThrow(
      'models.0.thinking_off',
    )
    // The efforts a model takes: OpenAI's list for GPT-5.1, a file's own for another model.
    expect(row('gpt-5.1', 'openai')?.capabilities.reasoningEfforts).toEqual(['none', 'low', 'medium', 'high'])
    // The 4.5 generation takes no effort parameter at all.
    for (const id of ['claude-opus-4-5', 'claude-sonnet-4-5', 'claude-haiku-4-5']) {
      expect(row(id, 'anthropic')?.capabilities.reasoningEfforts).toEqual([])
    }
    // DeepSeek maps every effort name itself: none is brought within a list.
    expect(row('deepseek-flash', 'deepseek')?.capabilities.reasoningEfforts).toBeUndefined()
    const efforts = load({ models: [{ id: 'deepseek-reasoner', provider: 'deepseek', reasoning_efforts: ['high'] }] })
    expect(efforts.models.find((m) => m.id === 'deepseek-reasoner')?.capabilities.reasoningEfforts).toEqual(['high'])
    // `none`: the model can be asked not to reason (a request with thinking turned off).
    const noReasoning = load({
      models: [{ id: 'deepseek-reasoner', provider: 'deepseek', reasoning_efforts: ['none'] }],
    })
    expect(noReasoning.models.find((m) => m.id === 'deepseek-reasoner')?.capabilities.reasoningEfforts).toEqual([
      'none',
    ])
    expect(() =>
      load({ models: [{ id: 'deepseek-reasoner', provider: 'deepseek', reasoning_efforts: ['off'] }] }),
    ).toThrow('models.0.reasoning_efforts')
  })

  test('long_prompt: Claude Haiku 5.5 has its tier built in; [[models]] sets one, unset cache prices at its input price', () => {
    const config = load({
      models: [
        {
          id: 'big-context',
          provider: 'anthropic',
          profiles: ['max'],
          quality: 80,
          input_usd_per_mtok: 1,
          output_usd_per_mtok: 4,
          long_prompt: { above_tokens: 200_000, input_usd_per_mtok: 2, output_usd_per_mtok: 6 },
        },
      ],
    })
    const priceOf = (id: string) => config.models.find((m) => m.id === id && m.provider === 'anthropic')?.price
    expect(priceOf('claude-haiku-5-5')).toMatchObject({
      inputNanosPerToken: 100,
      outputNanosPerToken: 500,
      cacheReadNanosPerToken: 10,
      cacheWriteNanosPerToken: 125,
      longPrompt: {
        aboveTokens: 100_000,
        inputNanosPerToken: 500,
        outputNanosPerToken: 2500,
        cacheReadNanosPerToken: 50,
        cacheWriteNanosPerToken: 625,
      },
    })
    expect(priceOf('big-context')?.longPrompt).toEqual({
      aboveTokens: 200_000,
      inputNanosPerToken: 2000,
      outputNanosPerToken: 6000,
      cacheReadNanosPerToken: 2000,
      cacheWriteNanosPerToken: 2000,
    })
    expect(priceOf('claude-sonnet-5-5')?.longPrompt).toBeUndefined()
    // OpenAI's GPT-6 generation: 2 × input and cache, 1.5 × output above 272,000 input tokens.
    const openai = (id: string) => config.models.find((m) => m.id === id && m.provider === 'openai')?.price
    expect(openai('gpt-6-sol')).toMatchObject({
      inputNanosPerToken: 2000,
      cacheReadNanosPerToken: 200,
      cacheWriteNanosPerToken: 2500,
      outputNanosPerToken: 10_000,
      longPrompt: {
        aboveTokens: 272_000,
        inputNanosPerToken: 4000,
        cacheReadNanosPerToken: 400,
        cacheWriteNanosPerToken: 5000,
        outputNanosPerToken: 15_000,
      },
    })
    expect(openai('gpt-6.1-terra')).toMatchObject({
      inputNanosPerToken: 1000,
      outputNanosPerToken: 5000,
      longPrompt: { inputNanosPerToken: 2000, cacheReadNanosPerToken: 100, outputNanosPerToken: 7500 },
    })
    expect(() =>
      load({ models: [{ id: 'claude-haiku-5-5', provider: 'anthropic', long_prompt: { above_tokens: 1 } }] }),
    ).toThrow('models.0.long_prompt')
    expect(() =>
      load({
        models: [
          {
            id: 'claude-haiku-5-5',
            provider: 'anthropic',
            long_prompt: { above_tokens: 1, input_usd_per_mtok: 0.0001, output_usd_per_mtok: 1 },
          },
        ],
      }),
    ).toThrow('svc.toml: models.0.long_prompt.input_usd_per_mtok: price 0.0001')
  })

  test('peak: DeepSeek V4 has its peak hours built in; [[models]] sets them; a span that is no span stops start-up', () => {
    const config = load({
      models: [
        {
          id: 'night-owl',
          provider: 'deepseek',
          profiles: ['ultra_saver'],
          quality: 70,
          input_usd_per_mtok: 1,
          output_usd_per_mtok: 2,
          peak: { hours_utc: ['22:30-24:00'], input_usd_per_mtok: 3, output_usd_per_mtok: 4 },
        },
      ],
    })
    const row = (id: string) => config.models.find((m) => m.id === id && m.provider === 'deepseek')
    expect(row('deepseek-flash')?.price).toMatchObject({
      inputNanosPerToken: 150,
      cacheReadNanosPerToken: 3,
      outputNanosPerToken: 600,
      peak: {
        inputNanosPerToken: 300,
        cacheReadNanosPerToken: 6,
        outputNanosPerToken: 1200,
        minutesUtc: [
          [60, 240],
          [360, 600],
        ],
        weekdaysOnly: true,
      },
    })
    expect(row('deepseek-v4-pro')?.price?.peak).toMatchObject({ inputNanosPerToken: 1320, outputNanosPerToken: 3960 })
    // The retired V3.2 names keep their prices then, and their date.
    expect(row('deepseek-chat')).toMatchObject({
      retiresAt: Date.parse('2026-07-24T00:00:00Z'),
      price: { inputNanosPerToken: 280, outputNanosPerToken: 420 },
    })
    expect(row('deepseek-chat')?.price?.peak).toBeUndefined()
    expect(row('night-owl')?.price?.peak).toEqual({
      inputNanosPerToken: 3000,
      outputNanosPerToken: 4000,
      cacheReadNanosPerToken: 3000,
      cacheWriteNanosPerToken: 3000,
      minutesUtc: [[1350, 1440]],
      weekdaysOnly: false,
    })
    const withPeak = (hours: string[]) => () =>
      load({
        models: [
          {
            id: 'deepseek-flash',
            provider: 'deepseek',
            peak: { hours_utc: hours, input_usd_per_mtok: 1, output_usd_per_mtok: 1 },
          },
        ],
      })
    expect(withPeak(['10:00-09:00'])).toThrow(
      'svc.toml: models.0.peak.hours_utc.0: peak hours 10:00-09:00 are not a span',
    )
    expect(withPeak(['09:00-10:00', '10:75-11:00'])).toThrow(
      'svc.toml: models.0.peak.hours_utc.1: peak hours 10:75-11:00 are not a span',
    )
    expect(withPeak(['23:00-25:00'])).toThrow('peak hours 23:00-25:00 are not a span')
    expect(withPeak(['9-10'])).toThrow('models.0.peak.hours_utc')
  })

  test('anthropic_cache_control: on for the well-known openrouter provider, off for any other unless the file sets it', () => {
    const fromEnv = load({}, { OPENROUTER_API_KEY: 'o', OPENAI_API_KEY: 'k', ANTHROPIC_API_KEY: 'a' })
    expect(fromEnv.providers.openrouter?.anthropicCacheControl).toBe(true)
    expect(fromEnv.providers.openai?.anthropicCacheControl).toBe(false)
    expect(fromEnv.providers.anthropic?.anthropicCacheControl).toBe(false)
    const fromFile = load({
      providers: {
        openrouter: { kind: 'openai-chat', base_url: 'https://openrouter.ai/api/v1' },
        router: { kind: 'openai-chat', base_url: 'http://router/v1', anthropic_cache_control: true },
        x: { kind: 'openai-chat', base_url: 'http://x/v1' },
      },
    })
    expect(fromFile.providers.openrouter?.anthropicCacheControl).toBe(true)
    expect(fromFile.providers.router?.anthropicCacheControl).toBe(true)
    expect(fromFile.providers.x?.anthropicCacheControl).toBe(false)
  })

  test('anthropic_signatures: on for the well-known anthropic provider and hosts under anthropic.com, off for other servers unless the file sets it', () => {
    expect(load({}, { ANTHROPIC_API_KEY: 'a' }).providers.anthropic?.anthropicSignatures).toBe(true)
    const fromFile = load({
      providers: {
        // The well-known id keeps it wherever it points (a test's simulator plays Anthropic).
        anthropic: { kind: 'anthropic', base_url: 'http://127.0.0.1:8787' },
        claude: { kind: 'anthropic', base_url: 'https://API.Anthropic.com' },
        deepseek: { kind: 'anthropic', base_url: 'https://api.deepseek.com/anthropic' },
        kimi: { kind: 'anthropic', base_url: 'https://api.moonshot.ai/anthropic' },
        lookalike: { kind: 'anthropic', base_url: 'https://api.anthropic.com.example.net' },
        proxy: { kind: 'anthropic', base_url: 'https://llm-proxy.internal', anthropic_signatures: true },
        glm: { kind: 'anthropic', base_url: 'https://api.z.ai/api/anthropic', anthropic_signatures: false },
      },
    })
    const flags = Object.fromEntries(
      Object.entries(fromFile.providers).map(([id, provider]) => [id, provider.anthropicSignatures]),
    )
    expect(flags).toEqual({
      anthropic: true,
      claude: true,
      deepseek: false,
      kimi: false,
      lookalike: false,
      proxy: true,
      glm: false,
    })
    expect(() =>
      load({ providers: { x: { kind: 'anthropic', base_url: 'http://x', anthropic_signatures: 'yes' } } }),
    ).toThrow('providers.x.anthropic_signatures')
  })

  test('what start-up refuses that once slipped through: an id outside the pattern, an empty host, an expiry no date holds', () => {
    // A provider id with a capital was not checked at all: a misspelt kind served 500s at request time.
    expect(() => load({ providers: { Sim: { kind: 'openai_chat', base_url: 'http://x' } } })).toThrow(
      'svc.toml: providers.Sim: not a valid name (must match ^[a-z0-9][a-z0-9_-]*$)',
    )
    // Empty, Bun listens on every interface, where the README promises 127.0.0.1 unless told.
    expect(() => load({ server: { host: '' } })).toThrow(
      'svc.toml: server.host: expected string length greater or equal to 1',
    )
    // A billion days made every view of the starter grant fail (Invalid Date).
    expect(() => load({ billing: { starter_grant: { usd: 1, expires_in_days: 1_000_000_000 } } })).toThrow(
      'svc.toml: billing.starter_grant.expires_in_days: expected integer to be less or equal to 36500',
    )
    expect(load({ billing: { starter_grant: { usd: 1, expires_in_days: 36_500 } } }).billing.starterGrant).toBeDefined()
  })

  test('openai_itself: on for the well-known openai provider, api.openai.com and Azure OpenAI, off for compatible servers unless the file sets it', () => {
    expect(load({}, { OPENAI_API_KEY: 'o' }).providers.openai?.openaiItself).toBe(true)
    const fromFile = load({
      providers: {
        openai: { kind: 'openai-responses', base_url: 'http://127.0.0.1:8787/v1' },
        direct: { kind: 'openai-responses', base_url: 'https://API.OpenAI.com/v1' },
        azure: { kind: 'openai-responses', base_url: 'https://team.openai.azure.com/openai/v1' },
        llama: { kind: 'openai-responses', base_url: 'http://127.0.0.1:8080/v1' },
        vllm: { kind: 'openai-responses', base_url: 'https://vllm.internal/v1' },
        lookalike: { kind: 'openai-responses', base_url: 'https://api.openai.com.example.net/v1' },
        proxy: { kind: 'openai-responses', base_url: 'https://llm-proxy.internal/v1', openai_itself: true },
      },
    })
    const flags = Object.fromEntries(Object.entries(fromFile.providers).map(([id, p]) => [id, p.openaiItself]))
    expect(flags).toEqual({
      openai: true,
      direct: true,
      azure: true,
      llama: false,
      vllm: false,
      lookalike: false,
      proxy: true,
    })
    expect(() =>
      load({ providers: { x: { kind: 'openai-responses', base_url: 'http://x', openai_itself: 1 } } }),
    ).toThrow('providers.x.openai_itself')
  })

  test("reasoning_in_encrypted_content: on for Ollama's port and ollama.com, off elsewhere (vLLM refuses it) unless the file sets it", () => {
    const fromFile = load({
      providers: {
        ollama: { kind: 'openai-responses', base_url: 'http://localhost:11434/v1' },
        cloud: { kind: 'openai-responses', base_url: 'https://ollama.com/v1' },
        vllm: { kind: 'openai-responses', base_url: 'http://gpu-box:8000/v1' },
        told: { kind: 'openai-responses', base_url: 'http://gpu-box:8001/v1', reasoning_in_encrypted_content: true },
        // Named so behind a proxy, on another port.
        'ollama-box': { kind: 'openai-responses', base_url: 'https://llm.internal/ollama/v1' },
      },
    })
    expect(
      Object.fromEntries(Object.entries(fromFile.providers).map(([id, p]) => [id, p.reasoningInEncryptedContent])),
    ).toEqual({ ollama: true, cloud: true, vllm: false, told: true, 'ollama-box': false })
    const named = load({ providers: { ollama: { kind: 'openai-responses', base_url: 'https://llm.internal/v1' } } })
    expect(named.providers.ollama?.reasoningInEncryptedContent).toBe(true)
  })

  test("thought_signatures: Google's form for its Gemini API and Vertex AI hosts, OpenRouter's for it, off elsewhere unless the file sets it", () => {
    const google = 'https://generativelanguage.googleapis.com/v1beta/openai'
    const fromFile = load({
      providers: {
        gemini: { kind: 'openai-chat', base_url: google },
        vertex: {
          kind: 'openai-chat',
          base_url:
            'https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/openapi',
        },
        openrouter: { kind: 'openai-chat', base_url: 'https://openrouter.ai/api/v1' },
        openai: { kind: 'openai-chat', base_url: 'https://api.openai.com/v1' },
        litellm: { kind: 'openai-chat', base_url: 'http://litellm:4000/v1', thought_signatures: 'extra_content' },
        off: { kind: 'openai-chat', base_url: google, thought_signatures: 'off' },
      },
    })
    const forms = Object.fromEntries(
      Object.entries(fromFile.providers).map(([id, provider]) => [id, provider.thoughtSignatures]),
    )
    expect(forms).toEqual({
      gemini: 'extra_content',
      vertex: 'extra_content',
      openrouter: 'reasoning_details',
      openai: 'off',
      litellm: 'extra_content',
      off: 'off',
    })
    expect(load({}, { OPENROUTER_API_KEY: 'o' }).providers.openrouter?.thoughtSignatures).toBe('reasoning_details')
    expect(() =>
      load({ providers: { x: { kind: 'openai-chat', base_url: 'http://x', thought_signatures: true } } }),
    ).toThrow('providers.x.thought_signatures')
  })

  test('thinking_toggle: on for the well-known deepseek provider, off for any other unless the file sets it', () => {
    const fromEnv = load({}, { DEEPSEEK_API_KEY: 'd', OPENROUTER_API_KEY: 'o' })
    expect(fromEnv.providers.deepseek?.thinkingToggle).toBe(true)
    expect(fromEnv.providers.openrouter?.thinkingToggle).toBe(false)
    const fromFile = load({
      providers: {
        deepseek: { kind: 'openai-chat', base_url: 'https://api.deepseek.com' },
        glm: { kind: 'openai-chat', base_url: 'http://glm/v1', thinking_toggle: true },
        x: { kind: 'openai-chat', base_url: 'http://x/v1' },
      },
    })
    expect(fromFile.providers.deepseek?.thinkingToggle).toBe(true)
    expect(fromFile.providers.glm?.thinkingToggle).toBe(true)
    expect(fromFile.providers.x?.thinkingToggle).toBe(false)
    expect(() =>
      load({ providers: { x: { kind: 'openai-chat', base_url: 'http://x', thinking_toggle: 'on' } } }),
    ).toThrow('providers.x.thinking_toggle')
  })

  test('top_k: on for OpenRouter (its id or host), off for any other unless the file sets it', () => {
    const fromEnv = load({}, { OPENROUTER_API_KEY: 'o', OPENAI_API_KEY: 'k', DEEPSEEK_API_KEY: 'd' })
    expect(fromEnv.providers.openrouter?.topK).toBe(true)
    expect(fromEnv.providers.openai?.topK).toBe(false)
    expect(fromEnv.providers.deepseek?.topK).toBe(false)
    const fromFile = load({
      providers: {
        router: { kind: 'openai-chat', base_url: 'https://openrouter.ai/api/v1' },
        vllm: { kind: 'openai-chat', base_url: 'http://gpu:8000/v1', top_k: true },
        mistral: { kind: 'openai-chat', base_url: 'https://api.mistral.ai/v1' },
        openrouter: { kind: 'openai-chat', top_k: false },
      },
    })
    expect(fromFile.providers.router?.topK).toBe(true)
    expect(fromFile.providers.vllm?.topK).toBe(true)
    expect(fromFile.providers.mistral?.topK).toBe(false)
    expect(fromFile.providers.openrouter?.topK).toBe(false)
    expect(() => load({ providers: { x: { kind: 'openai-chat', base_url: 'http://x', top_k: 40 } } })).toThrow(
      'providers.x.top_k',
    )
  })

  test('reasoning_content: on for the well-known deepseek provider, off for any other unless the file sets it', () => {
    const fromEnv = load({}, { DEEPSEEK_API_KEY: 'd', OPENROUTER_API_KEY: 'o', OPENAI_API_KEY: 'k' })
    expect(fromEnv.providers.deepseek?.reasoningContent).toBe(true)
    expect(fromEnv.providers.openrouter?.reasoningContent).toBe(false)
    expect(fromEnv.providers.openai?.reasoningContent).toBe(false)

    const fromFile = load(
      {
        providers: {
          // The well-known id keeps its default even when the section leaves the key out.
          deepseek: { kind: 'openai-chat', base_url: 'https://api.deepseek.com' },
          x: { kind: 'openai-chat', base_url: 'http://x/v1' },
          ds: { kind: 'openai-chat', base_url: 'http://ds/v1', reasoning_content: true },
          off: { kind: 'openai-chat', base_url: 'http://off/v1', reasoning_content: false },
        },
      },
      { DEEPSEEK_API_KEY: 'd' },
    )
    expect(fromFile.providers.deepseek).toMatchObject({ apiKey: 'd', reasoningContent: true })
    expect(fromFile.providers.x?.reasoningContent).toBe(false)
    expect(fromFile.providers.ds?.reasoningContent).toBe(true)
    expect(fromFile.providers.off?.reasoningContent).toBe(false)
    expect(
      load({ providers: { deepseek: { kind: 'openai-chat', base_url: 'http://d', reasoning_content: false } } })
        .providers.deepseek?.reasoningContent,
    ).toBe(false)
  })

  test('system_messages: in_place unless the file says merged; anything else is refused', () => {
    const config = load(
      {
        providers: {
          vllm: { kind: 'openai-chat', base_url: 'http://vllm/v1', system_messages: 'merged' },
          x: { kind: 'openai-chat', base_url: 'http://x/v1' },
        },
      },
      { OPENAI_API_KEY: 'k' },
    )
    expect(config.providers.vllm?.systemMessages).toBe('merged')
    expect(config.providers.x?.systemMessages).toBe('in_place')
    expect(config.providers.openai?.systemMessages).toBe('in_place')
    expect(() =>
      load({ providers: { x: { kind: 'openai-chat', base_url: 'http://x', system_messages: 'first' } } }),
    ).toThrow('providers.x.system_messages')
  })

  test('a well-known provider table may leave base_url out: the one svc knows; README: OpenAI kept on Chat', () => {
    const config = load(
      {
        providers: {
          openai: { kind: 'openai-chat' },
          anthropic: { kind: 'anthropic', api_key_env: 'MY_ANTHROPIC' },
          openrouter: { kind: 'openai-chat' },
          deepseek: { kind: 'openai-chat', base_url: 'https://api.deepseek.com/' },
        },
      },
      { OPENAI_API_KEY: 'k', MY_ANTHROPIC: 'a' },
    )
    expect(Object.values(config.providers).map((p) => [p.id, p.kind, p.baseUrl, p.apiKey])).toEqual([
      ['openai', 'openai-chat', 'https://api.openai.com/v1', 'k'],
      ['anthropic', 'anthropic', 'https://api.anthropic.com', 'a'],
      ['openrouter', 'openai-chat', 'https://openrouter.ai/api/v1', undefined],
      ['deepseek', 'openai-chat', 'https://api.deepseek.com', undefined],
    ])
    // OpenAI's reasoning models refuse max_tokens on Chat.
    expect(config.providers.openai?.maxTokensField).toBe('max_completion_tokens')
  })

  test('a base_url is an absolute http(s) URL with a host', () => {
    const baseUrl = (url: string) =>
      load({ providers: { x: { kind: 'openai-chat', base_url: url } } }).providers.x?.baseUrl
    expect(
      ['http://x', 'HTTPS://api.example.com/v1/', 'http://[::1]:8000/v1', 'http://127.0.0.1:9'].map(baseUrl),
    ).toEqual(['http://x', 'HTTPS://api.example.com/v1', 'http://[::1]:8000/v1', 'http://127.0.0.1:9'])
  })

  test('a starter grant below 2^53 nanos, of 15 significant digits at most, loads; none at 0', () => {
    const grant = (usd: number) => load({ billing: { starter_grant: { usd } } }).billing.starterGrant
    expect(grant(9_007_199.25474099)).toEqual({ nanos: 9_007_199_254_740_990, expiresInDays: undefined })
    expect(grant(0.000000001)).toEqual({ nanos: 1, expiresInDays: undefined })
    expect(grant(0)).toBeNull()
    expect(() => grant(9_007_199.255)).toThrow('billing.starter_grant.usd')
  })

  // Read as the grants API reads `usd`: rounded, 0.0000000004 USD was a grant of 0 nanos,
  // 0.0000000006 one of a nano, and 8500000.000000004 (more digits than a double keeps) was taken.
  test('a starter grant the ledger cannot hold exactly stops the start, naming the key', () => {
    const refusal = (usd: number) => {
      try {
        load({ billing: { starter_grant: { usd } } })
      } catch (error) {
        return (error as Error).message
      }
    }
    const finer = (usd: string) =>
      `svc.toml: billing.starter_grant.usd: the amount ${usd} USD is finer than the ledger counts: it keeps whole nanos (0.000000001 USD), at most 9 decimals`
    expect([0.0000000004, 0.0000000006, 8_500_000.000000004].map(refusal)).toEqual([
      finer('0.0000000004'),
      finer('0.0000000006'),
      'svc.toml: billing.starter_grant.usd: the amount 8500000.000000004 USD has more significant digits than a parsed number keeps exactly (15)',
    ])
  })

  test('secrets come from the environment variables the file names', () => {
    const config = load(
      {
        server: { admin_token_env: 'MY_ADMIN' },
        providers: { corp: { kind: 'openai-chat', base_url: 'http://127.0.0.1:9/v1/', api_key_env: 'CORP_KEY' } },
      },
      { MY_ADMIN: 'tok', CORP_KEY: 'ck' },
    )
    expect(config.server.adminToken).toBe('tok')
    expect(config.providers.corp).toMatchObject({ apiKey: 'ck', baseUrl: 'http://127.0.0.1:9/v1' })
  })
})
