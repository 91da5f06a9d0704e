// svc.toml fragments as the README gives them, copied word for word (section named beside each),
// and the ones its tables spell out in prose, put together as an operator would write them.

/** "On a fresh machine": the config that points a provider at the simulator. */
export const quickStart = `[providers.sim]
kind = "anthropic"
base_url = "http://127.0.0.1:8787"
api_key_env = "SIM_KEY"

[[models]]
id = "sim-model"
provider = "sim"
profiles = ["pro", "max", "ultra_saver"]
quality = 80
input_usd_per_mtok = 3
output_usd_per_mtok = 15
`

export const fragments: Record<string, string> = {
  // "The built-in catalog", word for word.
  'a built-in price overridden without rebuilding': `[[models]]
id = "claude-sonnet-5-5"
provider = "anthropic"
cache_read_usd_per_mtok = 0.2
`,
  // "Routing", Scored: "Tune per profile in svc.toml".
  'profile knobs': `[profiles.pro]
price_weight = 8

[profiles.ultra_saver]
quality_floor = 70
`,
  // "Configuration", [[models]] long_prompt: "Claude Haiku 5.5: 0.5 / 2.5 / 0.05 / 0.625, and 1 for a
  // 1-hour cache write, above 100,000".
  'a long-prompt tier': `[[models]]
id = "claude-haiku-5-5"
provider = "anthropic"
long_prompt = { above_tokens = 100000, input_usd_per_mtok = 0.5, output_usd_per_mtok = 2.5, cache_read_usd_per_mtok = 0.05, cache_write_usd_per_mtok = 0.625, cache_write_1h_usd_per_mtok = 1 }
`,
  // "Configuration", [[models]] peak: DeepSeek's hours, weekdays only.
  'peak hours': `[[models]]
id = "deepseek-flash"
provider = "deepseek"
peak = { hours_utc = ["01:00-04:00", "06:00-10:00"], weekdays_only = true, input_usd_per_mtok = 0.3, output_usd_per_mtok = 1.2 }
`,
  // "The built-in catalog": "A provider that extends a retirement: set a later retires_on on the row".
  'a later retirement': `[[models]]
id = "gpt-5-mini"
provider = "openai"
retires_on = "2027-06-01"
`,
  // "Configuration", [providers.ID] system_messages.
  'merged system messages': `[providers.vllm]
kind = "openai-chat"
base_url = "http://127.0.0.1:8000/v1"
system_messages = "merged"
`,
  // "The built-in catalog": "a file that sets \`[providers.openai] kind = "openai-chat"\` keeps Chat".
  'OpenAI kept on Chat': `[providers.openai]
kind = "openai-chat"
`,
}
