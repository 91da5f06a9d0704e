// The one place that wires config → database, ledger, caches and services. createApp(deps) takes
// the result; tests build their own with an in-memory database and a simulator URL.
import { type Admin, createAdmin } from './accounts/admin'
import { type Authenticator, createAuthenticator } from './accounts/api-keys'
import { createDeviceLogin, type DeviceLogin } from './accounts/device-login'
import type { Config } from './config/load'
import { type Db, openDatabase } from './db/open'
import type { GrantRecord, Ledger, RememberedPrompt, SessionLane, SessionServed } from './ledger/ledger'
import { createSqliteLedger } from './ledger/sqlite-ledger'
import { type AccountCache, accountCache } from './lib/account-cache'
import { createLogger, type Logger } from './lib/log'
import { createGatewayMetrics, type GatewayMetrics } from './relay/metrics'
import { CreditHolds } from './relay/credit-holds'
import { defaultRequestBudget, RequestAdmission } from './relay/admission'
import { memoryLimit } from './lib/memory-limit'
import { RunningRequests } from './relay/running'
import { createHttp1Client } from './providers/http1/client'
import { createHealth, type Health } from './router/health'
import { computeNudges, nudgeWindow } from './router/nudges'
import type { OwnProviderKeys } from './router/provider-key'

export interface Deps {
  config: Config
  ledger: Ledger
  admin: Admin
  auth: Authenticator
  log: Logger
  clock: () => number
  fetch: typeof fetch
  /** The account's grants, from memory between ledger writes: the quota gate reads these. */
  credit: AccountCache<GrantRecord[]>
  /** The account's own provider keys (BYOK), decrypted once and held in memory only. */
  byok: AccountCache<OwnProviderKeys>
  /** Feedback nudges per account (nudgeKey(mode, model) → points). */
  nudges: AccountCache<Map<string, number>>
  /** Which model served each session last under each routing mode, for session stickiness. */
  sessions: {
    lastServed(lane: SessionLane): Promise<SessionServed | undefined>
    /** The session's request went to this model. */
    served(lane: SessionLane, choice: { modelId: string; providerId: string }): void
    /** A session's answer reported this prompt (trace.ts, likelyCachedTokens). */
    prompted(lane: SessionLane, prompt: RememberedPrompt): void
  }
  health: Health
  metrics: GatewayMetrics
  /** Requests being served, until their ledger write is queued (the usage API shows them). */
  running: RunningRequests
  /** What the requests in flight are expected to charge, held against their grants (the quota gate). */
  holds: CreditHolds
  /** The memory the model requests in flight are expected to hold; past its budget, 529s. */
  admission: RequestAdmission
  deviceLogin: DeviceLogin
  /** Drops in-memory caches when another process wrote to the database (CLI revoke, new grant). */
  syncCaches(): void
}

export interface DepsOptions {
  /** A long-running gateway: WAL checkpoints move to a worker thread (one-shot CLI verbs skip it). */
  serving?: boolean
  db?: Db
  clock?: () => number
  fetch?: typeof fetch
  log?: Logger
}

/** How long a serving gateway waits for another connection's write lock. */
const servingBusyTimeoutMs = 100

export function createDeps(config: Config, opts: DepsOptions = {}): Deps {
  const clock = opts.clock ?? Date.now
  /**
   * What times the limits and cool-downs held in memory: monotonic, so that a wall clock NTP steps
   * back (an audit: 10 minutes) neither locks sign-ins out nor holds a model back for the step.
   */
  const elapsed = opts.clock ?? (() => performance.now())
  const db = opts.db ?? openDatabase(config.server.database)
  // bun:sqlite waits for a lock on the event loop: another process's write transaction (a sqlite3
  // shell left open) stalled every request and stream for 5 s at each try. A CLI verb's write takes
  // milliseconds; past 100 ms the database counts as refusing writes (503s, retried every second).
  if (opts.serving) db.$client.exec(`PRAGMA busy_timeout = ${servingBusyTimeoutMs}`)
  const log = opts.log ?? createLogger('info')
  const ledger = createSqliteLedger(db, clock, {
    checkpointInWorker: opts.serving,
    // Its charge is booked; its rows wait in ledger_journal until the cause is fixed.
    onSpreadFailure: (err, seq) =>
      log.error('a ledger journal entry could not be moved into the tables', { seq, error: String(err) }),
    // Write-through: the next request's quota gate reads the grants as the last commit left them,
    // without a query. The commit read them inside its own transaction, so they are current.
    onCommitted: (accountId, committed) => grants.set(accountId, committed),
    // The client's answer stands; the failure to record is an operator problem and is logged loudly.
    onRecordFailure: (requestId, err) =>
      log.error('could not record request in the ledger', { request_id: requestId, error: String(err) }),
    // Not per request: once when the database starts refusing (a full disk), once when it takes
    // the waiting requests. In between, model requests are answered 503 (relay.ts).
    onRefused: (err) =>
      log.error('the database refuses writes: model requests are refused until it takes them again', {
        error: String(err),
      }),
    onResumed: (written) => log.info('the database takes writes again', { requests_recorded: written }),
    onSpreadRefused: (err) =>
      log.error('the database refuses writes: journal entries wait to be moved into the tables (they are charged)', {
        error: String(err),
      }),
  })
  const auth = createAuthenticator(ledger)
  // Admin writes from this process (the admin HTTP API) do not move this connection's
  // data_version, so syncCaches would not see them: the admin drops the account's caches itself.
  const admin = createAdmin({
    ledger,
    config,
    clock,
    onAccountChanged: (accountId) => {
      grants.invalidate(accountId)
      byokKeys.invalidate(accountId)
    },
  })
  const grants = accountCache((accountId) => ledger.listGrants(accountId))
  // Cool-downs on the monotonic clock; a test's clock (moved by hand) stands for both.
  const health = createHealth({ elapsed, wall: clock })
  // Each account's own keys as last loaded, sealed. A load that finds one added, replaced (even by
  // the same key, sealed anew) or removed makes health forget what the old key taught: its open
  // circuit would keep the new key untried for minutes. Loads follow every change, this process's
  // (onAccountChanged) and another's (the CLI's, seen by syncCaches), and precede routing.
  const sealedSeen = new Map<string, Map<string, string>>()
  const byokKeys = accountCache(async (accountId) => {
    const { keys, sealed } = await admin.ownProviderKeys(accountId)
    const before = sealedSeen.get(accountId)
    for (const providerId of new Set([...(before?.keys() ?? []), ...sealed.keys()])) {
      if (before?.get(providerId) !== sealed.get(providerId)) health.forgetOwnKey(providerId, accountId)
    }
    if (sealed.size > 0) sealedSeen.set(accountId, sealed)
    else sealedSeen.delete(accountId)
    return keys
  })
  const nudges = accountCache(async (accountId) =>
    computeNudges(await ledger.recentFeedbackSignals(accountId, nudgeWindow)),
  )
  const lastServed = new Map<string, SessionServed>()
  /** Agent sessions come and go by the thousand; memory must not grow with every one ever seen. */
  const sessionsRemembered = 10_000
  /** A session's last reported prompts, kept for the estimate of a cut one's cached part. */
  const promptsRemembered = 3
  /**
   * Re-inserted so the Map's order is most recent last; the oldest session is forgotten past the
   * cap (the ledger still knows it, one query away). Both ways in: a session found in the ledger
   * but not served (its request refused, say) counts too, or the cap was passed for good.
   */
  const remember = (key: string, choice: SessionServed) => {
    const known = lastServed.get(key)
    lastServed.delete(key)
    // The prompts the session's answers reported stay known when a request moves it (each names its model).
    lastServed.set(key, choice.prompts || !known?.prompts ? choice : { ...choice, prompts: known.prompts })
    if (lastServed.size > sessionsRemembered) lastServed.delete(lastServed.keys().next().value!)
  }
  const laneKey = (lane: SessionLane) => `${lane.accountId}\u0000${lane.sessionId}\u0000${lane.routingMode}`
  let syncCheckedThisTurn = false
  return {
    config,
    ledger,
    admin,
    auth,
    credit: grants,
    byok: byokKeys,
    nudges,
    sessions: {
      async lastServed(lane) {
        const key = laneKey(lane)
        const known = lastServed.get(key)
        if (known) return known
        const found = await ledger.lastServedInSession(lane)
        if (found) remember(key, found)
        return found
      },
      served(lane, choice) {
        remember(laneKey(lane), choice)
      },
      prompted(lane, prompt) {
        const key = laneKey(lane)
        const known = lastServed.get(key) ?? { modelId: prompt.modelId, providerId: prompt.providerId }
        // A few, not one: a side request (Codex's compaction, a subagent under the session's id)
        // must not hide the prompt the conversation's next request begins with.
        remember(key, { ...known, prompts: [prompt, ...(known.prompts ?? [])].slice(0, promptsRemembered) })
      },
    },
    health,
    metrics: createGatewayMetrics({ openCircuits: health.openCircuits, ledgerRefusing: ledger.refusesWrites }),
    running: new RunningRequests(),
    holds: new CreditHolds(),
    admission: new RequestAdmission(
      config.server.requestMemoryBytes ?? defaultRequestBudget(memoryLimit()),
      config.server.requestWaitMs,
    ),
    deviceLogin: createDeviceLogin({
      ledger,
      clock,
      elapsed,
      intervalSeconds: config.server.devicePollIntervalSeconds,
    }),
    log,
    clock,
    fetch: opts.fetch ?? createHttp1Client(),
    syncCaches() {
      // Asking SQLite costs a read transaction (file locks); requests that arrive in the same
      // turn of the event loop share one answer, so a write by another process is still seen by
      // every request that starts after it.
      if (syncCheckedThisTurn) return
      syncCheckedThisTurn = true
      setImmediate(() => {
        syncCheckedThisTurn = false
      })
      if (!ledger.changedElsewhere()) return
      auth.clear()
      grants.clear()
      byokKeys.clear()
      nudges.clear()
    },
  }
}
