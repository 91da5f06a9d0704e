// End to end: tool names longer than OpenAI's 64 characters (Claude Code's MCP tools are named
// mcp__<server>__<tool>) reach an OpenAI upstream, Chat or Responses, shortened, which OpenAI would
// otherwise refuse with a 400, and the client's tool_use carries the name it declared.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import type { ModelSection } from '../src/config/schema'
import { createHarness, type Harness, sdkClients } from './support/harness'
import { simGpt } from './support/sim-models'
import { startSimulator } from './support/simulator'

const SIM_KEY = 'sim-key-0001'
const sim = startSimulator({ apiKey: SIM_KEY })
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

const gptY = simGpt()

/** The same model behind a Responses upstream, in `max` (the well-known openai provider's kind). */
const gptR: ModelSection = { ...gptY, id: 'gpt-r', provider: 'resp', upstream_model: 'gpt-r-up', profiles: ['max'] }

const gateway = (): Promise<Harness> =>
  createHarness({
    grantUsd: 5,
    env: { SIM_KEY },
    config: {
      catalog: { builtin: false },
      providers: {
        chat: { kind: 'openai-chat', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
        resp: { kind: 'openai-responses', base_url: `${sim.url}/v1`, api_key_env: 'SIM_KEY' },
      },
      models: [gptY, gptR],
    },
  })

const sdk = (h: Harness) => sdkClients(h).anthropic

const longName = 'mcp__claude_ai_Atlassian_Rovo__getConfluencePageFooterCommentsWithInlineRepliesAndHistory2'
/** What the upstream is offered instead (its first 55 characters, `_`, 8 hex of a hash). */
const offered = 'mcp__claude_ai_Atlassian_Rovo__getConfluencePageFooterC_ceb02a93'
const openAIName = /^[a-zA-Z0-9_-]{1,64}$/

const longTool = {
  name: longName,
  description: 'Footer comments of a Confluence page',
  input_schema: { type: 'object' as const, properties: { pageId: { type: 'string' } }, required: ['pageId'] },
}
const shortTool = {
  name: 'get_weather',
  description: 'Current weather for a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } },
}
const question = { role: 'user' as const, content: 'Read the comments on page 42.' }

/** The function names of the upstream request `index`, as each OpenAI dialect lists them. */
type UpstreamNames = { tools: string[]; toolChoice: unknown; history: string[] }
const chatNames = (index: number): UpstreamNames => {
  const body = sim.requests[index]!.body as Record<string, unknown>
  const tools = (body.tools as { function: { name: string } }[]).map((t) => t.function.name)
  const history = (body.messages as { tool_calls?: { function: { name: string } }[] }[]).flatMap((m) =>
    (m.tool_calls ?? []).map((c) => c.function.name),
  )
  return { tools, toolChoice: body.tool_choice, history }
}
const responsesNames = (index: number): UpstreamNames => {
  const body = sim.requests[index]!.body as Record<string, unknown>
  const tools = (body.tools as { name: string }[]).map((t) => t.name)
  const history = (body.input as { type?: string; name?: string }[]).flatMap((item) =>
    item.type === 'function_call' ? [item.name!] : [],
  )
  return { tools, toolChoice: body.tool_choice, history }
}

const dialects = [
  {
    kind: 'openai-chat',
    profile: 'svc-pro',
    upstream: 'gpt-y-up',
    namesOf: chatNames,
    choice: { type: 'function', function: { name: offered } },
  },
  {
    kind: 'openai-responses',
    profile: 'svc-max',
    upstream: 'gpt-r-up',
    namesOf: responsesNames,
    choice: { type: 'function', name: offered },
  },
]

describe('tool names over 64 characters to an OpenAI upstream', () => {
  test('the name is 90 characters long', () => {
    expect(longName).toHaveLength(90)
  })

  test.each(dialects.flatMap((d) => [false, true].map((stream) => [d.kind, stream, d] as const)))(
    '%s, stream %p: the upstream gets a short name, the client its own back',
    async (_kind, stream, { profile, upstream, namesOf, choice }) => {
      const client = sdk(await gateway())
      sim.queue(upstream, { toolCall: { id: 'call_long1', name: offered, arguments: { pageId: '42' } } })
      const request = {
        model: profile,
        max_tokens: 200,
        tools: [longTool, shortTool],
        tool_choice: { type: 'tool' as const, name: longName },
        messages: [question],
      }
      const first = stream
        ? await client.messages.stream(request).finalMessage()
        : await client.messages.create(request)
      expect(first.stop_reason).toBe('tool_use')
      expect(first.content as unknown).toEqual([
        { type: 'tool_use', id: 'call_long1', name: longName, input: { pageId: '42' } },
      ])

      const sent = namesOf(0)
      expect(sent.tools).toEqual([offered, 'get_weather'])
      for (const name of sent.tools) expect(name).toMatch(openAIName)
      expect(sent.toolChoice).toEqual(choice)

      // The next turn replays the call: its history names the tool as the tools list does.
      sim.queue(upstream, { text: 'Two comments.' })
      const second = await client.messages.create({
        model: profile,
        max_tokens: 200,
        tools: [longTool, shortTool],
        messages: [
          question,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_long1', content: '2 comments' }] },
        ],
      })
      expect(second.content as unknown[]).toEqual([{ type: 'text', text: 'Two comments.' }])
      expect(namesOf(1)).toEqual({ tools: [offered, 'get_weather'], toolChoice: undefined, history: [offered] })
    },
  )

  test('the Responses route (Codex) gets its function_call under the declared name', async () => {
    const h = await gateway()
    sim.queue('gpt-y-up', { toolCall: { id: 'call_long2', name: offered, arguments: { pageId: '7' } } })
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: {
        model: 'svc-pro',
        input: 'Read the comments on page 7.',
        tools: [{ type: 'function', name: longName, parameters: longTool.input_schema }],
      },
    })
    expect(res.status).toBe(200)
    const body = (await res.json()) as { output: Record<string, unknown>[] }
    expect(body.output).toEqual([
      expect.objectContaining({ type: 'function_call', call_id: 'call_long2', name: longName }),
    ])
    expect(chatNames(0).tools).toEqual([offered])
  })
})
