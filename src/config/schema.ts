// The svc.toml schema. Every table is closed (additionalProperties: false) so a misspelt key
// stops start-up with a message that names it instead of being silently ignored.
import { type Static, Type as T } from '@sinclair/typebox'

const closed = { additionalProperties: false } as const

export const RoutingModeName = T.Union([T.Literal('pro'), T.Literal('max'), T.Literal('ultra_saver')])

/**
 * How a model runs without up-front thinking, when a client turns thinking off: `disabled` as sent
 * (Anthropic's 4.x models, and every non-Anthropic model); `between_tools` (Claude Sonnet 5.5
 * refuses `disabled` and offers this); `unsupported` (the model always thinks: `disabled` is left
 * out, and the model thinks as it would by default).
 */
export const ThinkingOffName = T.Union([T.Literal('disabled'), T.Literal('between_tools'), T.Literal('unsupported')])

export const ProviderKind = T.Union([T.Literal('anthropic'), T.Literal('openai-chat'), T.Literal('openai-responses')])

export const ProviderSection = T.Object(
  {
    kind: ProviderKind,
    /** An absolute http(s) URL (load.ts checks it); optional for the well-known ids, whose URL svc knows. */
    base_url: T.Optional(T.String({ minLength: 1 })),
    /** Name of the environment variable that holds the key; the key itself never sits in the file. */
    api_key_env: T.Optional(T.String({ minLength: 1 })),
    /** Extra headers sent upstream (OpenRouter's HTTP-Referer, say). */
    headers: T.Optional(T.Record(T.String(), T.String())),
    /** openai-chat only: OpenAI's reasoning models refuse `max_tokens` and want `max_completion_tokens`. */
    max_tokens_field: T.Optional(T.Union([T.Literal('max_tokens'), T.Literal('max_completion_tokens')])),
    /**
     * openai-chat only: send an assistant turn's thinking back as `reasoning_content` (DeepSeek's
     * thinking models require it on tool-call turns; strict OpenAI endpoints reject the field).
     */
    reasoning_content: T.Optional(T.Boolean()),
    /**
     * openai-chat only: turn a model's thinking off with DeepSeek's `thinking: {type: "disabled"}`
     * when the client turns it off (its V4 models think by default; strict OpenAI endpoints reject the field).
     */
    thinking_toggle: T.Optional(T.Boolean()),
    /**
     * openai-chat only: `in_place` keeps instructions given mid-conversation where they were given,
     * as `system` messages; `merged` appends them to the first one, for servers whose chat template
     * refuses a system message after the start (Qwen's on vLLM and llama.cpp, Gemma's).
     */
    system_messages: T.Optional(T.Union([T.Literal('in_place'), T.Literal('merged')])),
    /**
     * openai-chat only: a router that serves Claude (OpenRouter) caches its prompts when asked with
     * Anthropic's top-level `cache_control`; sent for caching models named `anthropic/…`. Default
     * on for the well-known `openrouter` provider, off elsewhere.
     */
    anthropic_cache_control: T.Optional(T.Boolean()),
    /**
     * openai-chat only: the server takes `top_k` (vLLM, llama.cpp, SGLang, OpenRouter), so an
     * Anthropic client's top_k goes through. Default on for the well-known `openrouter` provider and
     * openrouter.ai, off elsewhere: OpenAI and Mistral refuse the field.
     */
    top_k: T.Optional(T.Boolean()),
    /**
     * anthropic only: the server is Anthropic itself, which refuses thinking it did not sign and
     * tool ids outside [a-zA-Z0-9_-]. Default on for the well-known `anthropic` provider and hosts
     * under anthropic.com, off elsewhere: Anthropic-compatible servers (DeepSeek, Kimi) want a
     * tool-call turn's thinking back as the client sent it. A proxy in front of Anthropic sets it.
     */
    anthropic_signatures: T.Optional(T.Boolean()),
    /**
     * openai-responses only: the server is OpenAI's own Responses API, which takes everything a
     * Responses client (Codex) sends: its namespace, custom and hosted tools. Default on for the
     * well-known `openai` provider, api.openai.com and Azure OpenAI hosts, off elsewhere:
     * compatible servers (vLLM, llama.cpp, Ollama, LM Studio) take function tools only, so their
     * requests are translated as any other kind's are, and web search goes to a model that runs
     * it. A proxy in front of OpenAI sets it.
     */
    openai_itself: T.Optional(T.Boolean()),
    /**
     * openai-responses only, for a compatible server: a turn's thinking goes back also as plain
     * text in its reasoning item's `encrypted_content`, where Ollama writes and reads it. Default on
     * for Ollama's port (11434) and ollama.com, off elsewhere: vLLM refuses any encrypted_content
     * ("Encrypted content is not supported"), and llama.cpp reads `content`.
     */
    reasoning_in_encrypted_content: T.Optional(T.Boolean()),
    /**
     * openai-chat only: how Gemini's thought signatures go back on tool calls, which Gemini 3
     * requires: `extra_content` (Google's endpoints, the default for their hosts),
     * `reasoning_details` (OpenRouter's, the default for openrouter.ai) or `off` (strict OpenAI
     * endpoints reject both fields; the default elsewhere).
     */
    thought_signatures: T.Optional(
      T.Union([T.Literal('extra_content'), T.Literal('reasoning_details'), T.Literal('off')]),
    ),
  },
  closed,
)

/**
 * The most a price may be (USD per million tokens; per 1,000 searches): far above any model's
 * (the dearest lists ~600), so that a leg's cost stays an exact integer of nanos (at most 10^9
 * tokens a count, credible-usage.ts: under 2^53 for every count at this price), and a typo of
 * a few zeros is refused rather than billed.
 */
const maxPriceUsd = 1000
const PricePerMtok = T.Number({ minimum: 0, maximum: maxPriceUsd })

export const ModelSection = T.Object(
  {
    id: T.String({ minLength: 1 }),
    provider: T.String({ minLength: 1 }),
    upstream_model: T.Optional(T.String({ minLength: 1 })),
    display_name: T.Optional(T.String()),
    profiles: T.Optional(T.Array(RoutingModeName)),
    quality: T.Optional(T.Number({ minimum: 0, maximum: 100 })),
    input_usd_per_mtok: T.Optional(PricePerMtok),
    output_usd_per_mtok: T.Optional(PricePerMtok),
    cache_read_usd_per_mtok: T.Optional(PricePerMtok),
    cache_write_usd_per_mtok: T.Optional(PricePerMtok),
    /**
     * A cache write kept an hour (Anthropic's `ttl: "1h"`). Unset: svc prices none, and a request's
     * 1-hour cache marks go to the model as 5-minute ones (the built-in Claude rows set 2 × input).
     */
    cache_write_1h_usd_per_mtok: T.Optional(PricePerMtok),
    /**
     * Prices for every token of a request whose prompt (input, cache reads and writes) is longer
     * than above_tokens, output included (Claude Haiku 5.5 above 100,000 tokens). Unset cache
     * prices cost what the tier's input costs; an unset 1-hour one, none (as above).
     */
    long_prompt: T.Optional(
      T.Object(
        {
          above_tokens: T.Integer({ minimum: 1 }),
          input_usd_per_mtok: PricePerMtok,
          output_usd_per_mtok: PricePerMtok,
          cache_read_usd_per_mtok: T.Optional(PricePerMtok),
          cache_write_usd_per_mtok: T.Optional(PricePerMtok),
          cache_write_1h_usd_per_mtok: T.Optional(PricePerMtok),
        },
        closed,
      ),
    ),
    /**
     * Dearer prices during the provider's peak hours, "HH:MM-HH:MM" in UTC, end excluded (DeepSeek:
     * ["01:00-04:00", "06:00-10:00"] on weekdays). Unset cache prices cost what the peak input costs;
     * an unset 1-hour one, none (as above).
     */
    peak: T.Optional(
      T.Object(
        {
          hours_utc: T.Array(T.String({ pattern: '^\\d{2}:\\d{2}-\\d{2}:\\d{2}$' }), { minItems: 1 }),
          weekdays_only: T.Optional(T.Boolean()),
          input_usd_per_mtok: PricePerMtok,
          output_usd_per_mtok: PricePerMtok,
          cache_read_usd_per_mtok: T.Optional(PricePerMtok),
          cache_write_usd_per_mtok: T.Optional(PricePerMtok),
          cache_write_1h_usd_per_mtok: T.Optional(PricePerMtok),
        },
        closed,
      ),
    ),
    /** Per 1,000 searches of the upstream's own web search tool; default 10 (Anthropic's and OpenAI's list price). */
    web_search_usd_per_1k: T.Optional(T.Number({ minimum: 0, maximum: maxPriceUsd })),
    context_window: T.Optional(T.Integer({ minimum: 1 })),
    max_output_tokens: T.Optional(T.Integer({ minimum: 1 })),
    tools: T.Optional(T.Boolean()),
    vision: T.Optional(T.Boolean()),
    thinking: T.Optional(T.Boolean()),
    /**
     * Anthropic upstreams: thinking as `{type: "adaptive"}` + output_config.effort (Claude Opus 4.6,
     * Sonnet 4.6 and later) instead of a budget_tokens budget (the 4.5 generation). Default false.
     */
    adaptive_thinking: T.Optional(T.Boolean()),
    /** Anthropic upstreams: the model takes a budget_tokens budget (default true; false for the 5.x generation). */
    budget_thinking: T.Optional(T.Boolean()),
    thinking_off: T.Optional(ThinkingOffName),
    /** The model takes temperature, top_p and top_k (default true); false leaves them out. */
    sampling_parameters: T.Optional(T.Boolean()),
    /** The model takes a forced tool choice (default true); false: the router skips it for such requests. */
    forced_tool_choice: T.Optional(T.Boolean()),
    /** The model continues a client's own assistant turn (default true); false: skipped for such requests. */
    assistant_prefill: T.Optional(T.Boolean()),
    /**
     * The reasoning efforts the model takes; another is sent as the nearest of these. Default: any;
     * [] for a model that takes no effort parameter (Claude's 4.5 generation): it is left out.
     * `none` or `minimal` listed: a request with thinking turned off goes with that effort.
     */
    reasoning_efforts: T.Optional(
      T.Array(
        T.Union([
          T.Literal('none'),
          T.Literal('minimal'),
          T.Literal('low'),
          T.Literal('medium'),
          T.Literal('high'),
          T.Literal('xhigh'),
          T.Literal('max'),
        ]),
        { uniqueItems: true },
      ),
    ),
    /** The provider's retirement date, YYYY-MM-DD (UTC): from that day on the router skips the model. */
    retires_on: T.Optional(T.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$' })),
    prompt_caching: T.Optional(T.Boolean()),
    /** false removes a built-in entry with the same id and provider. */
    enabled: T.Optional(T.Boolean()),
  },
  closed,
)

export const ProfileSection = T.Object(
  {
    /** Score points lost per doubling of (1 + blended USD/Mtok). */
    price_weight: T.Optional(T.Number({ minimum: 0, maximum: 100 })),
    /** Candidates below this quality are skipped. */
    quality_floor: T.Optional(T.Number({ minimum: 0, maximum: 100 })),
  },
  closed,
)

export const ConfigFile = T.Object(
  {
    server: T.Optional(
      T.Object(
        {
          // Empty would listen on every interface (Bun's default), not on none: refused.
          host: T.Optional(T.String({ minLength: 1 })),
          port: T.Optional(T.Integer({ minimum: 0, maximum: 65535 })),
          database: T.Optional(T.String({ minLength: 1 })),
          admin_token_env: T.Optional(T.String({ minLength: 1 })),
          /** The variable holding a token `/metrics` then asks for (unset: open, as before). */
          metrics_token_env: T.Optional(T.String({ minLength: 1 })),
          master_key_env: T.Optional(T.String({ minLength: 1 })),
          max_body_bytes: T.Optional(T.Integer({ minimum: 1024 })),
          /** What the model requests in flight may hold together, by estimate (relay/admission.ts). */
          request_memory_mb: T.Optional(T.Integer({ minimum: 1 })),
          /** How long a request past that budget waits, its body unread, for room before its 529. */
          request_wait_seconds: T.Optional(T.Number({ minimum: 0, maximum: 600 })),
          shutdown_grace_seconds: T.Optional(T.Number({ minimum: 0 })),
          /** How often `svc login` may poll for approval (RFC 8628 interval). */
          device_poll_interval_seconds: T.Optional(T.Integer({ minimum: 0, maximum: 60 })),
        },
        closed,
      ),
    ),
    billing: T.Optional(
      T.Object(
        {
          byok_fee_percent: T.Optional(T.Number({ minimum: 0, maximum: 100 })),
          starter_grant: T.Optional(
            T.Object(
              {
                usd: T.Number({ minimum: 0 }),
                // A century: beyond it the expiry is past what a date can hold (and what anyone means).
                expires_in_days: T.Optional(T.Integer({ minimum: 1, maximum: 36_500 })),
              },
              closed,
            ),
          ),
        },
        closed,
      ),
    ),
    routing: T.Optional(
      T.Object(
        {
          connect_timeout_ms: T.Optional(T.Integer({ minimum: 1 })),
          first_byte_timeout_ms: T.Optional(T.Integer({ minimum: 1 })),
          idle_timeout_ms: T.Optional(T.Integer({ minimum: 1 })),
          // Under the client connection's own idle limit (src/cli/serve.ts, 255 s).
          ping_interval_ms: T.Optional(T.Integer({ minimum: 1, maximum: 240_000 })),
          max_attempts: T.Optional(T.Integer({ minimum: 1, maximum: 10 })),
          stream_upstream_above_max_tokens: T.Optional(T.Integer({ minimum: 0 })),
        },
        closed,
      ),
    ),
    catalog: T.Optional(T.Object({ builtin: T.Optional(T.Boolean()) }, closed)),
    /** Per-profile ranking knobs (README, "Routing"). */
    profiles: T.Optional(
      T.Object(
        { pro: T.Optional(ProfileSection), max: T.Optional(ProfileSection), ultra_saver: T.Optional(ProfileSection) },
        closed,
      ),
    ),
    // Closed too: an id outside the pattern (`[providers.Sim]`) was not checked at all.
    providers: T.Optional(
      T.Record(T.String({ pattern: '^[a-z0-9][a-z0-9_-]*$' }), ProviderSection, { additionalProperties: false }),
    ),
    models: T.Optional(T.Array(ModelSection)),
  },
  closed,
)

export type ConfigFile = Static<typeof ConfigFile>
export type ProviderKind = Static<typeof ProviderKind>
export type RoutingMode = Static<typeof RoutingModeName>
export type ThinkingOff = Static<typeof ThinkingOffName>
export type ModelSection = Static<typeof ModelSection>
