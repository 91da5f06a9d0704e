// The model catalog entry `svc codex` gives Codex for the profile. Codex has no metadata for a name
// such as `svc-pro`: it then says "Model metadata for `svc-pro` not found" in an error item on
// every run, offers no apply_patch tool and ignores `model_verbosity`. An entry of
// `-c model_catalog_json=<file>` whose slug is the profile fixes all three, but Codex refuses an
// entry without its base prompt, and svc carries none of Codex's text. So the entry is derived at
// launch, on the user's machine, from the catalog the installed Codex prints (`codex debug models`):
// its first listed model, under the profile's name, less what only OpenAI's own service does.
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { userConfigDir } from '../config/load'
import { isObject, type JsonObject } from '../protocols/wire-values'
import { minimumOpenOutput } from '../router/rank'

/** How long `codex debug models` may take before the launch goes on without a catalog. */
export const CATALOG_TIMEOUT_MS = 10_000

/**
 * Codex's own catalog, as `BIN debug models --bundled` prints it (`{"models": […]}`); undefined when
 * the command fails, times out or prints something else (a Codex older than the command).
 * `--bundled`: the catalog shipped in the binary. Without it, a Codex signed in to OpenAI first asks
 * chatgpt.com for a newer one (measured with 0.169: a DNS query to chatgpt.com and 3 s offline), a
 * call to OpenAI on every launch of an agent whose requests all go to svc; and it would print a
 * catalog the user's config.toml names (`model_catalog_json`) instead, svc's own file among them.
 */
export async function readCodexCatalog(
  bin: string,
  env: Record<string, string>,
  timeoutMs = CATALOG_TIMEOUT_MS,
): Promise<unknown> {
  let child: ReturnType<typeof Bun.spawn>
  try {
    child = Bun.spawn([bin, 'debug', 'models', '--bundled'], { env, stdin: 'ignore', stdout: 'pipe', stderr: 'ignore' })
  } catch {
    return undefined
  }
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => {
      // SIGTERM: Codex's node wrapper passes it on to the native binary (SIGKILL would orphan it).
      child.kill('SIGTERM')
      resolve(undefined)
    }, timeoutMs)
  })
  const read = (async () => {
    const [text, code] = await Promise.all([new Response(child.stdout as ReadableStream).text(), child.exited])
    if (code !== 0) return undefined
    try {
      return JSON.parse(text) as unknown
    } catch {
      return undefined
    }
  })()
  try {
    // A child that outlives the limit may keep its output open: the timer wins without waiting for it.
    return await Promise.race([read, timedOut])
  } finally {
    clearTimeout(timer)
  }
}

/** Codex 0.169 refuses an entry with neither its base prompt nor a template for one. */
const hasPrompt = (entry: JsonObject) =>
  (typeof entry.base_instructions === 'string' && entry.base_instructions !== '') ||
  (isObject(entry.model_messages) && typeof entry.model_messages.instructions_template === 'string')

/**
 * The entry the profile's is made from: among the models Codex lists in its picker (`visibility`
 * "list") and can prompt, one that speaks the full Responses API (`use_responses_lite` false) if
 * any, then the one Codex ranks first (lowest `priority`).
 */
export function pickBaseEntry(catalog: unknown): JsonObject | undefined {
  const models = isObject(catalog) && Array.isArray(catalog.models) ? catalog.models : []
  const candidates = models.filter(
    (m): m is JsonObject => isObject(m) && m.visibility === 'list' && typeof m.slug === 'string' && hasPrompt(m),
  )
  const rank = (m: JsonObject) => [
    m.use_responses_lite === true ? 1 : 0,
    typeof m.priority === 'number' ? m.priority : Number.POSITIVE_INFINITY,
  ]
  return candidates.sort((a, b) => {
    const [la, pa] = rank(a)
    const [lb, pb] = rank(b)
    return la! - lb! || pa! - pb!
  })[0]
}

/**
 * The profile's entry: the base under the profile's name, with what names OpenAI's own service
 * turned off. `contextWindow`: the profile's, as the gateway tells it (the same number `svc codex`
 * passes as `model_context_window`); undefined leaves the base's.
 */
export function deriveEntry(base: JsonObject, profile: string, contextWindow: number | undefined): JsonObject {
  const entry: JsonObject = {
    ...base,
    slug: profile,
    display_name: profile,
    // The base's says what OpenAI's model is ("Legacy coding model."): shown in Codex's /model picker.
    description: `svc routing profile ${profile}: the gateway picks a model for each request`,
    // svc serves Responses over HTTP with SSE only: it has no WebSocket endpoint to prefer.
    prefer_websockets: false,
    // Responses "lite" (GPT-6's entries) offers the tools in an `additional_tools` input item, with
    // a header (`x-openai-internal-codex-responses-lite`) that tells OpenAI to read them there. svc
    // does not forward that header: a Responses upstream would get the item without it. The full
    // shape, top-level `tools`, is what every upstream behind svc reads.
    use_responses_lite: false,
    // Tool search defers MCP tools behind a `tool_search` tool whose calls and outputs are OpenAI
    // item types (`tool_search_call`, `tool_search_output`); translated to a Claude or Chat model,
    // neither the search nor the deferred tools would reach it. Off, Codex offers MCP tools as they are.
    supports_search_tool: false,
    // Fast mode is `service_tier: "priority"`, which svc leaves out at list price (list-price.ts)
    // and no other upstream has: offered, it would promise a speed that never comes.
    service_tiers: [],
    additional_speed_tiers: [],
    // Codex asks for reasoning summaries of a model it has no metadata for, as it did before svc
    // gave it this entry; OpenAI's model may default to none (GPT-5.5's). svc reads the request for
    // summaries as a wish to see the thinking: a Claude model with adaptive thinking is then asked
    // for summarized thinking instead of empty blocks (README "Routing"). The user's own
    // `model_reasoning_summary` still wins.
    default_reasoning_summary: 'auto',
    // A prompt to move to OpenAI's newer model would take the user off the profile.
    upgrade: null,
    // An announcement of OpenAI's model, not of the profile.
    availability_nux: null,
  }
  // Fast mode again, where a newer catalog makes it the default.
  if ('default_service_tier' in base) entry.default_service_tier = null
  if (contextWindow !== undefined) {
    // Codex compacts near this window and sizes its prompt budget from it: the profile's, not OpenAI's.
    entry.context_window = contextWindow
    // The most a user may raise the window to: not past what the profile's models take.
    if ('max_context_window' in base) entry.max_context_window = contextWindow
    // Compaction before svc turns the prompt away. A request without an output limit (Codex sends
    // none) gets at least 8,192 tokens of room beside its prompt (rank.ts, outputFor), so on a 40K
    // window svc refused a prompt past ~31.8K while Codex, left to its default share of the window,
    // waited for 36K: "ran out of room" and the turn lost. The threshold set for the base's window
    // could lie past the profile's either way.
    const limit = compactionLimit(contextWindow)
    if (limit === undefined) delete entry.auto_compact_token_limit
    else entry.auto_compact_token_limit = limit
  }
  return entry
}

/**
 * Where Codex should compact on a window: below what svc lets a prompt fill with an answer's room
 * beside it, less 5 % for the turn that crosses it, and never past Codex's own 90 %. None on a
 * window too small to leave a quarter of it (Codex's own default then stands).
 */
export function compactionLimit(contextWindow: number): number | undefined {
  const limit = Math.min(
    Math.floor(contextWindow * 0.9),
    contextWindow - minimumOpenOutput - Math.ceil(contextWindow * 0.05),
  )
  return limit >= contextWindow / 4 ? limit : undefined
}

/** Where the profile's catalog is kept: svc's own config directory, one file per profile. */
export const catalogPath = (env: Record<string, string | undefined>, profile: string) =>
  join(userConfigDir(env), 'codex', `${profile}.models.json`)

/** Writes `{"models":[entry]}` whole or not at all (a new file renamed over the old), readable by the user alone. */
export function writeCatalog(path: string, entry: JsonObject): void {
  mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 })
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`
  try {
    writeFileSync(temporary, `${JSON.stringify({ models: [entry] }, null, 2)}\n`, { mode: 0o600 })
    renameSync(temporary, path)
  } catch (err) {
    rmSync(temporary, { force: true })
    throw err
  }
}

/**
 * Derives and writes the profile's catalog from the installed Codex's own; the file's path, or why
 * there is none (the launch then goes on without one, as before).
 */
export async function codexCatalogFor(opts: {
  bin: string
  env: Record<string, string>
  profile: string
  contextWindow: number | undefined
  path: string
  timeoutMs?: number
}): Promise<{ path: string } | { skipped: string }> {
  const catalog = await readCodexCatalog(opts.bin, opts.env, opts.timeoutMs)
  if (catalog === undefined) return { skipped: `\`${opts.bin} debug models --bundled\` gave no catalog` }
  const base = pickBaseEntry(catalog)
  if (!base) return { skipped: "Codex's catalog lists no model to derive the profile's from" }
  try {
    writeCatalog(opts.path, deriveEntry(base, opts.profile, opts.contextWindow))
  } catch (err) {
    return { skipped: `cannot write ${opts.path}: ${(err as Error).message}` }
  }
  return { path: opts.path }
}
