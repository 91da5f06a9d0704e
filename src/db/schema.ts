// The ledger's tables. Money columns are integer USD nanos; times are integer epoch milliseconds
// (rendered as RFC 3339 at the API edge). Scope lists are JSON arrays; null means "no scope".

import { sql } from 'drizzle-orm'
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'

export const accounts = sqliteTable('accounts', {
  id: text('id').primaryKey(),
  name: text('name').notNull().unique(),
  createdAt: integer('created_at').notNull(),
})

export const apiKeys = sqliteTable(
  'api_keys',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    /** The first characters of the key, shown in listings and used to find the row. */
    prefix: text('prefix').notNull(),
    /** SHA-256 of the whole key, hex. The key itself is never stored. */
    hash: text('hash').notNull(),
    createdAt: integer('created_at').notNull(),
    revokedAt: integer('revoked_at'),
  },
  (t) => [uniqueIndex('api_keys_prefix').on(t.prefix), index('api_keys_account').on(t.accountId)],
)

export const grants = sqliteTable(
  'grants',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    amountNanos: integer('amount_nanos').notNull(),
    remainingNanos: integer('remaining_nanos').notNull(),
    scopeCostType: text('scope_cost_type').notNull(),
    source: text('source').notNull(),
    scopeRoutingModes: text('scope_routing_modes', { mode: 'json' }).$type<string[] | null>(),
    scopeModels: text('scope_models', { mode: 'json' }).$type<string[] | null>(),
    scopeProviders: text('scope_providers', { mode: 'json' }).$type<string[] | null>(),
    expiresAt: integer('expires_at'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('grants_account').on(t.accountId)],
)

export const providerKeys = sqliteTable(
  'provider_keys',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    providerId: text('provider_id').notNull(),
    /** AES-256-GCM: base64 of iv ‖ ciphertext ‖ tag, under the master key from the environment. */
    sealed: text('sealed').notNull(),
    /** Last four characters, so an operator can tell keys apart without seeing them. */
    hint: text('hint').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('provider_keys_account_provider').on(t.accountId, t.providerId)],
)

// The three tables every model request writes (requests, usage_events, grant_charges) are
// WITHOUT ROWID, clustered on the key they are read by, and carry no index that key already
// gives. A commit writes one page per b-tree it touches: these layouts take a one-request commit
// from ~12 WAL frames to ~9 (drizzle has no WITHOUT ROWID in its DSL; migration 0003 adds it).
export const requests = sqliteTable(
  'requests',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    apiKeyId: text('api_key_id'),
    /** Which inbound surface: messages | responses. */
    surface: text('surface').notNull(),
    routingMode: text('routing_mode').notNull(),
    /** in_progress | completed | failed | aborted */
    status: text('status').notNull(),
    httpStatus: integer('http_status'),
    errorType: text('error_type'),
    errorMessage: text('error_message'),
    stream: integer('stream', { mode: 'boolean' }).notNull(),
    selectedModelId: text('selected_model_id'),
    selectedProviderId: text('selected_provider_id'),
    providerRanks: text('provider_ranks', { mode: 'json' }).$type<unknown[]>().notNull(),
    attempts: integer('attempts').notNull().default(0),
    totalCostNanos: integer('total_cost_nanos').notNull().default(0),
    chargedNanos: integer('charged_nanos').notNull().default(0),
    totalInputTokens: integer('total_input_tokens').notNull().default(0),
    totalCachedInputTokens: integer('total_cached_input_tokens').notNull().default(0),
    totalCacheCreationInputTokens: integer('total_cache_creation_input_tokens').notNull().default(0),
    totalOutputTokens: integer('total_output_tokens').notNull().default(0),
    sessionId: text('session_id'),
    agentId: text('agent_id'),
    sessionSource: text('session_source'),
    byok: integer('byok', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    firstByteAt: integer('first_byte_at'),
    endedAt: integer('ended_at'),
  },
  (t) => [
    index('requests_account_created').on(t.accountId, t.createdAt, t.id),
    // Partial: most API traffic has no session, and those rows then cost no entry here.
    index('requests_account_session').on(t.accountId, t.sessionId, t.createdAt).where(sql`${t.sessionId} is not null`),
  ],
)

export const usageEvents = sqliteTable(
  'usage_events',
  {
    /** `leg_<request id>_<attempt>`: unique by construction, so it needs no index of its own. */
    id: text('id').notNull(),
    requestId: text('request_id')
      .notNull()
      .references(() => requests.id),
    accountId: text('account_id').notNull(),
    /** 1-based attempt number within the request. */
    attempt: integer('attempt').notNull(),
    modelId: text('model_id').notNull(),
    providerId: text('provider_id').notNull(),
    upstreamModel: text('upstream_model').notNull(),
    committed: integer('committed', { mode: 'boolean' }).notNull(),
    estimated: integer('estimated', { mode: 'boolean' }).notNull(),
    /** ok | failed | aborted | in_progress */
    outcome: text('outcome').notNull(),
    error: text('error'),
    inputTokens: integer('input_tokens').notNull().default(0),
    cachedInputTokens: integer('cached_input_tokens').notNull().default(0),
    cacheCreationInputTokens: integer('cache_creation_input_tokens').notNull().default(0),
    outputTokens: integer('output_tokens').notNull().default(0),
    costNanos: integer('cost_nanos').notNull().default(0),
    chargedNanos: integer('charged_nanos').notNull().default(0),
    byok: integer('byok', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    endedAt: integer('ended_at'),
    /** Searches the upstream's own web search tool ran, each priced on its own (in cost_nanos). */
    webSearchRequests: integer('web_search_requests').notNull().default(0),
    /** The part of cache_creation_input_tokens written for an hour, priced apart (in cost_nanos). */
    cacheCreation1hInputTokens: integer('cache_creation_1h_input_tokens').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.requestId, t.attempt] }),
    index('usage_events_account_created').on(t.accountId, t.createdAt),
  ],
)

/** Which grant paid how much of which leg: the audit trail behind remaining_nanos. */
export const grantCharges = sqliteTable(
  'grant_charges',
  {
    requestId: text('request_id')
      .notNull()
      .references(() => requests.id),
    usageEventId: text('usage_event_id').notNull(),
    /** Order within the leg: the charging order (matching scope, soonest expiry, oldest). */
    position: integer('position').notNull(),
    grantId: text('grant_id')
      .notNull()
      .references(() => grants.id),
    costType: text('cost_type').notNull(),
    amountNanos: integer('amount_nanos').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  // Keyed by request: that is how the usage API reads charges; a per-grant audit scans.
  (t) => [primaryKey({ columns: [t.requestId, t.usageEventId, t.position] })],
)

export const feedback = sqliteTable(
  'feedback',
  {
    id: text('id').primaryKey(),
    requestId: text('request_id')
      .notNull()
      .references(() => requests.id),
    accountId: text('account_id').notNull(),
    rating: text('rating'),
    reason: text('reason'),
    comment: text('comment'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    index('feedback_request').on(t.requestId),
    // The routing's nudges read an account's newest ratings (sqlite-ledger.ts, recentFeedbackSignals).
    index('feedback_account_created').on(t.accountId, t.createdAt, t.id),
  ],
)

/** Device sign-in (RFC 8628 style): a CLI asks for a code, a signed-in user approves it on /login. */
export const deviceCodes = sqliteTable(
  'device_codes',
  {
    /** SHA-256 of the device code: the CLI holds the code, the database only its hash. */
    deviceCodeHash: text('device_code_hash').primaryKey(),
    userCode: text('user_code').notNull(),
    deviceName: text('device_name').notNull(),
    /** pending | approved | denied | consumed */
    status: text('status').notNull(),
    accountId: text('account_id'),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    lastPollAt: integer('last_poll_at'),
    intervalSeconds: integer('interval_seconds').notNull(),
  },
  (t) => [uniqueIndex('device_codes_user_code').on(t.userCode)],
)

/**
 * Answers already charged (their grants updated in the same commit) whose rows are not yet in
 * requests, usage_events and grant_charges: one JSON entry a request. A batch of one or two
 * commits here, one b-tree instead of six, and the entries are spread into the tables in
 * batches (src/ledger/sqlite-request-writer.ts).
 */
export const ledgerJournal = sqliteTable('ledger_journal', {
  seq: integer('seq').primaryKey(),
  entry: text('entry').notNull(),
})
