// End to end with the openai SDK: Codex 0.169's "Responses lite" requests (a model whose Codex
// metadata says use_responses_lite, GPT-6's) offer no top-level tools: every tool, each in a
// namespace, is in a leading `{type: "additional_tools"}` input item, and a header says so. Behind
// svc on an Anthropic or a Chat model, those tools are the request's: the upstream is offered them,
// and the model's calls come back under their namespace, a custom tool's as a custom_tool_call.
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

/** The item as Codex 0.169 sends it (captured; descriptions and the grammar shortened, fewer tools). */
const additionalTools = {
  type: 'additional_tools',
  id: 'at_01a21c29-a259-76e1-a43a-5c23cf1b6827',
  role: 'developer',
  tools: [
    {
      type: 'namespace',
      name: 'functions',
      description: '',
      tools: [
        {
          type: 'custom',
          name: 'exec',
          description: 'Run JavaScript code to orchestrate/compose tool calls',
          format: { type: 'grammar', syntax: 'lark', definition: 'start: pragma_source | plain_source' },
        },
        {
          type: 'function',
          name: 'wait',
          description: 'Waits on a yielded `exec` cell and returns new output or completion.',
          strict: false,
          parameters: {
            type: 'object',
            properties: { cell_id: { type: 'string', description: 'Identifier of the running exec cell.' } },
            required: ['cell_id'],
            additionalProperties: false,
          },
        },
      ],
    },
    {
      type: 'namespace',
      name: 'clock',
      description: 'Tools for reading and waiting on time.',
      tools: [
        {
          type: 'function',
          name: 'sleep',
          description: 'Pause execution for a specified duration.',
          strict: false,
          parameters: {
            type: 'object',
            properties: { duration_ms: { type: 'number', description: 'How long to sleep in milliseconds.' } },
            required: ['duration_ms'],
            additionalProperties: false,
          },
        },
      ],
    },
    {
      type: 'namespace',
      name: 'collaboration',
      description: 'Tools for spawning and managing sub-agents.',
      tools: [
        {
          type: 'function',
          name: 'spawn_agent',
          strict: false,
          parameters: {
            type: 'object',
            properties: { task_name: { type: 'string' }, message: { type: 'string' } },
            required: ['task_name', 'message'],
            additionalProperties: false,
          },
        },
      ],
    },
  ],
}

const offered = ['functions__exec', 'functions__wait', 'clock__sleep', 'collaboration__spawn_agent']

/** A Codex 0.169 responses-lite body's fields besides input (captured), with no top-level `tools`. */
const liteBody = {
  tool_choice: 'auto',
  parallel_tool_calls: false,
  reasoning: { effort: 'high', context: 'all_turns' },
  store: false,
  include: ['reasoning.encrypted_content'],
  prompt_cache_key: '01a21c29-a234-7c11-bda7-a46e36b27134',
  text: { verbosity: 'low' },
}

const conversation = [
  { type: 'message', role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>' }] },
  { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'wait a moment, then say hi' }] },
]

const liteHeaders = { 'x-openai-internal-codex-responses-lite': 'true', originator: 'codex_exec' }

type UpstreamBody = { tools?: { name?: string; function?: { name: string } }[]; messages: unknown[] }

/** The tool names the upstream was offered, in its own dialect. */
function offeredNames(kind: 'anthropic' | 'openai-chat', body = onlyUpstreamBody(sim) as UpstreamBody): string[] {
  return (body.tools ?? []).map((tool) => (kind === 'anthropic' ? tool.name! : tool.function!.name))
}

const create = (openai: OpenAI, body: Record<string, unknown>) =>
  openai.responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming, {
    headers: liteHeaders,
  })

describe.each(['anthropic', 'openai-chat'] as const)('Codex responses-lite through a %s upstream', (kind) => {
  const model = upstreamModelFor[kind]

  test("the additional_tools item's tools are offered; a call comes back as a function_call under its namespace", async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.setScenario(model, { toolCall: { name: 'clock__sleep', arguments: { duration_ms: 500 } } })
    const response = await create(openai, {
      ...liteBody,
      model: profileFor[kind],
      input: [additionalTools, ...conversation],
    })
    expect(offeredNames(kind)).toEqual(offered)
    expect(response.output).toEqual([
      expect.objectContaining({
        type: 'function_call',
        namespace: 'clock',
        name: 'sleep',
        arguments: '{"duration_ms":500}',
      }),
    ])
  })

  test('streamed: a call to the custom exec comes back as a custom_tool_call in namespace functions', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    const code = 'const r = await tools.clock.sleep({duration_ms: 10}); text("done " + r)'
    sim.setScenario(model, { toolCall: { name: 'functions__exec', arguments: { input: code } } })
    const stream = await openai.responses.create(
      {
        ...liteBody,
        model: profileFor[kind],
        stream: true,
        input: [additionalTools, ...conversation],
      } as unknown as OpenAI.Responses.ResponseCreateParamsStreaming,
      { headers: liteHeaders },
    )
    const added: unknown[] = []
    let completed: OpenAI.Responses.Response | undefined
    for await (const event of stream) {
      if (event.type === 'response.output_item.added') added.push(event.item)
      if (event.type === 'response.completed') completed = event.response
    }
    expect(offeredNames(kind)).toEqual(offered)
    const call = { type: 'custom_tool_call', namespace: 'functions', name: 'exec' }
    expect(added).toEqual([expect.objectContaining(call)])
    expect(completed!.output).toEqual([expect.objectContaining({ ...call, input: code })])
  })

  test("Codex's next request, the item again first and the call in the history, still offers the tools", async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.setScenario(model, { text: 'hi' })
    const response = await create(openai, {
      ...liteBody,
      model: profileFor[kind],
      input: [
        additionalTools,
        ...conversation,
        {
          type: 'custom_tool_call',
          call_id: 'call_1',
          namespace: 'functions',
          name: 'exec',
          input: 'text("waited")',
        },
        {
          type: 'custom_tool_call_output',
          call_id: 'call_1',
          output: [{ type: 'input_text', text: 'Script completed' }],
        },
      ],
    })
    expect(response.output_text).toBe('hi')
    const body = onlyUpstreamBody(sim) as UpstreamBody
    expect(offeredNames(kind, body)).toEqual(offered)
    expect(JSON.stringify(body.messages)).toContain('"functions__exec"')
  })

  test('an additional_tools item svc cannot read is a 400 naming it, and nothing goes upstream', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    const unreadable = { type: 'additional_tools', role: 'developer', tools: { type: 'namespace' } }
    const refused = await create(openai, {
      ...liteBody,
      model: profileFor[kind],
      input: [unreadable, ...conversation],
    }).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(Error)
    expect(refused).toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error', param: 'input[0].tools' },
    })
    expect(sim.requests).toHaveLength(0)
  })
})
