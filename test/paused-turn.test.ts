// A turn Anthropic pauses in its web search loop (`stop_reason: "pause_turn"`, after ten searches by
// default), for a Responses client: Codex has no such stop, and took the searches so far, with no
// answer, for the turn's end. svc sends the turn back itself, as Anthropic's docs tell a client to,
// and the client gets one answer; each upstream message is a leg of the request, billed as reported.
// The simulator pauses after `searchesPerTurn` searches and goes on from a turn sent back.
import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../src/lib/errors'
import { parseSse } from './support/answer-invariants'
import { endedRequestDetail, requestDetail, sdkClients } from './support/harness'
import { anthropicEvent, anthropicMessageStart, scriptedPair, scriptedUpstream } from './support/scripted-upstream'
import { profileFor, translationGateway, translationSimulator, upstreamModelFor } from './support/translation-gateway'

const sim = translationSimulator()
const claude = upstreamModelFor.anthropic

/** Codex with live search on, as the openai SDK sends it. */
const searching = {
  model: profileFor.anthropic,
  input: 'What changed in bun 1.4?',
  tools: [{ type: 'web_search' as const }],
}

/** Each upstream message reports this usage; the searches are the scenario's in all. */
const perMessage = { input: 100, output: 20 }

/** A first message that pauses after two of three searches: the turn sent back has one left, then the answer. */
const pausesAfterTwo = { text: 'Not reached.', usage: { ...perMessage, webSearches: 3 }, searchesPerTurn: 2 }
/** A first message that pauses after one of two searches. */
const pausesAfterOne = { text: 'x', usage: { ...perMessage, webSearches: 2 }, searchesPerTurn: 1 }

const upstreamBodies = () => sim.requests.map((r) => r.body as { messages: { role: string; content: unknown }[] })

/** The output limit each upstream request asked for. */
const maxTokensSent = () => upstreamBodies().map((body) => (body as { max_tokens?: number }).max_tokens)

/** The blocks of the turn each request sent back (its final assistant message), by type. */
const sentBack = () =>
  upstreamBodies().map((body) => {
    const last = body.messages.at(-1)!
    return last.role === 'assistant' ? (last.content as { type: string }[]).map((b) => b.type) : []
  })

describe('a Responses client whose Claude turn pauses in its searches', () => {
  test.each([false, true])('stream %p: svc sends the turn back until it ends, one answer', async (stream) => {
    const h = await translationGateway(sim)
    sim.setScenario(claude, {
      text: 'Bun 1.4 ships a new bundler.',
      usage: { ...perMessage, webSearches: 5 },
      searchesPerTurn: 2,
    })
    const { openai } = sdkClients(h)
    const response = stream
      ? await openai.responses.stream(searching).finalResponse()
      : await openai.responses.create(searching)

    // Three messages: 2 searches and a pause, 2 more and a pause, the last one and the answer.
    expect(sim.requests).toHaveLength(3)
    // Each time the whole turn so far goes back, its sealed results as Anthropic sent them.
    const search = ['server_tool_use', 'web_search_tool_result']
    expect(sentBack()).toEqual([[], [...search, ...search], [...search, ...search, ...search, ...search]])
    const turn = upstreamBodies()[2]!.messages.at(-1)!.content as Record<string, unknown>[]
    expect(turn[1]).toMatchObject({
      type: 'web_search_tool_result',
      content: [{ encrypted_content: 'c2ltLXJlc3VsdA==' }],
    })
    expect(turn.filter((b) => b.type === 'server_tool_use').map((b) => (b.input as { query: string }).query)).toEqual([
      'simulated search 1',
      'simulated search 2',
      'simulated search 3',
      'simulated search 4',
    ])

    expect(response.status).toBe('completed')
    expect(response.output.map((item) => item.type)).toEqual([...Array(5).fill('web_search_call'), 'message'])
    expect(response.output_text).toBe('Bun 1.4 ships a new bundler.')
    // Item ids stay unique across the messages.
    expect(new Set(response.output.map((item) => item.id)).size).toBe(6)
    // The answer's usage is the three messages'.
    expect(response.usage).toMatchObject({ input_tokens: 300, output_tokens: 60 })

    const id = response.id.replace(/^resp_/, '')
    const detail = await endedRequestDetail(h, id)
    expect(detail.status).toBe('completed')
    expect(detail.usage_events).toHaveLength(3)
    for (const [i, searches] of [2, 2, 1].entries()) {
      expect(detail.usage_events[i]).toMatchObject({
        outcome: 'ok',
        input_tokens: 100,
        output_tokens: 20,
        web_search_requests: searches,
        estimated: false,
      })
    }
    const legCosts = detail.usage_events.reduce((sum: number, e: { cost_nanos: number }) => sum + e.cost_nanos, 0)
    expect(detail.total_cost_nanos).toBe(legCosts)
    expect(detail.total_input_tokens).toBe(300)
    expect(detail.selected_model_id).toBe('claude-t')
  })

  test('past five times sent back, the answer ends at the pause: the searches made, no text', async () => {
    const h = await translationGateway(sim)
    sim.setScenario(claude, { text: 'Never reached.', usage: { ...perMessage, webSearches: 20 }, searchesPerTurn: 1 })
    const response = await sdkClients(h).openai.responses.stream(searching).finalResponse()

    expect(sim.requests).toHaveLength(6)
    expect(response.status).toBe('completed')
    expect(response.output.map((item) => item.type)).toEqual(Array(6).fill('web_search_call'))
    expect(response.output_text).toBe('')
    const detail = await endedRequestDetail(h, response.id.replace(/^resp_/, ''))
    expect(detail.usage_events).toHaveLength(6)
    expect(detail.status).toBe('completed')
  })

  // Each message here costs 10,140,000 nanos (a search at 10 USD a thousand, 100 tokens in and 20
  // out at 1 and 2 USD/Mtok); the most another can cost, ~2 million (its 1,000 output tokens and the
  // prompt; what it will search is not known). Before the second: 12.15 million; the third: 22.3.
  // A message costs 10.14 million nanos (a search and its tokens); the next may cost its ten
  // searches' 100 million and its tokens (~2 million): before the second, ~112 million in all, before
  // the third ~122 million.
  test.each([
    [0.105, 1],
    [0.117, 2],
    [0.13, 3],
  ])(
    'with %p USD of credit, the turn goes back only while the credit covers another message: %p',
    async (grantUsd, messages) => {
      const h = await translationGateway(sim, {}, grantUsd)
      sim.setScenario(claude, { text: 'Answered.', usage: { ...perMessage, webSearches: 3 }, searchesPerTurn: 1 })
      const response = await sdkClients(h).openai.responses.create({ ...searching, max_output_tokens: 1000 })

      expect(sim.requests).toHaveLength(messages)
      expect(response.output_text).toBe(messages === 3 ? 'Answered.' : '')
      const detail = await endedRequestDetail(h, response.id.replace(/^resp_/, ''))
      expect(detail.usage_events).toHaveLength(messages)
      expect(detail.status).toBe('completed')
    },
  )

  // 900 output tokens and a search: 11.9 million nanos; another message of the 100 tokens left
  // might cost 100 million for its searches and ~0.3 million more, within 113 million; one of the
  // whole limit's 1,000 would not be.
  test('the credit is judged on what the next message may take of the output limit, not the whole limit', async () => {
    const h = await translationGateway(sim, {}, 0.113)
    sim.setScenario(claude, {
      text: 'Answered.',
      usage: { input: 100, output: 900, webSearches: 2 },
      searchesPerTurn: 1,
    })
    const response = await sdkClients(h).openai.responses.create({ ...searching, max_output_tokens: 1000 })
    expect(maxTokensSent()).toEqual([1000, 100])
    expect(response.output.map((item) => item.type)).toEqual(['web_search_call', 'web_search_call', 'message'])
  })

  // A search's sealed page of 400,000 characters is ~100,000 tokens the next message reads again:
  // 100 million nanos at 1 USD/Mtok, as much as its ten searches. Judged on the first prompt alone
  // (~112 million with the first message's 10.14), 0.15 USD sent the turn back, and its prompt went
  // unheld.
  test.each([
    [0.15, 1],
    [0.25, 2],
  ])(
    'with %p USD of credit and a long page found, the turn sent back is held as its prompt has grown: %p',
    async (grantUsd, messages) => {
      const h = await translationGateway(sim, {}, grantUsd)
      sim.setScenario(claude, { ...pausesAfterOne, searchResultChars: 400_000 })
      const response = await sdkClients(h).openai.responses.create({ ...searching, max_output_tokens: 1000 })
      expect(sim.requests).toHaveLength(messages)
      expect(response.output.map((item) => item.type)).toEqual(
        messages === 1 ? ['web_search_call'] : ['web_search_call', 'web_search_call', 'message'],
      )
    },
  )

  test.each([
    [false, 'refused (529)', { kind: 'status', status: 529 }],
    [true, 'refused (529)', { kind: 'status', status: 529 }],
    [false, 'an error right after its opening', { kind: 'error_event', afterFrames: 1 }],
    [true, 'an error right after its opening', { kind: 'error_event', afterFrames: 1 }],
  ] as const)(
    'stream %p: a message sent back that fails, %s, ends the answer at the pause, its leg failed, free and counted',
    async (stream, _, fault) => {
      const h = await translationGateway(sim)
      sim.queue(claude, pausesAfterTwo, { text: 'Not reached.', usage: perMessage, fault })
      const { openai } = sdkClients(h)
      const response = stream
        ? await openai.responses.stream(searching).finalResponse()
        : await openai.responses.create(searching)

      expect(response.status).toBe('completed')
      expect(response.output.map((item) => item.type)).toEqual(['web_search_call', 'web_search_call'])
      expect(response.usage).toMatchObject({ input_tokens: 100, output_tokens: 20 })
      const detail = await endedRequestDetail(h, response.id.replace(/^resp_/, ''))
      expect(detail.status).toBe('completed')
      expect(detail.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['ok', 'failed'])
      expect(detail.usage_events[1].cost_nanos).toBe(0)
      // Counted as any failed leg is, by the metrics and the provider's health.
      const metrics = await (await h.call('/metrics')).text()
      expect(metrics).toMatch(/svc_upstream_errors_total\{provider="anthropic",model="claude-t",kind="\w+"\} 1/)
    },
  )

  // The provider bills what a message sent back wrote before it broke, its search included: the
  // stream is told `response.failed` and billed it; gathered for a JSON answer, it was recorded free.
  test.each([false, true])(
    'stream %p: a message sent back that breaks once its content began is billed what it sent',
    async (stream) => {
      const h = await translationGateway(sim)
      const breaks = { kind: 'cut', afterFrames: 6 } as const
      const next = { ...pausesAfterOne, text: 'some words and more words here', chunks: 5, fault: breaks }
      sim.queue(claude, pausesAfterOne, next)
      const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { ...searching, stream } })
      expect(res.status).toBe(200)
      const body = await res.text()
      // Gathered, the answer ends at the pause; streamed, the client had some of it, and is told it failed.
      expect(stream ? parseSse(body).at(-1)!.event : JSON.parse(body).status).toBe(
        stream ? 'response.failed' : 'completed',
      )
      const detail = await endedRequestDetail(h, res.headers.get('x-request-id')!)
      const broken = detail.usage_events[1]
      expect(detail.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['ok', 'failed'])
      expect(broken).toMatchObject({ estimated: true, web_search_requests: 1 })
      // The search it ran (10 USD per 1,000) and the tokens of what it wrote.
      expect(broken.cost_nanos).toBeGreaterThan(10_000_000)
      expect(detail.charged_nanos).toBe(detail.usage_events[0].cost_nanos + broken.cost_nanos)
    },
  )

  // The message sent back has its own timeouts: one that passes is its failure, not the client's
  // leaving (which the attempt's abort meant, and the request fell back or failed whole).
  test.each([false, true])(
    'stream %p: a message sent back whose headers never come ends the answer at the pause',
    async (stream) => {
      const h = await translationGateway(sim)
      h.deps.config.routing.connectTimeoutMs = 200
      h.deps.config.routing.firstByteTimeoutMs = 200
      sim.queue(claude, pausesAfterTwo, { fault: { kind: 'hang' } })
      const { openai } = sdkClients(h)
      const response = stream
        ? await openai.responses.stream(searching).finalResponse()
        : await openai.responses.create(searching)
      expect(response.status).toBe('completed')
      expect(response.output.map((item) => item.type)).toEqual(['web_search_call', 'web_search_call'])
      const detail = await endedRequestDetail(h, response.id.replace(/^resp_/, ''))
      expect(detail.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['ok', 'failed'])
      const metrics = await (await h.call('/metrics')).text()
      expect(metrics).toContain('svc_upstream_errors_total{provider="anthropic",model="claude-t",kind="timeout"} 1')
    },
  )

  // Anthropic: a turn may end with no content at all (end_turn after server tool results).
  test('stream: a message sent back that ends with no blocks completes the answer', async () => {
    const h = await translationGateway(sim)
    sim.queue(claude, pausesAfterTwo, { text: '', usage: { input: 100, output: 3 } })
    const response = await sdkClients(h).openai.responses.stream(searching).finalResponse()
    expect(response.status).toBe('completed')
    expect(response.usage).toMatchObject({ input_tokens: 200, output_tokens: 23 })
    const detail = await endedRequestDetail(h, response.id.replace(/^resp_/, ''))
    expect(detail.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['ok', 'ok'])
  })

  test('a model that refuses every message sent back has its circuit opened, as one refusing requests does', async () => {
    const h = await translationGateway(sim)
    for (let i = 0; i < 3; i++) {
      sim.queue(claude, pausesAfterTwo, { fault: { kind: 'status', status: 529 } })
      await sdkClients(h).openai.responses.stream(searching).finalResponse()
    }
    expect(h.deps.health.view('anthropic', 'claude-t').state).toBe('open')
  })

  test("the client's max_output_tokens bounds the whole answer: each message gets what is left", async () => {
    const h = await translationGateway(sim)
    sim.setScenario(claude, {
      text: 'Answered.',
      usage: { input: 100, output: 600, webSearches: 3 },
      searchesPerTurn: 1,
    })
    const response = await sdkClients(h).openai.responses.create({ ...searching, max_output_tokens: 1000 })

    expect(maxTokensSent()).toEqual([1000, 400])
    // 1,200 spent (the simulator answers its 600 whatever the limit): none left for a third.
    expect(response.status).toBe('incomplete')
    expect(response.incomplete_details).toEqual({ reason: 'max_output_tokens' })
  })

  test.each(['the client leaves', 'svc drains'])(
    'stream: %s while the turn is being sent back: the answer ends as any cut stream, the leg sent back free',
    async (what) => {
      const h = await translationGateway(sim)
      sim.queue(claude, pausesAfterOne, { fault: { kind: 'hang' } })
      const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { ...searching, stream: true } })
      const body = res.body!.getReader()
      const text = readAll(body)
      await until(() => sim.requests.length === 2)
      if (what === 'svc drains')
        h.deps.running.cutAll(new GatewayError('overloaded', 'svc is shutting down', { status: 529 }))
      else await body.cancel()

      const detail = await endedRequestDetail(h, res.headers.get('x-request-id')!)
      expect(detail.status).toBe(what === 'svc drains' ? 'failed' : 'aborted')
      expect(detail.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual([
        'ok',
        what === 'svc drains' ? 'failed' : 'aborted',
      ])
      expect(detail.usage_events[1].cost_nanos).toBe(0)
      // Retried by the client, not taken for an answer with no words (Codex's turn ended there).
      if (what === 'svc drains') expect(parseSse(await text).at(-1)!.event).toBe('response.failed')
      // The client's leaving is no upstream's failure: not in the metrics of upstream errors.
      await Bun.sleep(20)
      if (what === 'the client leaves')
        expect(await (await h.call('/metrics')).text()).not.toContain('svc_upstream_errors_total{')
    },
  )

  test('stream: the client leaving once the message sent back has its headers, before its first event: that leg free', async () => {
    const h = await translationGateway(sim)
    sim.setScenario(claude, pausesAfterOne)
    // The turn sent back: its headers at once, as Anthropic sends them, then nothing until the call ends.
    const simulator = h.deps.fetch
    let calls = 0
    h.deps.fetch = ((url: string, init: RequestInit) => {
      if (calls++ === 0) return simulator(url, init)
      const body = new ReadableStream({
        start: (controller) => init.signal?.addEventListener('abort', () => controller.error(init.signal!.reason)),
      })
      return Promise.resolve(new Response(body, { headers: { 'content-type': 'text/event-stream' } }))
    }) as typeof fetch
    const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { ...searching, stream: true } })
    const reader = res.body!.getReader()
    let text = ''
    while (!text.includes('web_search_call')) text += new TextDecoder().decode((await reader.read()).value)
    await until(() => calls === 2)
    await Bun.sleep(50)
    await reader.cancel()
    const detail = await endedRequestDetail(h, res.headers.get('x-request-id')!)
    expect(detail.status).toBe('aborted')
    expect(detail.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['ok', 'aborted'])
    expect(detail.usage_events[1]).toMatchObject({ input_tokens: 0, output_tokens: 0, cost_nanos: 0 })
  })

  test('stream: while the turn is sent back, the client gets its keep-alives', async () => {
    const h = await translationGateway(sim)
    h.deps.config.routing.pingIntervalMs = 50
    sim.queue(claude, pausesAfterOne, {
      text: 'Answered.',
      usage: { ...perMessage, webSearches: 2 },
      searchesPerTurn: 1,
      firstByteDelayMs: 400,
    })
    const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { ...searching, stream: true } })
    const text = await res.text()
    const keepAlive = text.indexOf(': keep-alive')
    expect(keepAlive).toBeGreaterThan(text.indexOf('web_search_call'))
    expect(parseSse(text).at(-1)!.event).toBe('response.completed')
  })

  // A half-open circuit lets one request through as its probe. A refusal of the message sent back
  // for the request's own reasons (a 400) is no verdict on the model: the probe must be freed.
  test('non-streaming: a probe whose message sent back is refused 400 leaves the circuit half open', async () => {
    const h = await translationGateway(sim)
    for (let i = 0; i < 3; i++) h.deps.health.recordFailure('anthropic', 'claude-t')
    h.clock.advance(31_000)
    expect(h.deps.health.view('anthropic', 'claude-t').state).toBe('half_open')
    sim.queue(claude, pausesAfterOne, { fault: { kind: 'status', status: 400 } })
    const response = await sdkClients(h).openai.responses.create(searching)
    expect(response.output.map((item) => item.type)).toEqual(['web_search_call'])
    expect(h.deps.health.view('anthropic', 'claude-t').state).toBe('half_open')
  })

  test('non-streaming: the client leaving during a later message is recorded aborted, that leg free', async () => {
    const h = await translationGateway(sim)
    sim.queue(claude, pausesAfterOne, {
      text: 'slow words and more words',
      usage: { ...perMessage, webSearches: 2 },
      searchesPerTurn: 1,
      chunks: 10,
      chunkDelayMs: 100,
    })
    const controller = new AbortController()
    const answer = h.call('/compat-b/v1/responses', { method: 'POST', json: searching, signal: controller.signal })
    await until(() => sim.requests.length === 2)
    await Bun.sleep(150)
    controller.abort()
    const res = await answer
    const detail = await endedRequestDetail(h, res.headers.get('x-request-id')!)
    expect(detail).toMatchObject({ status: 'aborted', http_status: 499 })
    expect(detail.usage_events.map((e: { outcome: string }) => e.outcome)).toEqual(['ok', 'aborted'])
  })

  test('a pause between a search and its result: the result is named by the search sent back', async () => {
    const h = await scriptedPair('anthropic')
    const end = (reason: string) => [
      anthropicEvent('message_delta', {
        delta: { stop_reason: reason, stop_sequence: null },
        usage: { output_tokens: 5, server_tool_use: { web_search_requests: 1 } },
      }),
      anthropicEvent('message_stop'),
    ]
    const sent = scriptedUpstream(h, (body) => {
      const sentBack = (body.messages as { role: string }[]).at(-1)!.role === 'assistant'
      const blocks = sentBack
        ? [
            {
              type: 'web_search_tool_result',
              tool_use_id: 'srvtoolu_1',
              content: [
                {
                  type: 'web_search_result',
                  url: 'https://bun.sh/',
                  title: 'Bun',
                  encrypted_content: 'e',
                  page_age: null,
                },
              ],
            },
          ]
        : [{ type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} }]
      return {
        sse: [
          anthropicMessageStart('first-up'),
          anthropicEvent('content_block_start', { index: 0, content_block: blocks[0] }),
          ...(sentBack
            ? []
            : [
                anthropicEvent('content_block_delta', {
                  index: 0,
                  delta: { type: 'input_json_delta', partial_json: '{"query":"bun 1.4"}' },
                }),
              ]),
          anthropicEvent('content_block_stop', { index: 0 }),
          ...end(sentBack ? 'end_turn' : 'pause_turn'),
        ],
      }
    })
    const response = await sdkClients(h).openai.responses.create({
      model: 'svc-pro',
      input: 'q',
      tools: [{ type: 'web_search' }],
    })
    expect(sent).toHaveLength(2)
    expect(response.output[0]).toMatchObject({ type: 'web_search_call', action: { type: 'search', query: 'bun 1.4' } })
  })

  test('an Anthropic client gets the pause as Anthropic sends it, and sends the turn back itself', async () => {
    const h = await translationGateway(sim)
    sim.setScenario(claude, { text: 'Done.', usage: { ...perMessage, webSearches: 3 }, searchesPerTurn: 2 })
    const { anthropic } = sdkClients(h)
    const params = {
      model: profileFor.anthropic,
      max_tokens: 1024,
      messages: [{ role: 'user' as const, content: 'What changed in bun 1.4?' }],
      tools: [{ type: 'web_search_20250305' as const, name: 'web_search' as const }],
    }
    const paused = await anthropic.messages.create(params)
    expect(sim.requests).toHaveLength(1)
    expect(paused.stop_reason).toBe('pause_turn')

    const resumed = await anthropic.messages.create({
      ...params,
      messages: [...params.messages, { role: 'assistant', content: paused.content }],
    })
    expect(resumed.stop_reason).toBe('end_turn')
    expect(resumed.content.at(-1)).toMatchObject({ type: 'text', text: 'Done.' })
    expect((await requestDetail(h, resumed.id.replace(/^msg_/, ''))).usage_events).toHaveLength(1)
  })
})

/** Waits (bounded) until `done` holds. */
async function until(done: () => boolean, ms = 3_000) {
  const deadline = performance.now() + ms
  while (!done() && performance.now() < deadline) await Bun.sleep(2)
  expect(done()).toBe(true)
}

/** A stream's text read in the background, whatever becomes of it. */
async function readAll(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }): Promise<string> {
  let text = ''
  const decoder = new TextDecoder()
  try {
    for (let read = await reader.read(); !read.done; read = await reader.read()) text += decoder.decode(read.value)
  } catch {
    // The test cancelled it.
  }
  return text
}
