// The models several test files configure on the simulator. A Claude model: provider `anth`, priced
// at Claude Sonnet's list prices (USD/Mtok 3 in, 15 out, 0.3 cache read, 3.75 cache write, so
// 3000 / 15000 / 300 / 3750 nanos a token), in the `max` profile.
import type { ModelSection } from '../../src/config/schema'

export const simClaude = (over: Partial<ModelSection> = {}): ModelSection => ({
  id: 'claude-c',
  provider: 'anth',
  upstream_model: 'claude-c-up',
  profiles: ['max'],
  quality: 90,
  input_usd_per_mtok: 3,
  output_usd_per_mtok: 15,
  cache_read_usd_per_mtok: 0.3,
  cache_write_usd_per_mtok: 3.75,
  ...over,
})

/**
 * The Claude 5.x generation's rules, as the built-in rows have them (catalog.ts): adaptive thinking
 * and no budget, thinking kept off between tools, and no sampling parameters, forced tool choice
 * or prefill (a 400 each).
 */
export const claude55Rules: Partial<ModelSection> = {
  adaptive_thinking: true,
  budget_thinking: false,
  thinking_off: 'between_tools',
  sampling_parameters: false,
  forced_tool_choice: false,
  assistant_prefill: false,
}

/** An OpenAI-dialect model on the simulator: provider `chat`, 1 USD/Mtok in and 2 out, in `pro`. */
export const simGpt = (over: Partial<ModelSection> = {}): ModelSection => ({
  id: 'gpt-y',
  provider: 'chat',
  upstream_model: 'gpt-y-up',
  profiles: ['pro'],
  quality: 80,
  input_usd_per_mtok: 1,
  output_usd_per_mtok: 2,
  ...over,
})

/** One provider per upstream dialect, all on the simulator at `url`, keyed by `SIM_KEY` from the harness env. */
export const simProviders = (url: string) => ({
  // The simulator plays Anthropic itself, signatures and all.
  anth: { kind: 'anthropic' as const, base_url: url, api_key_env: 'SIM_KEY', anthropic_signatures: true },
  chat: { kind: 'openai-chat' as const, base_url: `${url}/v1`, api_key_env: 'SIM_KEY' },
  // The simulator plays OpenAI itself, as it plays Anthropic itself above.
  resp: { kind: 'openai-responses' as const, base_url: `${url}/v1`, api_key_env: 'SIM_KEY', openai_itself: true },
})
