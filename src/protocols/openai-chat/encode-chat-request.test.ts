import { describe, expect, test } from 'bun:test'
import type { ExchangeRequest } from '../../exchange/types'
import { decodeAnthropicRequest } from '../anthropic/decode-anthropic-request'
import { readFixture } from '../fixture-streams'
import { type ChatRequestOptions, encodeChatRequest } from './encode-chat-request'
import { withThoughtSignature } from '../thought-signature'
import { reasoningEffortFor } from '../openai-common'

const base: ExchangeRequest = { system: [], messages: [], tools: [], maxTokens: 64, stream: false }
const weather = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }

describe('encodeChatRequest', () => {
  test('a Claude-Code-like request, whole', async () => {
    const exchange = decodeAnthropicRequest(JSON.parse(await readFixture('anthropic/claude-code-request.json')))
    expect(encodeChatRequest(exchange, 'gpt-5-mini', { maxTokensField: 'max_completion_tokens' })).toEqual({
      model: 'gpt-5-mini',
      messages: [
        {
          role: 'system',
          content:
            "You are Claude Code, Anthropic's official CLI for Claude.\n\nBe concise.\n\nSession context: repo at /work.",
        },
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>The todo list is empty.</system-reminder>' },
            { type: 'text', text: 'What is in this image, and the weather in Paris?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: 'A cat. Checking the weather.',
          tool_calls: [
            { id: 'toolu_01A', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            {
              id: 'toolu_01B',
              type: 'function',
              function: { name: 'Read', arguments: '{"file_path":"/work/notes.txt"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'toolu_01A', content: '18°C, cloudy' },
        { role: 'tool', tool_call_id: 'toolu_01B', content: 'Error: File is an image:' },
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'https://example.com/notes.png' } },
            { type: 'text', text: 'Thanks, continue.' },
          ],
        },
      ],
      max_completion_tokens: 32000,
      temperature: 1,
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Weather by city',
            parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          },
        },
        {
          type: 'function',
          function: {
            name: 'Read',
            description: 'Read a file',
            parameters: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
          },
        },
      ],
      tool_choice: 'auto',
      reasoning_effort: 'high',
      user: '{"device_id":"d-1","account_uuid":"a-1","session_id":"s-1"}',
      stream: true,
      stream_options: { include_usage: true },
    })
  })

  // Some servers stream unless told not to: a JSON request says so.
  test('plain text turns become strings; max_tokens by default; stream: false when not streaming', () => {
    const body = encodeChatRequest(
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'one' },
              { type: 'text', text: 'two' },
            ],
          },
          { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
        ],
        stopSequences: ['a', 'b', 'c', 'd', 'e'],
        topP: 0.5,
        topK: 3,
      },
      'm',
    )
    expect(body).toEqual({
      model: 'm',
      messages: [
        { role: 'user', content: 'one\n\ntwo' },
        { role: 'assistant', content: 'ok' },
      ],
      max_tokens: 64,
      top_p: 0.5,
      stop: ['a', 'b', 'c', 'd'],
      stream: false,
    })
  })

  // OpenAI and Mistral refuse the field; vLLM, llama.cpp and OpenRouter take it (wire-formats §4.2).
  test('top_k goes only to a server that takes it, and never to a model that refuses sampling parameters', () => {
    const request: ExchangeRequest = { ...base, topK: 40 }
    expect(encodeChatRequest(request, 'm').top_k).toBeUndefined()
    expect(encodeChatRequest(request, 'm', { topK: true }).top_k).toBe(40)
    expect(encodeChatRequest({ ...request, topK: 0 }, 'm', { topK: true }).top_k).toBe(0)
    expect(encodeChatRequest(request, 'm', { topK: true, samplingParameters: false }).top_k).toBeUndefined()
    expect(encodeChatRequest(base, 'm', { topK: true })).not.toHaveProperty('top_k')
  })

  test('tool-only assistant turns have null content; thinking is dropped unless asked for', () => {
    const request: ExchangeRequest = {
      ...base,
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'plan', signature: '' },
            { type: 'redacted_thinking', data: 'x' },
            { type: 'tool_use', id: 'call_1', name: 'f', input: { a: 1 } },
          ],
        },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'only thinking' }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_1', content: [] }] },
      ],
    }
    const toolCall = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }
    expect(encodeChatRequest(request, 'm').messages).toEqual([
      { role: 'assistant', content: null, tool_calls: [toolCall] },
      { role: 'tool', tool_call_id: 'call_1', content: '' },
    ])
    expect(encodeChatRequest(request, 'm', { reasoningContent: true }).messages).toEqual([
      { role: 'assistant', content: null, tool_calls: [toolCall], reasoning_content: 'plan' },
      { role: 'tool', tool_call_id: 'call_1', content: '' },
    ])
  })

  test('reasoning_content: a tool-call turn without thinking (another model answered it) carries it empty', () => {
    const request: ExchangeRequest = {
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'list files' }] },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Looking.' },
            { type: 'tool_use', id: 'call_1', name: 'ls', input: {} },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'text', text: 'a' }] }],
        },
        { role: 'assistant', content: [{ type: 'text', text: 'One file.' }] },
      ],
    }
    const messages = encodeChatRequest(request, 'm', { reasoningContent: true }).messages as Record<string, unknown>[]
    const assistants = messages.filter((m) => m.role === 'assistant')
    expect(assistants).toEqual([
      {
        role: 'assistant',
        content: 'Looking.',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'ls', arguments: '{}' } }],
        reasoning_content: '',
      },
      // Turns without tool calls need no reasoning back.
      { role: 'assistant', content: 'One file.' },
    ])
  })

  describe('thought signatures', () => {
    const signed = withThoughtSignature('function-call-1', 'sig+/==')
    const request: ExchangeRequest = {
      ...base,
      messages: [
        { role: 'assistant', content: [{ type: 'tool_use', id: signed, name: 'ls', input: {} }] },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: signed, content: [] }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'toolu_1', name: 'ls', input: {} },
            { type: 'tool_use', id: 'toolu_2', name: 'ls', input: {} },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', toolUseId: 'toolu_1', content: [] },
            { type: 'tool_result', toolUseId: 'toolu_2', content: [] },
          ],
        },
      ],
    }
    const encoded = (model: string, thoughtSignatures?: ChatRequestOptions['thoughtSignatures']) =>
      (encodeChatRequest(request, model, { thoughtSignatures }).messages as Record<string, unknown>[]).map((m) =>
        m.role === 'tool'
          ? m.tool_call_id
          : [(m.tool_calls as Record<string, unknown>[]).map((c) => [c.id, c.extra_content]), m.reasoning_details],
      )
    const skip = 'skip_thought_signature_validator'

    test("Google's endpoint: Gemini gets its own back on the call, and the skip on the first call of a turn it did not make", () => {
      expect(encoded('gemini-3-pro-preview', 'extra_content')).toEqual([
        [[['function-call-1', { google: { thought_signature: 'sig+/==' } }]], undefined],
        'function-call-1',
        [
          [
            ['toolu_1', { google: { thought_signature: skip } }],
            ['toolu_2', undefined],
          ],
          undefined,
        ],
        'toolu_1',
        'toolu_2',
      ])
    })

    test("OpenRouter: the same in the message's reasoning_details, by call id", () => {
      const detail = (id: string, data: string) => [
        { type: 'reasoning.encrypted', data, id, format: 'google-gemini-v1', index: 0 },
      ]
      expect(encoded('google/gemini-3-pro-preview', 'reasoning_details')).toEqual([
        [[['function-call-1', undefined]], detail('function-call-1', 'sig+/==')],
        'function-call-1',
        [
          [
            ['toolu_1', undefined],
            ['toolu_2', undefined],
          ],
          detail('toolu_1', skip),
        ],
        'toolu_1',
        'toolu_2',
      ])
      // Another model's turn to a model that is not Gemini: no skip to read as its own history.
      expect(encoded('anthropic/claude-x', 'reasoning_details')[2]).toEqual([
        [
          ['toolu_1', undefined],
          ['toolu_2', undefined],
        ],
        undefined,
      ])
    })

    test('a strict OpenAI endpoint gets neither field, and the ids as they were given (it refuses ids over 40 characters)', () => {
      expect(encoded('gemini-3-pro-preview')).toEqual([
        [[['function-call-1', undefined]], undefined],
        'function-call-1',
        [
          [
            ['toolu_1', undefined],
            ['toolu_2', undefined],
          ],
          undefined,
        ],
        'toolu_1',
        'toolu_2',
      ])
    })
  })

  test('tool_choice mapping and parallel_tool_calls', () => {
    const tools = [{ name: 'f', inputSchema: { type: 'object' } }]
    const choice = (toolChoice: ExchangeRequest['toolChoice']) => {
      const body = encodeChatRequest({ ...base, tools, toolChoice }, 'm')
      return [body.tool_choice, body.parallel_tool_calls]
    }
    expect(choice({ type: 'auto' })).toEqual(['auto', undefined])
    expect(choice({ type: 'any', disableParallel: true })).toEqual(['required', false])
    expect(choice({ type: 'tool', name: 'f' })).toEqual([{ type: 'function', function: { name: 'f' } }, undefined])
    expect(choice({ type: 'none' })).toEqual(['none', undefined])
    // Without tools there is nothing to choose.
    expect(encodeChatRequest({ ...base, toolChoice: { type: 'any' } }, 'm').tool_choice).toBeUndefined()
  })

  test('a choice forcing the web search, which Chat does not run, is left to the model', () => {
    const searching = {
      ...base,
      tools: [{ name: 'f', inputSchema: { type: 'object' } }],
      webSearch: {},
      toolChoice: { type: 'tool' as const, name: 'web_search' },
    }
    const body = encodeChatRequest(searching, 'm')
    expect(body.tools).toHaveLength(1)
    expect(body.tool_choice).toBeUndefined()
    // A function of that name is the client's own: forced as asked.
    const own = { ...searching, tools: [{ name: 'web_search', inputSchema: { type: 'object' } }] }
    expect(encodeChatRequest(own, 'm').tool_choice).toEqual({ type: 'function', function: { name: 'web_search' } })
  })

  test('thinking → reasoning_effort', () => {
    expect(reasoningEffortFor({ type: 'enabled', budgetTokens: 1024 })).toBe('low')
    expect(reasoningEffortFor({ type: 'enabled', budgetTokens: 1025 })).toBe('medium')
    expect(reasoningEffortFor({ type: 'enabled', budgetTokens: 8192 })).toBe('medium')
    expect(reasoningEffortFor({ type: 'enabled', budgetTokens: 8193 })).toBe('high')
    expect(reasoningEffortFor({ type: 'adaptive', effort: 'max' })).toBe('max')
    expect(reasoningEffortFor({ type: 'adaptive' })).toBeUndefined()
    expect(reasoningEffortFor({ type: 'disabled' })).toBeUndefined()
    const body = encodeChatRequest({ ...base, thinking: { type: 'enabled', budgetTokens: 4000 } }, 'm')
    expect(body.reasoning_effort).toBe('medium')
  })

  // GPT-5.1 refuses xhigh and max (Claude Code's), the GPT-6 generation minimal (Codex's): a 400 each.
  test("an effort outside the model's list goes as the nearest it takes; any effort where no list is known", () => {
    const effortFor = (
      effort: 'minimal' | 'high' | 'xhigh' | 'max',
      reasoningEfforts?: readonly ('low' | 'medium' | 'high')[],
    ) =>
      encodeChatRequest({ ...base, thinking: { type: 'adaptive', effort } }, 'm', { reasoningEfforts }).reasoning_effort
    expect(effortFor('xhigh', ['low', 'medium', 'high'])).toBe('high')
    expect(effortFor('max', ['low', 'medium', 'high'])).toBe('high')
    expect(effortFor('minimal', ['low', 'medium', 'high'])).toBe('low')
    expect(effortFor('high', ['low', 'medium', 'high'])).toBe('high')
    expect(effortFor('xhigh')).toBe('xhigh')
  })

  // OpenAI refuses a `user` over 64 characters; Claude Code's metadata.user_id is longer.
  test('an end-user id over 64 characters goes hashed to 64; a shorter one as it is', () => {
    const user = (id: string) => encodeChatRequest({ ...base, user: id }, 'm').user
    expect(user('u'.repeat(120))).toMatch(/^[0-9a-f]{64}$/)
    expect(user('u'.repeat(64))).toBe('u'.repeat(64))
  })

  test('thinking turned off → the least reasoning the model takes, where its list is known', () => {
    const off = { ...base, thinking: { type: 'disabled' as const } }
    const effortFor = (reasoningEfforts?: readonly ('none' | 'minimal' | 'low' | 'high' | 'max')[]) =>
      encodeChatRequest(off, 'm', { reasoningEfforts }).reasoning_effort
    expect(effortFor(['none', 'low', 'high'])).toBe('none')
    expect(effortFor(['minimal', 'low', 'high'])).toBe('minimal')
    expect(effortFor(['high', 'max'])).toBeUndefined()
    expect(effortFor(undefined)).toBeUndefined()
    // A provider with DeepSeek's toggle says so in its own field, and asks no effort.
    const toggled = encodeChatRequest(off, 'm', { thinkingToggle: true, reasoningEfforts: ['none', 'low'] })
    expect(toggled.thinking).toEqual({ type: 'disabled' })
    expect(toggled.reasoning_effort).toBeUndefined()
    // Thinking on: no toggle field (DeepSeek thinks by default).
    const on = encodeChatRequest({ ...base, thinking: { type: 'adaptive', effort: 'high' } }, 'm', {
      thinkingToggle: true,
    })
    expect(on.thinking).toBeUndefined()
    expect(on.reasoning_effort).toBe('high')
  })

  // OpenAI refuses function names outside ^[a-zA-Z0-9_-]{1,64}$ with a 400 (wire-formats §3.4).
  test('tool names OpenAI would refuse are shortened the same way in tools, tool_choice and history', () => {
    const long = 'mcp__claude_ai_Atlassian_Rovo__getConfluencePageFooterCommentsWithInlineRepliesAndHistory2'
    // 55 characters kept, `_`, 8 hex of the name's SHA-256: pinned, as replayed histories rely on it.
    const short = 'mcp__claude_ai_Atlassian_Rovo__getConfluencePageFooterC_ceb02a93'
    const schema = { type: 'object' }
    const request: ExchangeRequest = {
      ...base,
      tools: [
        { name: long, inputSchema: schema },
        { name: 'get_weather', inputSchema: schema },
        { name: 'mcp__fs__read.file', inputSchema: schema },
      ],
      toolChoice: { type: 'tool', name: long },
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'tool_use', id: 'call_1', name: long, input: {} },
            { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_1', content: [] }] },
      ],
    }
    const body = encodeChatRequest(request, 'm')
    const names = (body.tools as { function: { name: string } }[]).map((t) => t.function.name)
    expect(names).toEqual([short, 'get_weather', 'mcp__fs__read_file_0516bd5b'])
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/)
    expect(body.tool_choice).toEqual({ type: 'function', function: { name: short } })
    expect((body.messages as Record<string, unknown>[])[1]!.tool_calls).toEqual([
      { id: 'call_1', type: 'function', function: { name: short, arguments: '{}' } },
      { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
    ])
    // Deterministic, and names sharing their first 55 characters stay apart.
    expect(encodeChatRequest(request, 'm')).toEqual(body)
    const twin = { ...base, tools: [{ name: long.replace(/2$/, '3'), inputSchema: schema }] }
    const twinName = (encodeChatRequest(twin, 'm').tools as { function: { name: string } }[])[0]!.function.name
    expect(twinName).toHaveLength(64)
    expect(twinName).not.toBe(short)
  })

  test('a name of exactly 64 allowed characters goes upstream unchanged', () => {
    const name = 'a'.repeat(63) + '-'
    const body = encodeChatRequest(
      { ...base, tools: [{ name, inputSchema: {} }], toolChoice: { type: 'tool', name } },
      'm',
    )
    expect(body.tools).toEqual([{ type: 'function', function: { name, parameters: {} } }])
    expect(body.tool_choice).toEqual({ type: 'function', function: { name } })
  })

  test('response formats: json_schema nested under json_schema, named "output" when the client gave no name', () => {
    expect(encodeChatRequest({ ...base, responseFormat: { type: 'json_schema', schema: weather } }, 'm')).toMatchObject(
      {
        response_format: { type: 'json_schema', json_schema: { name: 'output', schema: weather } },
      },
    )
    const named = {
      type: 'json_schema',
      name: 'weather',
      description: 'A city',
      schema: weather,
      strict: true,
    } as const
    expect(encodeChatRequest({ ...base, responseFormat: named }, 'm').response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'weather', description: 'A city', schema: weather, strict: true },
    })
    expect(encodeChatRequest({ ...base, responseFormat: { type: 'json_object' } }, 'm').response_format).toEqual({
      type: 'json_object',
    })
    expect(encodeChatRequest(base, 'm')).not.toHaveProperty('response_format')
  })

  test('documents: a PDF is a file part, a text document a titled text part, a link its text', () => {
    const body = encodeChatRequest(
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Summarise.' },
              {
                type: 'document',
                title: 'Q3',
                source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBER' },
              },
              { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'QQ==' } },
              { type: 'document', title: 'Notes', source: { kind: 'text', text: 'Body.' } },
              { type: 'document', title: 'Spec', source: { kind: 'url', url: 'https://example.com/spec.pdf' } },
            ],
          },
        ],
      },
      'm',
    )
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Summarise.' },
          { type: 'file', file: { filename: 'Q3', file_data: 'data:application/pdf;base64,JVBER' } },
          { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,QQ==' } },
          { type: 'text', text: 'Notes\n\nBody.' },
          { type: 'text', text: 'Spec\n\nhttps://example.com/spec.pdf' },
        ],
      },
    ])
    const textOnly = encodeChatRequest(
      { ...base, messages: [{ role: 'user', content: [{ type: 'document', source: { kind: 'text', text: 'Hi.' } }] }] },
      'm',
    )
    expect(textOnly.messages).toEqual([{ role: 'user', content: 'Hi.' }])
  })

  test('a document in a tool result: its text in the tool message, its file in the user message after', () => {
    const body = encodeChatRequest(
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                toolUseId: 'call_1',
                content: [
                  { type: 'text', text: 'Fetched:' },
                  { type: 'document', title: 'Readme', source: { kind: 'text', text: 'Hello.' } },
                  { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBER' } },
                ],
              },
            ],
          },
        ],
      },
      'm',
    )
    expect(body.messages).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'Fetched:\nReadme\n\nHello.' },
      {
        role: 'user',
        content: [{ type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBER' } }],
      },
    ])
  })

  test('an image keeps its detail, original as high (Chat has no original); none is sent when none was chosen', () => {
    const image = (detail?: 'low' | 'original') => ({
      type: 'image' as const,
      source: { kind: 'url' as const, url: 'https://example.com/a.png' },
      ...(detail ? { detail } : {}),
    })
    const body = encodeChatRequest(
      { ...base, messages: [{ role: 'user', content: [image('low'), image('original'), image()] }] },
      'm',
    )
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'high' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        ],
      },
    ])
  })

  test('instructions given mid-conversation stay in place as system messages', () => {
    const body = encodeChatRequest(
      {
        ...base,
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          { role: 'assistant', content: [{ type: 'text', text: 'Where?' }] },
          {
            role: 'system',
            content: [
              { type: 'text', text: 'Use metric units.' },
              { type: 'text', text: 'No emoji.' },
            ],
          },
          { role: 'user', content: [{ type: 'text', text: 'Paris.' }] },
        ],
      },
      'm',
    )
    expect(body.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Where?' },
      { role: 'system', content: 'Use metric units.\n\nNo emoji.' },
      { role: 'user', content: 'Paris.' },
    ])
  })

  test('merged (for templates that refuse a later system message): they join the leading one, in order', () => {
    const conversation = (system: string[]) => ({
      ...base,
      system: system.map((text) => ({ type: 'text' as const, text })),
      messages: [
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'Weather?' }] },
        { role: 'system' as const, content: [{ type: 'text' as const, text: 'Use metric units.' }] },
        { role: 'assistant' as const, content: [{ type: 'text' as const, text: 'Where?' }] },
        { role: 'system' as const, content: [{ type: 'text' as const, text: 'No emoji.' }] },
        { role: 'user' as const, content: [{ type: 'text' as const, text: 'Paris.' }] },
      ],
    })
    const turns = [
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', content: 'Where?' },
      { role: 'user', content: 'Paris.' },
    ]
    expect(encodeChatRequest(conversation(['Be brief.']), 'm', { systemMessages: 'merged' }).messages).toEqual([
      { role: 'system', content: 'Be brief.\n\nUse metric units.\n\nNo emoji.' },
      ...turns,
    ])
    // Without a leading one, the first instruction given becomes it.
    expect(encodeChatRequest(conversation([]), 'm', { systemMessages: 'merged' }).messages).toEqual([
      { role: 'system', content: 'Use metric units.\n\nNo emoji.' },
      ...turns,
    ])
  })

  test('instructions between tool calls and their results follow the last tool message', () => {
    const result = (id: string) => ({
      role: 'user' as const,
      content: [{ type: 'tool_result' as const, toolUseId: id, content: [{ type: 'text' as const, text: 'ok' }] }],
    })
    const body = encodeChatRequest(
      {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Run both.' }] },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'call_1', name: 'run', input: {} },
              { type: 'tool_use', id: 'call_2', name: 'run', input: {} },
            ],
          },
          result('call_1'),
          { role: 'system', content: [{ type: 'text', text: 'Sandbox is now off.' }] },
          result('call_2'),
          { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
        ],
      },
      'm',
    )
    expect((body.messages as Record<string, unknown>[]).map((m) => [m.role, m.tool_call_id ?? m.content])).toEqual([
      ['user', 'Run both.'],
      ['assistant', null],
      ['tool', 'call_1'],
      ['tool', 'call_2'],
      ['system', 'Sandbox is now off.'],
      ['assistant', 'Done.'],
    ])
  })

  test('results over two user turns, the first with an image: the image follows the last tool message', () => {
    const image = { type: 'image' as const, source: { kind: 'url' as const, url: 'https://example.com/cat.png' } }
    const body = encodeChatRequest(
      {
        ...base,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Look at both.' }] },
          {
            role: 'assistant',
            content: [
              { type: 'tool_use', id: 'call_1', name: 'read', input: {} },
              { type: 'tool_use', id: 'call_2', name: 'read', input: {} },
            ],
          },
          { role: 'user', content: [{ type: 'tool_result', toolUseId: 'call_1', content: [image] }] },
          {
            role: 'user',
            content: [{ type: 'tool_result', toolUseId: 'call_2', content: [{ type: 'text', text: 'ok' }] }],
          },
        ],
      },
      'm',
    )
    expect((body.messages as Record<string, unknown>[]).map((m) => m.tool_call_id ?? m.role)).toEqual([
      'user',
      'assistant',
      'call_1',
      'call_2',
      'user',
    ])
  })
})

// OpenRouter's `anthropic/…` models: both sampling parameters were passed (Claude 4.5 refuses them
// together with a 400 the client could not avoid) and a client's thinking was dropped without a word
// (the model's reasoning_effort list is Anthropic's own effort parameter's, empty for 4.5).
describe('encodeChatRequest: a Claude model behind a router', () => {
  const claude = { claude: { routerReasoning: true } }
  const sampled = { ...base, temperature: 1.4, topP: 0.9 }
  const sent = (req: ExchangeRequest, opts: ChatRequestOptions = claude) => {
    const { temperature, top_p, reasoning, reasoning_effort, max_tokens } = encodeChatRequest(req, 'anthropic/x', opts)
    return { temperature, top_p, reasoning, reasoning_effort, max_tokens }
  }

  test('temperature alone (clamped to Anthropic’s 0–1), not beside top_p; neither under thinking, but a top_p from 0.95', () => {
    expect(sent(sampled)).toMatchObject({ temperature: 1, top_p: undefined })
    expect(sent({ ...base, topP: 0.9 })).toMatchObject({ temperature: undefined, top_p: 0.9 })
    const thinking = { type: 'enabled' as const, budgetTokens: 2_000 }
    expect(sent({ ...sampled, thinking })).toMatchObject({ temperature: undefined, top_p: undefined })
    expect(sent({ ...sampled, topP: 0.95, thinking })).toMatchObject({ temperature: undefined, top_p: 0.95 })
    // Any other model as before.
    expect(sent(sampled, {})).toMatchObject({ temperature: 1.4, top_p: 0.9 })
  })

  test('top_k where the router takes it, but not under thinking, which Claude refuses it with', () => {
    const topK = (req: ExchangeRequest) => encodeChatRequest(req, 'anthropic/x', { ...claude, topK: true }).top_k
    expect(topK({ ...base, topK: 5 })).toBe(5)
    expect(topK({ ...base, topK: 5, thinking: { type: 'enabled', budgetTokens: 2_000 } })).toBeUndefined()
    expect(topK({ ...base, topK: 5, thinking: { type: 'disabled' } })).toBe(5)
  })

  test('thinking as OpenRouter’s reasoning: a budget as max_tokens (1,024 at least), room above it; an effort as itself, max as xhigh', () => {
    expect(sent({ ...base, thinking: { type: 'enabled', budgetTokens: 2_000 } })).toEqual({
      temperature: undefined,
      top_p: undefined,
      reasoning: { max_tokens: 2_000 },
      reasoning_effort: undefined,
      max_tokens: 2_064,
    })
    expect(sent({ ...base, thinking: { type: 'adaptive', effort: 'high' } })).toMatchObject({
      reasoning: { effort: 'high' },
      max_tokens: 64,
    })
    expect(sent({ ...base, thinking: { type: 'adaptive', effort: 'max' } }).reasoning).toEqual({ effort: 'xhigh' })
    // Claude refuses a budget under 1,024.
    expect(sent({ ...base, maxTokens: 4_000, thinking: { type: 'enabled', budgetTokens: 500 } })).toMatchObject({
      reasoning: { max_tokens: 1_024 },
      max_tokens: 4_000,
    })
    expect(sent({ ...base, thinking: { type: 'adaptive' } }).reasoning).toEqual({ enabled: true })
    expect(sent({ ...base, thinking: { type: 'disabled' } }).reasoning).toBeUndefined()
    // A router that does not take OpenRouter's reasoning: as before (an effort within the model's list).
    expect(
      sent({ ...base, thinking: { type: 'adaptive', effort: 'high' } }, { claude: { routerReasoning: false } }),
    ).toMatchObject({ reasoning: undefined, reasoning_effort: 'high' })
  })
})
