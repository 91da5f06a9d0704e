// A Claude model on the simulator, as several test files configure one: provider `anth`, priced
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
