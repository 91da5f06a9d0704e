// A provider's own web search is billed per search on top of tokens (Anthropic's web_search server
// tool, OpenAI's hosted web_search: 10 USD per 1,000 each), so svc meters every search an upstream
// reports and charges it: the leg's web_search_requests, its cost and the grant's remaining amount.
// Before, Claude Code's web searches through svc cost its operator money no user was charged.
import { describe, expect, test } from 'bun:test'
import { type Harness, remainingNanos, requestDetail, sdkClients } from './support/harness'
import { anthropicEvent, anthropicMessageStart, scriptedUpstream, twoModelGateway } from './support/scripted-upstream'
import { profileFor, translationGateway, translationSimulator, upstreamModelFor } from './support/translation-gateway'

const sim = translationSimulator()

/** The simulator's models cost 1 USD/Mtok in and 2 out: 1,000 and 2,000 nanos a token. */
const usage = { input: 100, output: 20, webSearches: 2 }
const tokenCost = 100 * 1000 + 20 * 2000
/** 10 USD per 1,000 searches is 10,000,000 nanos a search. */
const searchNanos = 10_000_000

async function expectCharged(h: Awaited<ReturnType<typeof translationGateway>>, requestId: string, before: number) {
  const detail = await requestDetail(h, requestId)
  expect(detail.usage_events).toHaveLength(1)
  expect(detail.usage_events[0]).toMatchObject({
    input_tokens: 100,
    output_tokens: 20,
    web_search_requests: 2,
    cost_nanos: tokenCost + 2 * searchNanos,
    charged_nanos: tokenCost + 2 * searchNanos,
  })
  expect(detail.total_cost_nanos).toBe(tokenCost + 2 * searchNanos)
  expect(await remainingNanos(h)).toBe(before - tokenCost - 2 * searchNanos)
  const spend = await (await h.call('/v1/usage/spend?bucket=day')).json()
  expect(spend.totals).toMatchObject({ cost_nanos: tokenCost + 2 * searchNanos, web_search_requests: 2 })
}

describe('web searches an upstream ran are metered and charged', () => {
  test.each([false, true])('Anthropic server tool, pass-through (stream %p)', async (stream) => {
    const h = await translationGateway(sim)
    const before = await remainingNanos(h)
    sim.setScenario(upstreamModelFor.anthropic, { text: 'Found it.', usage })
    const { anthropic } = sdkClients(h)
    const params = {
      model: profileFor.anthropic,
      max_tokens: 256,
      messages: [{ role: 'user' as const, content: 'Search the web for svc.' }],
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const, max_uses: 5 }],
    }
    let requestId: string
    let content: { type: string }[]
    if (stream) {
      const running = anthropic.messages.stream(params)
      const message = await running.finalMessage()
      content = message.content
      requestId = message.id.replace(/^msg_/, '')
    } else {
      const message = await anthropic.messages.create(params)
      content = message.content
      requestId = message.id.replace(/^msg_/, '')
      expect(message.usage.server_tool_use?.web_search_requests).toBe(2)
    }
    // The client gets the search blocks as the upstream sent them.
    expect(content.map((b) => b.type)).toEqual([
      'server_tool_use',
      'web_search_tool_result',
      'server_tool_use',
      'web_search_tool_result',
      'text',
    ])
    await expectCharged(h, requestId, before)
  })

  test.each([false, true])('OpenAI hosted web_search, pass-through (stream %p)', async (stream) => {
    const h = await translationGateway(sim)
    const before = await remainingNanos(h)
    sim.setScenario(upstreamModelFor['openai-responses'], { text: 'Found it.', usage })
    const { openai } = sdkClients(h)
    const params = {
      model: profileFor['openai-responses'],
      input: 'Search the web for svc.',
      tools: [{ type: 'web_search' as const }],
    }
    let response: Awaited<ReturnType<typeof openai.responses.create>> & { id: string; output: { type: string }[] }
    if (stream) {
      const running = openai.responses.stream(params)
      response = await running.finalResponse()
    } else {
      response = await openai.responses.create(params)
    }
    expect(response.output.map((item) => item.type)).toEqual(['web_search_call', 'web_search_call', 'message'])
    await expectCharged(h, response.id.replace(/^resp_/, ''), before)
  })

  test("a model's own price per search is what a search costs", async () => {
    const h = await translationGateway(sim)
    // As `web_search_usd_per_1k = 25` in svc.toml makes it (config.test.ts): 25 USD per 1,000.
    const claude = h.config.models.find((m) => m.upstreamModel === upstreamModelFor.anthropic)!
    claude.price = { ...claude.price!, webSearchNanos: 25_000_000 }
    const before = await remainingNanos(h)
    sim.setScenario(upstreamModelFor.anthropic, { text: 'Found it.', usage })
    const message = await sdkClients(h).anthropic.messages.create({
      model: profileFor.anthropic,
      max_tokens: 256,
      messages: [{ role: 'user', content: 'Search.' }],
    })
    const detail = await requestDetail(h, message.id.replace(/^msg_/, ''))
    expect(detail.usage_events[0].cost_nanos).toBe(tokenCost + 2 * 25_000_000)
    expect(await remainingNanos(h)).toBe(before - tokenCost - 2 * 25_000_000)
  })

  test.each([
    ['anthropic', '/compat-a/v1/messages', { max_tokens: 256, messages: [{ role: 'user', content: 'Search.' }] }],
    ['openai-responses', '/compat-b/v1/responses', { input: 'Search.' }],
  ] as const)('%s: a stream cut after its searches ran still charges them, estimated', async (kind, path, body) => {
    const h = await translationGateway(sim)
    // The searches' frames, then the cut: message_start and ping, or created and in_progress,
    // then five frames a search.
    sim.setScenario(upstreamModelFor[kind], { text: 'Found it.', usage, fault: { kind: 'cut', afterFrames: 12 } })
    const res = await h.call(path, {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: profileFor[kind], stream: true, ...body },
    })
    expect(res.status).toBe(200)
    await res.text()
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    const leg = detail.usage_events[0]
    expect(leg).toMatchObject({ estimated: true, web_search_requests: 2 })
    expect(leg.cost_nanos).toBe(leg.input_tokens * 1000 + leg.output_tokens * 2000 + 2 * searchNanos)
  })
})

describe('a request offering web search holds what its searches may cost', () => {
  const messages = [{ role: 'user', content: 'Search.' }]
  const claudeSearch = { type: 'web_search_20250305', name: 'web_search' }
  // Three at once on a grant that pays for the first one's searches and a little: the first holds
  // its searches (10 million nanos each) and 256 output tokens (~0.5 million), the second what is
  // left, the third finds it all held. Held for their tokens alone (~0.5 million each), all three
  // ran, and could spend three times the searches.
  test.each([
    ['max_uses 3 on Claude: three', 'anthropic', { messages, tools: [{ ...claudeSearch, max_uses: 3 }] }, 0.035],
    ['no max_uses on Claude: ten', 'anthropic', { messages, tools: [claudeSearch] }, 0.105],
    // Out of the model's sight until its tool search loads it, which Anthropic does on its own.
    [
      'max_uses 3 on Claude, deferred behind a tool search: three',
      'anthropic',
      {
        messages,
        tools: [
          { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' },
          { ...claudeSearch, max_uses: 3, defer_loading: true },
        ],
      },
      0.035,
    ],
    // OpenAI takes no max_uses (it is left out there): its searches are not bounded by it.
    ['max_uses 1 on OpenAI: ten', 'openai-responses', { messages, tools: [{ ...claudeSearch, max_uses: 1 }] }, 0.105],
    // Codex's default: a search of OpenAI's cache, which only OpenAI itself runs (and bills).
    [
      "Codex's cached search on OpenAI: ten",
      'openai-responses',
      { input: 'Search.', tools: [{ type: 'web_search', external_web_access: false }] },
      0.105,
    ],
  ] as const)('%s: started at once, the third is told the credit is held (429)', async (_, kind, body, grantUsd) => {
    const h = await translationGateway(sim, {}, grantUsd)
    sim.setScenario(upstreamModelFor[kind], { text: 'Found it.', usage, firstByteDelayMs: 300 })
    const anthropicClient = 'messages' in body
    const send = () =>
      h.call(anthropicClient ? '/compat-a/v1/messages' : '/compat-b/v1/responses', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: {
          model: profileFor[kind],
          ...(anthropicClient ? { max_tokens: 256 } : { max_output_tokens: 256 }),
          ...body,
        },
      })
    const [first, second] = [send(), send()]
    await Bun.sleep(50)
    const third = await send()
    expect(third.status).toBe(429)
    const refusal = await third.json()
    if (anthropicClient) expect(refusal).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
    else expect(refusal.error).toMatchObject({ message: expect.any(String) })
    expect([(await first).status, (await second).status]).toEqual([200, 200])
  })

  test('with search off, the same three run', async () => {
    const h = await translationGateway(sim, {}, 0.035)
    sim.setScenario(upstreamModelFor.anthropic, {
      text: 'Found it.',
      usage: { input: 100, output: 20 },
      firstByteDelayMs: 300,
    })
    const send = () =>
      h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: profileFor.anthropic, max_tokens: 256, messages },
      })
    const statuses = await Promise.all([send(), send(), send()].map(async (r) => (await r).status))
    expect(statuses).toEqual([200, 200, 200])
  })
})

/** A Claude stream with one search (its results, or max_uses_exceeded) and a reply, reporting `reportedSearches`. */
const searchStream = (reportedSearches: number, failed = false) => [
  anthropicMessageStart('first-up', 20),
  anthropicEvent('content_block_start', {
    index: 0,
    content_block: { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'svc' } },
  }),
  anthropicEvent('content_block_stop', { index: 0 }),
  anthropicEvent('content_block_start', {
    index: 1,
    content_block: {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_1',
      content: failed
        ? { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' }
        : [
            {
              type: 'web_search_result',
              url: 'https://example.com/',
              title: 'Example',
              encrypted_content: 'x',
              page_age: null,
            },
          ],
    },
  }),
  anthropicEvent('content_block_stop', { index: 1 }),
  anthropicEvent('content_block_start', { index: 2, content_block: { type: 'text', text: '' } }),
  anthropicEvent('content_block_delta', { index: 2, delta: { type: 'text_delta', text: 'Found it.' } }),
  anthropicEvent('content_block_stop', { index: 2 }),
  anthropicEvent('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { input_tokens: 20, output_tokens: 10, server_tool_use: { web_search_requests: reportedSearches } },
  }),
  anthropicEvent('message_stop'),
]

/** The ledger's record of a streamed search request passed through to an Anthropic upstream. */
async function searchPassedThrough(h: Harness) {
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', stream: true, max_tokens: 256, messages: [{ role: 'user', content: 'Search.' }] },
  })
  expect(res.status).toBe(200)
  await res.text()
  return (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()
}

describe('searches counted from the stream itself (scripted upstream)', () => {
  test('translated: a search the client saw run is charged though the final usage lists none (the larger of the two)', async () => {
    const h = await twoModelGateway({ kind: 'anthropic' })
    scriptedUpstream(h, () => ({ sse: searchStream(0) }))
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: 'svc-pro', stream: true, input: 'Search the web for svc.', tools: [{ type: 'web_search' }] },
    })
    expect(res.status).toBe(200)
    const body = await res.text()
    expect(body).toContain('web_search_call')
    const detail = await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()
    expect(detail.usage_events[0]).toMatchObject({
      web_search_requests: 1,
      cost_nanos: 20 * 1000 + 10 * 1000 + 10_000_000,
    })
  })
  test('translated: a search that failed (web_search_tool_result_error) is not charged', async () => {
    const h = await twoModelGateway({ kind: 'anthropic' })
    const frames = searchStream(0, true)
    // Text first, so the answer has begun before the failed search.
    const lead = [
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Looking.' } }),
      anthropicEvent('content_block_stop', { index: 0 }),
    ]
    const shifted = frames.slice(1).map((f) => f.replace(/"index":(\d)/g, (_m, d) => `"index":${Number(d) + 1}`))
    scriptedUpstream(h, () => ({ sse: [frames[0]!, ...lead, ...shifted] }))
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: 'svc-pro', stream: true, input: 'Search the web for svc.', tools: [{ type: 'web_search' }] },
    })
    expect(res.status).toBe(200)
    await res.text()
    const detail = await (await h.call(`/v1/usage/requests/${res.headers.get('x-request-id')}`)).json()
    expect(detail.usage_events[0]).toMatchObject({ web_search_requests: 0, cost_nanos: 20 * 1000 + 10 * 1000 })
  })
  test.each([true, false])(
    'pass-through, stream %p: a search the stream showed run is charged and told though the final usage lists none',
    async (stream) => {
      const h = await twoModelGateway({ kind: 'anthropic' })
      // Not streamed to the client: gathered from the upstream's stream.
      h.deps.config.routing.streamUpstreamAboveMaxTokens = 0
      scriptedUpstream(h, () => ({ sse: searchStream(0) }))
      const { anthropic } = sdkClients(h)
      const ask = { model: 'svc-pro', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Search.' }] }
      const message = stream
        ? await anthropic.messages.stream(ask).finalMessage()
        : await anthropic.messages.create(ask)
      // Told the search it is billed, not the upstream's 0.
      expect(message.usage.server_tool_use?.web_search_requests).toBe(1)
      const detail = await requestDetail(h, message.id.replace(/^msg_/, ''))
      // Reported all the same: the counts are the upstream's, the search the one its stream showed.
      expect(detail.usage_events[0]).toMatchObject({
        estimated: false,
        web_search_requests: 1,
        cost_nanos: 20 * 1000 + 10 * 1000 + 10_000_000,
      })
    },
  )
  test('pass-through, cut after a failed search: the failed search is not charged', async () => {
    const h = await twoModelGateway({ kind: 'anthropic' })
    const frames = searchStream(0, true)
    // message_start, the search call, its error result, then the body ends (no message_delta).
    scriptedUpstream(h, () => ({ sse: frames.slice(0, 7) }))
    const detail = await searchPassedThrough(h)
    expect(detail.usage_events[0]).toMatchObject({ estimated: true, web_search_requests: 0 })
  })
})

// OpenAI's web search guide: "Search actions incur a tool call cost"; the model's open_page and
// find_in_page are web_search_call items too, and were billed as searches (3 where 1 ran, and an
// Anthropic client told web_search_requests: 3).
describe('OpenAI bills the search actions of its web search tool, not open_page or find_in_page', () => {
  const call = (id: string, action: Record<string, unknown>) => ({
    id,
    type: 'web_search_call',
    status: 'completed',
    action,
  })
  const items = [
    call('ws_1', { type: 'search', query: 'bun', sources: [{ type: 'url', url: 'https://bun.sh/' }] }),
    call('ws_2', { type: 'open_page', url: 'https://bun.sh/' }),
    call('ws_3', { type: 'find_in_page', url: 'https://bun.sh/', pattern: 'wal' }),
  ]
  const message = {
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Bun.', annotations: [] }],
  }
  const openai = () =>
    twoModelGateway({ kind: 'openai-responses', routing: { max_attempts: 1 }, provider: { openai_itself: true } })

  test('translated for an Anthropic client: told and charged one search', async () => {
    const h = await openai()
    scriptedUpstream(h, () => ({
      json: {
        id: 'resp_up',
        object: 'response',
        created_at: 1,
        status: 'completed',
        model: 'first-up',
        output: [...items, message],
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
      },
    }))
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: 'svc-pro', max_tokens: 256, messages: [{ role: 'user', content: 'Search bun.' }] },
    })
    expect((await res.json()).usage).toMatchObject({ server_tool_use: { web_search_requests: 1 } })
    const detail = await requestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.usage_events[0]).toMatchObject({ web_search_requests: 1, cost_nanos: 15 * 1000 + searchNanos })
  })

  for (const ending of ['cut before its final response', 'its final response’s output left empty'] as const)
    test(`passed through, ${ending}: the done items that searched are charged`, async () => {
      const h = await openai()
      const frame = (type: string, data: Record<string, unknown>) =>
        `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`
      const response = {
        id: 'resp_up',
        object: 'response',
        created_at: 1,
        status: 'in_progress',
        model: 'first-up',
        output: [],
      }
      scriptedUpstream(h, () => ({
        sse: [
          frame('response.created', { sequence_number: 0, response }),
          // Each call's own events, whatever its action, as OpenAI streams them.
          ...items.flatMap((item, index) => [
            frame('response.output_item.added', {
              sequence_number: 1 + 3 * index,
              output_index: index,
              item: { ...item, status: 'in_progress' },
            }),
            frame('response.web_search_call.completed', {
              sequence_number: 2 + 3 * index,
              output_index: index,
              item_id: item.id,
            }),
            frame('response.output_item.done', { sequence_number: 3 + 3 * index, output_index: index, item }),
          ]),
          // A compatible server's: the usage, and none of the items its events gave.
          ...(ending === 'cut before its final response'
            ? []
            : [
                frame('response.completed', {
                  sequence_number: 10,
                  response: {
                    ...response,
                    status: 'completed',
                    usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
                  },
                }),
              ]),
        ],
      }))
      const res = await h.call('/compat-b/v1/responses', {
        method: 'POST',
        json: { model: 'svc-pro', stream: true, input: 'Search bun.' },
      })
      await res.text()
      const detail = await requestDetail(h, res.headers.get('x-request-id')!)
      expect(detail.usage_events[0]).toMatchObject({
        estimated: ending === 'cut before its final response',
        web_search_requests: 1,
      })
    })
})
