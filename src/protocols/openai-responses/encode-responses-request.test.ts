import { describe, expect, test } from 'bun:test'
import type { ExchangeRequest, UserContentBlock } from '../../exchange/types'
import { encodeResponsesRequest } from './encode-responses-request'
import { tagResponsesSignature } from './reasoning-signature'

const request = (patch: Partial<ExchangeRequest>): ExchangeRequest => ({
  system: [],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  maxTokens: 1024,
  stream: true,
  ...patch,
})

describe('encodeResponsesRequest', () => {
  // Responses has no error flag for a tool's output: the model read a failed call's text as its result.
  test("a failed tool call's output says so in words, as the Chat encoder says it (§4.2)", () => {
    const result = (isError: boolean, content: UserContentBlock[]) =>
      request({
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', isError, content }] },
        ],
      })
    const outputOf = (req: ExchangeRequest) =>
      (encodeResponsesRequest(req, 'gpt-5')['input'] as Record<string, unknown>[]).find(
        (item) => item.type === 'function_call_output',
      )?.output
    const text = [{ type: 'text' as const, text: 'No such file: x' }]
    const image = { type: 'image' as const, source: { kind: 'base64' as const, mediaType: 'image/png', data: 'iVBOR' } }
    expect(outputOf(result(true, text))).toBe('Error: No such file: x')
    expect(outputOf(result(false, text))).toBe('No such file: x')
    expect(outputOf(result(true, [...text, image]))).toEqual([
      { type: 'input_text', text: 'Error:' },
      { type: 'input_text', text: 'No such file: x' },
      { type: 'input_image', image_url: 'data:image/png;base64,iVBOR', detail: 'auto' },
    ])
  })

  test('an Anthropic-shaped conversation becomes instructions and input items (§4.4)', () => {
    const body = encodeResponsesRequest(
      request({
        system: [
          { type: 'text', text: 'You are terse.' },
          { type: 'text', text: 'Use tools.', cacheControl: { type: 'ephemeral' } },
        ],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is in this picture, and the weather?' },
              { type: 'image', source: { kind: 'base64', mediaType: 'image/jpeg', data: '/9j/4AAQ' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Anthropic reasoning', signature: 'EqQBCkgIARABGAIiQL' },
              { type: 'thinking', thinking: 'OpenAI reasoning', signature: tagResponsesSignature('blob') },
              { type: 'text', text: 'A cat. Checking weather.' },
              { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', toolUseId: 'toolu_01', content: [{ type: 'text', text: '18°C' }] },
              { type: 'text', text: 'And tomorrow?' },
            ],
          },
        ],
        tools: [{ name: 'get_weather', description: 'Weather by city', inputSchema: { type: 'object' } }],
        toolChoice: { type: 'any', disableParallel: true },
        temperature: 0.5,
        topK: 5,
        stopSequences: ['END'],
        thinking: { type: 'enabled', budgetTokens: 4000 },
        user: 'user_1',
      }),
      'gpt-5',
    )
    expect(body).toEqual({
      model: 'gpt-5',
      instructions: 'You are terse.\n\nUse tools.',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in this picture, and the weather?' },
            { type: 'input_image', image_url: 'data:image/jpeg;base64,/9j/4AAQ', detail: 'auto' },
          ],
        },
        // Only OpenAI's own reasoning is replayed; Anthropic's signature means nothing to OpenAI.
        {
          type: 'reasoning',
          summary: [{ type: 'summary_text', text: 'OpenAI reasoning' }],
          encrypted_content: 'blob',
        },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'A cat. Checking weather.', annotations: [] }],
        },
        { type: 'function_call', call_id: 'toolu_01', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call_output', call_id: 'toolu_01', output: '18°C' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'And tomorrow?' }] },
      ],
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: 'Weather by city',
          parameters: { type: 'object' },
          strict: false,
        },
      ],
      tool_choice: 'required',
      parallel_tool_calls: false,
      max_output_tokens: 1024,
      temperature: 0.5,
      reasoning: { effort: 'medium', summary: 'auto' },
      include: ['reasoning.encrypted_content'],
      safety_identifier: 'user_1',
      stream: true,
      store: false,
    })
  })

  test.each([
    [{ type: 'auto' }, { tool_choice: 'auto' }],
    [{ type: 'none' }, { tool_choice: 'none' }],
    [{ type: 'tool', name: 'f' }, { tool_choice: { type: 'function', name: 'f' } }],
  ] as const)('tool choice %j', (toolChoice, expected) => {
    const tools = [{ name: 'f', inputSchema: { type: 'object' } }]
    expect(encodeResponsesRequest(request({ toolChoice, tools }), 'm')).toMatchObject(expected)
    // No tools (an allowed_tools choice left none of those offered): no choice, which would be refused.
    const bare = encodeResponsesRequest(request({ toolChoice }), 'm')
    expect(['tools', 'tool_choice'].filter((key) => key in bare)).toEqual([])
  })

  test.each([
    [{ type: 'enabled', budgetTokens: 1024 }, 'low'],
    [{ type: 'enabled', budgetTokens: 8192 }, 'medium'],
    [{ type: 'enabled', budgetTokens: 20000 }, 'high'],
    [{ type: 'adaptive', effort: 'xhigh' }, 'xhigh'],
    [{ type: 'adaptive' }, 'medium'],
  ] as const)('thinking %j → effort %s', (thinking, effort) => {
    expect(encodeResponsesRequest(request({ thinking }), 'm')['reasoning']).toEqual({ effort, summary: 'auto' })
  })

  test('a tool the client marked strict goes strict; any other goes strict:false', () => {
    const schema = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    }
    const body = encodeResponsesRequest(
      request({
        tools: [
          { name: 'strict_one', inputSchema: schema, strict: true },
          { name: 'loose_one', inputSchema: schema },
        ],
      }),
      'm',
    )
    expect((body['tools'] as { strict: boolean }[]).map((tool) => tool.strict)).toEqual([true, false])
  })

  // The next turn's blob is what keeps OpenAI's reasoning going through a tool loop.
  test('a turn replaying OpenAI reasoning asks for the next blob, even with no thinking asked for', () => {
    const body = encodeResponsesRequest(
      request({
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'look it up', signature: tagResponsesSignature('blob') },
              { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} },
            ],
          },
          {
            role: 'user',
            content: [{ type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'text', text: 'sunny' }] }],
          },
        ],
      }),
      'm',
    )
    expect(body['reasoning']).toBeUndefined()
    expect(body['include']).toEqual(['reasoning.encrypted_content'])
  })

  test('disabled thinking sends no reasoning; tool results with images keep parts; long user ids are hashed', () => {
    const body = encodeResponsesRequest(
      request({
        thinking: { type: 'disabled' },
        user: 'user_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef_account__session_x',
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                toolUseId: 'call_1',
                content: [
                  { type: 'text', text: 'screenshot:' },
                  { type: 'image', source: { kind: 'url', url: 'https://example.com/s.png' } },
                ],
              },
            ],
          },
        ],
      }),
      'm',
    )
    expect(body['reasoning']).toBeUndefined()
    expect(body['include']).toBeUndefined()
    expect(body['input']).toEqual([
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [
          { type: 'input_text', text: 'screenshot:' },
          { type: 'input_image', image_url: 'https://example.com/s.png', detail: 'auto' },
        ],
      },
    ])
    expect(body['safety_identifier']).toMatch(/^[0-9a-f]{64}$/)
  })

  test('response formats go in text.format, flat, with a name', () => {
    const weather = { type: 'object', properties: { city: { type: 'string' } } }
    expect(
      encodeResponsesRequest(request({ responseFormat: { type: 'json_schema', schema: weather } }), 'm')['text'],
    ).toEqual({ format: { type: 'json_schema', name: 'output', schema: weather } })
    expect(
      encodeResponsesRequest(
        request({ responseFormat: { type: 'json_schema', name: 'weather', schema: weather, strict: false } }),
        'm',
      )['text'],
    ).toEqual({ format: { type: 'json_schema', name: 'weather', schema: weather, strict: false } })
    expect(encodeResponsesRequest(request({ responseFormat: { type: 'json_object' } }), 'm')['text']).toEqual({
      format: { type: 'json_object' },
    })
    expect(encodeResponsesRequest(request({}), 'm')).not.toHaveProperty('text')
  })

  test('documents: a PDF is an input_file with file_data, a link one with file_url (its title the filename), a text document text', () => {
    const body = encodeResponsesRequest(
      request({
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'document',
                title: 'Q3',
                source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBER' },
              },
              { type: 'document', source: { kind: 'url', url: 'https://example.com/spec.pdf' } },
              { type: 'document', title: 'Q3 report.pdf', source: { kind: 'url', url: 'https://example.com/q3.pdf' } },
              { type: 'document', title: 'Notes', source: { kind: 'text', text: 'Body.' } },
            ],
          },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'fetch', input: {} }] },
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                toolUseId: 'call_1',
                content: [{ type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'QQ==' } }],
              },
            ],
          },
        ],
      }),
      'm',
    )
    expect(body['input']).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_file', filename: 'Q3', file_data: 'data:application/pdf;base64,JVBER' },
          { type: 'input_file', file_url: 'https://example.com/spec.pdf' },
          { type: 'input_file', filename: 'Q3 report.pdf', file_url: 'https://example.com/q3.pdf' },
          { type: 'input_text', text: 'Notes\n\nBody.' },
        ],
      },
      { type: 'function_call', call_id: 'call_1', name: 'fetch', arguments: '{}' },
      {
        type: 'function_call_output',
        call_id: 'call_1',
        output: [{ type: 'input_file', filename: 'document.pdf', file_data: 'data:application/pdf;base64,QQ==' }],
      },
    ])
  })

  test('an image keeps its detail as given, and is auto when none was chosen', () => {
    const url = 'https://example.com/a.png'
    const body = encodeResponsesRequest(
      request({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: { kind: 'url', url }, detail: 'original' },
              { type: 'image', source: { kind: 'url', url }, detail: 'low' },
              { type: 'image', source: { kind: 'url', url } },
            ],
          },
        ],
      }),
      'm',
    )
    expect(body['input']).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_image', image_url: url, detail: 'original' },
          { type: 'input_image', image_url: url, detail: 'low' },
          { type: 'input_image', image_url: url, detail: 'auto' },
        ],
      },
    ])
  })
})

describe('encodeResponsesRequest: web search', () => {
  test('becomes the hosted web_search tool after the functions, and asks for its sources', () => {
    const body = encodeResponsesRequest(
      request({
        tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }],
        webSearch: {
          maxUses: 5,
          allowedDomains: ['example.com'],
          userLocation: { city: 'Lyon', country: 'FR', timezone: 'Europe/Paris' },
        },
        toolChoice: { type: 'tool', name: 'get_weather' },
        thinking: { type: 'adaptive', effort: 'low' },
      }),
      'gpt-5',
    )
    expect(body).toMatchObject({
      tools: [
        { type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false },
        {
          type: 'web_search',
          filters: { allowed_domains: ['example.com'] },
          user_location: { type: 'approximate', city: 'Lyon', country: 'FR', timezone: 'Europe/Paris' },
        },
      ],
      // A function named by the client is still the one forced.
      tool_choice: { type: 'function', name: 'get_weather' },
      include: ['reasoning.encrypted_content', 'web_search_call.action.sources'],
    })
    // max_uses has no equivalent.
    expect(JSON.stringify(body)).not.toContain('max_uses')
  })

  test('alone: the bare tool, and include holds only the sources', () => {
    const body = encodeResponsesRequest(request({ webSearch: {} }), 'gpt-5')
    expect(body['tools']).toEqual([{ type: 'web_search' }])
    expect(body['include']).toEqual(['web_search_call.action.sources'])
    expect(encodeResponsesRequest(request({}), 'gpt-5')).not.toHaveProperty('tools')
  })

  test('a tool_choice naming the server tool forces the search through allowed_tools', () => {
    const forced = encodeResponsesRequest(
      request({ webSearch: {}, toolChoice: { type: 'tool', name: 'web_search', disableParallel: true } }),
      'gpt-5',
    )
    expect(forced).toMatchObject({
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'web_search' }] },
      parallel_tool_calls: false,
    })
    // A function of that name is the client's own tool: it stays a function choice.
    const own = encodeResponsesRequest(
      request({
        tools: [{ name: 'web_search', inputSchema: { type: 'object' } }],
        webSearch: {},
        toolChoice: { type: 'tool', name: 'web_search' },
      }),
      'gpt-5',
    )
    expect(own['tool_choice']).toEqual({ type: 'function', name: 'web_search' })
  })
})

describe('encodeResponsesRequest for a Responses-compatible server (compatible: openai_itself off)', () => {
  const compatible = { compatible: true }

  test('no hosted search, and no tool choice forcing it: the server takes function tools only', () => {
    const body = encodeResponsesRequest(
      request({
        tools: [{ name: 'get_weather', inputSchema: { type: 'object' } }],
        webSearch: {},
        toolChoice: { type: 'tool', name: 'web_search' },
      }),
      'gpt-oss-120b',
      compatible,
    )
    expect(body['tools']).toEqual([
      { type: 'function', name: 'get_weather', parameters: { type: 'object' }, strict: false },
    ])
    expect(body).not.toHaveProperty('tool_choice')
    expect(body).not.toHaveProperty('include')
  })

  test("a tool loop's thinking goes back as reasoning text, whoever thought it; none as OpenAI's blob; messages with an id and a status", () => {
    const loop = request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
        { role: 'assistant', content: [{ type: 'text', text: 'Let me look.' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'The server model thought this.' },
            { type: 'thinking', thinking: 'OpenAI thought this.', signature: tagResponsesSignature('gAAAA-blob') },
            { type: 'thinking', thinking: '' },
            { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Oslo' } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'text', text: 'sun' }] }],
        },
      ],
    })
    // The text where llama.cpp and vLLM read it; never in encrypted_content, which vLLM refuses.
    const reasoning = (text: string, at: number) => ({
      type: 'reasoning',
      id: `rs_${at}`,
      summary: [],
      content: [{ type: 'reasoning_text', text }],
    })
    expect(encodeResponsesRequest(loop, 'gpt-oss-120b', compatible)['input']).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'weather?' }] },
      // vLLM before 0.21 refuses an assistant message without both.
      {
        type: 'message',
        role: 'assistant',
        id: 'msg_1',
        status: 'completed',
        content: [{ type: 'output_text', text: 'Let me look.', annotations: [] }],
      },
      // One reasoning item a turn: llama.cpp and Ollama keep only a turn's last.
      reasoning('The server model thought this.\n\nOpenAI thought this.', 2),
      { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'sun' },
    ])
    // Ollama reads the thinking only from encrypted_content, where it wrote it as plain text.
    const ollama = encodeResponsesRequest(loop, 'gpt-oss:20b', { compatible: true, reasoningInEncryptedContent: true })
    expect((ollama['input'] as unknown[])[2]).toEqual({
      ...reasoning('The server model thought this.\n\nOpenAI thought this.', 2),
      encrypted_content: 'The server model thought this.\n\nOpenAI thought this.',
    })
    // OpenAI itself gets back only its own blob, and no text it cannot vouch for.
    const reasoningItems = (encodeResponsesRequest(loop, 'gpt-5')['input'] as Record<string, unknown>[]).filter(
      (item) => item.type === 'reasoning',
    )
    expect(reasoningItems).toEqual([
      {
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'OpenAI thought this.' }],
        encrypted_content: 'gAAAA-blob',
      },
    ])
  })

  test("a tool's image goes after the outputs, as a user message: llama.cpp takes a tool's output as text only", () => {
    const image = { type: 'image' as const, source: { kind: 'url' as const, url: 'https://example.com/shot.png' } }
    const results = request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'look' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_1', name: 'view_image', input: {} },
            { type: 'tool_use', id: 'call_2', name: 'view_image', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolUseId: 'call_1', content: [image] },
            { type: 'tool_result', toolUseId: 'call_2', content: [{ type: 'text', text: 'second' }, image] },
            // Claude Code's reminder after the results: the images go before it, beside their results.
            { type: 'text', text: '<system-reminder>…</system-reminder>' },
          ],
        },
      ],
    })
    expect((encodeResponsesRequest(results, 'qwen', compatible)['input'] as unknown[]).slice(3)).toEqual([
      { type: 'function_call_output', call_id: 'call_1', output: 'The tool returned what follows.' },
      { type: 'function_call_output', call_id: 'call_2', output: 'second' },
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_text', text: 'Returned by tool call call_1:' },
          { type: 'input_image', image_url: 'https://example.com/shot.png', detail: 'auto' },
          { type: 'input_text', text: 'Returned by tool call call_2:' },
          { type: 'input_image', image_url: 'https://example.com/shot.png', detail: 'auto' },
        ],
      },
      {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: '<system-reminder>…</system-reminder>' }],
      },
    ])
    // OpenAI itself takes the image in the output.
    const direct = encodeResponsesRequest(results, 'gpt-5')['input'] as Record<string, unknown>[]
    expect(direct[3]).toEqual({
      type: 'function_call_output',
      call_id: 'call_1',
      output: [{ type: 'input_image', image_url: 'https://example.com/shot.png', detail: 'auto' }],
    })
  })

  test("this server's own blobs go back to it, one item each; another server's, and OpenAI's, never", () => {
    const turn = request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'First.', signature: tagResponsesSignature('blob-1', 'router') },
            { type: 'thinking', thinking: 'Second.', signature: tagResponsesSignature('blob-2', 'router') },
            { type: 'thinking', thinking: 'Elsewhere.', signature: tagResponsesSignature('blob-x', 'other') },
            { type: 'thinking', thinking: 'OpenAI.', signature: tagResponsesSignature('gAAAA-openai') },
            { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
          ],
        },
      ],
    })
    const input = encodeResponsesRequest(turn, 'm', { compatible: true, provider: 'router' })['input'] as unknown[]
    expect(input.slice(1, 4)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'First.' }],
        encrypted_content: 'blob-1',
      },
      {
        type: 'reasoning',
        id: 'rs_2',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'Second.' }],
        encrypted_content: 'blob-2',
      },
      {
        type: 'reasoning',
        id: 'rs_3',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'Elsewhere.\n\nOpenAI.' }],
      },
    ])
  })

  test('an own blob with no words still goes back; Ollama’s (its text) is merged with the turn', () => {
    const turn = request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: '', signature: tagResponsesSignature('blob-0', 'router') },
            { type: 'tool_use', id: 'call_1', name: 'f', input: {} },
          ],
        },
      ],
    })
    expect(
      (encodeResponsesRequest(turn, 'm', { compatible: true, provider: 'router' })['input'] as unknown[])[1],
    ).toEqual({
      type: 'reasoning',
      id: 'rs_1',
      summary: [],
      content: [{ type: 'reasoning_text', text: '' }],
      encrypted_content: 'blob-0',
    })
    const ollama = request({
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'One.', signature: tagResponsesSignature('One.', 'ollama') },
            { type: 'thinking', thinking: 'Two.', signature: tagResponsesSignature('Two.', 'ollama') },
          ],
        },
      ],
    })
    const options = { compatible: true, provider: 'ollama', reasoningInEncryptedContent: true }
    expect((encodeResponsesRequest(ollama, 'm', options)['input'] as unknown[]).slice(1)).toEqual([
      {
        type: 'reasoning',
        id: 'rs_1',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'One.\n\nTwo.' }],
        encrypted_content: 'One.\n\nTwo.',
      },
    ])
  })
})
