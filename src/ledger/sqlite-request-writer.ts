// The request path's one ledger write, made cheap: prepared statements (no query building per
// request) and group commit — requests that finish in the same turn of the event loop are
// written in one IMMEDIATE transaction. Readers flush first, so a request is visible to the usage
// API as soon as its response has ended; a clean shutdown flushes before closing.
import type { Database, Statement } from 'bun:sqlite'
import { allocateCharge } from './credit'
import type { FinishedRequest, GrantRecord, LegRecord, RecordedRequest, RequestRecord } from './ledger'

interface Pending {
  finished: FinishedRequest
  resolve: (recorded: RecordedRequest) => void
  reject: (err: unknown) => void
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
  ] as const

const legColumns = `id, request_id, account_id, attempt, model_id, provider_id, upstream_model, committed, estimated,
  outcome, error, input_tokens, cached_input_tokens, cache_creation_input_tokens, output_tokens, cost_nanos,
  charged_nanos, byok, created_at, ended_at`
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
  ] as const

const chargeColumns = 'request_id, usage_event_id, position, grant_id, cost_type, amount_nanos, created_at'

export function createRequestWriter(client: Database) {
  const insertRequest = client.prepare(
    `INSERT INTO requests (${requestColumns}) VALUES (${placeholders(requestColumns)})`,
  )
  const insertLeg = client.prepare(`INSERT INTO usage_events (${legColumns}) VALUES (${placeholders(legColumns)})`)
  const insertCharge = client.prepare(
    `INSERT INTO grant_charges (${chargeColumns}) VALUES (${placeholders(chargeColumns)})`,
  )
  const readGrants = createGrantReader(client)
  const updateGrant = client.prepare('UPDATE grants SET remaining_nanos = ? WHERE id = ?')

  /** Writes one request; `grants` is this batch's view of its account's grants, updated in place. */
  function write(finished: FinishedRequest, grants: GrantRecord[], touched: Set<GrantRecord>): RecordedRequest {
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
    const record: RequestRecord = { ...request, chargedNanos: chargedTotal }
    insertRequest.run(...requestValues(record))
    for (const { leg, charged, parts } of legs) {
      insertLeg.run(...legValues(leg, charged))
      for (const [position, part] of parts.entries()) {
        insertCharge.run(
          request.id,
          leg.id,
          position,
          part.grantId,
          leg.charge.costType,
          part.amountNanos,
          leg.endedAt ?? leg.createdAt,
        )
      }
    }
    // The batch's one list of the account's grants: after the commit it is how they stand.
    return { request: record, grants }
  }

  const writeBatch = client.transaction((batch: FinishedRequest[]) => {
    const grantsByAccount = new Map<string, GrantRecord[]>()
    const touched = new Set<GrantRecord>()
    const records = batch.map((finished) => {
      const accountId = finished.request.accountId
      let grants = grantsByAccount.get(accountId)
      if (!grants) {
        grants = readGrants(accountId)
        grantsByAccount.set(accountId, grants)
      }
      return write(finished, grants, touched)
    })
    for (const grant of touched) updateGrant.run(grant.remainingNanos, grant.id)
    return records
  })

  let queue: Pending[] = []
  /** Commits wait while the checkpointer copies the end of the log (checkpointer.ts). */
  let held = false

  /** Writes everything queued, now. One bad record must not take its batch-mates down with it. */
  function flush() {
    if (queue.length === 0 || held) return
    const batch = queue
    queue = []
    try {
      const records = writeBatch.immediate(batch.map((p) => p.finished))
      for (const [i, p] of batch.entries()) p.resolve(records[i]!)
    } catch {
      for (const p of batch) {
        try {
          p.resolve(writeBatch.immediate([p.finished])[0]!)
        } catch (err) {
          p.reject(err)
        }
      }
    }
  }

  return {
    record(finished: FinishedRequest): Promise<RecordedRequest> {
      return new Promise((resolve, reject) => {
        queue.push({ finished, resolve, reject })
        if (queue.length === 1) setImmediate(flush)
      })
    },
    flush,
    hold() {
      held = true
    },
    release() {
      held = false
      flush()
    },
  }
}
