// `svc claude` and `svc codex`: launch a coding agent with the gateway as its endpoint, using the
// signed-in key. Arguments but svc's own pass through; the agent's exit code and signals pass back.
import { accessSync, constants as fsConstants, readFileSync, type Stats, statSync } from 'node:fs'
import { constants, hostname } from 'node:os'
import { resolve } from 'node:path'
import { isObject } from '../protocols/wire-values'
import { catalogPath, codexCatalogFor } from './codex-catalog'
import { type Io, UsageError } from './context'
import { type KeySource, requireCredentials } from './credentials'
import { reach, refusedKey, Unreachable } from './reach'
import { ownEntry } from '../lib/own-entry'

const profiles: Record<string, string> = {
  pro: 'svc-pro',
  max: 'svc-max',
  'ultra-saver': 'svc-ultra-saver',
  ultra_saver: 'svc-ultra-saver',
}

interface Launch {
  command: string
  args: string[]
  env: Record<string, string | undefined>
}

/**
 * Splits `svc claude [--profile P] [--insecure] [ARGS…] [-- ARGS…]`: only --profile and --insecure
 * are ours; everything else is the agent's, so `svc claude -p "hi"` works without `--`. A `--`
 * before any of the agent's arguments ends svc's flags and is dropped (`svc claude -- --help`);
 * after one it is the agent's own and passes with the rest (`svc claude -p -- --version`).
 */
function splitArgs(args: string[]) {
  let chosen = 'pro'
  let insecure = false
  const agentArgs: string[] = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!
    if (arg === '--') {
      agentArgs.push(...(agentArgs.length === 0 ? [] : [arg]), ...args.slice(i + 1))
      break
    }
    if (arg === '--profile') {
      chosen = args[++i] ?? ''
    } else if (arg.startsWith('--profile=')) {
      chosen = arg.slice('--profile='.length)
    } else if (arg === '--insecure') {
      insecure = true
    } else {
      agentArgs.push(arg)
    }
  }
  const profile = ownEntry(profiles, chosen)
  if (!profile) throw new UsageError(`--profile must be pro, max or ultra-saver (got ${JSON.stringify(chosen)})`)
  return { profile, agentArgs, insecure }
}

/**
 * The profile's largest context window, as the gateway's models route tells it. Neither agent
 * knows a profile's name, so each assumes a window of its own (Claude Code 2.1 a million tokens,
 * Codex 0.169 272,000) and compacts the conversation only near it; past the profile's, svc has no
 * model left that takes the prompt. Told the real one, the agent compacts in time. Undefined when
 * the gateway cannot say (too slow, or older than this): the agent's own assumption stands.
 */
async function profileContextWindow(
  { gateway, api_key: apiKey, keyFrom }: { gateway: string; api_key: string; keyFrom: KeySource },
  profile: string,
): Promise<number | undefined> {
  let response: Response
  try {
    const headers = { authorization: `Bearer ${apiKey}`, 'anthropic-version': '2023-06-01' }
    response = await reach(gateway, `/compat-a/v1/models/${profile}`, { headers }, 3000)
  } catch (err) {
    // A gateway that is down fails every request the agent would make: say so now. One that is
    // only slow may still serve.
    if (err instanceof Unreachable && err.timedOut) return undefined
    throw err
  }
  if (response.status === 401) throw refusedKey(gateway, keyFrom)
  if (!response.ok) return undefined
  const model: unknown = await response.json().catch(() => undefined)
  const window = isObject(model) ? model.max_input_tokens : undefined
  return typeof window === 'number' && Number.isSafeInteger(window) && window > 0 ? window : undefined
}

export async function claudeLaunch(io: Io, args: string[]): Promise<Launch> {
  const { profile, agentArgs, insecure } = splitArgs(args)
  const credentials = requireCredentials(io, { insecure })
  const { gateway, api_key } = credentials
  const contextWindow = await profileContextWindow(credentials, profile)
  const routing = {
    ANTHROPIC_BASE_URL: `${gateway}/compat-a`,
    // An API key would win over the token and bypass the gateway's key; "" is none.
    ANTHROPIC_API_KEY: '',
    ANTHROPIC_MODEL: profile,
    // Claude Code's background calls (titles, summaries) go to the cheap profile.
    ANTHROPIC_SMALL_FAST_MODEL: 'svc-ultra-saver',
    ANTHROPIC_DEFAULT_HAIKU_MODEL: 'svc-ultra-saver',
    ANTHROPIC_DEFAULT_SONNET_MODEL: profile,
    ANTHROPIC_DEFAULT_OPUS_MODEL: profile,
    ANTHROPIC_CUSTOM_HEADERS: `x-session-source: claude-code\nx-agent-id: claude-code@${hostname()}`,
  }
  return {
    command: io.env.SVC_CLAUDE_BIN || 'claude',
    args: withRoutingSettings(io, agentArgs, routing),
    env: {
      ...io.env,
      ...routing,
      ANTHROPIC_API_KEY: undefined,
      ANTHROPIC_AUTH_TOKEN: api_key,
      // The window of a model Claude Code does not know, for when to compact; the user's own wins
      // (in the environment or in a settings file: so not among the routing settings).
      CLAUDE_CODE_MAX_CONTEXT_TOKENS: io.env.CLAUDE_CODE_MAX_CONTEXT_TOKENS ?? contextWindow?.toString(),
    },
  }
}

/**
 * Claude Code applies the `env` of its settings files (the user's ~/.claude/settings.json, a
 * repository's .claude/settings.json) over its own environment: a file's ANTHROPIC_BASE_URL would
 * take the key elsewhere, its ANTHROPIC_API_KEY would go to the gateway instead. Settings given with
 * --settings win over both, so svc's routing goes there too, before the user's arguments. Not the
 * key: an argument is readable by every user of the machine (`ps`); it stays in the environment,
 * where a settings file's ANTHROPIC_AUTH_TOKEN could replace it but never send it elsewhere.
 * Claude Code reads only the last --settings: a user's own (JSON or a file) is merged under svc's
 * and given in one. One after a `--` is not a flag.
 */
function withRoutingSettings(io: Io, agentArgs: string[], routing: Record<string, string>): string[] {
  const flagsEnd = agentArgs.includes('--') ? agentArgs.indexOf('--') : agentArgs.length
  let theirs: Record<string, unknown> = {}
  const rest: string[] = []
  for (let i = 0; i < agentArgs.length; i++) {
    const arg = agentArgs[i]!
    const value =
      i >= flagsEnd
        ? undefined
        : arg === '--settings' && i + 1 < flagsEnd
          ? agentArgs[++i]
          : arg.startsWith('--settings=')
            ? arg.slice('--settings='.length)
            : undefined
    if (value === undefined) rest.push(arg)
    else theirs = userSettings(io, value)
  }
  const env = isObject(theirs.env) ? theirs.env : {}
  return ['--settings', JSON.stringify({ ...theirs, env: { ...env, ...routing } }), ...rest]
}

/** A user's --settings value, as Claude Code reads it: JSON when it looks like an object, else a file. */
function userSettings(io: Io, value: string): Record<string, unknown> {
  const json = value.trim().startsWith('{') && value.trim().endsWith('}')
  let parsed: unknown
  try {
    parsed = JSON.parse(json ? value : readFileSync(resolve(io.cwd, value), 'utf8'))
  } catch (err) {
    const why =
      json || err instanceof SyntaxError ? 'not valid JSON' : ((err as NodeJS.ErrnoException).code ?? 'unreadable')
    throw new UsageError(`--settings ${json ? 'JSON' : value}: ${why} (svc adds the gateway's settings to it)`)
  }
  if (!isObject(parsed)) throw new UsageError(`--settings ${json ? 'JSON' : value}: not a JSON object`)
  return parsed
}

/**
 * Codex gets a custom provider through `-c` overrides, so the user's own config.toml is untouched,
 * and a model catalog entry for the profile (codex-catalog.ts), derived from the installed Codex's
 * own, so that it knows the profile as a model: no "metadata not found" error on every run, its
 * apply_patch tool, verbosity. A Codex that cannot print its catalog is launched as before.
 */
export async function codexLaunch(io: Io, args: string[]): Promise<Launch> {
  const { profile, agentArgs, insecure } = splitArgs(args)
  const credentials = requireCredentials(io, { insecure })
  const { gateway, api_key } = credentials
  // One window for both: the catalog entry's and `model_context_window`, which also stands alone
  // when there is no catalog.
  const contextWindow = await profileContextWindow(credentials, profile)
  const command = io.env.SVC_CODEX_BIN || 'codex'
  const env = { ...io.env, SVC_API_KEY: api_key }
  const catalog = await profileCatalog(io, command, env, profile, contextWindow)
  const provider = [
    'name = "svc"',
    `base_url = ${JSON.stringify(`${gateway}/compat-b/v1`)}`,
    'env_key = "SVC_API_KEY"',
    'wire_api = "responses"',
    `http_headers = { "x-session-source" = "codex", "x-agent-id" = ${JSON.stringify(`codex@${hostname()}`)} }`,
  ].join(', ')
  return {
    command,
    args: [
      '-c',
      `model_providers.svc={ ${provider} }`,
      '-c',
      'model_provider="svc"',
      '-c',
      `model="${profile}"`,
      // Before the user's own arguments, so that a -c of theirs for either wins.
      ...(catalog === undefined ? [] : ['-c', `model_catalog_json=${JSON.stringify(catalog)}`]),
      ...(contextWindow === undefined ? [] : ['-c', `model_context_window=${contextWindow}`]),
      ...agentArgs,
    ],
    env,
  }
}

/**
 * The profile's catalog file, or undefined: no Codex there (runAgent says how to install it), or
 * one that cannot print its catalog (older than `codex debug models`). Not a failure of the launch:
 * Codex then runs as before, and only `SVC_LOG_LEVEL=debug` says why.
 */
async function profileCatalog(
  io: Io,
  command: string,
  env: Record<string, string | undefined>,
  profile: string,
  contextWindow: number | undefined,
): Promise<string | undefined> {
  const bin = locateAgent(command, env).bin
  if (!bin) return undefined
  const result = await codexCatalogFor({
    bin,
    env: definedEnv(env),
    profile,
    contextWindow,
    path: catalogPath(io.env, profile),
  })
  if ('path' in result) return result.path
  if (io.env.SVC_LOG_LEVEL === 'debug') io.err(`svc: Codex starts without a model catalog: ${result.skipped}`)
  return undefined
}

/**
 * The agent's executable: a name is looked for on the PATH, a path (SVC_CLAUDE_BIN=/opt/…/claude)
 * taken as it is. Else why it cannot run, and the shell's exit code for it: 127 not found, 126
 * found but not executable (a directory, no x bit).
 */
function locateAgent(
  command: string,
  env: Record<string, string | undefined>,
): { bin: string; problem?: undefined } | { bin?: undefined; problem: string; exitCode: 126 | 127 } {
  if (!command.includes('/')) {
    const bin = Bun.which(command, { PATH: env.PATH ?? '' })
    return bin ? { bin } : { problem: 'is not on the PATH', exitCode: 127 }
  }
  let stats: Stats
  try {
    stats = statSync(command)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    return code === 'ENOENT' || code === 'ENOTDIR'
      ? { problem: 'does not exist', exitCode: 127 }
      : { problem: `cannot be read (${code ?? (err as Error).message})`, exitCode: 126 }
  }
  if (stats.isDirectory()) return { problem: 'is a directory', exitCode: 126 }
  try {
    accessSync(command, fsConstants.X_OK)
  } catch {
    return { problem: 'is not executable', exitCode: 126 }
  }
  return { bin: command }
}

const definedEnv = (env: Record<string, string | undefined>) =>
  Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))

const installHints: Record<string, string> = {
  claude:
    'Claude Code is not installed. Install it with `npm install -g @anthropic-ai/claude-code`, then run `svc claude` again.',
  codex: 'The Codex CLI is not installed. Install it with `npm install -g @openai/codex`, then run `svc codex` again.',
}

/** The variable that names each agent's executable in place of the one on the PATH. */
const binVariables = { claude: 'SVC_CLAUDE_BIN', codex: 'SVC_CODEX_BIN' } as const

export async function runAgent(launch: Launch, io: Io, name: 'claude' | 'codex'): Promise<number> {
  const located = locateAgent(launch.command, launch.env)
  if (located.problem !== undefined) {
    // Named by the user: their variable is what to fix, not an install.
    const variable = binVariables[name]
    io.err(
      launch.env[variable]
        ? `svc: ${variable} names ${launch.command}, which ${located.problem}: point it at the ${name} executable, or unset it to run ${name} from the PATH`
        : installHints[name]!,
    )
    return located.exitCode
  }
  const child = Bun.spawn([located.bin, ...launch.args], {
    env: definedEnv(launch.env),
    stdio: ['inherit', 'inherit', 'inherit'],
  })
  // The agent owns the terminal: forward the signals a user or a supervisor sends us.
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal)
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((s) => [s, forward(s)] as const)
  for (const [signal, handler] of handlers) process.on(signal, handler)
  try {
    const code = await child.exited
    // A child killed by a signal exits as 128 + signal number, as a shell would report it.
    const signal = child.signalCode
    if (!signal) return code
    return 128 + (typeof signal === 'number' ? signal : constants.signals[signal])
  } finally {
    for (const [signal, handler] of handlers) process.off(signal, handler)
  }
}

export const runClaude = async (args: string[], io: Io) => runAgent(await claudeLaunch(io, args), io, 'claude')
export const runCodex = async (args: string[], io: Io) => runAgent(await codexLaunch(io, args), io, 'codex')
