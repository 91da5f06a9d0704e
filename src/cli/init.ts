// `svc init`: writes a commented example svc.toml.
import { existsSync, writeFileSync } from 'node:fs'
import { resolve } from 'node:path'
import { type Io, parseFlags, print, UsageError } from './context'

export const exampleConfig = `# svc.toml — configuration of the svc gateway.
# Secrets never go in this file: it names the environment variables that hold them.

[server]
host = "127.0.0.1"
port = 8080
# SQLite ledger (WAL). Created with its folder on first start.
database = ".svc/svc.db"
# Bearer token of the admin API (/v1/admin); unset = admin API off.
admin_token_env = "SVC_ADMIN_TOKEN"
# Master key that encrypts BYOK provider keys (AES-256-GCM); unset = BYOK off.
# Make one with: openssl rand -base64 32 (32 random bytes; any other text is hashed into a key).
master_key_env = "SVC_MASTER_KEY"
# Largest request body accepted (bytes); bigger ones get 413.
max_body_bytes = 33554432
# What the model requests in flight may hold together, by estimate (MB); past it, 529 overloaded.
# Unset: the memory limit (the cgroup's, else the machine's RAM) less 160 MB.
# request_memory_mb = 96
# How long a request past it waits for room (its body unread) before its 529.
request_wait_seconds = 10
# On SIGTERM, how long in-flight streams may take to finish.
shutdown_grace_seconds = 30

[billing]
# Share of a BYOK request's cost charged to credit (the rest is paid by the account's own key).
byok_fee_percent = 5
# Credit that \`svc serve\` gives the first account it creates on an empty database.
# Accounts made with \`svc accounts create\` start with none.
[billing.starter_grant]
usd = 5
# expires_in_days = 30

[routing]
connect_timeout_ms = 10000
first_byte_timeout_ms = 120000
idle_timeout_ms = 300000
# While a started stream's upstream is silent, the client gets a keep-alive this often.
ping_interval_ms = 15000
# Candidates tried per request before giving up (fallback happens only before the first byte).
max_attempts = 3
# A non-streaming request allowed more output than this is streamed from the upstream and gathered
# into JSON, so that a long answer is not cut by first_byte_timeout_ms.
stream_upstream_above_max_tokens = 4096

[catalog]
# false: route only to the [[models]] below.
builtin = true

# Providers. ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY and DEEPSEEK_API_KEY in the
# environment configure anthropic, openai, openrouter and deepseek with no table at all.
#
# [providers.anthropic]
# kind = "anthropic"                     # anthropic | openai-chat | openai-responses
# base_url = "https://api.anthropic.com"
# api_key_env = "ANTHROPIC_API_KEY"
#
# [providers.local]
# kind = "openai-chat"                   # any Chat Completions server: vLLM, Ollama, Groq, …
# base_url = "http://127.0.0.1:11434/v1"
# api_key_env = "OLLAMA_API_KEY"
#
# [providers.corp-openai]
# kind = "openai-responses"              # OpenAI itself gets Codex's requests as sent; any other
# base_url = "https://llm-proxy.internal/v1"  # host is taken for a compatible server (vLLM, …)
# api_key_env = "PROXY_KEY"
# openai_itself = true                   # a proxy in front of OpenAI says so

# Add a model, or override a built-in one (same id and provider). Prices in USD per million
# tokens, in steps of 0.001.
#
# [[models]]
# id = "qwen3-coder"
# provider = "local"
# upstream_model = "qwen3-coder:30b"
# profiles = ["ultra_saver"]              # pro | max | ultra_saver
# quality = 70                            # 0–100
# input_usd_per_mtok = 0
# output_usd_per_mtok = 0
# context_window = 262144
# max_output_tokens = 32768
# tools = true
`

export async function runInit(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseFlags(args, { force: { type: 'boolean' } })
  const path = resolve(io.cwd, positionals[0] ?? values.config ?? 'svc.toml')
  if (existsSync(path) && !values.force) throw new UsageError(`${path} exists; pass --force to overwrite it`)
  writeFileSync(path, exampleConfig)
  // --json, which every verb accepts, was ignored here: the path as JSON, as other verbs answer.
  print(io, values.json, { file: path }, () => `wrote ${path}`)
  return 0
}
