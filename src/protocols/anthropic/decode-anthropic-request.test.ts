import { describe, expect, test } from 'bun:test'
import type { ExchangeRequest } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { readFixture } from '../fixture-streams'
import { decodeAnthropicRequest } from './decode-anthropic-request'

const base = { model: 'm', max_tokens: 100 }
const decodeMessages = (messages: unknown[]) => decodeAnthropicRequest({ ...base, messages })

const claudeCodeExchange: ExchangeRequest = {
  system: [
    {
      type: 'text',
      text: "You are Claude Code, Anthropic's official CLI for Claude.",
      cacheControl: { type: 'ephemeral' },
    },
    { type: 'text', text: 'Be concise.', cacheControl: { type: 'ephemeral', ttl: '1h' } },
    { type: 'text', text: 'Session context: repo at /work.' },
  ],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: '<system-reminder>The todo list is empty.</system-reminder>' },
        {
          type: 'text',
          text: 'What is in this image, and the weather in Paris?',
          cacheControl: { type: 'ephemeral' },
        },
        { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
      ],
    },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Need the weather tool and the notes.', signature: 'EqQBCkgIARABGAIiQLsig' },
        { type: 'text', text: 'A cat. Checking the weather.' },
        { type: 'tool_use', id: 'toolu_01A', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'toolu_01B', name: 'Read', input: { file_path: '/work/notes.txt' } },
      ],
    },
    {
      role: 'user',
      content: [
        { type: 'tool_result', toolUseId: 'toolu_01A', content: [{ type: 'text', text: '18°C, cloudy' }] },
        {
          type: 'tool_result',
          toolUseId: 'toolu_01B',
          isError: true,
          content: [
            { type: 'text', text: 'File is an image:' },
            { type: 'image', source: { kind: 'url', url: 'https://example.com/notes.png' } },
          ],
        },
        { type: 'text', text: 'Thanks, continue.', cacheControl: { type: 'ephemeral' } },
      ],
    },
  ],
  tools: [
    {
      name: 'get_weather',
      description: 'Weather by city',
      inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      cacheControl: { type: 'ephemeral' },
    },
    {
      name: 'Read',
      description: 'Read a file',
      inputSchema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
    },
  ],
  webSearch: { maxUses: 5 },
  toolChoice: { type: 'auto' },
  maxTokens: 32000,
  temperature: 1,
  thinking: { type: 'adaptive', effort: 'high' },
  stream: true,
  user: '{"device_id":"d-1","account_uuid":"a-1","session_id":"s-1"}',
}

describe('decodeAnthropicRequest', () => {
  test('a Claude-Code-like request', async () => {
    const body = JSON.parse(await readFixture('anthropic/claude-code-request.json'))
    expect(decodeAnthropicRequest(body)).toEqual(claudeCodeExchange)
  })

  // Anthropic's strict tools may leave properties optional, which OpenAI's strict mode refuses (a 400):
  // such a tool goes unstrict rather than fail the request there.
  test('a tool marked strict stays strict where OpenAI takes its schema so; strict: false is the default', () => {
    const schema = {
      type: 'object',
      properties: {
        path: { type: 'string' },
        opts: { type: 'object', properties: {}, additionalProperties: false, required: [] },
      },
      required: ['path', 'opts'],
      additionalProperties: false,
    }
    const optional = { type: 'object', properties: { path: { type: 'string' } }, additionalProperties: false }
    const tools = [
      { name: 'a', input_schema: schema, strict: true },
      { name: 'b', input_schema: schema, strict: false },
      { name: 'c', input_schema: schema },
      { name: 'd', input_schema: optional, strict: true },
    ]
    expect(decodeAnthropicRequest({ ...base, tools, messages: [{ role: 'user', content: 'hi' }] }).tools).toEqual([
      { name: 'a', inputSchema: schema, strict: true },
      { name: 'b', inputSchema: schema },
      { name: 'c', inputSchema: schema },
      { name: 'd', inputSchema: optional },
    ])
  })

  test("Claude Code's tool search: a deferred tool is offered once a tool_reference loaded it, the result says so", () => {
    const schema = { type: 'object', properties: {} }
    const tools = [
      { name: 'ToolSearch', input_schema: schema },
      {
        name: 'DeferredToolPlaceholder',
        description: 'Never call this tool',
        input_schema: schema,
        defer_loading: true,
      },
      { name: 'WebFetch', input_schema: schema, defer_loading: true },
    ]
    const ask = { role: 'user', content: 'fetch example.com' }
    const before = decodeAnthropicRequest({ ...base, tools, messages: [ask] })
    expect(before.tools.map((t) => t.name)).toEqual(['ToolSearch'])
    const search = { type: 'tool_use', id: 't1', name: 'ToolSearch', input: { query: 'select:WebFetch' } }
    const loaded = { type: 'tool_reference', tool_name: 'WebFetch' }
    const after = decodeAnthropicRequest({
      ...base,
      tools,
      messages: [
        ask,
        { role: 'assistant', content: [search] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [loaded] }] },
      ],
    })
    expect(after.tools.map((t) => t.name)).toEqual(['ToolSearch', 'WebFetch'])
    expect(after.messages[2]!.content).toEqual([
      {
        type: 'tool_result',
        toolUseId: 't1',
        content: [{ type: 'text', text: 'Tool WebFetch loaded: it can be called now.' }],
      },
    ])
  })

  test("Claude Code's billing line, Anthropic's alone, does not open a translated prompt", () => {
    const line = 'x-anthropic-billing-header: cc_version=2.1.330.440; cc_entrypoint=sdk-cli;'
    const request = decodeAnthropicRequest({
      ...base,
      system: [
        { type: 'text', text: line },
        { type: 'text', text: 'You are Claude Code.' },
      ],
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(request.system).toEqual([{ type: 'text', text: 'You are Claude Code.' }])
  })

  test('minimal request: string content, defaults', () => {
    expect(decodeMessages([{ role: 'user', content: 'hi' }])).toEqual({
      system: [],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
      tools: [],
      maxTokens: 100,
      stream: false,
    })
  })

  test('generation controls, enabled thinking, tool choice and stop sequences', () => {
    const request = decodeAnthropicRequest({
      ...base,
      system: 'Be terse.',
      messages: [{ role: 'user', content: 'hi' }],
      thinking: { type: 'enabled', budget_tokens: 2048 },
      tool_choice: { type: 'tool', name: 'f', disable_parallel_tool_use: true },
      stop_sequences: ['###', 7],
      top_p: 0.9,
      top_k: 40,
    })
    expect(request).toMatchObject({
      system: [{ type: 'text', text: 'Be terse.' }],
      thinking: { type: 'enabled', budgetTokens: 2048 },
      toolChoice: { type: 'tool', name: 'f', disableParallel: true },
      stopSequences: ['###'],
      topP: 0.9,
      topK: 40,
    })
    expect(decodeAnthropicRequest({ ...base, messages: [], thinking: { type: 'disabled' } }).thinking).toEqual({
      type: 'disabled',
    })
    expect(decodeAnthropicRequest({ ...base, messages: [], thinking: { type: 'adaptive' } }).thinking).toEqual({
      type: 'adaptive',
    })
  })

  test('documents keep their source and title, Files API ones their file_id; search results their text; unknown and server blocks are skipped', () => {
    const request = decodeMessages([
      {
        role: 'user',
        content: [
          { type: 'document', title: 'Spec', source: { type: 'text', media_type: 'text/plain', data: 'Body.' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } },
          { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'Inline.' }] } },
          { type: 'document', title: 'Note', source: { type: 'content', content: 'A string.' } },
          { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } },
          { type: 'document', source: { type: 'file', file_id: 'file_1' } },
          {
            type: 'search_result',
            source: 'https://example.com',
            title: 'Result',
            content: [{ type: 'text', text: 'Found.' }],
          },
          { type: 'image', source: { type: 'file', file_id: 'file_1' } },
          { type: 'video', url: 'x' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: {} },
          { type: 'redacted_thinking', data: 'opaque' },
        ],
      },
    ])
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'document', title: 'Spec', source: { kind: 'text', text: 'Body.' } },
          { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBER' } },
          { type: 'text', text: 'Inline.' },
          { type: 'document', title: 'Note', source: { kind: 'text', text: 'A string.' } },
          { type: 'document', source: { kind: 'url', url: 'https://example.com/a.pdf' } },
          {
            type: 'document',
            source: { kind: 'file', fileId: 'file_1', param: 'messages.0.content.5.source.file_id' },
          },
          { type: 'text', text: 'Result\nhttps://example.com\n\nFound.' },
          { type: 'image', source: { kind: 'file', fileId: 'file_1', param: 'messages.0.content.7.source.file_id' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'opaque' }] },
    ])
  })

  test('documents inside a tool_result are kept, with their cache marker', () => {
    const pdf = { type: 'base64', media_type: 'application/pdf', data: 'JVBER' }
    const request = decodeMessages([
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 't',
            content: [{ type: 'document', source: pdf, title: 'Out', cache_control: { type: 'ephemeral' } }],
          },
        ],
      },
    ])
    expect(request.messages[0]?.content).toEqual([
      {
        type: 'tool_result',
        toolUseId: 't',
        content: [
          {
            type: 'document',
            title: 'Out',
            source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBER' },
            cacheControl: { type: 'ephemeral' },
          },
        ],
      },
    ])
  })

  test('tool_result without content, thinking without signature', () => {
    const request = decodeMessages([
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't' }] },
    ])
    expect(request.messages).toEqual([
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'hm' }] },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 't', content: [] }] },
    ])
  })

  const broken: [string, unknown[], string][] = [
    ['content neither string nor array', [{ role: 'user', content: 5 }], 'messages.0.content'],
    [
      'tool_use without id',
      [{ role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }],
      'messages.0.content.0.id',
    ],
    [
      'tool_result without tool_use_id',
      [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }],
      'messages.0.content.0.tool_use_id',
    ],
    ['a block that is not an object', [{ role: 'user', content: ['text'] }], 'messages.0.content.0'],
    ['text block without text', [{ role: 'user', content: [{ type: 'text' }] }], 'messages.0.content.0.text'],
    ['an unknown role', [{ role: 'tool', content: 'x' }], 'messages.0.role'],
    ['a message that is not an object', ['hi'], 'messages.0'],
    [
      'base64 image without data',
      [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png' } }] }],
      'messages.0.content.0.source.data',
    ],
    [
      'document without a source',
      [{ role: 'user', content: [{ type: 'document', title: 'x' }] }],
      'messages.0.content.0.source',
    ],
    [
      'base64 document without data',
      [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf' } }] }],
      'messages.0.content.0.source.data',
    ],
    [
      'url document without a url',
      [{ role: 'user', content: [{ type: 'document', source: { type: 'url' } }] }],
      'messages.0.content.0.source.url',
    ],
    [
      'Files API image without a file_id',
      [{ role: 'user', content: [{ type: 'image', source: { type: 'file' } }] }],
      'messages.0.content.0.source.file_id',
    ],
    [
      'content document whose content is a number',
      [{ role: 'user', content: [{ type: 'document', source: { type: 'content', content: 5 } }] }],
      'messages.0.content.0.source.content',
    ],
  ]
  for (const [name, messages, param] of broken) {
    test(`invalid_request naming the field: ${name}`, () => {
      let error: unknown
      try {
        decodeMessages(messages)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(GatewayError)
      expect(error).toMatchObject({ kind: 'invalid_request', status: 400, param })
      expect((error as GatewayError).message).toStartWith(`${param}:`)
    })
  }

  test('output_config.format becomes the response format, beside adaptive thinking and its effort', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
    const request = decodeAnthropicRequest({
      ...base,
      messages: [],
      thinking: { type: 'adaptive' },
      output_config: { effort: 'high', format: { type: 'json_schema', schema } },
    })
    expect(request.responseFormat).toEqual({ type: 'json_schema', schema })
    expect(request.thinking).toEqual({ type: 'adaptive', effort: 'high' })
    expect(decodeAnthropicRequest({ ...base, messages: [], output_config: { format: null } })).not.toHaveProperty(
      'responseFormat',
    )
  })

  test.each([
    [{ type: 'json_object' }, 'output_config.format'],
    ['json', 'output_config.format'],
    [{ type: 'json_schema' }, 'output_config.format.schema'],
  ])('output_config.format %j is refused naming %s', (format, param) => {
    expect(() => decodeAnthropicRequest({ ...base, messages: [], output_config: { format } })).toThrow(
      expect.objectContaining({ kind: 'invalid_request', status: 400, param }),
    )
  })

  test('the tools only Anthropic has are named by type, for the router; code execution is dropped unnamed', () => {
    const request = decodeAnthropicRequest({
      ...base,
      messages: [],
      tools: [
        { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
        { name: 'f', input_schema: { type: 'object' } },
        { type: 'bash_20250124', name: 'bash' },
        { type: 'memory_20250818', name: 'memory' },
        { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
        { type: 'code_execution_20250825', name: 'code_execution' },
        { type: 'web_fetch_20250910', name: 'web_fetch' },
        { type: 'tool_search_tool_bm25_20251119', name: 'tool_search_tool_bm25' },
        { type: 'mcp_toolset', mcp_server_name: 'tickets' },
      ],
      mcp_servers: [{ type: 'url', url: 'https://mcp.example.com/sse', name: 'tickets' }],
    })
    expect(request.tools).toEqual([{ name: 'f', inputSchema: { type: 'object' } }])
    expect(request.anthropicTools).toEqual([
      'text_editor_20250728',
      'bash_20250124',
      'memory_20250818',
      'computer_20250124',
      'web_fetch_20250910',
      'tool_search_tool_bm25_20251119',
      'mcp_toolset',
      'mcp_servers',
    ])
    expect(decodeAnthropicRequest({ ...base, messages: [], tools: [], mcp_servers: [] })).not.toHaveProperty(
      'anthropicTools',
    )
  })

  test('a web_search server tool of any version becomes webSearch; other server tools are dropped', () => {
    const decodeTools = (tools: unknown[]) => decodeAnthropicRequest({ ...base, messages: [], tools })
    const request = decodeTools([
      { type: 'code_execution_20250825', name: 'code_execution' },
      { name: 'f', input_schema: { type: 'object' } },
      {
        type: 'web_search_20250305',
        name: 'web_search',
        max_uses: 3,
        allowed_domains: ['example.com', 'docs.example.org'],
        user_location: { type: 'approximate', city: 'Lyon', region: 'ARA', country: 'FR', timezone: 'Europe/Paris' },
      },
    ])
    expect(request.tools).toEqual([{ name: 'f', inputSchema: { type: 'object' } }])
    expect(request.webSearch).toEqual({
      maxUses: 3,
      allowedDomains: ['example.com', 'docs.example.org'],
      userLocation: { city: 'Lyon', region: 'ARA', country: 'FR', timezone: 'Europe/Paris' },
    })
    // A newer version, blocked domains, and nulls where the fields are optional.
    expect(
      decodeTools([
        {
          type: 'web_search_20260209',
          name: 'web_search',
          max_uses: null,
          allowed_domains: null,
          blocked_domains: ['spam.example'],
          user_location: { type: 'approximate', city: null, country: 'US' },
        },
      ]).webSearch,
    ).toEqual({ blockedDomains: ['spam.example'], userLocation: { country: 'US' } })
    expect(decodeTools([{ type: 'web_search_20250305', name: 'web_search' }]).webSearch).toEqual({})
    expect(decodeTools([{ type: 'web_fetch_20250910', name: 'web_fetch' }])).not.toHaveProperty('webSearch')
  })

  test.each([
    [{ max_uses: '5' }, 'tools.0.max_uses'],
    [{ allowed_domains: 'example.com' }, 'tools.0.allowed_domains'],
    [{ blocked_domains: ['ok.example', 7] }, 'tools.0.blocked_domains'],
    [{ user_location: 'Paris' }, 'tools.0.user_location'],
    [{ user_location: { type: 'approximate', city: 75 } }, 'tools.0.user_location.city'],
  ])('a web_search tool with %j is refused naming %s', (fields, param) => {
    const tools = [{ type: 'web_search_20250305', name: 'web_search', ...fields }]
    const decode = () => decodeAnthropicRequest({ ...base, messages: [], tools })
    expect(decode).toThrow(expect.objectContaining({ kind: 'invalid_request', status: 400, param }))
    expect(decode).toThrow(`${param}:`)
  })

  test('invalid thinking and tool_choice types are named', () => {
    expect(() => decodeAnthropicRequest({ ...base, messages: [], thinking: { type: 'on' } })).toThrow('thinking.type')
    expect(() => decodeAnthropicRequest({ ...base, messages: [], tool_choice: { type: 'all' } })).toThrow(
      'tool_choice.type',
    )
    expect(() => decodeAnthropicRequest({ ...base, messages: [], system: 7 })).toThrow('system:')
  })
})

describe("server tools' history, as text for another dialect", () => {
  const assistant = (content: unknown[]) =>
    decodeMessages([
      { role: 'user', content: 'Go.' },
      { role: 'assistant', content },
    ]).messages[1]!.content

  test('a fetched PDF is named, not shown; a failed fetch and a search leave nothing', () => {
    expect(
      assistant([
        {
          type: 'web_fetch_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: {
            type: 'web_fetch_result',
            url: 'https://example.com/a.pdf',
            content: { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } },
          },
        },
        {
          type: 'web_fetch_tool_result',
          tool_use_id: 'srvtoolu_2',
          content: { type: 'web_fetch_tool_result_error', error_code: 'url_not_accessible' },
        },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_3', content: [] },
      ]),
    ).toEqual([{ type: 'text', text: 'Fetched https://example.com/a.pdf: application/pdf, not shown here.' }])
  })

  test("an MCP tool's failure says so; a result with no text and a call with no name leave nothing", () => {
    expect(
      assistant([
        { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', input: { q: 'x' } },
        { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_1', is_error: true, content: 'server down' },
        { type: 'mcp_tool_use', id: 'mcptoolu_2', input: {} },
        { type: 'mcp_tool_result', tool_use_id: 'mcptoolu_2', content: [] },
      ]),
    ).toEqual([
      { type: 'text', text: 'Called the tool lookup with {"q":"x"}.' },
      { type: 'text', text: 'The tool failed:\n\nserver down' },
    ])
  })
})
