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

const simKey = 'sim-key'

export function translationGateway(sim: Simulator): Promise<Harness> {
  const model = (id: string, kind: ProviderKind, profile: 'max' | 'pro' | 'ultra_saver') => ({
    id,
    provider: kind,
    upstream_model: upstreamModelFor[kind],
    profiles: [profile],
    quality: 80,
    vision: true,
    input_usd_per_mtok: 1,
    output_usd_per_mtok: 2,
  })
  return createHarness({
    grantUsd: 5,
    env: { SIM_KEY: simKey },
    config: {
      catalog: { builtin: false },
      providers: {
        anthropic: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
        'openai-chat': { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
        'openai-responses': { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
      },
      models: [
        model('claude-t', 'anthropic', 'max'),
        model('gpt-chat-t', 'openai-chat', 'pro'),
        model('gpt-resp-t', 'openai-responses', 'ultra_saver'),
      ],
    },
  })
}

/** Start the simulator with the key translationGateway's providers use. */
export const translationSimulatorOptions = { apiKey: simKey }

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
