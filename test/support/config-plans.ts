// Valid svc.toml configurations generated from the README's grammar ("Configuration", "The
// built-in catalog"), and what each implies, worked out from the README alone: which models each
// profile may route to, the windows its models routes report, the prices a leg is charged at.
// Every provider points at the upstream simulator, or has no key: no plan can send a byte past
// 127.0.0.1.
import fc from 'fast-check'
import { builtinCatalog } from '../../src/config/catalog'
import type { ProviderKind, RoutingMode } from '../../src/config/schema'

type Doc = Record<string, unknown>

export interface ConfigPlan {
  /** The config as an object; test/support/config-toml.ts writes it out as svc.toml. */
  doc: Doc
  env: Record<string, string>
  /** The gateway's clock: retirement dates fall on either side of it. */
  now: number
}

export const modes: readonly RoutingMode[] = ['max', 'pro', 'ultra_saver']
export const profileOf: Record<RoutingMode, string> = { max: 'svc-max', pro: 'svc-pro', ultra_saver: 'svc-ultra-saver' }

/** Off DeepSeek's peak hours (01–04 and 06–10 UTC) so that the built-in rows charge their base prices. */
const clocks = ['2026-11-22T12:00:00Z', '2026-12-15T12:00:00Z', '2027-05-04T18:30:00Z'].map(Date.parse)

/** The providers the usual environment variables configure (README, "Configuration"). */
export const wellKnown = {
  anthropic: { env: 'ANTHROPIC_API_KEY', kind: 'anthropic' },
  openai: { env: 'OPENAI_API_KEY', kind: 'openai-responses' },
  openrouter: { env: 'OPENROUTER_API_KEY', kind: 'openai-chat' },
  deepseek: { env: 'DEEPSEEK_API_KEY', kind: 'openai-chat' },
} as const satisfies Record<string, { env: string; kind: ProviderKind }>
type WellKnownId = keyof typeof wellKnown

/** The key a provider's requests carry: the simulator's record of it names the provider. */
export const keyOf = (providerId: string) => `key-${providerId}`

/** `{base_url}/v1/messages` for anthropic, `{base_url}/chat/completions` and `/responses` for the others. */
const baseUrlFor = (sim: string, kind: ProviderKind) => (kind === 'anthropic' ? sim : `${sim}/v1`)

const kinds: ProviderKind[] = ['anthropic', 'openai-chat', 'openai-responses']
const builtinIds = new Set(builtinCatalog.map((r) => r.id))

/** A price in USD per Mtok that is a whole number of nanos per token (a step of 0.001). */
const usdPrice = fc.oneof(
  fc.integer({ min: 0, max: 100_000 }).map((n) => n / 1000),
  fc.constantFrom(0, 0.001, 0.3, 1.25, 3, 15, 75, 0.075),
)

/** A provider of the file: a kind, a base URL at the simulator, its key's variable set or not. */
interface ProviderChoice {
  id: string
  kind: ProviderKind
  keyEnv: string | null
  /** The variable holds a key; else unset or blank, which is no key. */
  keyed: 'set' | 'unset' | 'blank'
  trailingSlash: boolean
  headers: Record<string, string> | null
}

const providerId = fc
  .stringMatching(/^[a-z0-9][a-z0-9_-]{0,10}$/)
  .filter((id) => !(id in wellKnown) && !id.startsWith('nowhere'))

const customProvider = (id: string): fc.Arbitrary<ProviderChoice> =>
  fc.record({
    id: fc.constant(id),
    kind: fc.constantFrom(...kinds),
    keyEnv: fc.option(
      fc.stringMatching(/^[A-Z][A-Z0-9_]{0,15}$/).map((n) => `SIM_${n}`),
      { freq: 5 },
    ),
    keyed: fc.constantFrom('set', 'set', 'set', 'unset', 'blank'),
    trailingSlash: fc.boolean(),
    headers: fc.option(fc.constant({ 'X-Title': 'svc properties', 'HTTP-Referer': 'http://127.0.0.1/' }), {
      freq: 3,
    }),
  })

/**
 * How a well-known provider appears: not at all; by its variable alone (the real API's URL, so
 * only where no model can route to it); or as a file table at the simulator, keyed by its usual
 * variable or by the table's own `api_key_env`.
 */
type WellKnownMode = 'absent' | 'env-only' | 'table-usual-key' | 'table-own-key' | 'table-no-key'

/** Names for new models: plain, unicode, and with TOML's awkward characters. */
const modelId = fc
  .oneof(
    fc.stringMatching(/^[a-z][a-z0-9.-]{0,14}$/),
    fc.constantFrom('модель', '模型-7b', 'qwen3:30b', 'llama 3.1 (local)', 'naïve-coder', 'a"quoted"b', 'back\\slash'),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
  )
  .filter((id) => id.trim() !== '' && !builtinIds.has(id))

interface ModelChoice {
  id: string
  provider: string
  fields: Doc
}

/** A new model: every field the README lists, each present or left to its default. */
const newModel = (providers: string[]): fc.Arbitrary<ModelChoice> =>
  fc
    .record(
      {
        id: modelId,
        provider: fc.constantFrom(...providers),
        upstream_model: fc.stringMatching(/^[a-z][a-z0-9:./-]{0,20}$/),
        display_name: fc.string({ unit: 'grapheme', maxLength: 12 }),
        profiles: fc.subarray([...modes]),
        quality: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 100, noNaN: true })),
        prices: fc.oneof(
          fc.record(
            {
              input_usd_per_mtok: usdPrice,
              output_usd_per_mtok: usdPrice,
              cache_read_usd_per_mtok: usdPrice,
              cache_write_usd_per_mtok: usdPrice,
            },
            { requiredKeys: ['input_usd_per_mtok', 'output_usd_per_mtok'] },
          ),
          // No price, or half of one: no price, no route.
          fc.record({ input_usd_per_mtok: usdPrice }, { requiredKeys: [] }),
          fc.record({ output_usd_per_mtok: usdPrice }),
        ),
        context_window: fc.integer({ min: 1_024, max: 2_000_000 }),
        max_output_tokens: fc.integer({ min: 1, max: 200_000 }),
        retires_on: fc.constantFrom('2026-01-01', '2026-12-01', '2027-01-31', '2030-06-30'),
        enabled: fc.constant(true),
      },
      { requiredKeys: ['id', 'provider', 'profiles', 'quality', 'prices'] },
    )
    .map(({ id, provider, prices, ...rest }) => ({ id, provider, fields: { id, provider, ...rest, ...prices } }))

/** An override of a built-in row of a provider the plan configures: some fields, or enabled = false. */
const override = (providers: string[]): fc.Arbitrary<ModelChoice> | null => {
  const rows = builtinCatalog.filter((r) => providers.includes(r.provider))
  if (rows.length === 0) return null
  return fc
    .record({
      row: fc.constantFrom(...rows),
      fields: fc.oneof(
        fc.constant({ enabled: false }),
        fc.record(
          {
            input_usd_per_mtok: usdPrice,
            output_usd_per_mtok: usdPrice,
            cache_read_usd_per_mtok: usdPrice,
            cache_write_usd_per_mtok: usdPrice,
            context_window: fc.integer({ min: 1_024, max: 2_000_000 }),
            max_output_tokens: fc.integer({ min: 1, max: 200_000 }),
            profiles: fc.subarray([...modes]),
            quality: fc.integer({ min: 0, max: 100 }),
            retires_on: fc.constantFrom('2026-01-01', '2027-01-31', '2030-06-30'),
          },
          { requiredKeys: [] },
        ),
      ),
    })
    .map(({ row, fields }) => ({
      id: row.id,
      provider: row.provider,
      fields: { id: row.id, provider: row.provider, ...fields },
    }))
}

const serverSection = fc.record(
  {
    host: fc.constantFrom('127.0.0.1', '0.0.0.0', '::1'),
    port: fc.integer({ min: 0, max: 65535 }),
    database: fc.constantFrom('.svc/svc.db', '/var/lib/svc/svc.db'),
    admin_token_env: fc.constant('MY_ADMIN_TOKEN'),
    max_body_bytes: fc.integer({ min: 65_536, max: 64 * 1024 * 1024 }),
    request_memory_mb: fc.integer({ min: 1, max: 64 * 1024 }),
    request_wait_seconds: fc.integer({ min: 0, max: 600 }),
    shutdown_grace_seconds: fc.integer({ min: 0, max: 120 }),
    device_poll_interval_seconds: fc.integer({ min: 0, max: 60 }),
  },
  { requiredKeys: [] },
)

const billingSection = fc.record(
  {
    byok_fee_percent: fc.integer({ min: 0, max: 100 }),
    starter_grant: fc.record(
      {
        usd: fc.integer({ min: 0, max: 10_000 }).map((c) => c / 100),
        expires_in_days: fc.integer({ min: 1, max: 365 }),
      },
      { requiredKeys: ['usd'] },
    ),
  },
  { requiredKeys: [] },
)

// Timeouts long enough for the simulator to answer: a 1 ms first-byte timeout would serve exactly
// what it says (a timeout), which is not what this property is about.
const routingSection = fc.record(
  {
    connect_timeout_ms: fc.integer({ min: 5_000, max: 60_000 }),
    first_byte_timeout_ms: fc.integer({ min: 5_000, max: 600_000 }),
    idle_timeout_ms: fc.integer({ min: 5_000, max: 600_000 }),
    ping_interval_ms: fc.integer({ min: 1, max: 240_000 }),
    max_attempts: fc.integer({ min: 1, max: 10 }),
    stream_upstream_above_max_tokens: fc.integer({ min: 0, max: 200_000 }),
  },
  { requiredKeys: [] },
)

const profileKnobs = fc.record(
  {
    price_weight: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.double({ min: 0, max: 100, noNaN: true })),
    quality_floor: fc.integer({ min: 0, max: 100 }),
  },
  { requiredKeys: [] },
)

/** Drops the keys a record left out (fast-check's optional keys are absent, never undefined). */
const present = (d: Doc) => Object.fromEntries(Object.entries(d).filter(([, v]) => v !== undefined))

/** Builds the file's providers and the environment from the choices made. */
function providersAndEnv(
  sim: string,
  builtin: boolean,
  known: Record<WellKnownId, WellKnownMode>,
  custom: ProviderChoice[],
) {
  const providers: Doc = {}
  const env: Record<string, string> = {}
  /** Providers whose models can be reached only at the simulator. */
  const atSim: string[] = []
  for (const [id, mode] of Object.entries(known) as [WellKnownId, WellKnownMode][]) {
    const usual = wellKnown[id]
    // With the catalog on, a well-known key alone routes its built-in rows to the real API.
    const effective = mode === 'env-only' && builtin ? 'table-usual-key' : mode
    if (effective === 'absent') continue
    if (effective === 'env-only') {
      env[usual.env] = keyOf(id)
      continue
    }
    const table: Doc = { kind: usual.kind, base_url: baseUrlFor(sim, usual.kind) }
    if (effective === 'table-usual-key') env[usual.env] = keyOf(id)
    if (effective === 'table-own-key') {
      table.api_key_env = `OWN_${usual.env}`
      env[`OWN_${usual.env}`] = keyOf(id)
    }
    providers[id] = table
    atSim.push(id)
  }
  for (const p of custom) {
    const table: Doc = { kind: p.kind, base_url: baseUrlFor(sim, p.kind) + (p.trailingSlash ? '/' : '') }
    if (p.keyEnv) table.api_key_env = p.keyEnv
    if (p.headers) table.headers = p.headers
    if (p.keyEnv && p.keyed !== 'unset') env[p.keyEnv] = p.keyed === 'set' ? keyOf(p.id) : ''
    providers[p.id] = table
    atSim.push(p.id)
  }
  return { providers, env, atSim }
}

/** A valid configuration whose every reachable provider is the simulator at `sim`. */
export function configPlans(sim: string): fc.Arbitrary<ConfigPlan> {
  const knownModes = fc.record({
    anthropic: fc.constantFrom<WellKnownMode>('absent', 'env-only', 'table-usual-key', 'table-own-key', 'table-no-key'),
    openai: fc.constantFrom<WellKnownMode>('absent', 'env-only', 'table-usual-key', 'table-own-key'),
    openrouter: fc.constantFrom<WellKnownMode>('absent', 'table-usual-key'),
    deepseek: fc.constantFrom<WellKnownMode>('absent', 'env-only', 'table-usual-key'),
  })
  const custom: fc.Arbitrary<ProviderChoice[]> = fc
    .uniqueArray(providerId, { maxLength: 3 })
    .chain((ids) => (ids.length === 0 ? fc.constant([]) : fc.tuple(...ids.map(customProvider))))
  return fc
    .record({ builtin: fc.boolean(), known: knownModes, custom, now: fc.constantFrom(...clocks) })
    .chain(({ builtin, known, custom, now }) => {
      const { providers, env, atSim } = providersAndEnv(sim, builtin, known, custom)
      // A model may name a provider the file never configures: accepted, never a candidate.
      const modelProviders = [...atSim, 'nowhere']
      const overrides = builtin ? override(atSim) : null
      const entries = fc.array(overrides ? fc.oneof(newModel(modelProviders), overrides) : newModel(modelProviders), {
        maxLength: 6,
      })
      return fc
        .record(
          {
            models: entries.map((ms) => uniqueModels(ms).map((m) => m.fields)),
            server: serverSection,
            billing: billingSection,
            routing: routingSection,
            profiles: fc.record(
              { max: profileKnobs, pro: profileKnobs, ultra_saver: profileKnobs },
              { requiredKeys: [] },
            ),
            // builtin = true written out, or left to its default.
            catalogWritten: fc.boolean(),
          },
          { requiredKeys: ['models', 'catalogWritten'] },
        )
        .map(({ models, catalogWritten, ...sections }) => {
          const catalog = builtin && !catalogWritten ? undefined : { builtin }
          const doc = present({ ...sections, catalog, providers, models })
          return { doc, env, now }
        })
    })
}

/** One entry per id and provider: README is silent on a second [[models]] entry of the same pair. */
function uniqueModels(models: ModelChoice[]): ModelChoice[] {
  const seen = new Set<string>()
  return models.filter((m) => {
    const key = `${m.id}\u0000${m.provider}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

// ---- what a plan implies ------------------------------------------------------------------------

export interface ImpliedModel {
  id: string
  provider: string
  upstreamModel: string
  profiles: readonly RoutingMode[]
  quality: number
  /** Nanos per token, or null: no price, no route. */
  price: { input: number; output: number; cacheRead: number; cacheWrite: number } | null
  /** USD per Mtok, for the ranking's blended price. */
  blendedUsd: number
  contextWindow: number
  maxOutputTokens: number
  retiresOn?: string
}

export interface Implied {
  models: ImpliedModel[]
  /** Provider id → its key, for those configured with one. */
  keys: Map<string, string>
  knobs: Record<RoutingMode, { priceWeight: number; qualityFloor: number }>
  /** The first account's grant, nanos; null for none. */
  starterGrantNanos: number | null
}

/**
 * README, "Configuration": a [[models]] entry overrides the built-in row of the same id and
 * provider field by field, or adds a model; `enabled = false` removes it. Where the README names
 * no default (context window, max output, unset cache prices), the code's is taken: 128,000 and
 * 8,192 tokens, and the input price ("never free by omission", as for long_prompt and peak).
 */
export function implied(plan: ConfigPlan): Implied {
  const doc = plan.doc as {
    catalog?: { builtin?: boolean }
    providers?: Record<string, { api_key_env?: string }>
    models?: Record<string, unknown>[]
    profiles?: Partial<Record<RoutingMode, { price_weight?: number; quality_floor?: number }>>
    billing?: { starter_grant?: { usd: number } }
  }
  const rows = new Map<string, Doc>()
  const keyOfRow = (id: unknown, provider: unknown) => `${id}\u0000${provider}`
  if (doc.catalog?.builtin !== false) {
    for (const r of builtinCatalog) {
      rows.set(keyOfRow(r.id, r.provider), {
        id: r.id,
        provider: r.provider,
        upstream_model: r.upstreamModel,
        profiles: r.profiles,
        quality: r.quality,
        input_usd_per_mtok: r.inputUsdPerMtok,
        output_usd_per_mtok: r.outputUsdPerMtok,
        cache_read_usd_per_mtok: r.cacheReadUsdPerMtok,
        cache_write_usd_per_mtok: r.cacheWriteUsdPerMtok,
        context_window: r.contextWindow,
        max_output_tokens: r.maxOutputTokens,
        retires_on: r.retiresOn,
      })
    }
  }
  for (const entry of doc.models ?? []) {
    const key = keyOfRow(entry.id, entry.provider)
    if (entry.enabled === false) rows.delete(key)
    else rows.set(key, { ...rows.get(key), ...entry })
  }
  const keys = new Map<string, string>()
  for (const [id, known] of Object.entries(wellKnown)) if (plan.env[known.env]) keys.set(id, plan.env[known.env]!)
  for (const [id, table] of Object.entries(doc.providers ?? {})) {
    const variable = table.api_key_env ?? (wellKnown as Record<string, { env: string }>)[id]?.env
    const key = variable ? plan.env[variable] : undefined
    if (key) keys.set(id, key)
    else keys.delete(id)
  }
  const knob = (mode: RoutingMode, priceWeight: number, qualityFloor: number) => ({
    priceWeight: doc.profiles?.[mode]?.price_weight ?? priceWeight,
    qualityFloor: doc.profiles?.[mode]?.quality_floor ?? qualityFloor,
  })
  const starterUsd = doc.billing?.starter_grant?.usd ?? 5
  return {
    models: [...rows.values()].map(impliedModel),
    keys,
    knobs: { max: knob('max', 0, 0), pro: knob('pro', 8, 0), ultra_saver: knob('ultra_saver', 10, 60) },
    starterGrantNanos: starterUsd > 0 ? Math.round(starterUsd * 1e9) : null,
  }
}

function impliedModel(row: Doc): ImpliedModel {
  const usd = (k: string) => row[k] as number | undefined
  const input = usd('input_usd_per_mtok')
  const output = usd('output_usd_per_mtok')
  const nanos = (v: number) => Math.round(v * 1000)
  const price =
    input === undefined || output === undefined
      ? null
      : {
          input: nanos(input),
          output: nanos(output),
          cacheRead: nanos(usd('cache_read_usd_per_mtok') ?? input),
          cacheWrite: nanos(usd('cache_write_usd_per_mtok') ?? input),
        }
  return {
    id: row.id as string,
    provider: row.provider as string,
    upstreamModel: (row.upstream_model as string | undefined) ?? (row.id as string),
    // Absent only for an entry moved to a provider svc does not know: never a candidate anyway.
    profiles: (row.profiles as RoutingMode[] | undefined) ?? [],
    quality: (row.quality as number | undefined) ?? 0,
    price,
    blendedUsd: price ? (3 * input! + output!) / 4 : Number.NaN,
    contextWindow: (row.context_window as number | undefined) ?? 128_000,
    maxOutputTokens: (row.max_output_tokens as number | undefined) ?? 8_192,
    ...(row.retires_on === undefined ? {} : { retiresOn: row.retires_on as string }),
  }
}

/** README, "Routing": a profile's models with a key for the provider, a known price, not retired (no BYOK keys here). */
export const routable = (imp: Implied, mode: RoutingMode, now: number): ImpliedModel[] =>
  imp.models.filter(
    (m) =>
      m.profiles.includes(mode) &&
      m.price !== null &&
      imp.keys.has(m.provider) &&
      (m.retiresOn === undefined || now < Date.parse(`${m.retiresOn}T00:00:00Z`)),
  )

/** README, "Routing": eligible adds the profile's quality floor (credit and fit are ample here). */
export const eligible = (imp: Implied, mode: RoutingMode, now: number): ImpliedModel[] =>
  routable(imp, mode, now).filter((m) => m.quality >= imp.knobs[mode].qualityFloor)

/** README, "Routing", Scored: higher is better. */
export function scoreOf(imp: Implied, mode: RoutingMode, m: ImpliedModel): number {
  const pricePart = imp.knobs[mode].priceWeight * Math.log2(1 + m.blendedUsd)
  return mode === 'ultra_saver' ? -pricePart : m.quality - pricePart
}

/**
 * README, "Model routes": the largest context window and output among the models a profile can
 * route an account to (its eligible ones: a model below the floor never serves it); null with none.
 */
export function windowsOf(imp: Implied, mode: RoutingMode, now: number) {
  const ms = eligible(imp, mode, now)
  if (ms.length === 0) return { contextWindow: null, maxOutputTokens: null }
  return {
    contextWindow: Math.max(...ms.map((m) => m.contextWindow)),
    maxOutputTokens: Math.max(...ms.map((m) => m.maxOutputTokens)),
  }
}
