// Builds b56fb46 … fba8d52 journaled a charged request as its objects ({ record, legs }), not as
// the rows f28f316 made the entry. Such a build killed before its spread leaves an entry, charged,
// for the next open: the current build, after an upgrade, must move it into the tables like any other.
import { Database } from 'bun:sqlite'
import { afterAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/open'
import { createSqliteLedger } from '../src/ledger/sqlite-ledger'

const dir = mkdtempSync(join(tmpdir(), 'svc-journal-upgrade-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const accountId = 'acct_01M8EGQVJ37R7KZSHTFKHKQ2M9'
const signupGrant = 'grant_01M8EGQVJ46DVEHY9GDJ15WHB0'
const adminGrant = 'grant_01M8EGQVJ5PBR7XVVRHHV876MT'
const requestId = 'req_01JOLDBUILDJOURNALENTRY1'

/**
 * The entry b56fb46's writer committed for a lone request (JSON.stringify of its ChargedRequest,
 * keys in the order its relay built them): a failed first leg and a fallback, charged 4,200 to the
 * signup grant, then 800 from it (all it had left) and 36,850 from the admin grant.
 */
const oldEntry = `{
  "record": {
    "id": "${requestId}", "accountId": "${accountId}", "apiKeyId": null, "surface": "messages",
    "routingMode": "pro", "status": "completed", "httpStatus": 200, "errorType": null, "errorMessage": null,
    "stream": true, "selectedModelId": "gpt-5", "selectedProviderId": "openai",
    "providerRanks": [
      { "modelId": "claude-sonnet-4-5", "providerId": "anthropic", "status": "failed" },
      { "modelId": "gpt-5", "providerId": "openai", "status": "chosen" }
    ],
    "attempts": 2, "totalCostNanos": 41850, "totalInputTokens": 2500, "totalCachedInputTokens": 800,
    "totalCacheCreationInputTokens": 120, "totalOutputTokens": 413, "sessionId": "sess-upgrade", "agentId": null,
    "sessionSource": null, "byok": false, "createdAt": 1790000100000, "firstByteAt": 1790000100900,
    "endedAt": 1790000104000, "chargedNanos": 41850
  },
  "legs": [
    {
      "leg": {
        "id": "leg_${requestId}_1", "requestId": "${requestId}", "accountId": "${accountId}", "attempt": 1,
        "modelId": "claude-sonnet-4-5", "providerId": "anthropic", "upstreamModel": "claude-sonnet-4-5-20250929",
        "committed": true, "estimated": true, "outcome": "failed", "error": "upstream 529 overloaded",
        "inputTokens": 1200, "cachedInputTokens": 0, "cacheCreationInputTokens": 0, "outputTokens": 3,
        "costNanos": 4200, "byok": false, "createdAt": 1790000100000, "endedAt": 1790000100600,
        "charge": { "costType": "model_usage", "amountNanos": 4200 }
      },
      "charged": 4200,
      "parts": [{ "grantId": "${signupGrant}", "amountNanos": 4200 }]
    },
    {
      "leg": {
        "id": "leg_${requestId}_2", "requestId": "${requestId}", "accountId": "${accountId}", "attempt": 2,
        "modelId": "gpt-5", "providerId": "openai", "upstreamModel": "gpt-5-2025-08-07",
        "committed": true, "estimated": false, "outcome": "ok", "error": null,
        "inputTokens": 1300, "cachedInputTokens": 800, "cacheCreationInputTokens": 120, "outputTokens": 410,
        "costNanos": 37650, "byok": false, "createdAt": 1790000100600, "endedAt": 1790000104000,
        "charge": { "costType": "model_usage", "amountNanos": 37650 }
      },
      "charged": 37650,
      "parts": [{ "grantId": "${signupGrant}", "amountNanos": 800 }, { "grantId": "${adminGrant}", "amountNanos": 36850 }]
    }
  ]
}`

/** The file as such a build left it at kill -9: grants charged, the entry in the journal, no rows. */
function leftByOldBuild(path: string) {
  openDatabase(path).$client.close() // today's migrations, as the upgraded gateway applies them
  const db = new Database(path)
  db.run('INSERT INTO accounts (id, name, created_at) VALUES (?, ?, ?)', [accountId, 'upgrader', 1790000000000])
  const grant = db.prepare(
    `INSERT INTO grants (id, account_id, amount_nanos, remaining_nanos, scope_cost_type, source, created_at)
     VALUES (?, ?, ?, ?, 'all', ?, 1790000000000)`,
  )
  grant.run(signupGrant, accountId, 5_000, 0, 'signup')
  grant.run(adminGrant, accountId, 1_000_000, 963_150, 'admin')
  // Byte for byte what the old writer stored: JSON.stringify, no whitespace.
  db.run('INSERT INTO ledger_journal (entry) VALUES (?)', [JSON.stringify(JSON.parse(oldEntry))])
  db.close()
}

test('a journal entry an old build (objects, before f28f316) left at a crash is spread at the next open', async () => {
  const path = join(dir, 'upgraded.db')
  leftByOldBuild(path)
  const told: unknown[] = []
  // As a restarted gateway opens its ledger (deps.ts): leftovers are spread at open, failures told.
  const ledger = createSqliteLedger(openDatabase(path), Date.now, {
    onSpreadFailure: (err, seq) => told.push({ seq, err: String(err) }),
    onSpreadRefused: (err) => told.push(String(err)),
    onRecordFailure: (id, err) => told.push({ id, err: String(err) }),
  })

  const db = new Database(path, { readonly: true })
  try {
    expect(told).toEqual([])
    expect(db.query('SELECT count(*) AS n FROM ledger_journal').get()).toEqual({ n: 0 })
    expect(db.query('SELECT * FROM requests').all()).toEqual([
      {
        id: requestId,
        account_id: accountId,
        api_key_id: null,
        surface: 'messages',
        routing_mode: 'pro',
        status: 'completed',
        http_status: 200,
        error_type: null,
        error_message: null,
        stream: 1,
        selected_model_id: 'gpt-5',
        selected_provider_id: 'openai',
        provider_ranks: JSON.stringify([
          { modelId: 'claude-sonnet-4-5', providerId: 'anthropic', status: 'failed' },
          { modelId: 'gpt-5', providerId: 'openai', status: 'chosen' },
        ]),
        attempts: 2,
        total_cost_nanos: 41_850,
        charged_nanos: 41_850,
        total_input_tokens: 2_500,
        total_cached_input_tokens: 800,
        total_cache_creation_input_tokens: 120,
        total_output_tokens: 413,
        session_id: 'sess-upgrade',
        agent_id: null,
        session_source: null,
        byok: 0,
        created_at: 1790000100000,
        first_byte_at: 1790000100900,
        ended_at: 1790000104000,
      },
    ])
    const leg = { request_id: requestId, account_id: accountId, committed: 1, byok: 0 }
    expect(db.query('SELECT * FROM usage_events ORDER BY attempt').all()).toEqual([
      {
        ...leg,
        id: `leg_${requestId}_1`,
        attempt: 1,
        model_id: 'claude-sonnet-4-5',
        provider_id: 'anthropic',
        upstream_model: 'claude-sonnet-4-5-20250929',
        estimated: 1,
        outcome: 'failed',
        error: 'upstream 529 overloaded',
        input_tokens: 1_200,
        cached_input_tokens: 0,
        cache_creation_input_tokens: 0,
        output_tokens: 3,
        cost_nanos: 4_200,
        charged_nanos: 4_200,
        created_at: 1790000100000,
        ended_at: 1790000100600,
        // Not in the old entry: what migrations 0005 and 0006 gave the rows already there.
        web_search_requests: 0,
        cache_creation_1h_input_tokens: 0,
      },
      {
        ...leg,
        id: `leg_${requestId}_2`,
        attempt: 2,
        model_id: 'gpt-5',
        provider_id: 'openai',
        upstream_model: 'gpt-5-2025-08-07',
        estimated: 0,
        outcome: 'ok',
        error: null,
        input_tokens: 1_300,
        cached_input_tokens: 800,
        cache_creation_input_tokens: 120,
        output_tokens: 410,
        cost_nanos: 37_650,
        charged_nanos: 37_650,
        created_at: 1790000100600,
        ended_at: 1790000104000,
        web_search_requests: 0,
        cache_creation_1h_input_tokens: 0,
      },
    ])
    const charge = { request_id: requestId, cost_type: 'model_usage' }
    expect(db.query('SELECT * FROM grant_charges ORDER BY usage_event_id, position').all()).toEqual([
      {
        ...charge,
        usage_event_id: `leg_${requestId}_1`,
        position: 0,
        grant_id: signupGrant,
        amount_nanos: 4_200,
        created_at: 1790000100600,
      },
      {
        ...charge,
        usage_event_id: `leg_${requestId}_2`,
        position: 0,
        grant_id: signupGrant,
        amount_nanos: 800,
        created_at: 1790000104000,
      },
      {
        ...charge,
        usage_event_id: `leg_${requestId}_2`,
        position: 1,
        grant_id: adminGrant,
        amount_nanos: 36_850,
        created_at: 1790000104000,
      },
    ])
    // Charged once: each grant's spent part is exactly its charges.
    expect(
      db
        .query(
          `SELECT g.id, g.amount_nanos - g.remaining_nanos AS spent,
             (SELECT coalesce(sum(c.amount_nanos), 0) FROM grant_charges c WHERE c.grant_id = g.id) AS charged
           FROM grants g ORDER BY g.id`,
        )
        .all(),
    ).toEqual([
      { id: signupGrant, spent: 5_000, charged: 5_000 },
      { id: adminGrant, spent: 36_850, charged: 36_850 },
    ])
  } finally {
    db.close()
  }

  // The usage API finds it.
  const detail = await ledger.getRequest(accountId, requestId)
  expect(detail?.request).toMatchObject({ id: requestId, totalCostNanos: 41_850, chargedNanos: 41_850 })
  expect(detail?.legs.map((l) => [l.costNanos, l.webSearchRequests, l.cacheCreation1hInputTokens])).toEqual([
    [4_200, 0, 0],
    [37_650, 0, 0],
  ])
  ledger.close()
  expect(told).toEqual([])
})
