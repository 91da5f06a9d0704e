// End to end with the openai SDK: a Responses client's custom (freeform) tool — Codex's apply_patch
// for GPT models, with its Lark grammar — reaches Anthropic and Chat upstreams as a function of one
// string argument, the model's call to it comes back as a custom_tool_call of that text (streamed
// as it comes), and custom tool history goes upstream as the tool call and result it was.
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

/** Codex 0.169's apply_patch as it sends it for a GPT-5 model (captured), grammar shortened. */
const grammar = 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF\nend_patch: "*** End Patch" LF?'
const applyPatch = {
  type: 'custom',
  name: 'apply_patch',
  description:
    'The `apply_patch` tool can be used to edit files. This is a FREEFORM tool, so do not wrap the patch in JSON.',
  format: { type: 'grammar', syntax: 'lark', definition: grammar },
}
const tools = [
  { type: 'function', name: 'exec_command', parameters: { type: 'object', properties: { cmd: { type: 'string' } } } },
  applyPatch,
] as unknown as OpenAI.Responses.Tool[]

// Quotes, backslashes, tabs and a character outside the BMP: each is escaped in the JSON the model
// sends its arguments as, and some fall across the simulator's fragments of it.
const patch = '*** Begin Patch\n*** Add File: notes.md\n+say "hi" \\ to\tall 🎉\n*** End Patch\n'

type UpstreamTool = {
  name?: string
  description?: string
  input_schema?: unknown
  function?: { name: string; description?: string; parameters?: unknown }
}

/** The upstream's offer of apply_patch, in its own dialect's field names. */
function offeredApplyPatch(kind: 'anthropic' | 'openai-chat') {
  const body = onlyUpstreamBody(sim) as { tools: UpstreamTool[] }
  const offered = body.tools.map((tool) =>
    kind === 'anthropic'
      ? { name: tool.name, description: tool.description, schema: tool.input_schema }
      : { name: tool.function!.name, description: tool.function!.description, schema: tool.function!.parameters },
  )
  expect(offered.map((tool) => tool.name)).toEqual(['exec_command', 'apply_patch'])
  return offered[1]!
}

describe.each(['anthropic', 'openai-chat'] as const)('custom tools through a %s upstream', (kind) => {
  const model = upstreamModelFor[kind]
  const call = { name: 'apply_patch', arguments: { input: patch } }

  test('offered as a function of one string with the grammar told; the call comes back as custom_tool_call', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.setScenario(model, { toolCall: call })
    const response = await openai.responses.create({ model: profileFor[kind], input: 'add notes', tools })

    const offered = offeredApplyPatch(kind)
    expect(offered.schema).toEqual({
      type: 'object',
      properties: { input: { type: 'string', description: 'The text itself, not wrapped in JSON of its own.' } },
      required: ['input'],
      additionalProperties: false,
    })
    expect(offered.description).toStartWith(applyPatch.description)
    expect(offered.description).toContain(`The input must match this lark grammar:\n${grammar}`)
    expect(offered.description).toEndWith('Give the text whole as the one argument, `input`.')

    expect(response.output).toHaveLength(1)
    const item = response.output[0] as OpenAI.Responses.ResponseCustomToolCall
    expect(item).toEqual(
      expect.objectContaining({ type: 'custom_tool_call', name: 'apply_patch', input: patch, status: 'completed' }),
    )
    expect(item.id).toStartWith('ctc_')
    expect(item.call_id).toBeString()
    expect(item).not.toHaveProperty('arguments')
  })

  test('streamed: the text arrives in custom_tool_call_input deltas as the upstream sends it', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.setScenario(model, { toolCall: call })
    const stream = await openai.responses.create({ model: profileFor[kind], input: 'add notes', tools, stream: true })
    const deltas: string[] = []
    const types: string[] = []
    let added: unknown
    let done: string | undefined
    let completed: OpenAI.Responses.Response | undefined
    for await (const event of stream) {
      types.push(event.type)
      if (event.type === 'response.output_item.added') added = event.item
      if (event.type === 'response.custom_tool_call_input.delta') deltas.push(event.delta)
      if (event.type === 'response.custom_tool_call_input.done') done = event.input
      if (event.type === 'response.completed') completed = event.response
    }
    expect(added).toEqual(expect.objectContaining({ type: 'custom_tool_call', name: 'apply_patch', input: '' }))
    // The simulator sends the arguments' JSON in three pieces: the text follows each, not all at the end.
    expect(deltas.length).toBeGreaterThanOrEqual(2)
    expect(deltas.join('')).toBe(patch)
    expect(done).toBe(patch)
    expect(types).not.toContain('response.function_call_arguments.delta')
    expect(types.slice(types.indexOf('response.custom_tool_call_input.done'))).toEqual([
      'response.custom_tool_call_input.done',
      'response.output_item.done',
      'response.completed',
    ])
    expect(completed!.output).toEqual([
      expect.objectContaining({ type: 'custom_tool_call', name: 'apply_patch', input: patch, status: 'completed' }),
    ])
  })

  test('custom tool history goes upstream as the call and result it was; a forced choice names it', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    await openai.responses.create({
      model: profileFor[kind],
      tools,
      tool_choice: { type: 'custom', name: 'apply_patch' },
      input: [
        { role: 'user', content: 'add notes' },
        { type: 'custom_tool_call', call_id: 'call_patch1', name: 'apply_patch', input: patch },
        { type: 'custom_tool_call_output', call_id: 'call_patch1', output: 'Success. Updated: A notes.md' },
      ],
    })
    const body = onlyUpstreamBody(sim) as { messages: Record<string, unknown>[]; tool_choice: unknown }
    if (kind === 'anthropic') {
      expect(body.messages.slice(1)).toEqual([
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'call_patch1', name: 'apply_patch', input: { input: patch } }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'call_patch1',
              content: [{ type: 'text', text: 'Success. Updated: A notes.md' }],
            },
          ],
        },
      ])
      expect(body.tool_choice).toEqual({ type: 'tool', name: 'apply_patch' })
    } else {
      const [assistant, result] = body.messages.slice(1)
      expect(assistant!.tool_calls).toEqual([
        {
          id: 'call_patch1',
          type: 'function',
          function: { name: 'apply_patch', arguments: JSON.stringify({ input: patch }) },
        },
      ])
      expect(result).toEqual(
        expect.objectContaining({ role: 'tool', tool_call_id: 'call_patch1', content: 'Success. Updated: A notes.md' }),
      )
      expect(body.tool_choice).toEqual({ type: 'function', function: { name: 'apply_patch' } })
    }
  })

  test('a custom tool in a namespace: offered under the joined name, called back under its namespace', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.setScenario(model, { toolCall: { name: 'notes__append', arguments: { input: 'one line' } } })
    const namespaced = [
      {
        type: 'namespace',
        name: 'notes',
        description: 'Notes.',
        tools: [{ type: 'custom', name: 'append', description: 'Append a line.' }],
      },
    ] as unknown as OpenAI.Responses.Tool[]
    const response = await openai.responses.create({ model: profileFor[kind], input: 'note it', tools: namespaced })
    const body = onlyUpstreamBody(sim) as { tools: UpstreamTool[] }
    const offered = body.tools.map((tool) => tool.name ?? tool.function!.name)
    expect(offered).toEqual(['notes__append'])
    expect(response.output).toEqual([
      expect.objectContaining({ type: 'custom_tool_call', namespace: 'notes', name: 'append', input: 'one line' }),
    ])
  })

  test('a model that calls with other arguments: the client gets their JSON as the text', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.setScenario(model, { toolCall: { name: 'apply_patch', arguments: { patch: 'x' } } })
    const stream = await openai.responses.create({ model: profileFor[kind], input: 'add notes', tools, stream: true })
    const deltas: string[] = []
    let completed: OpenAI.Responses.Response | undefined
    for await (const event of stream) {
      if (event.type === 'response.custom_tool_call_input.delta') deltas.push(event.delta)
      if (event.type === 'response.completed') completed = event.response
    }
    expect(deltas).toEqual(['{"patch":"x"}'])
    expect(completed!.output).toEqual([expect.objectContaining({ type: 'custom_tool_call', input: '{"patch":"x"}' })])
  })
})

test('to a Responses upstream, custom tools and their history pass as the client sent them', async () => {
  const { openai } = sdkClients(await translationGateway(sim))
  const input = [
    { role: 'user', content: 'add notes' },
    { type: 'custom_tool_call', call_id: 'call_patch1', name: 'apply_patch', input: patch },
    { type: 'custom_tool_call_output', call_id: 'call_patch1', output: 'Done' },
  ] as OpenAI.Responses.ResponseInputItem[]
  await openai.responses.create({ model: profileFor['openai-responses'], input, tools })
  const body = onlyUpstreamBody(sim) as { tools: unknown; input: unknown }
  expect(body.tools).toEqual(tools)
  expect(body.input).toEqual(input)
})

describe('custom tool history a Responses client gets wrong is a 400 in its own error shape', () => {
  test.each([
    [
      'a call whose input is not text',
      { type: 'custom_tool_call', call_id: 'c1', name: 'apply_patch', input: { a: 1 } },
      'input[1].input',
    ],
    ['a call without a call_id', { type: 'custom_tool_call', name: 'apply_patch', input: 'x' }, 'input[1].call_id'],
    ['an output without its text', { type: 'custom_tool_call_output', call_id: 'c1' }, 'input[1].output'],
  ])('%s', async (_, item, param) => {
    const h = await translationGateway(sim)
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: profileFor.anthropic, tools, input: [{ role: 'user', content: 'hi' }, item] },
    })
    expect(res.status).toBe(400)
    const body = await res.json()
    expect(body.error).toEqual(expect.objectContaining({ type: 'invalid_request_error', param }))
    expect(sim.requests).toHaveLength(0)
  })
})
