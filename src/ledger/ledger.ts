// The ledger's narrow interface. Everything that reads or writes the database goes through it, so
// a PostgreSQL twin for several gateway instances implements this one interface and nothing else.
import type { PromptPrefix } from '../exchange/prompt-prefix'
import type { FeedbackSignal } from '../router/nudges'
import type { CostType, GrantState } from './credit'

export interface Account {
  id: string
  name: string
  createdAt: number
}

export interface ApiKeyRecord {
  id: string
  accountId: string
  name: string
  prefix: string
  hash: string
  createdAt: number
  revokedAt: number | null
}

/**
 * One session's requests under one routing mode: what session stickiness is kept per. An agent's
 * background calls on a cheaper profile share its session id, and must neither follow nor move
 * its main loop's model (whose prompt cache and thinking signatures are the ones worth keeping).
 */
export interface SessionLane {
  accountId: string
  sessionId: string
  routingMode: string
}

/** The model a session's last request went to (routing keeps a session on it: its cache is there). */
export interface SessionServed {
  modelId: string
  providerId: string
  /**
   * The prompts its last answers reported (the latest first, a few): where the session's next
   * prompt begins with one, that much of it is in the upstream's automatic cache (trace.ts). Known
   * only to the process that served them.
   */
  prompts?: RememberedPrompt[]
}

/** A prompt an answer reported: its tokens, when its leg began, who served it, and its fingerprint. */
export interface RememberedPrompt {
  modelId: string
  providerId: string
  byok: boolean
  tokens: number
  at: number
  prefix: PromptPrefix
}

export interface GrantRecord extends GrantState {
  accountId: string
  source: string
}

export interface NewGrant {
  accountId: string
  amountNanos: number
  scopeCostType: string
  source: string
  scopeRoutingModes?: string[] | null
  scopeModels?: string[] | null
  scopeProviders?: string[] | null
  expiresAt?: number | null
}

export interface ProviderKeyRecord {
  id: string
  accountId: string
  providerId: string
  sealed: string
  hint: string
  createdAt: number
}

export type RequestStatus = 'completed' | 'failed' | 'aborted'
export type LegOutcome = 'ok' | 'failed' | 'aborted'

export interface LegRecord {
  id: string
  requestId: string
  accountId: string
  attempt: number
  modelId: string
  providerId: string
  upstreamModel: string
  committed: boolean
  estimated: boolean
  outcome: LegOutcome
  error: string | null
  inputTokens: number
  cachedInputTokens: number
  cacheCreationInputTokens: number
  outputTokens: number
  costNanos: number
  chargedNanos: number
  byok: boolean
  createdAt: number
  endedAt: number | null
  webSearchRequests: number
  /** The part of cacheCreationInputTokens written for an hour. */
  cacheCreation1hInputTokens: number
}

export interface RequestRecord {
  id: string
  accountId: string
  apiKeyId: string | null
  surface: string
  routingMode: string
  status: RequestStatus
  httpStatus: number | null
  errorType: string | null
  errorMessage: string | null
  stream: boolean
  selectedModelId: string | null
  selectedProviderId: string | null
  providerRanks: unknown[]
  attempts: number
  totalCostNanos: number
  chargedNanos: number
  totalInputTokens: number
  totalCachedInputTokens: number
  totalCacheCreationInputTokens: number
  totalOutputTokens: number
  sessionId: string | null
  agentId: string | null
  sessionSource: string | null
  byok: boolean
  createdAt: number
  firstByteAt: number | null
  endedAt: number | null
}

/** What a leg owes: the relay decides the amount (full cost, or the BYOK fee); the ledger pays it. */
export interface LegCharge {
  costType: CostType
  amountNanos: number
}

export interface FinishedRequest {
  request: Omit<RequestRecord, 'chargedNanos'>
  legs: (Omit<LegRecord, 'chargedNanos'> & { charge: LegCharge })[]
}

export interface RecordedRequest {
  request: RequestRecord
  /** The account's grants as they stand after the write: the quota gate's cache takes these. */
  grants: GrantRecord[]
}

export interface GrantChargeRecord {
  grantId: string
  usageEventId: string
  costType: string
  amountNanos: number
}

export interface FeedbackRecord {
  id: string
  requestId: string
  accountId: string
  rating: 'up' | 'down' | null
  reason: string | null
  comment: string | null
  createdAt: number
}

export interface SessionSummary {
  sessionId: string
  sessionSource: string
  agentId: string | null
  requestCount: number
  totalCostNanos: number
  firstAt: number
  latestAt: number
}

export interface RequestPageQuery {
  accountId: string
  /** Keyset cursor: rows strictly older than (before, beforeId) in (created_at, id) order. */
  before?: { at: number; id: string }
  sessionId?: string
  /** Only requests that ended so. */
  status?: RequestStatus
  /** Only requests this model served (its catalog id). */
  modelId?: string
  limit: number
}

/** How spend is split into series: by the leg's model or provider, or the request's routing mode. */
export type SpendGroup = 'model' | 'provider' | 'routing_mode'

export interface SpendQuery {
  groupBy: SpendGroup
  /** Bucket width in ms (an hour or a day); buckets start at multiples of it since the epoch (UTC). */
  bucketMs: number
  /** Legs created in [since, until). */
  since: number
  until: number
}

export interface SpendTotals {
  costNanos: number
  /** Distinct requests with a leg in the bucket (a fallback request counts under each model it tried). */
  requests: number
  inputTokens: number
  cachedInputTokens: number
  cacheCreationInputTokens: number
  outputTokens: number
  webSearchRequests: number
}

export interface SpendPoint extends SpendTotals {
  key: string
  /** Bucket start, epoch ms. */
  t: number
}

/** Cache token sums per concrete model, so savings can be priced per model. */
export interface CacheTokens {
  modelId: string
  providerId: string
  cachedInputTokens: number
  cacheCreationInputTokens: number
  /** The part of cacheCreationInputTokens written for an hour, dearer where the model prices it. */
  cacheCreation1hInputTokens: number
}

export interface SpendSeries {
  /** Ordered by key, then bucket; only buckets with legs. */
  points: SpendPoint[]
  totals: SpendTotals
  cacheTokens: CacheTokens[]
}

export interface DeviceCodeRecord {
  deviceCodeHash: string
  userCode: string
  deviceName: string
  status: 'pending' | 'approved' | 'denied' | 'consumed'
  accountId: string | null
  createdAt: number
  expiresAt: number
  lastPollAt: number | null
  intervalSeconds: number
}

export interface Ledger {
  // accounts and keys
  createAccount(name: string): Promise<Account>
  getAccount(id: string): Promise<Account | undefined>
  getAccountByName(name: string): Promise<Account | undefined>
  listAccounts(): Promise<Account[]>
  /** Reads one row of the accounts table: the database is open and answers (readiness, at any size). */
  answersReads(): Promise<void>
  insertApiKey(key: Omit<ApiKeyRecord, 'createdAt' | 'revokedAt'>): Promise<ApiKeyRecord>
  findApiKeyByPrefix(prefix: string): Promise<ApiKeyRecord | undefined>
  getApiKey(id: string): Promise<ApiKeyRecord | undefined>
  listApiKeys(accountId?: string): Promise<ApiKeyRecord[]>
  revokeApiKey(id: string): Promise<ApiKeyRecord | undefined>

  // credit
  addGrant(grant: NewGrant): Promise<GrantRecord>
  listGrants(accountId: string): Promise<GrantRecord[]>

  // BYOK
  putProviderKey(key: Omit<ProviderKeyRecord, 'id' | 'createdAt'>): Promise<ProviderKeyRecord>
  listProviderKeys(accountId?: string): Promise<ProviderKeyRecord[]>
  deleteProviderKey(accountId: string, providerId: string): Promise<boolean>
  /** Replaces stored keys' sealed bytes (a master key rotation), all in one transaction. */
  resealProviderKeys(updates: { id: string; sealed: string }[]): Promise<void>

  // the request path
  /** Writes the request, its legs and their charges; resolves once they are committed. */
  recordRequest(finished: FinishedRequest): Promise<RecordedRequest>
  /**
   * The same write with nothing to wait for, as the request path makes it: the ledger's
   * onCommitted hook gets the account's grants once the batch is written, onRecordFailure a
   * failure (createSqliteLedger's options).
   */
  queueRequest(finished: FinishedRequest): void
  /**
   * True while the database refuses writes (a full disk, say): requests already answered wait in
   * memory to be recorded, and the request path refuses new ones rather than serve them unbilled.
   */
  refusesWrites(): boolean

  // usage queries
  getRequest(
    accountId: string,
    id: string,
  ): Promise<
    { request: RequestRecord; legs: LegRecord[]; charges: GrantChargeRecord[]; feedback: FeedbackRecord[] } | undefined
  >
  listRequests(query: RequestPageQuery): Promise<RequestRecord[]>
  recentLegs(accountId: string, limit: number): Promise<LegRecord[]>
  sessionsByIds(accountId: string, ids: string[]): Promise<SessionSummary[]>
  /** Sessions by latest activity, newest first; `before` is the keyset cursor (latest_at, session_id). */
  listSessions(accountId: string, limit: number, before?: { at: number; id: string }): Promise<SessionSummary[]>
  addFeedback(feedback: Omit<FeedbackRecord, 'id' | 'createdAt'>): Promise<FeedbackRecord>

  // what routing reads back
  /** The account's most recent feedback with the mode and model of the request it rated. */
  recentFeedbackSignals(accountId: string, limit: number): Promise<FeedbackSignal[]>
  /** Spend per bucket and group, aggregated by the database (the dashboard's charts). */
  spendSeries(accountId: string, query: SpendQuery): Promise<SpendSeries>
  /** The model and provider that last served a session under one routing mode (completed requests only). */
  lastServedInSession(lane: SessionLane): Promise<SessionServed | undefined>

  // device sign-in
  insertDeviceCode(row: DeviceCodeRecord): Promise<void>
  /** Forgets codes that expired before `before` (used or not): they can never be polled again. */
  purgeDeviceCodes(before: number): Promise<void>
  findDeviceCode(by: { deviceCodeHash: string } | { userCode: string }): Promise<DeviceCodeRecord | undefined>
  /** Moves a code from one status to another only if it is still in `from`: single use, race-free. */
  transitionDeviceCode(
    deviceCodeHash: string,
    from: DeviceCodeRecord['status'],
    patch: Partial<Pick<DeviceCodeRecord, 'status' | 'accountId' | 'lastPollAt' | 'intervalSeconds'>>,
  ): Promise<DeviceCodeRecord | undefined>

  /**
   * True when another process (the admin CLI, another gateway) wrote to the database since the
   * last call: in-memory caches of keys and grants must then be dropped.
   */
  changedElsewhere(): boolean
  /**
   * Writes what is queued (a last try), then closes; never throws. Says how many answered requests
   * the database still refused (lost) and why the WAL could not be checkpointed, for the caller to log.
   */
  close(): LedgerClosed
}

export interface LedgerClosed {
  unrecorded: number
  checkpointFailure?: unknown
}
