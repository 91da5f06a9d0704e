// A conversation with tool calls in its history and no tools offered — what Codex sends when it
// compacts a conversation (`tools: []`, the history, a request for a summary). Anthropic refuses
// tool_use and tool_result blocks in a request that defines no tools (a 400, "Requests which
// include tool_use or tool_result blocks must define tools": anthropics/anthropic-sdk-python#494),
// so the tools the history called are defined again, bare, and the model may call none of them.
import { describe, expect, test } from 'bun:test'
import type OpenAI from 'openai'
import { sdkClients } from './support/harness'
import { onlyUpstreamBody, profileFor, translationGateway, translationSimulator } from './support/translation-gateway'

const sim = translationSimulator()

/** The shape of Codex 0.169's compaction request (captured), shortened. */
const compaction = {
  tools: [],
  tool_choice: 'auto',
  parallel_tool_calls: true,
  input: [
    { role: 'user', content: 'run echo hi, then apply the fix' },
    { type: 'function_call', call_id: 'call_1', name: 'exec_command', arguments: '{"cmd":"echo hi"}' },
    { type: 'function_call_output', call_id: 'call_1', output: 'hi' },
    { type: 'custom_tool_call', call_id: 'call_2', name: 'apply_patch', input: '*** Begin Patch\n*** End Patch' },
    { type: 'custom_tool_call_output', call_id: 'call_2', output: 'Done' },
    { type: 'function_call', call_id: 'call_3', name: 'exec_command', arguments: '{"cmd":"make test"}' },
    { type: 'function_call_output', call_id: 'call_3', output: 'ok' },
    { role: 'user', content: 'You are performing a CONTEXT CHECKPOINT COMPACTION. Create a handoff summary.' },
  ],
} as unknown as Omit<OpenAI.Responses.ResponseCreateParamsNonStreaming, 'model'>

describe('tool history with no tools offered', () => {
  test('to Anthropic: the tools it called are defined, bare, and none may be called', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    const response = await openai.responses.create({ ...compaction, model: profileFor.anthropic })
    expect(response.status).toBe('completed')
    const body = onlyUpstreamBody(sim) as { tools: unknown[]; tool_choice: unknown; messages: unknown[] }
    const bare = (name: string) => ({
      name,
      description: 'Called earlier in this conversation; not offered now.',
      input_schema: { type: 'object' },
    })
    expect(body.tools).toEqual([bare('exec_command'), bare('apply_patch')])
    expect(body.tool_choice).toEqual({ type: 'none' })
    expect(JSON.stringify(body.messages)).toContain('"type":"tool_use"')
  })

  test('to Chat: the history goes as it is, with no tools (OpenAI takes it so)', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    await openai.responses.create({ ...compaction, model: profileFor['openai-chat'] })
    const body = onlyUpstreamBody(sim) as Record<string, unknown>
    expect(body.tools).toBeUndefined()
    expect(body.tool_choice).toBeUndefined()
  })

  test('a request that offers tools keeps its own choice', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    const tools = [{ type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } }]
    await openai.responses.create({
      ...compaction,
      tools,
      model: profileFor.anthropic,
    } as OpenAI.Responses.ResponseCreateParamsNonStreaming)
    const body = onlyUpstreamBody(sim) as { tools: { name: string }[]; tool_choice?: unknown }
    expect(body.tools.map((tool) => tool.name)).toEqual(['exec_command'])
    expect(body.tool_choice).toEqual({ type: 'auto' })
  })
})
