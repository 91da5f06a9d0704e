// A gateway with one model of each upstream kind on the simulator, each alone in its profile: the
// profile a test sends picks the dialect its request is translated into.
import { afterAll, beforeEach, expect } from 'bun:test'
import type { ProviderKind } from '../../src/config/schema'
import { createHarness, type Harness } from './harness'
import { type Simulator, startSimulator } from './simulator'

export const profileFor: Record<ProviderKind, string> = {
  anthropic: 'svc-max',
  'openai-chat': 'svc-pro',
  'openai-responses': 'svc-ultra-saver',
}

/** The model name the simulator is asked for (its queue key). */
export const upstreamModelFor: Record<ProviderKind, string> = {
  anthropic: 'claude-t-up',
  'openai-chat': 'gpt-chat-t-up',
  'openai-responses': 'gpt-resp-t-up',
}

/** The simulator's key: the platform's, and an account's own where a test stores it (BYOK: 8 characters at least). */
export const simKey = 'sim-key-translation'

type Profile = 'max' | 'pro' | 'ultra_saver'

/** A catalog model on the simulator: the provider of its kind, alike in all but quality. */
const simModel = (id: string, kind: ProviderKind, profile: Profile, quality = 80) => ({
  id,
  provider: kind,
  upstream_model: upstreamModelFor[kind],
  profiles: [profile],
  quality,
  vision: true,
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 2,
})

/** A provider's svc.toml keys beyond kind, base_url and api_key_env (system_messages, say). */
type ProviderOptions = Partial<Record<ProviderKind, Record<string, unknown>>>

/** One provider of each kind on the simulator, and the given models behind them. */
function simGateway(
  sim: Simulator,
  models: ReturnType<typeof simModel>[],
  options: ProviderOptions = {},
  grantUsd = 5,
): Promise<Harness> {
  return createHarness({
    grantUsd,
    env: { SIM_KEY: simKey },
    config: {
      catalog: { builtin: false },
      providers: {
        anthropic: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY', ...options.anthropic },
        'openai-chat': {
          kind: 'openai-chat',
          base_url: `${sim.url}/v1`,
          api_key_env: 'SIM_KEY',
          ...options['openai-chat'],
        },
        'openai-responses': {
          kind: 'openai-responses',
          base_url: `${sim.url}/v1`,
          api_key_env: 'SIM_KEY',
          openai_itself: true,
          ...options['openai-responses'],
        },
      },
      models,
    },
  })
}

/** `grantUsd`: the account's starter credit. */
export function translationGateway(sim: Simulator, options: ProviderOptions = {}, grantUsd = 5): Promise<Harness> {
  return simGateway(
    sim,
    [
      simModel('claude-t', 'anthropic', 'max'),
      simModel('gpt-chat-t', 'openai-chat', 'pro'),
      simModel('gpt-resp-t', 'openai-responses', 'ultra_saver'),
    ],
    options,
    grantUsd,
  )
}

/**
 * svc-pro with the given models, ranked by quality (all else equal), each on the provider of its
 * kind: for tests of which model the router passes over and which one serves. A model may name
 * its own prices (USD per Mtok), so that a leg charged at another model's shows.
 */
export function rankedProGateway(
  sim: Simulator,
  models: { id: string; kind: ProviderKind; quality: number; prices?: { input: number; output: number } }[],
  options: ProviderOptions = {},
): Promise<Harness> {
  return simGateway(
    sim,
    models.map((m) => ({
      ...simModel(m.id, m.kind, 'pro', m.quality),
      ...(m.prices ? { input_usd_per_mtok: m.prices.input, output_usd_per_mtok: m.prices.output } : {}),
    })),
    options,
  )
}

/**
 * One model, `m` (1 USD/Mtok in and out), asking the simulator for `upstreamModel`, alone behind
 * svc-pro on a provider of `kind` (Anthropic unless told) that calls it with `key`, under these
 * routing settings: for tests of one model's timing, not of routing.
 */
export function oneModelGateway(
  sim: Simulator,
  opts: { upstreamModel: string; key: string; routing?: Record<string, number>; kind?: 'anthropic' | 'openai-chat' },
): Promise<Harness> {
  const kind = opts.kind ?? 'anthropic'
  return createHarness({
    grantUsd: 5,
    env: { K: opts.key },
    config: {
      catalog: { builtin: false },
      routing: opts.routing,
      providers: { a: { kind, base_url: kind === 'openai-chat' ? `${sim.url}/v1` : sim.url, api_key_env: 'K' } },
      models: [
        {
          id: 'm',
          provider: 'a',
          upstream_model: opts.upstreamModel,
          profiles: ['pro'],
          quality: 90,
          input_usd_per_mtok: 1,
          output_usd_per_mtok: 1,
        },
      ],
    },
  })
}

/** Start the simulator with the key translationGateway's providers use. */
const translationSimulatorOptions = { apiKey: simKey }

/** The simulator a file of translation tests shares: stopped after them, cleared before each. */
export function translationSimulator(): Simulator {
  const sim = startSimulator(translationSimulatorOptions)
  afterAll(() => sim.stop())
  beforeEach(() => sim.reset())
  return sim
}

/** The body of the one request the upstream received. */
export function onlyUpstreamBody(sim: Simulator): Record<string, unknown> {
  expect(sim.requests).toHaveLength(1)
  return sim.requests[0]!.body as Record<string, unknown>
}

/** The harness's account gets its own key for the provider of `kind` (BYOK), which the simulator takes as well. */
export async function withOwnKey(h: Harness, kind: ProviderKind): Promise<Harness> {
  await h.deps.admin.addProviderKey({ account: 'default', provider: kind, key: simKey })
  return h
}
