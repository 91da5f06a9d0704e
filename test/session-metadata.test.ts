// Session attributes in the body's metadata (session_id, agent_id, session_source), on both
// surfaces: what the usage API records, which of header and body wins, and what each upstream
// receives — nothing of svc's on Anthropic, whose metadata takes only user_id; the client's own map
// as sent on a Responses upstream, whose metadata is a free string map.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import { createHarness, type Harness, requestDetail } from './support/harness'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-0001'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => {
  sim.reset()
  for (const model of ['claude-x-up', 'gpt-r-up'])
    sim.setScenario(model, { text: 'ok', usage: { input: 1, output: 1 } })
})

const prices = { input_usd_per_mtok: 1, output_usd_per_mtok: 2 }

/** svc-max is answered by an Anthropic upstream, svc-ultra-saver by an OpenAI Responses one. */
const gateway = () =>
  createHarness({
    grantUsd: 5,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: {
        anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
        resp: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY', openai_itself: true },
      },
      models: [
        { id: 'claude-x', provider: 'anth', upstream_model: 'claude-x-up', profiles: ['max'], quality: 90, ...prices },
        {
          id: 'gpt-r',
          provider: 'resp',
          upstream_model: 'gpt-r-up',
          profiles: ['ultra_saver'],
          quality: 80,
          ...prices,
        },
      ],
    },
  })

const ask = [{ role: 'user', content: 'hello' }]

/** Sends a messages request and returns its record as the usage API shows it. */
async function sendMessages(h: Harness, metadata: unknown, headers: Record<string, string> = {}) {
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    json: { model: 'svc-max', max_tokens: 10, messages: ask, metadata },
    headers: { 'anthropic-version': '2023-06-01', ...headers },
  })
  expect(res.status).toBe(200)
  return requestDetail(h, res.headers.get('x-request-id')!)
}

async function sendResponses(h: Harness, model: string, metadata: Record<string, string>) {
  const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { model, input: 'hello', metadata } })
  expect(res.status).toBe(200)
  return requestDetail(h, res.headers.get('x-request-id')!)
}

const sessionOf = (detail: Record<string, unknown>) => ({
  session_id: detail.session_id,
  agent_id: detail.agent_id,
  session_source: detail.session_source,
})

const upstreamBody = (index: number) => sim.requests[index]!.body as Record<string, unknown>

describe('messages: session attributes in metadata', () => {
  test('are recorded, and stay in svc: the Anthropic upstream gets only the rest of metadata', async () => {
    const h = await gateway()
    const detail = await sendMessages(h, {
      user_id: 'u-1',
      session_id: 'sess-1',
      agent_id: 'agent-9',
      session_source: 'my-ide',
    })
    expect(sessionOf(detail)).toEqual({ session_id: 'sess-1', agent_id: 'agent-9', session_source: 'my-ide' })
    expect(upstreamBody(0)).toEqual({
      model: 'claude-x-up',
      max_tokens: 10,
      messages: ask,
      metadata: { user_id: 'u-1' },
    })

    // Nothing left for Anthropic: no metadata at all.
    const alone = await sendMessages(h, { agent_id: 'agent-9', session_source: 'my-ide' })
    expect(sessionOf(alone)).toEqual({ session_id: undefined, agent_id: 'agent-9', session_source: 'my-ide' })
    expect(upstreamBody(1)).toEqual({ model: 'claude-x-up', max_tokens: 10, messages: ask })

    const sessions = await (await h.call('/v1/usage/sessions/list')).json()
    expect(sessions).toEqual([expect.objectContaining({ session_id: 'sess-1', session_source: 'my-ide' })])
  })

  test('a header wins over metadata; a source named in metadata wins over the one svc infers', async () => {
    const h = await gateway()
    const metadata = { session_id: 'body-sess', agent_id: 'body-agent', session_source: 'body-source' }
    const headers = { 'x-session-id': 'hdr-sess', 'x-agent-id': 'hdr-agent', 'x-session-source': 'hdr-source' }
    expect(sessionOf(await sendMessages(h, metadata, headers))).toEqual({
      session_id: 'hdr-sess',
      agent_id: 'hdr-agent',
      session_source: 'hdr-source',
    })
    const claudeCode = await sendMessages(h, { session_source: 'my-wrapper' }, { 'x-claude-code-session-id': 'cc-1' })
    expect(sessionOf(claudeCode)).toEqual({ session_id: 'cc-1', agent_id: undefined, session_source: 'my-wrapper' })
  })

  // Claude Code's Task tool and Codex's spawned agents mark their requests; the launchers' x-agent-id
  // is the same on every request of the session, so subagents' rows could not be told apart.
  test('a subagent’s requests are recorded under the agent that started it; the session names that agent', async () => {
    const h = await gateway()
    const launched = { 'x-agent-id': 'claude-code@vm', 'x-claude-code-session-id': 'cc-2' }
    const main = await sendMessages(h, undefined, launched)
    const task = await sendMessages(h, undefined, { ...launched, 'x-claude-code-agent-id': 'a8131424c493b8831' })
    expect([main.agent_id, task.agent_id]).toEqual(['claude-code@vm', 'claude-code@vm/a8131424c493b8831'])
    const codex = { 'session-id': 'cx-1', 'thread-id': 'th-2', 'x-openai-subagent': 'collab_spawn' }
    expect((await sendMessages(h, undefined, codex)).agent_id).toBe('codex/th-2')
    // Codex's own thread, not a subagent's: no mark, no suffix.
    expect((await sendMessages(h, undefined, { 'session-id': 'cx-1', 'thread-id': 'cx-1' })).agent_id).toBe(undefined)
    const sessions = await (await h.call('/v1/usage/sessions?ids=cc-2')).json()
    expect(sessions.items).toEqual([
      expect.objectContaining({ session_id: 'cc-2', agent_id: 'claude-code@vm', request_count: 2 }),
    ])
    // No agent named (an agent run without the launcher): the subagent goes under the session's
    // source, the one named or svc's, and the session names the agent its subagents extend.
    const unnamed = { 'x-claude-code-session-id': 'cc-3' }
    await sendMessages(h, undefined, unnamed)
    const sub = await sendMessages(h, undefined, { ...unnamed, 'x-claude-code-agent-id': 'a81' })
    expect(sub.agent_id).toBe('claude-code/a81')
    const named = { ...unnamed, 'x-session-source': 'my-wrapper', 'x-claude-code-agent-id': 'a82' }
    expect((await sendMessages(h, undefined, named)).agent_id).toBe('my-wrapper/a82')
    const summary = await (await h.call('/v1/usage/sessions?ids=cc-3')).json()
    expect(summary.items[0].agent_id).toBe('claude-code')
    // A long agent id is cut to leave the subagent's whole.
    const long = await sendMessages(h, undefined, {
      ...launched,
      'x-agent-id': 'x'.repeat(200),
      'x-claude-code-agent-id': 'a83',
    })
    expect(long.agent_id).toBe(`${'x'.repeat(196)}/a83`)
  })

  test('held to the headers’ rules: strings only, trimmed, at most 200 characters, blank is none', async () => {
    const h = await gateway()
    const clipped = await sendMessages(h, { agent_id: `  ${'a'.repeat(300)}  `, session_source: ' my-ide ' })
    expect(sessionOf(clipped)).toEqual({ session_id: undefined, agent_id: 'a'.repeat(200), session_source: 'my-ide' })

    const odd = await sendMessages(h, { user_id: 'u-2', agent_id: 42, session_source: '   ' })
    expect(sessionOf(odd)).toEqual({ session_id: undefined, agent_id: undefined, session_source: undefined })
    // Whatever its value, the key is svc's and never reaches Anthropic.
    expect(upstreamBody(1).metadata).toEqual({ user_id: 'u-2' })
  })
})

// A session id past 200 characters was recorded clipped but looked up as sent (found nothing), and
// the clip could cut an emoji in half (a U+FFFD recorded that no client sent, nor could look up).
test('a long session id is clipped between characters and found by the id the client sent', async () => {
  const h = await gateway()
  for (const sent of ['L'.repeat(250), `${'a'.repeat(199)}😀😀`]) {
    const detail = await sendMessages(h, { session_id: sent })
    const recorded = Array.from(sent).slice(0, 200).join('')
    expect(detail.session_id).toBe(recorded)
    const history = await (await h.call(`/v1/usage/requests?session_id=${encodeURIComponent(sent)}`)).json()
    expect(history.items.map((r: { request_id: string }) => r.request_id)).toEqual([detail.request_id])
    const sessions = await (await h.call(`/v1/usage/sessions?ids=${encodeURIComponent(sent)}`)).json()
    expect(sessions.items).toEqual([expect.objectContaining({ session_id: recorded, request_count: 1 })])
  }
})

describe('responses: session attributes in metadata', () => {
  const metadata = { session_id: 'sess-r', agent_id: 'agent-r', session_source: 'codex-wrapper', ticket: 'T-1' }

  test('are recorded, and a Responses upstream receives the client’s metadata as sent', async () => {
    const h = await gateway()
    const detail = await sendResponses(h, 'svc-ultra-saver', metadata)
    expect(sessionOf(detail)).toEqual({ session_id: 'sess-r', agent_id: 'agent-r', session_source: 'codex-wrapper' })
    expect(upstreamBody(0).metadata).toEqual(metadata)
  })

  test('are recorded when an Anthropic upstream answers, and none of them reaches it', async () => {
    const h = await gateway()
    const detail = await sendResponses(h, 'svc-max', metadata)
    expect(detail.selected_model_id).toBe('claude-x')
    expect(sessionOf(detail)).toEqual({ session_id: 'sess-r', agent_id: 'agent-r', session_source: 'codex-wrapper' })
    expect(upstreamBody(0).metadata).toBeUndefined()
  })
})
