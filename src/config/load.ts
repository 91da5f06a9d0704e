// svc.toml + an environment → one validated Config. The environment is handed in (the CLI's is
// process.env, cli/context.ts); every setting svc takes from it is resolved here, and the rest of svc
// receives the resolved values. Outside config, only the HTTP client reads the proxy variables
// (providers/http1/client.ts) and the start-up its heap size (cli/jsc-heap.ts).
import { existsSync, readFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { Value } from '@sinclair/typebox/value'
import { parse as parseToml } from 'smol-toml'
import type { ModelEffort } from '../exchange/types'
import type { ThoughtSignatureForm } from '../protocols/thought-signature'
import { ipv6ZoneProblem } from '../lib/ipv6-zone'
import { describeValueError } from '../lib/schema-errors'
import type { Price } from '../ledger/pricing'
import { UsdAmountError, usdNumberToNanos } from '../ledger/usd-amount'
import { ConfigError } from './config-error'
import { modelsWithoutProvider, resolveModels } from './models'
import { isAnthropicItself, isOllama, isOpenAIItself, takesTopK, thoughtSignatureFormOf } from './provider-hosts'
import { ConfigFile, type ProviderKind, type RoutingMode, type ThinkingOff } from './schema'

export type Env = Record<string, string | undefined>

export interface ProviderConfig {
  id: string
  kind: ProviderKind
  baseUrl: string
  /** The platform's key for this provider, resolved from the environment; absent → BYOK only. */
  apiKey?: string
  /** The variable the key is read from, to name it when it is unset. */
  apiKeyEnv?: string
  headers: Record<string, string>
  maxTokensField: 'max_tokens' | 'max_completion_tokens'
  /** openai-chat: replay an assistant turn's thinking as `reasoning_content` (DeepSeek needs it on tool-call turns). */
  reasoningContent: boolean
  /** openai-chat: send DeepSeek's `thinking: {type: "disabled"}` when the client turns thinking off. */
  thinkingToggle: boolean
  /** openai-chat: where instructions given mid-conversation go (README, Configuration). */
  systemMessages: 'in_place' | 'merged'
  /** openai-chat: ask the router to cache Claude models' prompts (schema.ts, anthropic_cache_control). */
  anthropicCacheControl: boolean
  /** openai-chat: the server takes `top_k` (schema.ts, top_k). Unset counts as false. */
  topK?: boolean
  /**
   * anthropic: the server is Anthropic itself (schema.ts, anthropic_signatures): thinking history
   * and tool ids are held to its rules. Unset counts as true, what every anthropic upstream got before.
   */
  anthropicSignatures?: boolean
  /**
   * openai-responses: the server is OpenAI's own Responses API (schema.ts, openai_itself): a Responses
   * client's body goes through as it came, and web search runs there. Unset counts as true.
   */
  openaiItself?: boolean
  /** openai-responses, a compatible server: thinking back as plain text in encrypted_content (schema.ts). */
  reasoningInEncryptedContent?: boolean
  /** openai-chat: how tool calls' Gemini thought signatures go back (schema.ts, thought_signatures). */
  thoughtSignatures?: ThoughtSignatureForm
}

export interface CatalogModel {
  id: string
  provider: string
  upstreamModel: string
  displayName: string
  profiles: RoutingMode[]
  quality: number
  /** null when the entry gives no price: such a model is never routed to (no price, no route). */
  price: Price | null
  contextWindow: number
  maxOutputTokens: number
  capabilities: {
    tools: boolean
    vision: boolean
    thinking: boolean
    promptCaching: boolean
    /** Anthropic thinking as `adaptive` + output_config.effort rather than a budget; absent means false. */
    adaptiveThinking?: boolean
    /** What the model refuses with a 400 (catalog.ts). Absent where a model is built by hand: true, `disabled`. */
    budgetThinking?: boolean
    thinkingOff?: ThinkingOff
    samplingParameters?: boolean
    forcedToolChoice?: boolean
    assistantPrefill?: boolean
    /** The efforts it takes (absent: any). */
    reasoningEfforts?: readonly ModelEffort[]
  }
  /** Epoch ms of the provider's retirement date: from then on the router skips the model. */
  retiresAt?: number
}

/** A Claude model, by the name a router like OpenRouter gives it (`anthropic/…`). */
export const isRoutedClaude = (model: CatalogModel) => model.upstreamModel.startsWith('anthropic/')

/** Whether the model's provider has retired it by `now` (its catalog row's retires_on). */
export const isRetired = (model: CatalogModel, now: number): boolean =>
  model.retiresAt !== undefined && now >= model.retiresAt

export interface Config {
  server: {
    host: string
    port: number
    database: string
    adminToken?: string
    /** A token `/metrics` asks for as a Bearer (README, Operating it); absent: open to any caller. */
    metricsToken?: string
    /** 32-byte key for sealing BYOK provider keys; absent → BYOK keys cannot be stored or used. */
    masterKey?: string
    /** The variable the master key is read from, to name it in messages. */
    masterKeyEnv: string
    maxBodyBytes: number
    /** What the model requests in flight may hold together (relay/admission.ts); unset: from the memory limit. */
    requestMemoryBytes?: number
    /** How long a request past that budget waits for room before its 529 (relay/admission.ts). */
    requestWaitMs: number
    shutdownGraceSeconds: number
    devicePollIntervalSeconds: number
  }
  billing: {
    byokFeePercent: number
    starterGrant: { nanos: number; expiresInDays?: number } | null
  }
  routing: {
    connectTimeoutMs: number
    firstByteTimeoutMs: number
    idleTimeoutMs: number
    /** A started stream whose upstream is this long silent gets a keep-alive frame. */
    pingIntervalMs: number
    maxAttempts: number
    /**
     * A non-streaming request whose output limit is above this is streamed from the upstream and
     * gathered into JSON (relay/assembled-answer.ts): its answer may take longer to write than
     * firstByteTimeoutMs, which would otherwise bound the whole of it.
     */
    streamUpstreamAboveMaxTokens: number
  }
  /** Ranking knobs per routing mode. */
  profiles: Record<RoutingMode, { priceWeight: number; qualityFloor: number }>
  providers: Record<string, ProviderConfig>
  models: CatalogModel[]
  /**
   * Models of the file's [[models]] whose provider no table or key variable configures: never a
   * candidate, so `svc serve` names them (a misspelt provider id would otherwise lose the model
   * without a word). Built-in rows of an unconfigured provider are not listed: that is normal.
   */
  modelsWithoutProvider: { id: string; provider: string }[]
  /**
   * `openai-responses` providers taken for compatible servers by their host, the file not saying
   * (`openai_itself` unset): `svc serve` names them, since a proxy in front of OpenAI looks the same
   * and was passed Responses clients' bodies before the setting existed.
   */
  compatibleByHost: string[]
  /** The file this came from, if any. */
  source?: string
}

export { ConfigError } from './config-error'

export interface LoadOptions {
  /** --config FILE */
  path?: string
  env: Env
  cwd?: string
  /** Command-line flags; they win over the file. */
  overrides?: { host?: string; port?: number; database?: string }
}

/** Providers that the usual environment variables configure with no file at all. */
const wellKnownProviders: Record<
  string,
  {
    env: string
    kind: ProviderKind
    baseUrl: string
    maxTokensField?: 'max_completion_tokens'
    reasoningContent?: true
    thinkingToggle?: true
    anthropicCacheControl?: true
  }
> = {
  anthropic: { env: 'ANTHROPIC_API_KEY', kind: 'anthropic', baseUrl: 'https://api.anthropic.com' },
  // Responses, not Chat: from GPT-5.6 on, OpenAI's Chat endpoint refuses function tools with any
  // reasoning effort but `none` ("use /v1/responses"), so no agent could use them there. Responses
  // also carries reasoning from turn to turn (encrypted), and serves Codex without translation.
  // max_tokens_field is for a file that sets `[providers.openai] kind = "openai-chat"`.
  openai: {
    env: 'OPENAI_API_KEY',
    kind: 'openai-responses',
    baseUrl: 'https://api.openai.com/v1',
    maxTokensField: 'max_completion_tokens',
  },
  // Claude through it caches nothing unless asked: Chat has no field for Anthropic's cache marks.
  openrouter: {
    env: 'OPENROUTER_API_KEY',
    kind: 'openai-chat',
    baseUrl: 'https://openrouter.ai/api/v1',
    anthropicCacheControl: true,
  },
  // Its thinking models answer 400 when a tool-call turn comes back without its reasoning_content;
  // V4 thinks unless told `thinking: {type: "disabled"}` (api-docs.deepseek.com, Thinking Mode).
  deepseek: {
    env: 'DEEPSEEK_API_KEY',
    kind: 'openai-chat',
    baseUrl: 'https://api.deepseek.com',
    reasoningContent: true,
    thinkingToggle: true,
  },
}

export function findConfigPath(opts: { path?: string; env: Env; cwd?: string }): string | undefined {
  if (opts.path) return resolve(opts.cwd ?? '.', opts.path)
  if (opts.env.SVC_CONFIG) return resolve(opts.cwd ?? '.', opts.env.SVC_CONFIG)
  const local = resolve(opts.cwd ?? '.', 'svc.toml')
  return existsSync(local) ? local : undefined
}

export function loadConfig(opts: LoadOptions): Config {
  const path = findConfigPath(opts)
  let raw: unknown = {}
  if (path) {
    if (!existsSync(path)) throw new ConfigError(`config file ${path} does not exist`)
    try {
      raw = parseToml(readFileSync(path, 'utf8'))
    } catch (err) {
      throw new ConfigError(`${path}: not valid TOML: ${(err as Error).message}`)
    }
  }
  return resolveConfig(raw, { ...opts, source: path })
}

/**
 * SQLite's `:memory:` (a throwaway gateway, nothing kept) is a name, not a path to resolve. A URL
 * (`postgres://…`, as for a shared ledger) is refused: taken as a path, it became a local SQLite
 * file under `./postgres:/…`, and each instance behind a balancer kept its own ledger, keys and credit.
 */
function databasePath(cwd: string, database: string): string {
  if (database === ':memory:') return database
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(database)) {
    // Its scheme alone: the rest may hold a password (user:pass@, ?password=).
    const scheme = database.slice(0, database.indexOf(':'))
    throw new ConfigError(`database ${scheme}://… is a URL: svc's ledger is an SQLite file; give its path`)
  }
  return resolve(cwd, database)
}

/** Validates a parsed config object and resolves secrets and defaults. */
export function resolveConfig(raw: unknown, opts: LoadOptions & { source?: string }): Config {
  const where = opts.source ?? 'config'
  const firstError = Value.Errors(ConfigFile, raw).First()
  if (firstError) {
    throw new ConfigError(`${where}: ${describeValueError(firstError)}`)
  }
  const file = raw as ConfigFile
  const env = opts.env
  const server = file.server ?? {}
  const adminTokenEnv = server.admin_token_env ?? 'SVC_ADMIN_TOKEN'
  const masterKeyEnv = server.master_key_env ?? 'SVC_MASTER_KEY'

  const providers = resolveProviders(file, env, where)
  const models = resolveModels(file, where)

  return {
    server: {
      host: opts.overrides?.host ?? server.host ?? '127.0.0.1',
      port: opts.overrides?.port ?? server.port ?? 8080,
      // --db, then SVC_DATABASE, then the file (README, CLI): an environment set to point every
      // verb at one database must not lose to the file's default path.
      database: databasePath(
        opts.cwd ?? '.',
        opts.overrides?.database ?? nonEmpty(env.SVC_DATABASE) ?? server.database ?? join('.svc', 'svc.db'),
      ),
      adminToken: nonEmpty(env[adminTokenEnv]),
      metricsToken: nonEmpty(env[server.metrics_token_env ?? 'SVC_METRICS_TOKEN']),
      masterKey: nonEmpty(env[masterKeyEnv]),
      masterKeyEnv,
      maxBodyBytes: server.max_body_bytes ?? 32 * 1024 * 1024,
      requestMemoryBytes: server.request_memory_mb === undefined ? undefined : server.request_memory_mb * 1024 ** 2,
      requestWaitMs: (server.request_wait_seconds ?? 10) * 1000,
      shutdownGraceSeconds: server.shutdown_grace_seconds ?? 30,
      devicePollIntervalSeconds: server.device_poll_interval_seconds ?? 5,
    },
    billing: {
      byokFeePercent: file.billing?.byok_fee_percent ?? 5,
      starterGrant: starterGrantOf(file, where),
    },
    routing: {
      connectTimeoutMs: file.routing?.connect_timeout_ms ?? 10_000,
      firstByteTimeoutMs: file.routing?.first_byte_timeout_ms ?? 120_000,
      idleTimeoutMs: file.routing?.idle_timeout_ms ?? 300_000,
      // Anthropic's own streams ping about this often; proxies commonly drop a connection idle for 60 s.
      pingIntervalMs: file.routing?.ping_interval_ms ?? 15_000,
      maxAttempts: file.routing?.max_attempts ?? 3,
      // 4,096 tokens take ~80 s at a slow 50 tokens a second: within the first-byte default as JSON.
      // Below it the JSON call costs svc less CPU than a stream it would have to parse.
      streamUpstreamAboveMaxTokens: file.routing?.stream_upstream_above_max_tokens ?? 4096,
    },
    profiles: {
      max: { priceWeight: file.profiles?.max?.price_weight ?? 0, qualityFloor: file.profiles?.max?.quality_floor ?? 0 },
      pro: { priceWeight: file.profiles?.pro?.price_weight ?? 8, qualityFloor: file.profiles?.pro?.quality_floor ?? 0 },
      ultra_saver: {
        priceWeight: file.profiles?.ultra_saver?.price_weight ?? 10,
        qualityFloor: file.profiles?.ultra_saver?.quality_floor ?? 60,
      },
    },
    providers,
    models,
    modelsWithoutProvider: modelsWithoutProvider(file, providers, models),
    compatibleByHost: Object.entries(file.providers ?? {})
      .filter(
        ([id, section]) =>
          section.kind === 'openai-responses' &&
          section.openai_itself === undefined &&
          providers[id]?.openaiItself === false,
      )
      .map(([id]) => id),
    source: opts.source,
  }
}

const nonEmpty = (v: string | undefined) => (v && v.length > 0 ? v : undefined)

/**
 * The first account's grant, read as the grants API reads an amount: whole nanos below 2^53, or
 * start-up stops (rounded, 0.0000000004 USD was a grant of nothing and 0.0000000006 one of a nano).
 */
function starterGrantOf(file: ConfigFile, where: string): Config['billing']['starterGrant'] {
  const { usd, expires_in_days: expiresInDays } = file.billing?.starter_grant ?? { usd: 5 }
  if (usd === 0) return null
  try {
    return { nanos: usdNumberToNanos(usd), expiresInDays }
  } catch (error) {
    if (!(error instanceof UsdAmountError)) throw error
    throw new ConfigError(`${where}: billing.starter_grant.usd: ${error.message}`)
  }
}

/**
 * A provider's base URL without its trailing slashes. Requests go to `{base_url}/v1/messages` and
 * the like, so it is an absolute http(s) URL with a host; one that is not would fail every request
 * upstream instead of the start. Left out, a well-known id's is the one svc knows.
 */
function baseUrlOf(id: string, url: string | undefined, where: string): string {
  const at = `${where}: providers.${id}.base_url`
  const given = url ?? wellKnownProviders[id]?.baseUrl
  if (given === undefined) {
    throw new ConfigError(`${at}: required (only ${Object.keys(wellKnownProviders).join(', ')} have one by default)`)
  }
  if (!/^https?:\/\//i.test(given) || !URL.parse(given)?.hostname) {
    const zone = ipv6ZoneProblem(given)
    if (zone) throw new ConfigError(`${at}: ${zone} (got ${JSON.stringify(given)})`)
    throw new ConfigError(`${at}: not an absolute http(s) URL with a host (got ${JSON.stringify(given)})`)
  }
  return given.replace(/\/+$/, '')
}

function resolveProviders(file: ConfigFile, env: Env, where: string): Record<string, ProviderConfig> {
  const providers: Record<string, ProviderConfig> = {}
  for (const [id, known] of Object.entries(wellKnownProviders)) {
    const apiKey = nonEmpty(env[known.env])
    if (!apiKey) continue
    providers[id] = {
      id,
      kind: known.kind,
      baseUrl: known.baseUrl,
      apiKey,
      headers: {},
      maxTokensField: known.maxTokensField ?? 'max_tokens',
      reasoningContent: known.reasoningContent ?? false,
      thinkingToggle: known.thinkingToggle ?? false,
      systemMessages: 'in_place',
      anthropicCacheControl: known.anthropicCacheControl ?? false,
      topK: takesTopK(id, known.baseUrl),
      anthropicSignatures: isAnthropicItself(id, known.baseUrl),
      openaiItself: isOpenAIItself(id, known.baseUrl),
      reasoningInEncryptedContent: isOllama(id, known.baseUrl),
      thoughtSignatures: thoughtSignatureFormOf(known.baseUrl),
    }
  }
  for (const [id, section] of Object.entries(file.providers ?? {})) {
    const keyEnv = section.api_key_env ?? wellKnownProviders[id]?.env
    const baseUrl = baseUrlOf(id, section.base_url, where)
    providers[id] = {
      id,
      kind: section.kind,
      baseUrl,
      apiKey: keyEnv ? nonEmpty(env[keyEnv]) : undefined,
      apiKeyEnv: keyEnv,
      headers: section.headers ?? {},
      maxTokensField: section.max_tokens_field ?? wellKnownProviders[id]?.maxTokensField ?? 'max_tokens',
      reasoningContent: section.reasoning_content ?? wellKnownProviders[id]?.reasoningContent ?? false,
      thinkingToggle: section.thinking_toggle ?? wellKnownProviders[id]?.thinkingToggle ?? false,
      systemMessages: section.system_messages ?? 'in_place',
      anthropicCacheControl: section.anthropic_cache_control ?? wellKnownProviders[id]?.anthropicCacheControl ?? false,
      topK: section.top_k ?? takesTopK(id, baseUrl),
      anthropicSignatures: section.anthropic_signatures ?? isAnthropicItself(id, baseUrl),
      openaiItself: section.openai_itself ?? isOpenAIItself(id, baseUrl),
      reasoningInEncryptedContent: section.reasoning_in_encrypted_content ?? isOllama(id, baseUrl),
      thoughtSignatures: section.thought_signatures ?? thoughtSignatureFormOf(baseUrl),
    }
  }
  return providers
}

/** Where `svc login` keeps the gateway URL and key: $XDG_CONFIG_HOME/svc or ~/.config/svc. */
export function userConfigDir(env: Env): string {
  return join(env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config'), 'svc')
}
