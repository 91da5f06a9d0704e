// End to end with the openai SDK: a Responses client's tool namespace (Codex's sub-agent tools)
// reaches Anthropic and Chat upstreams as qualified function names, and the model's call to one
// comes back under its namespace, streamed or not. The real Codex CLI runs such a call in
// codex-cli.test.ts.
import { describe, expect, test } from 'bun:test'
import type OpenAI from 'openai'
import { sdkClients } from './support/harness'
import {
  onlyUpstreamBody,
  profileFor,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()

const tools = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: {} } },
  {
    type: 'namespace',
    name: 'multi_agent_v1',
    description: 'Tools for spawning and managing sub-agents.',
    tools: [
      {
        type: 'function',
        name: 'spawn_agent',
        description: 'Spawn a sub-agent.',
        parameters: { type: 'object', properties: { message: { type: 'string' } } },
      },
      { type: 'function', name: 'wait_agent', parameters: { type: 'object', properties: {} } },
    ],
  },
] as unknown as OpenAI.Responses.Tool[]

/** The tool names the upstream was offered, in its own dialect. */
function offeredNames(kind: 'anthropic' | 'openai-chat'): string[] {
  const body = onlyUpstreamBody(sim) as { tools: { name?: string; function?: { name: string } }[] }
  return body.tools.map((tool) => (kind === 'anthropic' ? tool.name! : tool.function!.name))
}

describe.each(['anthropic', 'openai-chat'] as const)('tool namespaces through a %s upstream', (kind) => {
  const model = upstreamModelFor[kind]
  const spawn = { name: 'multi_agent_v1__spawn_agent', arguments: { message: 'look around' } }

  test('offered as <namespace>__<name>; the call comes back under its namespace', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.setScenario(model, { toolCall: spawn })
    const response = await openai.responses.create({ model: profileFor[kind], input: 'spawn one', tools })
    expect(offeredNames(kind)).toEqual(['exec_command', 'multi_agent_v1__spawn_agent', 'multi_agent_v1__wait_agent'])
    expect(response.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        namespace: 'multi_agent_v1',
        name: 'spawn_agent',
        arguments: '{"message":"look around"}',
      }),
    ])
  })

  test('streamed, and a namespaced call in the history goes upstream under the joined name', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.setScenario(model, { toolCall: spawn })
    const stream = await openai.responses.create({
      model: profileFor[kind],
      tools,
      stream: true,
      input: [
        { role: 'user', content: 'wait for the agent' },
        {
          type: 'function_call',
          call_id: 'call_1',
          namespace: 'multi_agent_v1',
          name: 'wait_agent',
          arguments: '{}',
        } as OpenAI.Responses.ResponseFunctionToolCall,
        { type: 'function_call_output', call_id: 'call_1', output: 'done' },
      ],
    })
    const added: unknown[] = []
    let completed: OpenAI.Responses.Response | undefined
    for await (const event of stream) {
      if (event.type === 'response.output_item.added') added.push(event.item)
      if (event.type === 'response.completed') completed = event.response
    }
    const call = { type: 'function_call', namespace: 'multi_agent_v1', name: 'spawn_agent' }
    expect(added).toEqual([expect.objectContaining(call)])
    expect(completed!.output).toEqual([expect.objectContaining({ ...call, arguments: '{"message":"look around"}' })])

    const body = onlyUpstreamBody(sim) as { messages: Record<string, unknown>[] }
    const history = JSON.stringify(body.messages)
    expect(history).toContain('"multi_agent_v1__wait_agent"')
    expect(history).not.toContain('"wait_agent"')
  })
})
