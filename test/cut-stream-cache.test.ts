// An OpenAI stream reports its usage only at its end: one its client cuts (Codex's Esc) is billed a
// prompt svc counts itself. Counted all at the input price, a long agent conversation's cut turn
// cost ~8 × what OpenAI bills for it, most of that prompt being the last request's, which OpenAI's
// automatic cache holds for 5 to 10 minutes and bills at a tenth. Now the session's last reported
// prompt on the same model, within 5 minutes, is billed as cached.
import { describe, expect, test } from 'bun:test'
import { createHarness, cutResponsesStream, type Harness } from './support/harness'
import { startSimulator } from './support/simulator'
import { afterAll, beforeEach } from 'bun:test'

// Any key is taken: the account's own key serves a turn below.
const sim = startSimulator({})
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const gateway = (promptCaching = true, upstreamModel = 'gpt-cache-up') =>
  createHarness({
    grantUsd: 5,
    env: { SIM_KEY: 'sim-key-cache' },
    config: {
      catalog: { builtin: false },
      providers: { oai: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' } },
      models: [
        {
          id: 'gpt-cache',
          provider: 'oai',
          upstream_model: upstreamModel,
          profiles: ['pro'],
          quality: 80,
          prompt_caching: promptCaching,
          input_usd_per_mtok: 1,
          cache_read_usd_per_mtok: 0.1,
          output_usd_per_mtok: 2,
        },
      ],
    },
  })

/** A Codex turn: the conversation so far, some 5,000 tokens of it. */
const conversation = 'The agent read a file and wrote a patch for it. '.repeat(400)

const firstTurn = [{ role: 'user', content: conversation }]
/** The next turn: the first, its answer and a new question, as an agent sends it. */
const nextTurn = [...firstTurn, { role: 'assistant', content: 'Done.' }, { role: 'user', content: 'And then?' }]

/** A completed turn whose answer reported a prompt of 3,000 tokens. */
async function reportedTurn(h: Harness, session: string, upstream = 'gpt-cache-up') {
  sim.setScenario(upstream, { text: 'Done.', usage: { input: 3000, output: 10 } })
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    headers: { 'x-session-id': session },
    json: { model: 'svc-pro', input: firstTurn },
  })
  expect(res.status).toBe(200)
}

/** The next turn (`input`), streamed and cut by its client after its first words: its leg as billed. */
async function cutTurn(h: Harness, session: string, input: unknown = nextTurn, upstream = 'gpt-cache-up') {
  sim.setScenario(upstream, { text: 'one two three four five six', chunks: 6, chunkDelayMs: 100 })
  const detail = await cutResponsesStream(h, { model: 'svc-pro', stream: true, input }, { 'x-session-id': session })
  expect(detail.status).toBe('aborted')
  return detail.usage_events[0]
}

describe('an OpenAI stream its client cuts before its usage came', () => {
  test("is billed the session's last prompt as cached: 3,000 tokens in OpenAI's steps of 128", async () => {
    const h = await gateway()
    await reportedTurn(h, 'codex-1')
    h.clock.advance(60_000)
    const leg = await cutTurn(h, 'codex-1')
    expect(leg).toMatchObject({ estimated: true, outcome: 'aborted', cached_input_tokens: 2944 })
    expect(leg.input_tokens).toBeGreaterThan(1000)
    // 1 USD/Mtok uncached, 0.1 cached, 2 out: 1,000 nanos a token in, 100 cached.
    const output = leg.output_tokens * 2000
    expect(leg.cost_nanos).toBe(leg.input_tokens * 1000 + 2944 * 100 + output)
  })

  test.each([
    ['another session', 'codex-2', 60_000, true],
    ['the same session, past the 5 minutes a cache is sure to last', 'codex-1', 6 * 60_000, true],
    ['a model that does not cache prompts', 'codex-1', 60_000, false],
  ])('%s: the whole prompt at the input price', async (_, session, wait, promptCaching) => {
    const h = await gateway(promptCaching)
    await reportedTurn(h, 'codex-1')
    h.clock.advance(wait)
    const leg = await cutTurn(h, session)
    expect(leg).toMatchObject({ estimated: true, cached_input_tokens: 0 })
    expect(leg.input_tokens).toBeGreaterThan(4000)
  })

  // OpenAI's cache reads an exact prefix only: a prompt as long as the last one is not cached for that.
  test.each([
    ['a compacted conversation', [{ role: 'user', content: `Summary: ${conversation.slice(0, 8000)}` }]],
    [
      'another system prompt (a subagent under the same session id)',
      [{ role: 'system', content: 'You review code.' }, ...nextTurn],
    ],
    ['a first message changed', [{ role: 'user', content: `${conversation}!` }, ...nextTurn.slice(1)]],
  ])('a prompt that does not begin with the last one (%s): none cached', async (_, input) => {
    const h = await gateway()
    await reportedTurn(h, 'codex-1')
    const leg = await cutTurn(h, 'codex-1', input)
    expect(leg).toMatchObject({ estimated: true, cached_input_tokens: 0 })
  })

  // Codex compacts a long turn with a side request of no tools (the conversation and a prompt to
  // summarise it); its next request has the tools again, the first request's items, and the summary
  // as a user item after the first (svc joins the two into one message). That request begins with
  // the first, which OpenAI still holds, though not with the compaction the session sent last.
  test("after Codex's compaction, the request that goes on is billed the first one's prompt as cached", async () => {
    const h = await gateway()
    const tools = [{ type: 'function', name: 'shell', description: 'Runs a command.', parameters: { type: 'object' } }]
    const first = [{ role: 'developer', content: 'You are Codex.' }, ...firstTurn]
    const completed = async (json: Record<string, unknown>, input: number) => {
      sim.setScenario('gpt-cache-up', { text: 'Done.', usage: { input, output: 10 } })
      const res = await h.call('/compat-b/v1/responses', {
        method: 'POST',
        headers: { 'x-session-id': 'codex-1' },
        json: { model: 'svc-pro', ...json },
      })
      expect(res.status).toBe(200)
    }
    await completed({ input: first, tools }, 3000)
    await completed({ input: [...first, { role: 'user', content: 'Summarise the conversation.' }], tools: [] }, 3100)
    sim.setScenario('gpt-cache-up', { text: 'one two three four five six', chunks: 6, chunkDelayMs: 100 })
    const detail = await cutResponsesStream(
      h,
      { model: 'svc-pro', stream: true, tools, input: [...first, { role: 'user', content: 'Summary: a patch.' }] },
      { 'x-session-id': 'codex-1' },
    )
    expect(detail.usage_events[0]).toMatchObject({ estimated: true, cached_input_tokens: 2944 })
  })

  test("the account's own key served the last turn, the platform's this one: none cached (OpenAI caches per organization)", async () => {
    const h = await gateway()
    const ownKey = (method: string, query = '', json?: unknown) =>
      h.call(`/v1/admin/provider-keys${query}`, { method, key: 'admin-secret', json })
    expect(
      (await ownKey('POST', '', { account: 'default', provider: 'oai', key: 'sk-own-org-key-1234567' })).status,
    ).toBe(201)
    await reportedTurn(h, 'codex-1')
    expect(sim.requests.at(-1)!.headers.authorization).toBe('Bearer sk-own-org-key-1234567')
    expect((await ownKey('DELETE', '?account=default&provider=oai')).status).toBe(200)
    const leg = await cutTurn(h, 'codex-1')
    expect(sim.requests.at(-1)!.headers.authorization).toBe('Bearer sim-key-cache')
    expect(leg).toMatchObject({ estimated: true, cached_input_tokens: 0 })
  })

  test('Claude behind a router, which caches only what a request marks: none cached', async () => {
    const h = await gateway(true, 'anthropic/claude-cache')
    await reportedTurn(h, 'codex-1', 'anthropic/claude-cache')
    const leg = await cutTurn(h, 'codex-1', nextTurn, 'anthropic/claude-cache')
    expect(leg).toMatchObject({ estimated: true, cached_input_tokens: 0 })
  })
})
