// The built-in catalog: current list prices (USD per million tokens) and facts of the models svc
// routes to, per provider that serves them. To update: edit the rows below from the providers'
// pricing pages (anthropic.com/pricing, openai.com/api/pricing, api-docs.deepseek.com/quick_start/pricing,
// openrouter.ai/models), or override any row from svc.toml with a [[models]] entry of the same id
// and provider. Prices, lifecycles and request rules last checked 2026-11-26 (each provider's block
// names its sources); the README says what was left out and why.
import type { ModelEffort } from '../exchange/types'
import type { RoutingMode, ThinkingOff } from './schema'

/** List prices, USD per million tokens. */
export interface TokenPricesUsd {
  inputUsdPerMtok: number
  outputUsdPerMtok: number
  cacheReadUsdPerMtok: number
  /** A 5-minute cache write (or the provider's only kind). */
  cacheWriteUsdPerMtok: number
  /** A 1-hour cache write; unset, svc does not price one (pricing.ts). */
  cacheWrite1hUsdPerMtok?: number
}

export interface CatalogRow extends TokenPricesUsd {
  id: string
  provider: string
  upstreamModel: string
  displayName: string
  profiles: RoutingMode[]
  /** 0–100, a blended judgement of coding-agent quality; the ranking's main input for `max`. */
  quality: number
  contextWindow: number
  maxOutputTokens: number
  tools: boolean
  vision: boolean
  thinking: boolean
  /**
   * Anthropic upstreams: send reasoning as `thinking: {type: "adaptive"}` + `output_config.effort`;
   * false sends a budget, `thinking: {type: "enabled", budget_tokens}`.
   */
  adaptiveThinking: boolean
  /**
   * Anthropic upstreams: the model takes `thinking: {type: "enabled", budget_tokens}`. The 5.x
   * generation answers it with a 400; there a budget goes as adaptive with the budget's effort.
   */
  budgetThinking: boolean
  /** How the model runs without up-front thinking (`ThinkingOff`, schema.ts). */
  thinkingOff: ThinkingOff
  /**
   * The model takes temperature, top_p and top_k. Reasoning models refuse them with a 400 (OpenAI's
   * GPT-5 family takes only the default, Anthropic's 5.x generation none): they are left out.
   */
  samplingParameters: boolean
  /** The model takes a forced tool choice (Anthropic `any`/`tool`, OpenAI `required`/a function). */
  forcedToolChoice: boolean
  /** The model continues a conversation that ends with the client's own assistant turn (a prefill). */
  assistantPrefill: boolean
  /**
   * The reasoning efforts the model takes; another is sent as the nearest of these
   * (thinking-budget.ts). Unset: any, as the client sent it.
   */
  reasoningEfforts?: readonly ModelEffort[]
  promptCaching: boolean
  /** USD per 1,000 searches of the provider's web search tool; unset: `defaultWebSearchUsdPer1k`. */
  webSearchUsdPer1k?: number
  /** Prices for every token of a request whose prompt is longer than `aboveTokens` (pricing.ts). */
  longPrompt?: TokenPricesUsd & { aboveTokens: number }
  /** Prices during the provider's peak hours, "HH:MM-HH:MM" UTC, end excluded (pricing.ts). */
  peak?: TokenPricesUsd & { hoursUtc: readonly string[]; weekdaysOnly: boolean }
  /**
   * The provider's retirement date (YYYY-MM-DD, UTC): from that day on, requests to the model fail,
   * so the router skips it rather than spend an attempt on a certain 404.
   */
  retiresOn?: string
}

/**
 * Anthropic's web search server tool and OpenAI's hosted web search for the GPT-5 family both
 * list at 10 USD per 1,000 searches. A model without its own price is charged this for any search
 * its upstream reports: never free by omission.
 */
export const defaultWebSearchUsdPer1k = 10

type Facts = Omit<CatalogRow, 'provider' | 'upstreamModel'>

const claudeOpus: Facts = {
  id: 'claude-opus-4-5',
  displayName: 'Claude Opus 4.5',
  profiles: ['max'],
  quality: 96,
  inputUsdPerMtok: 5,
  outputUsdPerMtok: 25,
  cacheReadUsdPerMtok: 0.5,
  cacheWriteUsdPerMtok: 6.25,
  // A cache write kept an hour (`ttl: "1h"`) costs 2 × input on every Claude model; each row below
  // sets its own, as its input price differs.
  cacheWrite1hUsdPerMtok: 10,
  contextWindow: 200_000,
  maxOutputTokens: 64_000,
  tools: true,
  vision: true,
  thinking: true,
  // Which thinking types a model accepts depends on the model (the Anthropic SDK's ThinkingConfigParam
  // docs); `adaptive` is the newer one (wire-formats §1), and the 4.5 generation takes budgets. A row
  // for a newer model that takes adaptive (or only adaptive) needs adaptiveThinking: true.
  adaptiveThinking: false,
  budgetThinking: true,
  thinkingOff: 'disabled',
  samplingParameters: true,
  forcedToolChoice: true,
  assistantPrefill: true,
  // No effort parameter: Haiku and Sonnet 4.5 answer one with a 400 ("This model does not support
  // the effort parameter"), Opus 4.5 only behind a beta header. Claude Code sends one whatever model
  // it is routed to, so it is left out.
  reasoningEfforts: [],
  promptCaching: true,
}
// Deprecated; Anthropic retires it on 2026-11-30 (its model deprecations page). Kept until then.
const claudeSonnet: Facts = {
  ...claudeOpus,
  id: 'claude-sonnet-4-5',
  displayName: 'Claude Sonnet 4.5',
  profiles: ['max', 'pro'],
  quality: 92,
  inputUsdPerMtok: 3,
  outputUsdPerMtok: 15,
  cacheReadUsdPerMtok: 0.3,
  cacheWriteUsdPerMtok: 3.75,
  cacheWrite1hUsdPerMtok: 6,
  retiresOn: '2026-11-30',
}
// The 5.5 generation (platform.claude.com's model pages and migration guides): 1M context without a
// beta header, 128K output, adaptive thinking on by default. Each refuses with a 400 a thinking
// budget, sampling parameters, an assistant prefill and a forced tool choice. Cache writes (5 min)
// cost 1.25 × input, 1-hour ones 2 ×; reads 0.05 × (Sonnet 5.5's were cut to that on 2026-10-07).
const claudeSonnet55: Facts = {
  ...claudeOpus,
  id: 'claude-sonnet-5-5',
  displayName: 'Claude Sonnet 5.5',
  profiles: ['max', 'pro'],
  quality: 95,
  inputUsdPerMtok: 2,
  outputUsdPerMtok: 10,
  cacheReadUsdPerMtok: 0.1,
  cacheWriteUsdPerMtok: 2.5,
  cacheWrite1hUsdPerMtok: 4,
  contextWindow: 1_000_000,
  maxOutputTokens: 128_000,
  adaptiveThinking: true,
  budgetThinking: false,
  thinkingOff: 'between_tools',
  samplingParameters: false,
  forcedToolChoice: false,
  assistantPrefill: false,
  reasoningEfforts: ['low', 'medium', 'high', 'xhigh', 'max'],
}
// Thinks on every request: `disabled` is refused, and no lighter setting is documented for it.
const claudeOpus55: Facts = {
  ...claudeSonnet55,
  id: 'claude-opus-5-5',
  displayName: 'Claude Opus 5.5',
  profiles: ['max'],
  quality: 98,
  inputUsdPerMtok: 4,
  outputUsdPerMtok: 20,
  cacheReadUsdPerMtok: 0.2,
  cacheWriteUsdPerMtok: 5,
  cacheWrite1hUsdPerMtok: 8,
  thinkingOff: 'unsupported',
}
const claudeHaiku: Facts = {
  ...claudeOpus,
  id: 'claude-haiku-4-5',
  displayName: 'Claude Haiku 4.5',
  profiles: ['pro', 'ultra_saver'],
  quality: 80,
  inputUsdPerMtok: 1,
  outputUsdPerMtok: 5,
  cacheReadUsdPerMtok: 0.1,
  cacheWriteUsdPerMtok: 1.25,
  cacheWrite1hUsdPerMtok: 2,
}
// Priced by prompt length: a request whose prompt (input, cache reads and writes) exceeds 100,000
// tokens pays the dearer tier on every token, output included. Anthropic places it for
// classification, extraction, routing and sub-agent work, so it serves the cheap profile only (and
// with it Claude Code's background calls), not a coding agent's main loop. Its newer tokenizer
// counts the same text as ~30 % more tokens than Haiku 4.5's. Like Sonnet 5.5 it refuses a budget,
// sampling parameters and a prefill; it takes `disabled`, and a forced tool choice, which thinking
// (on by default) refuses, is left to another model.
const claudeHaiku55: Facts = {
  ...claudeSonnet55,
  id: 'claude-haiku-5-5',
  displayName: 'Claude Haiku 5.5',
  profiles: ['ultra_saver'],
  quality: 84,
  inputUsdPerMtok: 0.1,
  outputUsdPerMtok: 0.5,
  cacheReadUsdPerMtok: 0.01,
  cacheWriteUsdPerMtok: 0.125,
  cacheWrite1hUsdPerMtok: 0.2,
  longPrompt: {
    aboveTokens: 100_000,
    inputUsdPerMtok: 0.5,
    outputUsdPerMtok: 2.5,
    cacheReadUsdPerMtok: 0.05,
    cacheWriteUsdPerMtok: 0.625,
    cacheWrite1hUsdPerMtok: 1,
  },
  thinkingOff: 'disabled',
}
// Before GPT-5.6, OpenAI bills no separate cache write: written tokens cost the plain input price.
// The GPT-5 family reasons by default and then refuses a temperature other than 1, and top_p. Retirement
// dates are OpenAI's deprecations page's (checked 2026-11-26 through secondary copies of it).
const openaiReasoningModel = {
  tools: true,
  vision: true,
  thinking: true,
  adaptiveThinking: false,
  budgetThinking: true,
  thinkingOff: 'disabled',
  samplingParameters: false,
  forcedToolChoice: true,
  assistantPrefill: true,
  promptCaching: true,
} as const satisfies Partial<Facts>
const gpt51: Facts = {
  id: 'gpt-5.1',
  displayName: 'GPT-5.1',
  profiles: ['max', 'pro'],
  quality: 93,
  inputUsdPerMtok: 1.25,
  outputUsdPerMtok: 10,
  cacheReadUsdPerMtok: 0.125,
  cacheWriteUsdPerMtok: 1.25,
  contextWindow: 400_000,
  maxOutputTokens: 128_000,
  ...openaiReasoningModel,
  // OpenAI's own list for it: Claude Code's xhigh and max go as high; thinking turned off, as none.
  reasoningEfforts: ['none', 'low', 'medium', 'high'],
  retiresOn: '2027-04-01',
}
const gpt5Mini: Facts = {
  ...gpt51,
  id: 'gpt-5-mini',
  displayName: 'GPT-5 mini',
  // The GPT-5 models before 5.1: minimal, low, medium, high.
  reasoningEfforts: ['minimal', 'low', 'medium', 'high'],
  profiles: ['pro', 'ultra_saver'],
  quality: 82,
  inputUsdPerMtok: 0.25,
  outputUsdPerMtok: 2,
  cacheReadUsdPerMtok: 0.025,
  cacheWriteUsdPerMtok: 0.25,
  retiresOn: '2026-12-11',
}
const gpt5Nano: Facts = {
  ...gpt51,
  id: 'gpt-5-nano',
  displayName: 'GPT-5 nano',
  reasoningEfforts: ['minimal', 'low', 'medium', 'high'],
  profiles: ['ultra_saver'],
  quality: 66,
  inputUsdPerMtok: 0.05,
  outputUsdPerMtok: 0.4,
  cacheReadUsdPerMtok: 0.005,
  cacheWriteUsdPerMtok: 0.05,
  retiresOn: '2026-12-11',
}
// OpenAI's GPT-6 generation (its model pages and pricing, via LiteLLM's and others' copies,
// 2026-09/10): 1.05M context (922K input), 128K output. Cache writes are billed, at 1.25 × input,
// and reported as cache_write_tokens. A request over 272,000 input tokens pays 2 × input and cache
// prices and 1.5 × output on every token. Temperature applies only with reasoning effort `none`,
// and their Chat endpoint refuses function tools with any other effort: the `openai` provider
// speaks Responses (load.ts).
const gpt6Sol: Facts = {
  id: 'gpt-6-sol',
  displayName: 'GPT-6 Sol',
  profiles: ['max', 'pro'],
  quality: 96,
  inputUsdPerMtok: 2,
  outputUsdPerMtok: 10,
  cacheReadUsdPerMtok: 0.2,
  cacheWriteUsdPerMtok: 2.5,
  longPrompt: {
    aboveTokens: 272_000,
    inputUsdPerMtok: 4,
    outputUsdPerMtok: 15,
    cacheReadUsdPerMtok: 0.4,
    cacheWriteUsdPerMtok: 5,
  },
  contextWindow: 1_050_000,
  maxOutputTokens: 128_000,
  ...openaiReasoningModel,
  reasoningEfforts: ['none', 'low', 'medium', 'high', 'xhigh', 'max'],
}
// GPT-5 mini's successor on OpenAI's deprecations page.
const gpt61Terra: Facts = {
  ...gpt6Sol,
  id: 'gpt-6.1-terra',
  displayName: 'GPT-6.1 Terra',
  profiles: ['pro', 'ultra_saver'],
  quality: 90,
  inputUsdPerMtok: 1,
  outputUsdPerMtok: 5,
  cacheReadUsdPerMtok: 0.05,
  cacheWriteUsdPerMtok: 1.25,
  longPrompt: {
    aboveTokens: 272_000,
    inputUsdPerMtok: 2,
    outputUsdPerMtok: 7.5,
    cacheReadUsdPerMtok: 0.1,
    cacheWriteUsdPerMtok: 2.5,
  },
}
const gpt6Luna: Facts = {
  ...gpt6Sol,
  id: 'gpt-6-luna',
  displayName: 'GPT-6 Luna',
  profiles: ['ultra_saver'],
  quality: 80,
  inputUsdPerMtok: 0.1,
  outputUsdPerMtok: 0.5,
  cacheReadUsdPerMtok: 0.01,
  cacheWriteUsdPerMtok: 0.125,
  longPrompt: {
    aboveTokens: 272_000,
    inputUsdPerMtok: 0.2,
    outputUsdPerMtok: 0.75,
    cacheReadUsdPerMtok: 0.02,
    cacheWriteUsdPerMtok: 0.25,
  },
}
// DeepSeek V4 (api-docs.deepseek.com's pricing page, 2026-11-15): 1M context, up to 384K output,
// thinking on by default (off with the provider's thinking toggle), tools, and vision on Flash. It
// takes every effort name and maps each itself (its Thinking Mode page: minimal and low → low;
// medium, high and xhigh → high; max → max), so efforts go as sent. Billed by
// the hour: peak prices, twice off-peak, from 01:00 to 04:00 and 06:00 to 10:00 UTC on weekdays
// (DeepSeek also counts Chinese public holidays off-peak, which svc does not know: it charges
// peak then). Cache hits at a fiftieth of input (Flash) or a thirtieth (Pro); no separate cache
// write. Its tool-call turns need their reasoning_content back (the provider's reasoning_content).
const deepseekPeakHours = ['01:00-04:00', '06:00-10:00']
const deepseekFlash: Facts = {
  id: 'deepseek-flash',
  displayName: 'DeepSeek V4.1 Flash',
  profiles: ['pro', 'ultra_saver'],
  quality: 80,
  inputUsdPerMtok: 0.15,
  outputUsdPerMtok: 0.6,
  cacheReadUsdPerMtok: 0.003,
  cacheWriteUsdPerMtok: 0.15,
  peak: {
    hoursUtc: deepseekPeakHours,
    weekdaysOnly: true,
    inputUsdPerMtok: 0.3,
    outputUsdPerMtok: 1.2,
    cacheReadUsdPerMtok: 0.006,
    cacheWriteUsdPerMtok: 0.3,
  },
  contextWindow: 1_000_000,
  maxOutputTokens: 384_000,
  tools: true,
  vision: true,
  thinking: true,
  adaptiveThinking: false,
  budgetThinking: true,
  thinkingOff: 'disabled',
  samplingParameters: true,
  forcedToolChoice: true,
  assistantPrefill: true,
  promptCaching: true,
}
const deepseekV4Pro: Facts = {
  ...deepseekFlash,
  id: 'deepseek-v4-pro',
  displayName: 'DeepSeek V4 Pro',
  profiles: ['pro'],
  quality: 84,
  inputUsdPerMtok: 0.66,
  outputUsdPerMtok: 1.98,
  cacheReadUsdPerMtok: 0.022,
  cacheWriteUsdPerMtok: 0.66,
  peak: {
    hoursUtc: deepseekPeakHours,
    weekdaysOnly: true,
    inputUsdPerMtok: 1.32,
    outputUsdPerMtok: 3.96,
    cacheReadUsdPerMtok: 0.044,
    cacheWriteUsdPerMtok: 1.32,
  },
  vision: false,
}
// The V3.2 names DeepSeek retired on 2026-07-24: requests to them now fail with a 400. Kept, with
// their prices then, so that a svc.toml naming them still starts, the ranking says why they are
// not used, and their past legs are still priced in the spend view.
const deepseekChat: Facts = {
  ...deepseekFlash,
  id: 'deepseek-chat',
  displayName: 'DeepSeek V3.2',
  profiles: ['ultra_saver'],
  quality: 76,
  inputUsdPerMtok: 0.28,
  outputUsdPerMtok: 0.42,
  cacheReadUsdPerMtok: 0.028,
  cacheWriteUsdPerMtok: 0.28,
  peak: undefined,
  contextWindow: 128_000,
  maxOutputTokens: 8_000,
  vision: false,
  thinking: false,
  retiresOn: '2026-07-24',
}
const deepseekReasoner: Facts = {
  ...deepseekChat,
  id: 'deepseek-reasoner',
  displayName: 'DeepSeek V3.2 (thinking)',
  profiles: ['pro', 'ultra_saver'],
  quality: 79,
  maxOutputTokens: 64_000,
  thinking: true,
}

const servedBy = (facts: Facts, provider: string, upstreamModel: string): CatalogRow => ({
  ...facts,
  provider,
  upstreamModel,
})

export const builtinCatalog: readonly CatalogRow[] = [
  servedBy(claudeOpus55, 'anthropic', 'claude-opus-5-5'),
  servedBy(claudeSonnet55, 'anthropic', 'claude-sonnet-5-5'),
  servedBy(claudeOpus, 'anthropic', 'claude-opus-4-5-20251101'),
  servedBy(claudeSonnet, 'anthropic', 'claude-sonnet-4-5-20250929'),
  servedBy(claudeHaiku55, 'anthropic', 'claude-haiku-5-5'),
  servedBy(claudeHaiku, 'anthropic', 'claude-haiku-4-5-20251001'),
  servedBy(gpt6Sol, 'openai', 'gpt-6-sol'),
  servedBy(gpt61Terra, 'openai', 'gpt-6.1-terra'),
  servedBy(gpt6Luna, 'openai', 'gpt-6-luna'),
  servedBy(gpt51, 'openai', 'gpt-5.1'),
  servedBy(gpt5Mini, 'openai', 'gpt-5-mini'),
  servedBy(gpt5Nano, 'openai', 'gpt-5-nano'),
  servedBy(deepseekFlash, 'deepseek', 'deepseek-flash'),
  servedBy(deepseekV4Pro, 'deepseek', 'deepseek-v4-pro'),
  servedBy(deepseekChat, 'deepseek', 'deepseek-chat'),
  servedBy(deepseekReasoner, 'deepseek', 'deepseek-reasoner'),
  // OpenRouter passes the first-party list price through.
  servedBy(claudeOpus55, 'openrouter', 'anthropic/claude-opus-5.5'),
  servedBy(claudeSonnet55, 'openrouter', 'anthropic/claude-sonnet-5.5'),
  servedBy(claudeOpus, 'openrouter', 'anthropic/claude-opus-4.5'),
  servedBy(claudeSonnet, 'openrouter', 'anthropic/claude-sonnet-4.5'),
  servedBy(claudeHaiku, 'openrouter', 'anthropic/claude-haiku-4.5'),
  servedBy(gpt51, 'openrouter', 'openai/gpt-5.1'),
  servedBy(gpt5Mini, 'openrouter', 'openai/gpt-5-mini'),
]
