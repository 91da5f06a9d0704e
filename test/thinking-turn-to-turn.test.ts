// One thinking setting for a whole conversation on Claude. Under adaptive thinking Claude decides
// turn by turn whether to think, and calls tools without thinking first on simple steps; svc used to
// turn thinking (and Claude Code's clear_thinking edit) off for the request after such a turn and on
// again at the next. Anthropic's cache does not survive a change of the thinking parameters: each
// switch made the whole conversation a cache write instead of a read (an audit of prompt caching).
// With a budget, a tool loop whose last turn does not open with thinking is still sent with thinking
// off (Anthropic refuses it otherwise); should Anthropic refuse such a turn under adaptive thinking,
// the request goes again with thinking off, once, in the model's own form of off.
import { afterAll, beforeEach, expect, test } from 'bun:test'
import { createHarness } from './support/harness'
import { scriptedUpstream } from './support/scripted-upstream'
import { claude55Rules, simClaude } from './support/sim-models'
import { type Scenario, startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-thinking-turns'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const claude = simClaude({ id: 'claude-new', upstream_model: 'claude-new-up', ...claude55Rules })
const gateway = () =>
  createHarness({
    grantUsd: 50,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: { anth: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY', anthropic_signatures: true } },
      models: [claude],
    },
  })

/** Four turns of a tool loop; in the second Claude calls a tool without thinking first. */
const turns: Scenario[] = [
  { thinking: 'plan', toolCall: { name: 'Bash', arguments: { command: 'make test' } } },
  { toolCall: { name: 'Bash', arguments: { command: 'cat a.ts' } } },
  { thinking: 'next', toolCall: { name: 'Bash', arguments: { command: 'make' } } },
  { text: 'done' },
]

const upstreamSettings = () =>
  sim.requests.map((r) => {
    const body = r.body as Record<string, unknown>
    return JSON.stringify({ thinking: body.thinking, context_management: body.context_management })
  })

test('Claude Code on Claude: adaptive thinking and its clear_thinking edit go on every turn', async () => {
  const h = await gateway()
  const bash = { name: 'Bash', input_schema: { type: 'object', properties: { command: { type: 'string' } } } }
  const request = (messages: unknown[]) => ({
    model: 'svc-max',
    max_tokens: 32_000,
    tools: [bash],
    messages,
    thinking: { type: 'adaptive' },
    output_config: { effort: 'high' },
    context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  })
  let messages: unknown[] = [{ role: 'user', content: 'run the tests' }]
  for (const turn of turns) {
    sim.queue('claude-new-up', turn)
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01', 'x-claude-code-session-id': 'cc-1' },
      json: request(messages),
    })
    expect(res.status).toBe(200)
    const answer = await res.json()
    messages = [...messages, { role: 'assistant', content: answer.content }]
    const call = answer.content.find((b: { type: string }) => b.type === 'tool_use')
    if (call) messages.push({ role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: 'ok' }] })
  }
  expect(sim.requests).toHaveLength(4)
  expect(new Set(upstreamSettings())).toEqual(
    new Set([
      JSON.stringify({
        thinking: { type: 'adaptive' },
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      }),
    ]),
  )
})

test('Codex on Claude: its reasoning goes as adaptive thinking on every turn', async () => {
  const h = await gateway()
  const shell = { type: 'function', name: 'Bash', strict: false, parameters: { type: 'object' } }
  let input: Record<string, unknown>[] = [{ role: 'user', content: 'run the tests' }]
  for (const turn of turns) {
    sim.queue('claude-new-up', turn)
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      headers: { session_id: 'codex-1' },
      json: {
        model: 'svc-max',
        input,
        tools: [shell],
        reasoning: { effort: 'high', summary: 'auto' },
        store: false,
        include: ['reasoning.encrypted_content'],
      },
    })
    expect(res.status).toBe(200)
    const output = (await res.json()).output as Record<string, unknown>[]
    input = [...input, ...output.map(({ id: _id, status: _status, ...item }) => item)]
    const call = output.find((item) => item.type === 'function_call')
    if (call) input.push({ type: 'function_call_output', call_id: call.call_id, output: 'ok' })
  }
  expect(sim.requests).toHaveLength(4)
  expect(new Set(sim.requests.map((r) => JSON.stringify((r.body as Record<string, unknown>).thinking)))).toEqual(
    new Set([JSON.stringify({ type: 'adaptive', display: 'summarized' })]),
  )
})

test('a tool turn Anthropic refuses without thinking goes again once with thinking off', async () => {
  const h = await gateway()
  const sent = scriptedUpstream(h, (body) =>
    (body.thinking as { type?: string } | undefined)?.type === 'adaptive'
      ? {
          status: 400,
          json: {
            type: 'error',
            error: {
              type: 'invalid_request_error',
              message:
                'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of `tool_use` and `tool_result` blocks).',
            },
          },
        }
      : {
          json: {
            id: 'msg_up',
            type: 'message',
            role: 'assistant',
            model: 'claude-new-up',
            content: [{ type: 'text', text: 'done' }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 30, output_tokens: 2 },
          },
        },
  )
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: {
      model: 'svc-max',
      max_tokens: 1000,
      thinking: { type: 'adaptive' },
      context_management: { edits: [{ type: 'clear_thinking_20251015' }] },
      tools: [{ name: 'Bash', input_schema: { type: 'object' } }],
      messages: [
        { role: 'user', content: 'run it' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'ok' }] },
      ],
    },
  })
  expect(res.status).toBe(200)
  expect((await res.json()).content).toEqual([{ type: 'text', text: 'done' }])
  expect(sent.map((body) => [body.thinking, body.context_management])).toEqual([
    [{ type: 'adaptive' }, { edits: [{ type: 'clear_thinking_20251015' }] }],
    // Sonnet 5.5's rules: without `thinking` it would think; `between_tools` is its off.
    [{ type: 'between_tools' }, undefined],
  ])
})
