// `svc serve`: open the ledger, make a first account on an empty database, listen, and on
// SIGTERM/SIGINT/SIGHUP stop accepting, let in-flight streams finish (up to the grace period), exit 0.
// A second SIGTERM/SIGINT meanwhile ends it at once (exit 128 + the signal's number).
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { isFullStrengthMasterKey } from '../accounts/provider-keys'
import { createApp } from '../app'
import { ConfigError } from '../config/load'
import { type Db, openDatabase } from '../db/open'
import { holdServeLock, type ServeLock } from '../db/serve-lock'
import { createDeps, type Deps } from '../deps'
import type { Ledger } from '../ledger/ledger'
import { GatewayError } from '../lib/errors'
import { createLogger, type Logger } from '../lib/log'
import { formatUsd } from '../ledger/pricing'
import { profileNames } from '../router/profiles'
import { profileSkipReason } from '../router/rank'
import { type Io, loadCliConfig, parseFlags, UsageError } from './context'

const logLevels = ['debug', 'info', 'warn', 'error'] as const
const isLogLevel = (value: string): value is (typeof logLevels)[number] =>
  (logLevels as readonly string[]).includes(value)

export async function runServe(args: string[], io: Io): Promise<number> {
  const { values } = parseFlags(args, {
    host: { type: 'string' },
    port: { type: 'string' },
    'log-level': { type: 'string' },
    once: { type: 'boolean' },
  })
  const port = values.port === undefined ? undefined : Number(values.port)
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) {
    throw new UsageError(`--port must be 0–65535 (got ${values.port})`)
  }
  // Empty, Bun would listen on every interface: the opposite of what a blank (templated) value means.
  if (values.host === '')
    throw new UsageError('--host is empty (an unset shell variable?): give an address, e.g. 127.0.0.1')
  const config = loadCliConfig(io, { ...values, port })
  const level = values['log-level'] ?? io.env.SVC_LOG_LEVEL ?? 'info'
  if (!isLogLevel(level)) throw new UsageError(`--log-level must be debug, info, warn or error (got ${level})`)
  const log = createLogger(level)
  refuseTakenAddress(config.server.host, config.server.port)
  // Only serve makes a database; it refuses one it cannot write rather than serve unrecorded, and
  // one another gateway serves (serve-lock.ts).
  let lock: ServeLock | undefined
  let db: Db
  try {
    db = openDatabase(config.server.database, {
      mustWrite: true,
      log,
      beforeMigrations: (path) => {
        if (path !== ':memory:') lock = holdServeLock(path)
      },
    })
  } catch (err) {
    lock?.release()
    throw err
  }
  const deps = createDeps(config, { log, serving: true, db })

  const first = await deps.admin.bootstrap()
  if (first) {
    const keyFile = config.server.database === ':memory:' ? undefined : firstKeyFileOf(config.server.database)
    if (keyFile) {
      writeFileSync(keyFile, `${first.key}\n`, { mode: 0o600 })
      chmodSync(keyFile, 0o600)
    }
    log.info('created the first account on an empty database', {
      account: first.account.name,
      starter_grant_usd: first.grant ? formatUsd(first.grant.amountNanos) : '0',
      api_key_file: keyFile ?? '(in-memory database: key not written)',
    })
  }

  const app = createApp(deps)
  const server = listen(config.server.host, config.server.port, () =>
    Bun.serve({
      hostname: config.server.host,
      port: config.server.port,
      fetch: (request) => app.fetch(routable(request)),
      // Out of the app's way: it refuses a body past max_body_bytes itself, chunked ones included
      // (app.ts), in the route's own error shape. Bun's refusal is an empty 413, which the SDKs
      // show as "413 status code (no body)"; with its limit at max_body_bytes + 1 KB, any body
      // larger than that got it. Its limit still backs the app's up, far past what it allows.
      maxRequestBodySize: config.server.maxBodyBytes * 4,
      // The longest Bun allows (seconds without a byte either way). A model may think for minutes: a
      // started stream gets a keep-alive every [routing] ping_interval_ms (at most 240 s) instead.
      // A request with a body is not held to it while it awaits its answer (a gathered answer, a
      // chain of fallbacks may take longer): test/client-connections.test.ts pins that.
      idleTimeout: 255,
    }),
  )
  const url = `http://${hostForUrl(server.hostname ?? config.server.host)}:${server.port}`
  // The signals are svc's from the moment it listens: a SIGTERM in the milliseconds before the
  // start-up checks below end (opening each stored provider key) took the process down at once,
  // with no drain and no ledger flush.
  let exit: (code: number) => void = () => {}
  const exited = new Promise<number>((resolve) => {
    exit = resolve
  })
  let stopping = false
  const shutdown = async (signal: Signal) => {
    if (stopping) {
      // The operator who asks twice wants it gone now (a stream that will not end, a database
      // that will not close): not a signal swallowed while it waits. A late SIGHUP (the terminal
      // closing after a Ctrl-C) is not such a request.
      if (signal === 'SIGHUP') return
      log.error('second signal during shutdown: exiting now; requests in flight are cut and queued ones not recorded', {
        signal,
      })
      process.exit(128 + signalNumbers[signal])
    }
    stopping = true
    log.info('shutting down: no new connections, waiting for in-flight requests', {
      signal,
      grace_seconds: config.server.shutdownGraceSeconds,
    })
    let drained = false
    try {
      drained = await drain(server, deps, config.server.shutdownGraceSeconds)
    } catch (err) {
      log.error('could not stop the server cleanly', { error: String(err) })
    } finally {
      const { unrecorded } = closeLedger(deps.ledger, log)
      lock?.release()
      log.info('stopped', { drained, unrecorded })
      exit(0)
    }
  }
  // SIGHUP too: the terminal svc was started from went away. Left to its default it would end
  // the process at once, cutting streams and losing the ledger writes not yet committed. There
  // is no config to reload in place; under a service manager that restarts it, a restart is one.
  // Unless svc was started with hang-ups ignored (`nohup svc serve &`): the operator asked for a
  // gateway that outlives the terminal, and a handler would replace that choice with a drain.
  const handlers = (Object.keys(signalNumbers) as Signal[])
    .filter((signal) => signal !== 'SIGHUP' || !startedIgnoringHangUps())
    .map((signal) => [signal, () => void shutdown(signal)] as const)
  for (const [signal, handler] of handlers) process.on(signal, handler)

  log.info('svc is listening', {
    url,
    database: config.server.database,
    config: config.source ?? '(none: defaults and environment)',
    providers: Object.keys(config.providers),
  })
  if (Object.keys(config.providers).length === 0) {
    log.warn(
      'no provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY or DEEPSEEK_API_KEY, or add [providers.*] to svc.toml',
    )
  }
  warnOfHardLinks(config.server.database, log)
  warnOfProvidersWithoutKey(deps, log)
  warnOfModelsWithoutProvider(deps, log)
  warnOfCompatibleByHost(deps, log)
  if (Object.keys(config.providers).length > 0) warnOfProfilesThatServeNothing(deps, log)
  await warnOfUnopenableProviderKeys(deps, log)
  if (values.once && !stopping) {
    // `make build` uses this to prove the binary boots on an empty database, then exits.
    for (const [signal, handler] of handlers) process.off(signal, handler)
    io.out(JSON.stringify({ url, database: config.server.database, first_account: first?.account.name ?? null }))
    await server.stop(true)
    closeLedger(deps.ledger, log)
    lock?.release()
    return 0
  }
  return exited
}

const signalNumbers = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const

/**
 * Whether the process began with SIGHUP ignored, as `nohup` starts it: bit 0 of the ignored-signal
 * mask Linux shows in /proc (kept across the exec that sizes svc's heap). Elsewhere: taken as not.
 */
function startedIgnoringHangUps(): boolean {
  try {
    const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]
    return mask !== undefined && (Number.parseInt(mask.slice(-1), 16) & 1) === 1
  } catch {
    return false
  }
}
type Signal = keyof typeof signalNumbers

/**
 * Stops accepting, then waits for the requests in flight (streams included) rather than for every
 * connection to close: an idle keep-alive connection would otherwise hold the process for the
 * whole grace period. Streams still running then are ended with an overloaded error event, which
 * SDKs and agents retry (a bare reset reads as a broken network), and recorded with what flowed
 * (what is not yet streaming ends with its connection: running.ts `cutting`);
 * what is left a moment later is closed. True when nothing was cut.
 */
async function drain(server: ReturnType<typeof Bun.serve>, deps: Deps, graceSeconds: number): Promise<boolean> {
  void server.stop(false)
  // Requests waiting for room in the memory budget would start streams the drain may cut: told
  // to retry now, as any that comes to wait meanwhile is before the cut (admission.ts).
  deps.admission.refuseWaiting()
  const settled = async (ms: number) => {
    // Monotonic: a wall clock stepped during the drain neither cuts it short nor stretches it.
    const deadline = performance.now() + ms
    while (server.pendingRequests > 0 && performance.now() < deadline) await Bun.sleep(20)
    return server.pendingRequests === 0
  }
  const drained = await settled(graceSeconds * 1000)
  if (!drained) {
    deps.admission.refuseWaiting()
    const cut = deps.running.cutAll(shuttingDown())
    deps.log.warn('the grace period is over: streams still running are ended with an overloaded error', { cut })
    await settled(cutWaitMs)
  }
  await server.stop(true)
  return drained
}

/** How long the streams cut at the grace period's end get to send their last event. */
const cutWaitMs = 1000

const shuttingDown = () =>
  new GatewayError('overloaded', 'svc is shutting down: this request was ended before it finished; retry it', {
    status: 529,
  })

/** Closing never stops the process from ending; what it could not do is said, once. */
function closeLedger(ledger: Ledger, log: Logger) {
  const closed = ledger.close()
  if (closed.unrecorded > 0) {
    log.error(`${closed.unrecorded} answered request(s) could not be recorded: the database refuses writes`)
  }
  if (closed.checkpointFailure !== undefined) {
    log.warn('the WAL could not be checkpointed at close (what was committed is kept in it)', {
      error: String(closed.checkpointFailure),
    })
  }
  return closed
}

/**
 * Beside the database: `first-api-key` for the default `svc.db`, `<name>-first-api-key` for
 * another, so that two databases in one directory do not overwrite each other's first key (which
 * is shown nowhere else).
 */
function firstKeyFileOf(database: string): string {
  const name = basename(database)
  return join(dirname(database), name === 'svc.db' ? 'first-api-key' : `${name}-first-api-key`)
}

/**
 * Elysia finds a request's path from the URL's 11th character on (past `http://` and a host of at
 * least three characters): a Host header of one to three (`Host: x`) shifted the path it routed,
 * `/compat-a/metrics` serving /metrics, past what a proxy's path rules allow. Without a Host, or
 * with one no URL can hold (empty, a space, `@`), Bun gives the path alone, which was cut the same
 * way (an HTTP/1.0 request through a proxy that passes the client's missing Host). Such requests are
 * routed on a normal origin; any other goes as it came (one indexOf).
 */
function routable(request: Request): Request {
  const url = request.url
  if (url.startsWith('/')) return new Request(`http://localhost${url}`, request)
  const pathStart = url.indexOf('/', 'http://'.length + 1)
  return pathStart < 0 || pathStart >= 11 ? request : new Request(`http://localhost${url.slice(pathStart)}`, request)
}

/**
 * An address another process listens on (or this machine does not have) is refused before
 * anything is made: a database, its first account and the key file beside it stayed behind
 * otherwise, for a gateway that never served.
 */
function refuseTakenAddress(host: string, port: number) {
  listen(host, port, () => Bun.serve({ hostname: host, port, fetch: () => new Response() })).stop(true)
}

/** Starts the server; an address it cannot take is the operator's to change, said in a line. */
function listen<T>(host: string, port: number, start: () => T): T {
  try {
    return start()
  } catch (err) {
    const code = (err as { code?: string }).code
    const why =
      code === 'EADDRINUSE'
        ? 'the port is in use (another svc?)'
        : code === 'EADDRNOTAVAIL'
          ? 'no interface of this machine has that address'
          : code === 'EACCES'
            ? 'not allowed to use that port'
            : (err as Error).message
    throw new ConfigError(
      `cannot listen on ${hostForUrl(host)}:${port}: ${why}; choose another with --host/--port or [server]`,
    )
  }
}

/** An IPv6 address in brackets, as a URL writes it (RFC 3986 §3.2.2): `::1:8080` is no address and port. */
const hostForUrl = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host)

/**
 * A database file with another hard link: a gateway started on that other path is not refused (the
 * lock is named by the path, serve-lock.ts), and SQLite keeps a `-wal` beside each path, so two
 * such gateways would write one file through two logs.
 */
function warnOfHardLinks(database: string, log: Logger) {
  if (database === ':memory:') return
  const links = statSync(database).nlink
  if (links > 1) {
    log.warn(
      `the database file has ${links} hard links: a second svc serve started on another of them is not refused, and would corrupt it; keep one`,
      { database },
    )
  }
}

/**
 * A provider in svc.toml whose key variable is unset serves only accounts with their own key: a
 * typo'd variable name otherwise looked configured (and ready) until every request was a 503.
 */
function warnOfProvidersWithoutKey(deps: Deps, log: Logger) {
  for (const provider of Object.values(deps.config.providers)) {
    if (provider.apiKey) continue
    log.warn(
      `provider ${provider.id} has no platform key: ${provider.apiKeyEnv ? `${provider.apiKeyEnv} is not set` : 'set api_key_env in its section'}; only accounts with their own key for it (BYOK) reach it`,
    )
  }
}

/**
 * A [[models]] entry whose provider nothing configures is never routed to: a misspelt provider id
 * otherwise lost the model without a word. Built-in rows of such providers are not named (config/models.ts).
 */
function warnOfModelsWithoutProvider(deps: Deps, log: Logger) {
  for (const { id, provider } of deps.config.modelsWithoutProvider) {
    log.warn(
      `model ${id} names provider ${provider}, which is not configured: the model is never routed to (a misspelt provider id?)`,
    )
  }
}

/**
 * An `openai-responses` provider whose host is not OpenAI's is taken for a compatible server
 * (vLLM, llama.cpp…): Responses clients' requests are translated for it and web search goes
 * elsewhere. A proxy in front of OpenAI looks the same, and was passed clients' bodies before
 * `openai_itself` existed: said at start-up, so that an upgrade changes nothing silently.
 */
function warnOfCompatibleByHost(deps: Deps, log: Logger) {
  for (const id of deps.config.compatibleByHost) {
    log.warn(
      `provider ${id} is taken for an OpenAI-compatible Responses server, not OpenAI itself: Responses clients' requests are translated for it (function tools only) and web search goes to a model that runs it; if it is OpenAI behind a proxy, set openai_itself = true in [providers.${id}]`,
    )
  }
}

/**
 * A profile none of whose models can serve (no price, retired, below its floor, no configured
 * provider, or no model at all) answered every request 503 while /readyz said ready. Said once per
 * profile, each reason with its models, by the ranking's own rule (rank.ts). A model that only an
 * account's own key (BYOK) reaches counts as serving: its provider's missing key is warned of above.
 */
function warnOfProfilesThatServeNothing(deps: Deps, log: Logger) {
  const { config } = deps
  const anyOwnKey = new Map(Object.keys(config.providers).map((id) => [id, 'an account’s own key']))
  // Built-in rows of providers not configured are not named (the catalog has dozens); [[models]] rows are.
  const misconfigured = new Set(config.modelsWithoutProvider.map((m) => m.id))
  for (const [profile, mode] of Object.entries(profileNames)) {
    const reach = { byokProviders: anyOwnKey, policy: config.profiles[mode], now: deps.clock() }
    const reasons = new Map<string, string[]>()
    const serves = config.models.some((model) => {
      if (!model.profiles.includes(mode)) return false
      const provider = config.providers[model.provider]
      if (!provider && !misconfigured.has(model.id)) return false
      const why = provider
        ? profileSkipReason(model, provider, reach)
        : `its provider ${model.provider} is unknown here`
      if (why) reasons.set(why, [...(reasons.get(why) ?? []), model.id])
      return !why
    })
    if (serves) continue
    log.warn(
      `profile ${profile} can serve nothing: every request to it is refused (503 on the messages route, 400 on the responses route)`,
      {
        why: reasons.size === 0 ? 'no model of a configured provider is in it' : Object.fromEntries(reasons),
      },
    )
  }
}

/**
 * Stored BYOK keys this gateway cannot open (its master key unset, or another than sealed them):
 * those accounts are not served by those providers, rather than on the platform's key at the full
 * price, until the key is set. Said once at startup, where the operator looks.
 */
async function warnOfUnopenableProviderKeys(deps: Deps, log: Logger) {
  const { masterKey, masterKeyEnv } = deps.config.server
  // Any text is taken (hashed into a key, provider-keys.ts): a short one guards the stored keys of a
  // copied database no better than a password would. Not refused: keys sealed with it must open.
  if (masterKey !== undefined && !isFullStrengthMasterKey(masterKey) && masterKey.length < 32) {
    log.warn(
      `${masterKeyEnv} is ${masterKey.length} characters: the BYOK keys sealed with it are as safe as it is hard to guess; make one of 32 random bytes with \`openssl rand -base64 32\` (and rotate to it: svc provider-keys reseal)`,
    )
  }
  const unopenable = await deps.admin.unopenableProviderKeys()
  if (unopenable.length === 0) return
  log.error(
    `${unopenable.length} stored provider key(s) cannot be opened: ${masterKeyEnv} is ${masterKey ? 'not the key they were sealed with' : 'not set'}; until it is, their accounts are not served by those providers (the platform's key is never used in their place)`,
    { keys: unopenable.map((key) => ({ account_id: key.accountId, provider: key.providerId })) },
  )
}
