// The request path's one ledger write, made cheap: prepared statements (no query building per
// request) and group commit — requests that finish within the same 5 ms are charged and written
// in one IMMEDIATE transaction. A batch of one or two (light load) commits to the journal: the
// grants charged and one entry per request, spread into the tables within 25 ms. Readers flush
// first (queue and journal), so a request is visible to the usage API as soon as its response
// has ended; a clean shutdown flushes before closing, and a killed process's entries are spread
// when the ledger next opens.
import type { Database, SQLQueryBindings, Statement } from 'bun:sqlite'
import { type Allocation, allocateCharge } from './credit'
import type { FinishedRequest, GrantRecord, LegRecord, RecordedRequest, RequestRecord } from './ledger'
import { databaseRefusesWrites } from './write-refusals'

/** A queued request; a caller that waits (recordRequest) has a promise, the request path does not. */
interface Pending {
  finished: FinishedRequest
  resolve?: (recorded: RecordedRequest) => void
  reject?: (err: unknown) => void
}

interface GrantRow extends Omit<GrantRecord, 'scopeRoutingModes' | 'scopeModels' | 'scopeProviders'> {
  scopeRoutingModes: string | null
  scopeModels: string | null
  scopeProviders: string | null
}

const parseScope = (json: string | null) => (json === null ? null : (JSON.parse(json) as string[] | null))

/** Oldest first, ties by id: the order charging starts from. */
const byAge = (a: GrantRecord, b: GrantRecord) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/**
 * An account's grants, oldest first: what the quota gate and the charging both start from. Sorted
 * here rather than by ORDER BY: a statement with an ORDER BY cost 7–12 µs more per run in
 * bun:sqlite (measured, even where an index gives the order), and this runs at every commit.
 */
export function createGrantReader(client: Database): (accountId: string) => GrantRecord[] {
  const select: Statement<GrantRow, [string]> = client.prepare(
    `SELECT id, account_id AS accountId, source, amount_nanos AS amountNanos, remaining_nanos AS remainingNanos,
       scope_cost_type AS scopeCostType, scope_routing_modes AS scopeRoutingModes, scope_models AS scopeModels,
       scope_providers AS scopeProviders, expires_at AS expiresAt, created_at AS createdAt
     FROM grants WHERE account_id = ?`,
  )
  return (accountId) =>
    select
      .all(accountId)
      .map((g) => ({
        ...g,
        scopeRoutingModes: parseScope(g.scopeRoutingModes),
        scopeModels: parseScope(g.scopeModels),
        scopeProviders: parseScope(g.scopeProviders),
      }))
      .sort(byAge)
}

/**
 * Each INSERT binds by position, in the order of its column list: on the request path this is
 * ~10% cheaper than named parameters and spares a copy of every record.
 */
const placeholders = (columns: string) =>
  columns
    .split(',')
    .map(() => '?')
    .join(', ')

const requestColumns = `id, account_id, api_key_id, surface, routing_mode, status, http_status, error_type,
  error_message, stream, selected_model_id, selected_provider_id, provider_ranks, attempts, total_cost_nanos,
  charged_nanos, total_input_tokens, total_cached_input_tokens, total_cache_creation_input_tokens,
  total_output_tokens, session_id, agent_id, session_source, byok, created_at, first_byte_at, ended_at`
const requestValues = (r: RequestRecord) =>
  [
    r.id,
    r.accountId,
    r.apiKeyId,
    r.surface,
    r.routingMode,
    r.status,
    r.httpStatus,
    r.errorType,
    r.errorMessage,
    r.stream,
    r.selectedModelId,
    r.selectedProviderId,
    JSON.stringify(r.providerRanks),
    r.attempts,
    r.totalCostNanos,
    r.chargedNanos,
    r.totalInputTokens,
    r.totalCachedInputTokens,
    r.totalCacheCreationInputTokens,
    r.totalOutputTokens,
    r.sessionId,
    r.agentId,
    r.sessionSource,
    r.byok,
    r.createdAt,
    r.firstByteAt,
    r.endedAt,
  ] satisfies SQLQueryBindings[]

const legColumns = `id, request_id, account_id, attempt, model_id, provider_id, upstream_model, committed, estimated,
  outcome, error, input_tokens, cached_input_tokens, cache_creation_input_tokens, output_tokens, cost_nanos,
  charged_nanos, byok, created_at, ended_at, web_search_requests, cache_creation_1h_input_tokens`
/**
 * Journal entries written before a column existed lack its value, at the end: each such column is
 * a count of something they never had (web_search_requests: searches; cache_creation_1h_input_tokens:
 * 1-hour cache writes), so 0.
 */
const legColumnCount = legColumns.split(',').length
const legValues = (leg: Omit<LegRecord, 'chargedNanos'>, chargedNanos: number) =>
  [
    leg.id,
    leg.requestId,
    leg.accountId,
    leg.attempt,
    leg.modelId,
    leg.providerId,
    leg.upstreamModel,
    leg.committed,
    leg.estimated,
    leg.outcome,
    leg.error,
    leg.inputTokens,
    leg.cachedInputTokens,
    leg.cacheCreationInputTokens,
    leg.outputTokens,
    leg.costNanos,
    chargedNanos,
    leg.byok,
    leg.createdAt,
    leg.endedAt,
    leg.webSearchRequests,
    leg.cacheCreation1hInputTokens,
  ] satisfies SQLQueryBindings[]

const chargeColumns = 'request_id, usage_event_id, position, grant_id, cost_type, amount_nanos, created_at'

/** A request as charged: its record and, per leg, what the leg cost which grants. */
interface ChargedRequest {
  record: RequestRecord
  legs: { leg: FinishedRequest['legs'][number]; charged: number; parts: Allocation['parts'] }[]
}

/**
 * A charged request as its statements' bind values: the request, and per leg its row and its
 * charges' rows. The journal stores this: half the bytes of the objects (1.5 KB → ~0.8 KB), and
 * a smaller entry commits cheaper (two 1.5 KB entries fill a 4 KB page: ~10 µs a commit more
 * than 0.3 KB ones, measured).
 */
type Row = SQLQueryBindings[]
type Rows = [request: Row, legs: [leg: Row, charges: Row[]][]]

const rowsOf = ({ record, legs }: ChargedRequest): Rows => [
  requestValues(record),
  legs.map(({ leg, charged, parts }) => [
    legValues(leg, charged),
    parts.map((part, position) => [
      record.id,
      leg.id,
      position,
      part.grantId,
      leg.charge.costType,
      part.amountNanos,
      leg.endedAt ?? leg.createdAt,
    ]),
  ]),
]

/**
 * Builds b56fb46 … fba8d52 (before f28f316) journaled the charged request itself, `{ record, legs:
 * [{ leg, charged, parts }] }`, not its rows: one killed before its spread left such an entry for
 * the next open (upgrades included). Its rows are the ones those builds wrote from it; its legs
 * predate web_search_requests and cache_creation_1h_input_tokens, 0 as migrations 0005 and 0006
 * gave the rows already there.
 */
const rowsOfObjects = ({ record, legs }: ChargedRequest): Rows =>
  rowsOf({
    record,
    legs: legs.map(({ leg, charged, parts }) => ({
      leg: {
        ...leg,
        webSearchRequests: leg.webSearchRequests ?? 0,
        cacheCreation1hInputTokens: leg.cacheCreation1hInputTokens ?? 0,
      },
      charged,
      parts,
    })),
  })

/** A journal entry's rows, whichever build wrote it. */
function rowsOfEntry(entry: string): Rows {
  const rows = JSON.parse(entry) as Rows | ChargedRequest
  return Array.isArray(rows) ? rows : rowsOfObjects(rows)
}

/**
 * How long a finished request's write waits for others to share its transaction. No answer waits
 * for it (relay/outcome.ts), so only a process killed outright in this window loses records, and
 * the quota gate may let through this much more than the credit. Against a commit per event-loop
 * turn it cut CPU a request by ~17 % at one connection (~2,000 requests/s: ~10 a commit instead
 * of one), where a lone commit and its journal entry's spread were a third of the request.
 */
const commitWindowMs = 5
/** A batch this large commits at once rather than waiting out the window. */
const commitAtRequests = 256
/**
 * Batches up to this size commit to the journal: a lone request (light load) writes one entry and
 * the grants, ~3 WAL frames instead of ~9, spread into the tables later with the entries of others.
 * Larger batches already share their commit and go straight to the tables.
 */
const journalMaxBatch = 2
/** How long journal entries wait to be spread into the tables, and how many may wait at most. */
const spreadAfterMs = 25
const spreadAtEntries = 256
/** How often a write the database refused (a full disk, say) is tried again. */
const refusedRetryMs = 1_000

/** What the writer tells its owner; all optional. */
export interface WriterHooks {
  /** A journal entry could not be spread (it stays in the journal, retried at the next spread). */
  onSpreadFailure?: (err: unknown, entrySeq: number) => void
  /** A batch committed: each account it charged, with its grants as they now stand. */
  onCommitted?: (accountId: string, grants: GrantRecord[]) => void
  /** A request queued with `queue` could not be recorded. */
  onRecordFailure?: (requestId: string, err: unknown) => void
  /**
   * The database refused a write (disk full, I/O error…): the requests answered wait in memory,
   * tried again every second, and `refusing()` is true until one try succeeds.
   */
  onRefused?: (err: unknown) => void
  /** The database took the waiting requests: `refusing()` is false again. */
  onResumed?: (written: number) => void
  /**
   * The database refused to move journal entries into the tables: they wait in the journal,
   * charged, and the usage API shows them once moved. Told once until a spread succeeds.
   */
  onSpreadRefused?: (err: unknown) => void
}

export function createRequestWriter(client: Database, hooks: WriterHooks = {}) {
  const { onSpreadFailure = () => {}, onCommitted, onRecordFailure, onRefused, onResumed, onSpreadRefused } = hooks
  const insertRequest = client.prepare(
    `INSERT INTO requests (${requestColumns}) VALUES (${placeholders(requestColumns)})`,
  )
  const insertLeg = client.prepare(`INSERT INTO usage_events (${legColumns}) VALUES (${placeholders(legColumns)})`)
  const insertCharge = client.prepare(
    `INSERT INTO grant_charges (${chargeColumns}) VALUES (${placeholders(chargeColumns)})`,
  )
  const readGrants = createGrantReader(client)
  const updateGrant = client.prepare('UPDATE grants SET remaining_nanos = ? WHERE id = ?')
  const insertEntry = client.prepare('INSERT INTO ledger_journal (entry) VALUES (?)')
  const readEntries = client.prepare<{ seq: number; entry: string }, []>('SELECT seq, entry FROM ledger_journal')
  const deleteEntry = client.prepare('DELETE FROM ledger_journal WHERE seq = ?')
  const clearEntries = client.prepare('DELETE FROM ledger_journal')

  /** Charges one request to `grants` (this batch's view of its account's, updated in place). */
  function charge(finished: FinishedRequest, grants: GrantRecord[], touched: Set<GrantRecord>): ChargedRequest {
    const { request } = finished
    let chargedTotal = 0
    const legs = finished.legs.map((leg) => {
      const { charge } = leg
      let charged = 0
      const parts =
        charge.amountNanos > 0
          ? allocateCharge(
              grants,
              {
                routingMode: request.routingMode,
                modelId: leg.modelId,
                providerId: leg.providerId,
                costType: charge.costType,
                now: leg.createdAt,
              },
              charge.amountNanos,
            ).parts
          : []
      for (const part of parts) {
        const grant = grants.find((g) => g.id === part.grantId)!
        grant.remainingNanos -= part.amountNanos
        touched.add(grant)
        charged += part.amountNanos
      }
      chargedTotal += charged
      return { leg, charged, parts }
    })
    return { record: { ...request, chargedNanos: chargedTotal }, legs }
  }

  function insertRows([request, legs]: Rows) {
    insertRequest.run(...request)
    for (const [leg, charges] of legs) {
      while (leg.length < legColumnCount) leg.push(0)
      insertLeg.run(...leg)
      for (const values of charges) insertCharge.run(...values)
    }
  }

  /** Charges and records a batch in one transaction; returns whether it went to the journal. */
  const writeBatch = client.transaction((batch: FinishedRequest[]) => {
    const grantsByAccount = new Map<string, GrantRecord[]>()
    const touched = new Set<GrantRecord>()
    const records: RecordedRequest[] = []
    const journaled = batch.length <= journalMaxBatch
    for (const finished of batch) {
      const accountId = finished.request.accountId
      let grants = grantsByAccount.get(accountId)
      if (!grants) {
        grants = readGrants(accountId)
        grantsByAccount.set(accountId, grants)
      }
      const charged = charge(finished, grants, touched)
      const rows = rowsOf(charged)
      if (journaled) insertEntry.run(JSON.stringify(rows))
      else insertRows(rows)
      // The batch's one list of the account's grants: after the commit it is how they stand.
      records.push({ request: charged.record, grants })
    }
    for (const grant of touched) updateGrant.run(grant.remainingNanos, grant.id)
    return { records, journaled, grantsByAccount }
  })

  /** Moves every journal entry into the tables, and empties the journal, in one transaction. */
  const spreadAll = client.transaction(() => {
    const entries = readEntries.all()
    for (const { entry } of entries) insertRows(rowsOfEntry(entry))
    if (entries.length > 0) clearEntries.run()
  })
  /** One entry at a time: an entry that cannot be written stays in the journal, nothing is lost. */
  const spreadOne = client.transaction((seq: number, entry: string) => {
    insertRows(rowsOfEntry(entry))
    deleteEntry.run(seq)
  })

  let queue: Pending[] = []
  let commitTimer: ReturnType<typeof setTimeout> | undefined
  /**
   * Requests whose write the database refused, oldest first, and its last refusal: written before
   * anything queued after them, so that grants are charged in the order requests finished.
   */
  let refused: Pending[] = []
  let refusal: unknown
  let retryTimer: ReturnType<typeof setTimeout> | undefined
  /**
   * Timed commits and spreads wait while the checkpointer copies the end of the log and starts it
   * over (checkpointer.ts). A reader's flush does not: seeing every answered request comes first,
   * and the checkpointer then just finds the log incomplete and tries again next round.
   */
  let held = false
  /** Entries this process journaled that are not spread yet. */
  let unspread = 0
  /** The last spread was refused by the database (told once, until a spread succeeds). */
  let spreadRefused = false
  let spreadTimer: ReturnType<typeof setTimeout> | undefined

  /**
   * Writes everything queued (and anything refused before it), now. One bad record must not take
   * its batch-mates down with it; a database that refuses writes keeps them all for a later try.
   */
  function commitQueued(evenIfHeld = false) {
    clearTimeout(commitTimer)
    commitTimer = undefined
    if ((queue.length === 0 && refused.length === 0) || (held && !evenIfHeld)) return
    const batch = refused.length === 0 ? queue : refused.concat(queue)
    queue = []
    refused = []
    let written: ReturnType<typeof writeBatch.immediate>
    try {
      written = writeBatch.immediate(batch.map((p) => p.finished))
    } catch (err) {
      if (databaseRefusesWrites(err)) keepRefused(batch, err)
      else for (const p of batch) writeAlone(p)
      return
    }
    // Told outside the try: a hook that throws after the commit must not make it write the batch again.
    if (written.journaled) journalGrew(batch.length)
    committed(written, batch.length)
    for (const [i, p] of batch.entries()) p.resolve?.(written.records[i]!)
  }

  function writeAlone(p: Pending) {
    let written: ReturnType<typeof writeBatch.immediate>
    try {
      written = writeBatch.immediate([p.finished])
    } catch (err) {
      if (databaseRefusesWrites(err)) keepRefused([p], err)
      else fail(p, err)
      return
    }
    if (written.journaled) journalGrew(1)
    committed(written, 1)
    p.resolve?.(written.records[0]!)
  }

  function fail(p: Pending, err: unknown) {
    if (p.reject) p.reject(err)
    else onRecordFailure?.(p.finished.request.id, err)
  }

  /**
   * Holds requests the database would not take. Their answers have gone out; dropping them would
   * serve them free and lose them from the usage API, so they wait (the request path refuses new
   * requests meanwhile: `refusing`) and the write is tried again every second.
   */
  function keepRefused(batch: Pending[], err: unknown) {
    refused.push(...batch)
    if (refusal === undefined) onRefused?.(err)
    refusal = err
    if (!retryTimer) {
      retryTimer = setTimeout(() => {
        retryTimer = undefined
        commitQueued(true)
      }, refusedRetryMs)
      retryTimer.unref()
    }
  }

  function committed({ grantsByAccount }: { grantsByAccount: Map<string, GrantRecord[]> }, requests: number) {
    if (refusal !== undefined && refused.length === 0) {
      refusal = undefined
      onResumed?.(requests)
    }
    if (onCommitted) for (const [accountId, grants] of grantsByAccount) onCommitted(accountId, grants)
  }

  function enqueue(pending: Pending) {
    queue.push(pending)
    // While the database refuses writes, the retry writes it with those waiting.
    if (refusal !== undefined) return
    if (queue.length >= commitAtRequests) commitQueued()
    else commitTimer ??= setTimeout(commitQueued, commitWindowMs)
  }

  function journalGrew(entries: number) {
    unspread += entries
    if (unspread >= spreadAtEntries) setImmediate(spread)
    else if (!spreadTimer) {
      spreadTimer = setTimeout(spread, spreadAfterMs)
      spreadTimer.unref()
    }
  }

  /** Spreads the journal into the tables (any process's entries: a crash may have left some). */
  function spread(evenIfHeld = false) {
    clearTimeout(spreadTimer)
    spreadTimer = undefined
    if (held && !evenIfHeld) return
    unspread = 0
    try {
      spreadAll.immediate()
      spreadRefused = false
    } catch (err) {
      if (databaseRefusesWrites(err)) {
        // Each entry alone would be refused the same way, and logged at every read: they stay in
        // the journal, charged, and the next spread (the next read, or request) tries them again.
        unspread = Math.max(unspread, 1)
        if (!spreadRefused) onSpreadRefused?.(err)
        spreadRefused = true
        return
      }
      for (const { seq, entry } of readEntries.all()) {
        try {
          spreadOne.immediate(seq, entry)
        } catch (err) {
          // Left in the journal for the next spread; its grants were charged when it was written.
          unspread++
          onSpreadFailure(err, seq)
        }
      }
    }
  }

  /** For readers and shutdown: everything answered so far is in the tables afterwards. */
  function flush() {
    commitQueued(true)
    if (unspread > 0) spread(true)
  }

  return {
    record(finished: FinishedRequest): Promise<RecordedRequest> {
      return new Promise((resolve, reject) => enqueue({ finished, resolve, reject }))
    },
    /**
     * The request path's write: no promise, no callbacks a request (each was a few heap cells
     * held until the commit); onCommitted and onRecordFailure report once a batch is written.
     */
    queue(finished: FinishedRequest): void {
      enqueue({ finished })
    },
    flush,
    /** At open: entries a previous process committed and never spread (it was killed). */
    spreadLeftovers: spread,
    hold() {
      held = true
    },
    release() {
      held = false
      flush()
    },
    /** True while the database refuses writes and answered requests wait to be recorded. */
    refusing: () => refusal !== undefined,
    /** At close: a last try; what the database still refuses is lost, and each is reported. */
    close() {
      flush()
      clearTimeout(retryTimer)
      for (const p of refused.splice(0)) fail(p, refusal)
    },
  }
}
