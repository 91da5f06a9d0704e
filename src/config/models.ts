// The models svc routes to: the built-in catalog merged with the file's [[models]] entries, each
// checked where the file gives it, and their USD prices converted once to integer nanos.
import { isCalendarDate } from '../lib/timestamps'
import { type Price, type TokenPrices, usdPer1kToNanosPerSearch, usdPerMtokToNanosPerToken } from '../ledger/pricing'
import { builtinCatalog, type CatalogRow, defaultWebSearchUsdPer1k, type TokenPricesUsd } from './catalog'
import { ConfigError } from './config-error'
import type { CatalogModel, ProviderConfig } from './load'
import type { ConfigFile, ModelSection } from './schema'

const rowKey = (id: string, provider: string) => `${id}\u0000${provider}`

export function resolveModels(file: ConfigFile, where: string): CatalogModel[] {
  const useBuiltin = file.catalog?.builtin ?? true
  const rows = new Map<string, CatalogRow | undefined>()
  if (useBuiltin) for (const row of builtinCatalog) rows.set(rowKey(row.id, row.provider), row)

  for (const [i, entry] of (file.models ?? []).entries()) {
    const at = `${where}: models.${i}`
    checkEntry(entry, at)
    const key = rowKey(entry.id, entry.provider)
    if (entry.enabled === false) {
      rows.set(key, undefined)
      continue
    }
    // Under another provider, a built-in id is that model served there (as the catalog lists a
    // model under each provider that serves it), so the built-in row lends its facts. An earlier
    // entry of the file under another provider is a model of its own and lends nothing.
    const base = rows.get(key) ?? (useBuiltin ? builtinCatalog.find((r) => r.id === entry.id) : undefined)
    rows.set(key, mergeModel(entry, base, at))
  }

  const models: CatalogModel[] = []
  for (const row of rows.values()) {
    if (!row) continue
    models.push(toCatalogModel(row))
  }
  return models
}

/** The file's [[models]] (as they end up) whose provider nothing configures. */
export function modelsWithoutProvider(
  file: ConfigFile,
  providers: Record<string, ProviderConfig>,
  models: CatalogModel[],
): { id: string; provider: string }[] {
  const entries = new Set((file.models ?? []).map((entry) => rowKey(entry.id, entry.provider)))
  return models
    .filter((m) => !Object.hasOwn(providers, m.provider) && entries.has(rowKey(m.id, m.provider)))
    .map(({ id, provider }) => ({ id, provider }))
}

const tokenPriceKeys = [
  'input_usd_per_mtok',
  'output_usd_per_mtok',
  'cache_read_usd_per_mtok',
  'cache_write_usd_per_mtok',
  'cache_write_1h_usd_per_mtok',
] as const

/**
 * Refuses what an entry gives that cannot be charged or read, naming the file and the key: every
 * price given (a model priced in part is checked too), peak hours, a retirement date. Checked on
 * the entry, where its index and keys are known, rather than on the row merged from it.
 */
function checkEntry(entry: ModelSection, at: string): void {
  const tables: [string, Partial<Record<(typeof tokenPriceKeys)[number], number>> | undefined][] = [
    ['', entry],
    ['long_prompt.', entry.long_prompt],
    ['peak.', entry.peak],
  ]
  for (const [prefix, table] of tables) {
    for (const key of tokenPriceKeys) {
      const usd = table?.[key]
      if (usd !== undefined) refuseAt(`${at}.${prefix}${key}`, () => usdPerMtokToNanosPerToken(usd))
    }
  }
  const search = entry.web_search_usd_per_1k
  if (search !== undefined) refuseAt(`${at}.web_search_usd_per_1k`, () => usdPer1kToNanosPerSearch(search))
  for (const [j, span] of (entry.peak?.hours_utc ?? []).entries()) {
    refuseAt(`${at}.peak.hours_utc.${j}`, () => minutesOfSpan(span))
  }
  const retiresOn = entry.retires_on
  if (retiresOn !== undefined) refuseAt(`${at}.retires_on`, () => dayStartOf(retiresOn))
}

/** Runs a conversion of a value of the file; its RangeError becomes a ConfigError naming `at`. */
function refuseAt(at: string, convert: () => unknown): void {
  try {
    convert()
  } catch (err) {
    if (err instanceof RangeError) throw new ConfigError(`${at}: ${err.message}`)
    throw err
  }
}

/**
 * A [[models]] entry overrides its base field by field (the built-in row of its id and provider,
 * or of its id under another provider), or stands alone.
 */
function mergeModel(entry: ModelSection, base: CatalogRow | undefined, where: string): CatalogRow {
  const pick = <T>(value: T | undefined, fallback: T | undefined, name: string, required = true): T => {
    if (value !== undefined) return value
    if (fallback !== undefined) return fallback
    if (required) throw new ConfigError(`${where}: ${name} is required for a model that is not in the built-in catalog`)
    return undefined as T
  }
  const price = (value: number | undefined, fallback: number | undefined) => value ?? fallback ?? Number.NaN
  return {
    id: entry.id,
    provider: entry.provider,
    upstreamModel: pick(
      entry.upstream_model,
      base?.provider === entry.provider ? base.upstreamModel : entry.id,
      'upstream_model',
    ),
    displayName: entry.display_name ?? base?.displayName ?? entry.id,
    profiles: pick(entry.profiles, base?.profiles, 'profiles'),
    quality: pick(entry.quality, base?.quality, 'quality'),
    inputUsdPerMtok: price(entry.input_usd_per_mtok, base?.inputUsdPerMtok),
    outputUsdPerMtok: price(entry.output_usd_per_mtok, base?.outputUsdPerMtok),
    // An unpriced cache read or write costs what plain input costs: never free by omission.
    cacheReadUsdPerMtok: price(entry.cache_read_usd_per_mtok, base?.cacheReadUsdPerMtok ?? entry.input_usd_per_mtok),
    cacheWriteUsdPerMtok: price(entry.cache_write_usd_per_mtok, base?.cacheWriteUsdPerMtok ?? entry.input_usd_per_mtok),
    // Unpriced, a 1-hour write is never asked for (list-price.ts): no price to fall back on.
    cacheWrite1hUsdPerMtok: entry.cache_write_1h_usd_per_mtok ?? base?.cacheWrite1hUsdPerMtok,
    webSearchUsdPer1k: entry.web_search_usd_per_1k ?? base?.webSearchUsdPer1k,
    longPrompt: entry.long_prompt
      ? { aboveTokens: entry.long_prompt.above_tokens, ...tierPricesOf(entry.long_prompt) }
      : base?.longPrompt,
    peak: entry.peak
      ? {
          hoursUtc: entry.peak.hours_utc,
          weekdaysOnly: entry.peak.weekdays_only ?? false,
          ...tierPricesOf(entry.peak),
        }
      : base?.peak,
    contextWindow: entry.context_window ?? base?.contextWindow ?? 128_000,
    maxOutputTokens: entry.max_output_tokens ?? base?.maxOutputTokens ?? 8_192,
    tools: entry.tools ?? base?.tools ?? true,
    vision: entry.vision ?? base?.vision ?? false,
    thinking: entry.thinking ?? base?.thinking ?? false,
    adaptiveThinking: entry.adaptive_thinking ?? base?.adaptiveThinking ?? false,
    budgetThinking: entry.budget_thinking ?? base?.budgetThinking ?? true,
    thinkingOff: entry.thinking_off ?? base?.thinkingOff ?? 'disabled',
    samplingParameters: entry.sampling_parameters ?? base?.samplingParameters ?? true,
    forcedToolChoice: entry.forced_tool_choice ?? base?.forcedToolChoice ?? true,
    assistantPrefill: entry.assistant_prefill ?? base?.assistantPrefill ?? true,
    reasoningEfforts: entry.reasoning_efforts ?? base?.reasoningEfforts,
    promptCaching: entry.prompt_caching ?? base?.promptCaching ?? false,
    retiresOn: entry.retires_on ?? base?.retiresOn,
  }
}

const tokenPricesOf = (usd: TokenPricesUsd): TokenPrices => ({
  inputNanosPerToken: usdPerMtokToNanosPerToken(usd.inputUsdPerMtok),
  outputNanosPerToken: usdPerMtokToNanosPerToken(usd.outputUsdPerMtok),
  cacheReadNanosPerToken: usdPerMtokToNanosPerToken(usd.cacheReadUsdPerMtok),
  cacheWriteNanosPerToken: usdPerMtokToNanosPerToken(usd.cacheWriteUsdPerMtok),
  ...(usd.cacheWrite1hUsdPerMtok === undefined
    ? {}
    : { cacheWrite1hNanosPerToken: usdPerMtokToNanosPerToken(usd.cacheWrite1hUsdPerMtok) }),
})

/** "HH:MM-HH:MM" → [start, end) in minutes after UTC midnight; a span that is no span is an error. */
/** A price tier of the file (`long_prompt`, `peak`): unset cache prices cost what its input costs. */
function tierPricesOf(tier: {
  input_usd_per_mtok: number
  output_usd_per_mtok: number
  cache_read_usd_per_mtok?: number
  cache_write_usd_per_mtok?: number
  cache_write_1h_usd_per_mtok?: number
}): TokenPricesUsd {
  return {
    inputUsdPerMtok: tier.input_usd_per_mtok,
    outputUsdPerMtok: tier.output_usd_per_mtok,
    cacheReadUsdPerMtok: tier.cache_read_usd_per_mtok ?? tier.input_usd_per_mtok,
    cacheWriteUsdPerMtok: tier.cache_write_usd_per_mtok ?? tier.input_usd_per_mtok,
    cacheWrite1hUsdPerMtok: tier.cache_write_1h_usd_per_mtok,
  }
}

function minutesOfSpan(span: string): [number, number] {
  const [start, end] = span.split('-').map((time) => {
    const [hours, minutes] = time.split(':').map(Number)
    return hours! * 60 + minutes!
  }) as [number, number]
  if (!(start < end && end <= 24 * 60) || /:(?:[6-9]\d)/.test(span)) {
    throw new RangeError(`peak hours ${span} are not a span of the day (HH:MM-HH:MM, start before end, UTC)`)
  }
  return [start, end]
}

/**
 * A merged row as the router sees it. What the file gave was checked by checkEntry; the catalog is
 * code, converted by every load (so by every test), hence no message of its own here.
 */
function toCatalogModel(row: CatalogRow): CatalogModel {
  const prices = [row.inputUsdPerMtok, row.outputUsdPerMtok, row.cacheReadUsdPerMtok, row.cacheWriteUsdPerMtok]
  const price: Price | null = prices.every((p) => Number.isFinite(p))
    ? {
        ...tokenPricesOf(row),
        webSearchNanos: usdPer1kToNanosPerSearch(row.webSearchUsdPer1k ?? defaultWebSearchUsdPer1k),
        ...(row.longPrompt
          ? { longPrompt: { ...tokenPricesOf(row.longPrompt), aboveTokens: row.longPrompt.aboveTokens } }
          : {}),
        ...(row.peak
          ? {
              peak: {
                ...tokenPricesOf(row.peak),
                minutesUtc: row.peak.hoursUtc.map(minutesOfSpan),
                weekdaysOnly: row.peak.weekdaysOnly,
              },
            }
          : {}),
      }
    : null
  return {
    id: row.id,
    provider: row.provider,
    upstreamModel: row.upstreamModel,
    displayName: row.displayName,
    profiles: row.profiles,
    quality: row.quality,
    price,
    contextWindow: row.contextWindow,
    maxOutputTokens: row.maxOutputTokens,
    capabilities: {
      tools: row.tools,
      vision: row.vision,
      thinking: row.thinking,
      promptCaching: row.promptCaching,
      adaptiveThinking: row.adaptiveThinking,
      budgetThinking: row.budgetThinking,
      thinkingOff: row.thinkingOff,
      samplingParameters: row.samplingParameters,
      forcedToolChoice: row.forcedToolChoice,
      assistantPrefill: row.assistantPrefill,
      ...(row.reasoningEfforts ? { reasoningEfforts: row.reasoningEfforts } : {}),
    },
    ...(row.retiresOn === undefined ? {} : { retiresAt: dayStartOf(row.retiresOn) }),
  }
}

/** A retirement date as the instant it starts (UTC midnight); one that is no calendar date is an error. */
function dayStartOf(date: string): number {
  if (!isCalendarDate(date)) throw new RangeError(`${date} is not a date (YYYY-MM-DD)`)
  return Date.parse(`${date}T00:00:00Z`)
}
