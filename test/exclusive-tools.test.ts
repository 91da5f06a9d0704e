// End to end: an Anthropic client offering a tool only Anthropic's API has (its text editor, bash,
// memory, computer use, which the client runs; web fetch, tool search, the MCP connector, which
// Anthropic runs) is served by an Anthropic model, which gets the tools as sent. Another dialect has
// no such tool: its models are passed over, and a profile with none answers that no model can,
// instead of a model answering with the tools (and a forced tool_choice) gone, as if it had fetched
// the page or called the server.
import { describe, expect, test } from 'bun:test'
import { type Harness, requestDetail } from './support/harness'
import {
  profileFor,
  rankedProGateway,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()
/**
 * The answer came from `served`, which got the client's fields as sent, with `passedOver` skipped
 * for `reason` in the request's record.
 */
async function expectServedAsSent(
  h: Harness,
  res: Response,
  sent: Record<string, unknown>,
  want: { path: string; served: string; passedOver: string; reason: string },
) {
  expect(res.status).toBe(200)
  expect(sim.requests.map((r) => r.path)).toEqual([want.path])
  expect(sim.requests[0]!.body).toMatchObject(sent)
  const record = await requestDetail(h, res.headers.get('x-request-id')!)
  expect(record.selected_model_id).toBe(want.served)
  expect(record.provider_ranks).toContainEqual(
    expect.objectContaining({ model_id: want.passedOver, status: 'skipped', reason: want.reason }),
  )
}

/** The simulator's Anthropic provider taken for Anthropic itself, as api.anthropic.com is. */
const anthropicItself = { anthropic: { anthropic_signatures: true } }

const editor = { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' }
const bash = { type: 'bash_20250124', name: 'bash' }
const memory = { type: 'memory_20250818', name: 'memory' }
const weather = { name: 'get_weather', input_schema: { type: 'object' } }
const webFetch = { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 }
const toolSearch = { type: 'tool_search_tool_regex_20251119', name: 'tool_search_tool_regex' }
const deferred = { name: 'create_ticket', input_schema: { type: 'object' }, defer_loading: true }
const mcpServers = [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'tickets' }]
const mcpToolset = { type: 'mcp_toolset', mcp_server_name: 'tickets' }

const asking = (model: string, extra: Record<string, unknown>) => ({
  model,
  max_tokens: 200,
  messages: [{ role: 'user', content: 'Fix the typo in a.txt.' }],
  ...extra,
})

describe('an Anthropic client offering tools only Anthropic has', () => {
  test.each([
    ['the text editor', { tools: [editor] }],
    ['bash, forced by tool_choice', { tools: [bash], tool_choice: { type: 'tool', name: 'bash' } }],
    ['memory beside a custom tool', { tools: [memory, weather] }],
    ['web fetch', { tools: [webFetch, weather] }],
    ['tool search over deferred tools', { tools: [toolSearch, deferred] }],
    ['an MCP toolset of the MCP connector', { tools: [mcpToolset], mcp_servers: mcpServers }],
  ])('%s: a Chat model ranked above is passed over; the Claude model gets the tools as sent', async (_, extra) => {
    const h = await rankedProGateway(
      sim,
      [
        { id: 'best-chat', kind: 'openai-chat', quality: 95 },
        { id: 'claude', kind: 'anthropic', quality: 80 },
      ],
      anthropicItself,
    )
    sim.queue(upstreamModelFor.anthropic, { text: 'Done.' })
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: asking('svc-pro', extra),
    })
    const type = (extra.tools[0] as { type: string }).type
    await expectServedAsSent(h, res, extra, {
      path: '/v1/messages',
      served: 'claude',
      passedOver: 'best-chat',
      reason: `request offers ${type}, a tool only Anthropic's API has; only Anthropic itself serves it`,
    })
  })

  test('a profile without an Anthropic model answers 400, not to be retried, and asks no upstream', async () => {
    const h = await translationGateway(sim)
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: asking(profileFor['openai-chat'], { tools: [editor] }),
    })
    expect(res.status).toBe(400)
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(await res.json()).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          "this request offers text_editor_20250728, a tool only Anthropic's API has, and no model of Anthropic itself under svc-pro can serve it",
      },
    })
    expect(sim.requests).toHaveLength(0)
  })

  test('the MCP connector named without a toolset still goes to Claude (its servers are called by Anthropic)', async () => {
    const h = await translationGateway(sim)
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: asking(profileFor['openai-chat'], { mcp_servers: mcpServers }),
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error.message).toStartWith('this request offers mcp_servers, a tool only Anthropic')
    expect(sim.requests).toHaveLength(0)
  })
})

// The same from the other side: a Responses client offering a tool only OpenAI's Responses API has
// (a local shell, apply_patch, computer use, which the client runs; remote MCP, which OpenAI calls),
// or sending their calls back in its history, is served by OpenAI itself, which gets them as sent.
const localShell = { type: 'local_shell' }
const mcp = {
  type: 'mcp',
  server_label: 'tickets',
  server_url: 'https://mcp.example.com/sse',
  require_approval: 'never',
}
const shellTurn = [
  { role: 'user', content: 'list the files' },
  {
    type: 'local_shell_call',
    id: 'lsh_1',
    call_id: 'call_1',
    status: 'completed',
    action: { type: 'exec', command: ['ls'], env: {} },
  },
  { type: 'local_shell_call_output', call_id: 'call_1', output: 'a.txt b.txt' },
]

describe('a Responses client offering tools only OpenAI has', () => {
  test.each([
    ['a local shell', { tools: [localShell], input: 'list the files' }, 'local_shell'],
    ['remote MCP beside a function', { tools: [mcp, { type: 'function', name: 'f' }], input: 'my tickets?' }, 'mcp'],
    ['a local shell call in the history', { tools: [localShell], input: shellTurn }, 'local_shell'],
    // Its call and output in the history alone (the tool no longer offered) still name it.
    ['a local shell call in the history, the tool not offered', { input: shellTurn }, 'local_shell_call'],
  ])('%s: a Claude model ranked above is passed over; OpenAI gets the tools as sent', async (_, extra, type) => {
    const h = await rankedProGateway(sim, [
      { id: 'claude', kind: 'anthropic', quality: 95 },
      { id: 'gpt', kind: 'openai-responses', quality: 80 },
    ])
    sim.queue(upstreamModelFor['openai-responses'], { text: 'Done.' })
    const res = await h.call('/compat-b/v1/responses', { method: 'POST', json: { model: 'svc-pro', ...extra } })
    await expectServedAsSent(h, res, extra, {
      path: '/v1/responses',
      served: 'gpt',
      passedOver: 'claude',
      reason: `request offers ${type}, a tool only OpenAI's API has; only OpenAI itself serves it`,
    })
  })

  test('a profile without OpenAI itself answers 400 in OpenAI’s shape, and asks no upstream', async () => {
    const h = await translationGateway(sim)
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: profileFor.anthropic, tools: [localShell], input: 'list the files' },
    })
    expect(res.status).toBe(400)
    expect(res.headers.get('x-should-retry')).toBe('false')
    expect(await res.json()).toMatchObject({
      error: {
        type: 'invalid_request_error',
        message:
          "this request offers local_shell, a tool only OpenAI's API has, and no model of OpenAI itself under svc-max can serve it",
      },
    })
    expect(sim.requests).toHaveLength(0)
  })
})
