// The Ledger over bun:sqlite with Drizzle. The request path writes through the group-commit
// writer (prepared statements); everything else here is the usage API, the CLI and routing reads.
import { and, Column, desc, eq, getTableColumns, gte, inArray, is, isNotNull, lt, sql } from 'drizzle-orm'
import type { Db } from '../db/open'
import * as s from '../db/schema'
import { newId } from '../lib/ids'
import type { FeedbackSignal } from '../router/nudges'
import { type CheckpointPolicy, defaultCheckpoints, startCheckpointer } from './checkpointer'
import { createGrantReader, createRequestWriter, type WriterHooks } from './sqlite-request-writer'
import type {
  Account,
  ApiKeyRecord,
  DeviceCodeRecord,
  FeedbackRecord,
  FinishedRequest,
  GrantChargeRecord,
  GrantRecord,
  Ledger,
  LegRecord,
  NewGrant,
  ProviderKeyRecord,
  RequestPageQuery,
  RequestRecord,
  SessionSummary,
  CacheTokens,
  SpendPoint,
  SpendQuery,
  SpendSeries,
  SpendTotals,
} from './ledger'

export function createSqliteLedger(
  db: Db,
  clock: () => number = Date.now,
  opts: { checkpointInWorker?: boolean; checkpoints?: CheckpointPolicy } & WriterHooks = {},
): Ledger {
  const client = db.$client
  const dataVersion = client.prepare<{ data_version: number }, []>('PRAGMA data_version')
  /** Requests the writer gave up on at close (the database still refused them): shutdown says how many. */
  let closing = false
  let unrecordedAtClose = 0
  const writer = createRequestWriter(client, {
    ...opts,
    onRecordFailure: (requestId, err) => {
      if (closing) unrecordedAtClose++
      opts.onRecordFailure?.(requestId, err)
    },
  })
  writer.spreadLeftovers()
  const readGrants = createGrantReader(client)
  const newestFeedback = client.prepare<{ request_id: string; rating: string | null; reason: string | null }, [string]>(
    `SELECT request_id, rating, reason FROM feedback
     WHERE account_id = ? AND (rating IS NOT NULL OR reason IS NOT NULL)
     ORDER BY created_at DESC, id DESC`,
  )
  const checkpointer = opts.checkpointInWorker
    ? startCheckpointer(client, writer, opts.checkpoints ?? defaultCheckpoints)
    : undefined
  let seenVersion = dataVersion.get()?.data_version ?? 0

  /**
   * A select's rows as objects named like its fields (in their order, as Drizzle writes the
   * columns), read on the checkpointer's connection where there is one: the reads that grow with
   * the ledger (seconds over a few hundred thousand legs) then stall no stream (checkpointer.ts).
   */
  async function readRows<Row>(
    query: { toSQL(): { sql: string; params: unknown[] }; values(): unknown[][] },
    fields: Record<keyof Row, unknown>,
  ): Promise<Row[]> {
    const rows = checkpointer ? await checkpointer.read(query.toSQL()) : query.values()
    const names = Object.keys(fields)
    // A column's stored value as Drizzle reads it (JSON text parsed, 0/1 as booleans).
    const decoders = names.map((name) => {
      const field = (fields as Record<string, unknown>)[name]
      return is(field, Column) ? (value: unknown) => field.mapFromDriverValue(value) : undefined
    })
    return rows.map(
      (row) =>
        Object.fromEntries(
          names.map((name, i) => {
            const value = row[i]
            const decode = decoders[i]
            return [name, decode && value !== null ? decode(value) : value]
          }),
        ) as Row,
    )
  }

  const requestColumns = getTableColumns(s.requests)

  const sessionColumns = {
    sessionId: s.requests.sessionId,
    // Rows recorded before every session got a source (README, Sessions) read as `api`.
    sessionSource: sql<string>`coalesce(max(${s.requests.sessionSource}), 'api')`,
    // The agent that started the session: its subagents' ids extend its own, `<agent>/<subagent>`
    // (session.ts); where only they name one (the agent itself unnamed), the part they extend.
    agentId: sql<
      string | null
    >`coalesce(min(case when instr(${s.requests.agentId}, '/') = 0 then ${s.requests.agentId} end), substr(min(${s.requests.agentId}), 1, instr(min(${s.requests.agentId}), '/') - 1))`,
    requestCount: sql<number>`count(*)`,
    totalCostNanos: sql<number>`coalesce(sum(${s.requests.totalCostNanos}), 0)`,
    firstAt: sql<number>`min(${s.requests.createdAt})`,
    latestAt: sql<number>`max(${s.requests.createdAt})`,
  }

  // One leg's share of spend; summed per bucket and group by SQLite, never by a loop in JS.
  const spendColumns = {
    costNanos: sql<number>`coalesce(sum(${s.usageEvents.costNanos}), 0)`,
    requests: sql<number>`count(distinct ${s.usageEvents.requestId})`,
    inputTokens: sql<number>`coalesce(sum(${s.usageEvents.inputTokens}), 0)`,
    cachedInputTokens: sql<number>`coalesce(sum(${s.usageEvents.cachedInputTokens}), 0)`,
    cacheCreationInputTokens: sql<number>`coalesce(sum(${s.usageEvents.cacheCreationInputTokens}), 0)`,
    outputTokens: sql<number>`coalesce(sum(${s.usageEvents.outputTokens}), 0)`,
    webSearchRequests: sql<number>`coalesce(sum(${s.usageEvents.webSearchRequests}), 0)`,
  }
  const spendKeys = {
    model: s.usageEvents.modelId,
    provider: s.usageEvents.providerId,
    routing_mode: s.requests.routingMode,
  }

  const ledger: Ledger = {
    async createAccount(name) {
      const account: Account = { id: newId('acct'), name, createdAt: clock() }
      db.insert(s.accounts).values(account).run()
      return account
    },
    async getAccount(id) {
      return db.select().from(s.accounts).where(eq(s.accounts.id, id)).get()
    },
    async getAccountByName(name) {
      return db.select().from(s.accounts).where(eq(s.accounts.name, name)).get()
    },
    async listAccounts() {
      return db.select().from(s.accounts).orderBy(s.accounts.createdAt).all()
    },
    async answersReads() {
      db.select({ id: s.accounts.id }).from(s.accounts).limit(1).all()
    },

    async insertApiKey(key) {
      const row: ApiKeyRecord = { ...key, createdAt: clock(), revokedAt: null }
      db.insert(s.apiKeys).values(row).run()
      return row
    },
    async findApiKeyByPrefix(prefix) {
      return db.select().from(s.apiKeys).where(eq(s.apiKeys.prefix, prefix)).get()
    },
    async getApiKey(id) {
      return db.select().from(s.apiKeys).where(eq(s.apiKeys.id, id)).get()
    },
    async listApiKeys(accountId) {
      const q = db.select().from(s.apiKeys)
      return (accountId ? q.where(eq(s.apiKeys.accountId, accountId)) : q).orderBy(s.apiKeys.createdAt).all()
    },
    async revokeApiKey(id) {
      return db
        .update(s.apiKeys)
        .set({ revokedAt: clock() })
        .where(and(eq(s.apiKeys.id, id), sql`${s.apiKeys.revokedAt} is null`))
        .returning()
        .get()
    },

    async addGrant(grant: NewGrant) {
      const row: GrantRecord = {
        id: newId('grant'),
        accountId: grant.accountId,
        amountNanos: grant.amountNanos,
        remainingNanos: grant.amountNanos,
        scopeCostType: grant.scopeCostType,
        source: grant.source,
        scopeRoutingModes: emptyToNull(grant.scopeRoutingModes),
        scopeModels: emptyToNull(grant.scopeModels),
        scopeProviders: emptyToNull(grant.scopeProviders),
        expiresAt: grant.expiresAt ?? null,
        createdAt: clock(),
      }
      db.insert(s.grants).values(row).run()
      return row
    },
    async listGrants(accountId) {
      return readGrants(accountId)
    },

    async putProviderKey(key) {
      const row: ProviderKeyRecord = { ...key, id: newId('pkey'), createdAt: clock() }
      db.insert(s.providerKeys)
        .values(row)
        .onConflictDoUpdate({
          target: [s.providerKeys.accountId, s.providerKeys.providerId],
          set: { sealed: row.sealed, hint: row.hint, createdAt: row.createdAt },
        })
        .run()
      return row
    },
    async listProviderKeys(accountId) {
      const q = db.select().from(s.providerKeys)
      return (accountId ? q.where(eq(s.providerKeys.accountId, accountId)) : q).all()
    },
    async resealProviderKeys(updates) {
      db.transaction((tx) => {
        for (const { id, sealed } of updates)
          tx.update(s.providerKeys).set({ sealed }).where(eq(s.providerKeys.id, id)).run()
      })
    },
    async deleteProviderKey(accountId, providerId) {
      const gone = db
        .delete(s.providerKeys)
        .where(and(eq(s.providerKeys.accountId, accountId), eq(s.providerKeys.providerId, providerId)))
        .returning()
        .all()
      return gone.length > 0
    },

    recordRequest: (finished: FinishedRequest) => writer.record(finished),
    queueRequest: (finished: FinishedRequest) => writer.queue(finished),
    refusesWrites: writer.refusing,

    async getRequest(accountId, id) {
      const request = db
        .select()
        .from(s.requests)
        .where(and(eq(s.requests.id, id), eq(s.requests.accountId, accountId)))
        .get()
      if (!request) return undefined
      const legs = db
        .select()
        .from(s.usageEvents)
        .where(eq(s.usageEvents.requestId, id))
        .orderBy(s.usageEvents.attempt)
        .all()
      const charges: GrantChargeRecord[] = db
        .select({
          grantId: s.grantCharges.grantId,
          usageEventId: s.grantCharges.usageEventId,
          costType: s.grantCharges.costType,
          amountNanos: s.grantCharges.amountNanos,
        })
        .from(s.grantCharges)
        .where(eq(s.grantCharges.requestId, id))
        .orderBy(s.grantCharges.usageEventId, s.grantCharges.position)
        .all()
      const feedback = db
        .select()
        .from(s.feedback)
        .where(eq(s.feedback.requestId, id))
        .orderBy(s.feedback.createdAt)
        .all()
      return {
        request: request as RequestRecord,
        legs: legs as LegRecord[],
        charges,
        feedback: feedback as FeedbackRecord[],
      }
    },

    // Read off the event loop (readRows): a filter on a model or status the account rarely had
    // walks all its rows (a second at 1.5 million), and every stream of every account waited.
    async listRequests(q: RequestPageQuery) {
      const conditions = [eq(s.requests.accountId, q.accountId)]
      if (q.sessionId !== undefined) conditions.push(eq(s.requests.sessionId, q.sessionId))
      if (q.status !== undefined) conditions.push(eq(s.requests.status, q.status))
      if (q.modelId !== undefined) conditions.push(eq(s.requests.selectedModelId, q.modelId))
      // A row value, which SQLite takes as a range of the (account, created_at, id) index: the
      // same condition spelt with OR made it scan down from the newest row, so a page 250 days
      // back took 0.75 s and walking the history was quadratic.
      if (q.before) conditions.push(sql`(${s.requests.createdAt}, ${s.requests.id}) < (${q.before.at}, ${q.before.id})`)
      const page = db
        .select(requestColumns)
        .from(s.requests)
        .where(and(...conditions))
        .orderBy(desc(s.requests.createdAt), desc(s.requests.id))
        .limit(q.limit)
      return (await readRows(page, requestColumns)) as RequestRecord[]
    },

    async recentLegs(accountId, limit) {
      return db
        .select()
        .from(s.usageEvents)
        .where(eq(s.usageEvents.accountId, accountId))
        .orderBy(desc(s.usageEvents.createdAt), desc(s.usageEvents.id))
        .limit(limit)
        .all() as LegRecord[]
    },

    async sessionsByIds(accountId, ids) {
      if (ids.length === 0) return []
      return db
        .select(sessionColumns)
        .from(s.requests)
        .where(and(eq(s.requests.accountId, accountId), inArray(s.requests.sessionId, ids)))
        .groupBy(s.requests.sessionId)
        .all() as SessionSummary[]
    },

    // The page's sessions picked from the session index alone (max created_at per session), then
    // only their rows read, in one statement (one snapshot: a session that gets a request meanwhile
    // cannot move within the page): grouped whole, every one of the account's session rows was read
    // from the table (1.1 s at 1.5 million requests, on the event loop: every stream of every account
    // waited). Picking still groups the account's index entries, so it runs off the event loop.
    async listSessions(accountId, limit, before) {
      const latest = sql`max(${s.requests.createdAt})`
      const bySession = and(eq(s.requests.accountId, accountId), isNotNull(s.requests.sessionId))
      const newestFirst = [desc(latest), desc(s.requests.sessionId)]
      const pageIds = db
        .select({ sessionId: s.requests.sessionId })
        .from(s.requests)
        .where(bySession)
        .groupBy(s.requests.sessionId)
        .having(
          before
            ? sql`${latest} < ${before.at} or (${latest} = ${before.at} and ${s.requests.sessionId} < ${before.id})`
            : undefined,
        )
        .orderBy(...newestFirst)
        .limit(limit)
      const page = db
        .select(sessionColumns)
        .from(s.requests)
        .where(and(bySession, inArray(s.requests.sessionId, pageIds)))
        .groupBy(s.requests.sessionId)
        .orderBy(...newestFirst)
      return readRows<SessionSummary>(page, sessionColumns)
    },

    async addFeedback(feedback) {
      const row: FeedbackRecord = { ...feedback, id: newId('fb'), createdAt: clock() }
      db.insert(s.feedback).values(row).run()
      return row
    },

    async recentFeedbackSignals(accountId, limit) {
      // A request's latest rating (or reason) stands for it: rating one answer down three times is
      // one opinion, not three, and a changed mind replaces the old rating. A comment alone rates nothing.
      // Newest first by the account's own index, stopping at `limit` requests: a window over all
      // the feedback took 100 ms for an account that had given 19,000 ratings, on the request path
      // each time the gateway reloads its caches.
      const latest = new Map<string, { rating: string | null; reason: string | null }>()
      for (const row of newestFeedback.iterate(accountId)) {
        if (latest.has(row.request_id)) continue
        latest.set(row.request_id, { rating: row.rating, reason: row.reason })
        if (latest.size === limit) break
      }
      if (latest.size === 0) return []
      const served = new Map(
        db
          .select({ id: s.requests.id, routingMode: s.requests.routingMode, modelId: s.requests.selectedModelId })
          .from(s.requests)
          .where(inArray(s.requests.id, [...latest.keys()]))
          .all()
          .map((request) => [request.id, request]),
      )
      const signals: FeedbackSignal[] = []
      for (const [requestId, { rating, reason }] of latest) {
        const request = served.get(requestId)
        if (request) signals.push({ routingMode: request.routingMode, modelId: request.modelId, rating, reason })
      }
      return signals
    },
    async spendSeries(accountId, q: SpendQuery): Promise<SpendSeries> {
      if (!Number.isSafeInteger(q.bucketMs) || q.bucketMs <= 0) throw new RangeError(`bad bucket width ${q.bucketMs}`)
      // Integer division on integer ms: the bucket start. Inlined (a checked integer) so SQLite
      // never sees a float parameter and turns it into real division.
      const width = sql.raw(String(q.bucketMs))
      const bucket = sql<number>`(${s.usageEvents.createdAt} / ${width}) * ${width}`
      const key = spendKeys[q.groupBy]
      // The range rides usage_events_account_created (measured: 50k legs over 90 days in ~0.1 s,
      // 300k in ~1 s, read off the event loop: readRows; a covering index did not help, the GROUP BY
      // is the cost). Only routing_mode needs requests.
      const inRange = and(
        eq(s.usageEvents.accountId, accountId),
        gte(s.usageEvents.createdAt, q.since),
        lt(s.usageEvents.createdAt, q.until),
      )
      const pointFields = { key: sql<string>`${key}`, t: bucket, ...spendColumns }
      const pointsQuery = db.select(pointFields).from(s.usageEvents).$dynamic()
      if (q.groupBy === 'routing_mode') pointsQuery.innerJoin(s.requests, eq(s.requests.id, s.usageEvents.requestId))
      const cacheFields = {
        modelId: s.usageEvents.modelId,
        providerId: s.usageEvents.providerId,
        cachedInputTokens: spendColumns.cachedInputTokens,
        cacheCreationInputTokens: spendColumns.cacheCreationInputTokens,
        cacheCreation1hInputTokens: sql<number>`coalesce(sum(${s.usageEvents.cacheCreation1hInputTokens}), 0)`,
      }
      const [points, totals, cacheTokens] = await Promise.all([
        readRows<SpendPoint>(pointsQuery.where(inRange).groupBy(key, bucket).orderBy(key, bucket), pointFields),
        readRows<SpendTotals>(db.select(spendColumns).from(s.usageEvents).where(inRange), spendColumns),
        readRows<CacheTokens>(
          db
            .select(cacheFields)
            .from(s.usageEvents)
            .where(inRange)
            .groupBy(s.usageEvents.modelId, s.usageEvents.providerId)
            .having(
              sql`sum(${s.usageEvents.cachedInputTokens}) > 0 or sum(${s.usageEvents.cacheCreationInputTokens}) > 0`,
            )
            .orderBy(s.usageEvents.modelId, s.usageEvents.providerId),
          cacheFields,
        ),
      ])
      return { points, totals: totals[0]!, cacheTokens }
    },

    async lastServedInSession(lane) {
      const row = db
        .select({ modelId: s.requests.selectedModelId, providerId: s.requests.selectedProviderId })
        .from(s.requests)
        .where(
          and(
            eq(s.requests.accountId, lane.accountId),
            eq(s.requests.sessionId, lane.sessionId),
            eq(s.requests.routingMode, lane.routingMode),
            eq(s.requests.status, 'completed'),
            isNotNull(s.requests.selectedModelId),
          ),
        )
        .orderBy(desc(s.requests.createdAt), desc(s.requests.id))
        .limit(1)
        .get()
      return row?.modelId && row.providerId ? { modelId: row.modelId, providerId: row.providerId } : undefined
    },

    async insertDeviceCode(row) {
      db.insert(s.deviceCodes).values(row).run()
    },

    async purgeDeviceCodes(before) {
      db.delete(s.deviceCodes).where(lt(s.deviceCodes.expiresAt, before)).run()
    },

    async findDeviceCode(by) {
      const where =
        'deviceCodeHash' in by
          ? eq(s.deviceCodes.deviceCodeHash, by.deviceCodeHash)
          : eq(s.deviceCodes.userCode, by.userCode)
      return db.select().from(s.deviceCodes).where(where).get() as DeviceCodeRecord | undefined
    },

    async transitionDeviceCode(deviceCodeHash, from, patch) {
      return db
        .update(s.deviceCodes)
        .set(patch)
        .where(and(eq(s.deviceCodes.deviceCodeHash, deviceCodeHash), eq(s.deviceCodes.status, from)))
        .returning()
        .get() as DeviceCodeRecord | undefined
    },

    changedElsewhere() {
      const version = dataVersion.get()?.data_version ?? 0
      if (version === seenVersion) return false
      seenVersion = version
      return true
    },

    close() {
      checkpointer?.stop()
      closing = true
      writer.close()
      let checkpointFailure: unknown
      try {
        // PASSIVE never waits on another connection (a CLI verb closing beside a busy gateway);
        // the last connection to close checkpoints fully anyway. Best effort: what is committed
        // is in the WAL, and a database gone read-only must not stop a process from ending.
        client.exec('PRAGMA wal_checkpoint(PASSIVE)')
      } catch (err) {
        checkpointFailure = err
      }
      client.close()
      return { unrecorded: unrecordedAtClose, checkpointFailure }
    },
  }
  // Every other query first writes what is queued, so it sees the requests already answered
  // (the usage API right after a stream ends, feedback that references a request, a new grant
  // landing after the charges queued before it).
  for (const name of Object.keys(ledger) as (keyof Ledger)[]) {
    if (name === 'recordRequest' || name === 'queueRequest' || name === 'refusesWrites' || name === 'changedElsewhere')
      continue
    const method = ledger[name] as (...args: unknown[]) => unknown
    ;(ledger as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      writer.flush()
      return method(...args)
    }
  }
  return ledger
}

const emptyToNull = (list: string[] | null | undefined) => (list && list.length > 0 ? list : null)
