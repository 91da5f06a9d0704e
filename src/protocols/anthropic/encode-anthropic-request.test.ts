import { describe, expect, test } from 'bun:test'
import type { ExchangeRequest, ReasoningEffort } from '../../exchange/types'
import { readFixture } from '../fixture-streams'
import { decodeAnthropicRequest } from './decode-anthropic-request'
import { encodeAnthropicRequest } from './encode-anthropic-request'
import { sanitizeToolUseId } from './tool-use-id'

const base: ExchangeRequest = { system: [], messages: [], tools: [], maxTokens: 4096, stream: true }

describe('encodeAnthropicRequest', () => {
  test('history from a Chat provider is made acceptable to Anthropic', () => {
    const body = encodeAnthropicRequest(
      {
        ...base,
        system: [
          { type: 'text', text: 'sys', cacheControl: { type: 'ephemeral' } },
          { type: 'text', text: ' ' },
        ],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: '' },
              { type: 'text', text: 'in Paris' },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'from deepseek', signature: '' },
              { type: 'thinking', thinking: 'ours', signature: btoa('gw1:deepseek:abc') },
              { type: 'text', text: '' },
              { type: 'tool_use', id: 'functions.get_weather:0', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'also this' },
              {
                type: 'tool_result',
                toolUseId: 'functions.get_weather:0',
                content: [{ type: 'text', text: '18C' }],
                isError: true,
              },
            ],
          },
        ],
        tools: [
          { name: 'get_weather', inputSchema: { type: 'object' }, cacheControl: { type: 'ephemeral', ttl: '1h' } },
        ],
        toolChoice: { type: 'auto', disableParallel: true },
        temperature: 0.2,
        topK: 5,
        stopSequences: ['END'],
        user: 'u-1',
        thinking: { type: 'enabled', budgetTokens: 500 },
      },
      'claude-sonnet-4-5',
    )
    const id = sanitizeToolUseId('functions.get_weather:0')
    expect(id).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: [{ type: 'text', text: 'sys', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'weather?' },
            { type: 'text', text: 'in Paris' },
          ],
        },
        { role: 'assistant', content: [{ type: 'tool_use', id, name: 'get_weather', input: { city: 'Paris' } }] },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: id, content: [{ type: 'text', text: '18C' }], is_error: true },
            { type: 'text', text: 'also this' },
          ],
        },
      ],
      tools: [
        { name: 'get_weather', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
      ],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      // The last assistant turn calls a tool without a signed thinking block: thinking must stay off.
      temperature: 0.2,
      top_k: 5,
      stop_sequences: ['END'],
      metadata: { user_id: 'u-1' },
      stream: true,
    })
  })

  test("an OpenAI client's temperature above 1 is sent as 1, Anthropic's highest", () => {
    const at = (temperature: number) =>
      encodeAnthropicRequest(
        { ...base, temperature, messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }] },
        'c',
      ).temperature
    expect([at(1.6), at(2), at(1), at(0.4), at(0)]).toEqual([1, 1, 1, 0.4, 0])
  })

  test('thinking budget is at least 1024 and below max_tokens; temperature and top_k go', () => {
    const body = encodeAnthropicRequest(
      {
        ...base,
        maxTokens: 800,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
        thinking: { type: 'enabled', budgetTokens: 10 },
        temperature: 0.3,
        topP: 0.5,
        topK: 3,
      },
      'c',
    )
    expect(body).toMatchObject({ max_tokens: 1824, thinking: { type: 'enabled', budget_tokens: 1024 } })
    expect(body).not.toContainAnyKeys(['temperature', 'top_p', 'top_k'])
    const roomy = encodeAnthropicRequest(
      { ...base, thinking: { type: 'enabled', budgetTokens: 2000 }, topP: 0.97 },
      'c',
    )
    expect(roomy).toMatchObject({ max_tokens: 4096, thinking: { budget_tokens: 2000 }, top_p: 0.97 })
  })

  test('temperature and top_p together: temperature alone (Claude 4.5 and later refuse both)', () => {
    const both = encodeAnthropicRequest({ ...base, temperature: 0.7, topP: 0.9 }, 'c')
    expect(both).toMatchObject({ temperature: 0.7 })
    expect(both).not.toContainKey('top_p')
    expect(encodeAnthropicRequest({ ...base, topP: 0.9 }, 'c')).toMatchObject({ top_p: 0.9 })
  })

  test('signed thinking is kept, and then thinking stays on in a tool loop', () => {
    const request: ExchangeRequest = {
      ...base,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'go' }] },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'plan', signature: 'EqQBsig' },
            { type: 'tool_use', id: 'toolu_1', name: 'f', input: 'not an object' },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', toolUseId: 'toolu_1', content: [] }] },
      ],
      thinking: { type: 'adaptive', effort: 'minimal' },
    }
    const body = encodeAnthropicRequest(request, 'c', { adaptiveThinking: true })
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      {
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'plan', signature: 'EqQBsig' },
          { type: 'tool_use', id: 'toolu_1', name: 'f', input: {} },
        ],
      },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1' }] },
    ])
    expect(body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } })
    // A model without adaptive thinking stays thinking too, on minimal's budget.
    const budgeted = encodeAnthropicRequest(request, 'c')
    expect(budgeted.messages).toEqual(body.messages)
    expect(budgeted.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
    expect(budgeted).not.toHaveProperty('output_config')
  })

  test('adaptive thinking for a model without it becomes a budget per effort, with no output_config', () => {
    const hi = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }]
    const encode = (effort?: ReasoningEffort, maxTokens = 8192) =>
      encodeAnthropicRequest(
        { ...base, maxTokens, messages: hi, thinking: effort ? { type: 'adaptive', effort } : { type: 'adaptive' } },
        'claude-sonnet-4-5',
      )
    const budgets = (['minimal', 'low', 'medium', 'high', 'xhigh', 'max', undefined] as const).map((effort) => {
      const body = encode(effort)
      expect(body).not.toHaveProperty('output_config')
      expect(body.max_tokens).toBe(8192)
      return body.thinking
    })
    expect(budgets).toEqual([
      { type: 'enabled', budget_tokens: 1024 },
      { type: 'enabled', budget_tokens: 1024 },
      { type: 'enabled', budget_tokens: 2048 },
      { type: 'enabled', budget_tokens: 4096 },
      { type: 'enabled', budget_tokens: 4096 },
      { type: 'enabled', budget_tokens: 4096 },
      { type: 'enabled', budget_tokens: 2048 },
    ])
    // The budget must stay below max_tokens: raised by the budget, the answer keeps its allowance.
    expect(encode('high', 4096)).toMatchObject({ max_tokens: 8192, thinking: { budget_tokens: 4096 } })
    expect(encode('high', 1000)).toMatchObject({ max_tokens: 5096, thinking: { budget_tokens: 4096 } })
    expect(encode('low', 1025).max_tokens).toBe(1025)
    // Thinking on, so temperature and top_k go, as for any budget.
    const tuned = encodeAnthropicRequest(
      { ...base, messages: hi, thinking: { type: 'adaptive', effort: 'medium' }, temperature: 0.3, topK: 3 },
      'c',
    )
    expect(tuned).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 2048 } })
    expect(tuned).not.toContainAnyKeys(['temperature', 'top_k', 'output_config'])
  })

  test('a model with adaptive thinking gets adaptive and output_config.effort, max_tokens unchanged', () => {
    const hi = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }]
    const body = encodeAnthropicRequest(
      { ...base, maxTokens: 1000, messages: hi, thinking: { type: 'adaptive', effort: 'high' }, temperature: 0.3 },
      'claude-opus-4-6',
      { adaptiveThinking: true },
    )
    expect(body).toMatchObject({ max_tokens: 1000, thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })
    expect(body.temperature).toBeUndefined()
    const noEffort = encodeAnthropicRequest({ ...base, messages: hi, thinking: { type: 'adaptive' } }, 'c', {
      adaptiveThinking: true,
    })
    expect(noEffort.thinking).toEqual({ type: 'adaptive' })
    expect(noEffort).not.toHaveProperty('output_config')
  })

  test('a json_schema format becomes output_config.format, beside the effort; json_object is left out', () => {
    const hi = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'hi' }] }]
    const weather = { type: 'object', properties: { city: { type: 'string' } } }
    const structured = encodeAnthropicRequest(
      {
        ...base,
        messages: hi,
        thinking: { type: 'adaptive', effort: 'high' },
        responseFormat: { type: 'json_schema', name: 'weather', schema: weather, strict: true },
      },
      'claude-opus-4-6',
      { adaptiveThinking: true },
    )
    expect(structured.output_config).toEqual({ effort: 'high', format: { type: 'json_schema', schema: weather } })
    const plain = encodeAnthropicRequest(
      { ...base, messages: hi, responseFormat: { type: 'json_schema', schema: weather } },
      'c',
    )
    expect(plain.output_config).toEqual({ format: { type: 'json_schema', schema: weather } })
    const jsonObject = encodeAnthropicRequest({ ...base, messages: hi, responseFormat: { type: 'json_object' } }, 'c')
    expect(jsonObject).not.toHaveProperty('output_config')
  })

  test('documents go as document blocks with their source, title and cache marker, in tool results too', () => {
    const pdf = { kind: 'base64', mediaType: 'application/pdf', data: 'JVBER' } as const
    const body = encodeAnthropicRequest(
      {
        ...base,
        messages: [
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'fetch', input: {} }] },
          {
            role: 'user',
            content: [
              { type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'document', source: pdf }] },
              { type: 'document', title: 'Q3', source: pdf, cacheControl: { type: 'ephemeral' } },
              { type: 'document', source: { kind: 'url', url: 'https://example.com/spec.pdf' } },
              { type: 'document', title: 'Notes', source: { kind: 'text', text: 'Body.' } },
            ],
          },
        ],
      },
      'c',
    )
    const wirePdf = { type: 'base64', media_type: 'application/pdf', data: 'JVBER' }
    expect(body.messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'fetch', input: {} }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'document', source: wirePdf }] },
          { type: 'document', source: wirePdf, title: 'Q3', cache_control: { type: 'ephemeral' } },
          { type: 'document', source: { type: 'url', url: 'https://example.com/spec.pdf' } },
          { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Body.' }, title: 'Notes' },
        ],
      },
    ])
  })

  test('Files API references go back as file sources', () => {
    const file = (fileId: string) => ({ kind: 'file' as const, fileId, param: 'messages.0.content.0.source.file_id' })
    const body = encodeAnthropicRequest(
      {
        ...base,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', source: file('file_1') },
              { type: 'document', title: 'Q3', source: file('file_2') },
            ],
          },
        ],
      },
      'c',
    )
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'image', source: { type: 'file', file_id: 'file_1' } },
          { type: 'document', source: { type: 'file', file_id: 'file_2' }, title: 'Q3' },
        ],
      },
    ])
  })

  test('forced tool use turns adaptive thinking off, with the capability or without', () => {
    for (const adaptiveThinking of [false, true]) {
      const forced = encodeAnthropicRequest(
        {
          ...base,
          messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
          tools: [{ name: 'f', inputSchema: { type: 'object' } }],
          toolChoice: { type: 'any' },
          thinking: { type: 'adaptive', effort: 'high' },
          temperature: 0.3,
        },
        'c',
        { adaptiveThinking },
      )
      expect(forced).toMatchObject({ max_tokens: 4096, temperature: 0.3 })
      expect(forced).not.toContainAnyKeys(['thinking', 'output_config'])
    }
  })

  test('forced tool use turns thinking off; disabled is passed on', () => {
    const forced = encodeAnthropicRequest(
      {
        ...base,
        tools: [{ name: 'f', inputSchema: { type: 'object' } }],
        toolChoice: { type: 'tool', name: 'f' },
        thinking: { type: 'enabled', budgetTokens: 2048 },
      },
      'c',
    )
    expect(forced.thinking).toBeUndefined()
    expect(forced.tool_choice).toEqual({ type: 'tool', name: 'f' })
    expect(encodeAnthropicRequest({ ...base, thinking: { type: 'disabled' } }, 'c').thinking).toEqual({
      type: 'disabled',
    })
  })

  test('Anthropic → exchange → Anthropic keeps a Claude-Code-like request intact', async () => {
    const original = JSON.parse(await readFixture('anthropic/claude-code-request.json'))
    const body = encodeAnthropicRequest(decodeAnthropicRequest(original), 'claude-opus-4-6', {
      adaptiveThinking: true,
    })
    // String tool_result content comes back as its one-text-block equivalent.
    const expected = structuredClone(original.messages.slice(1))
    expected[2].content[0].content = [{ type: 'text', text: '18°C, cloudy' }]
    expect(body.messages).toEqual(expected)
    expect(body.system).toEqual([...original.system, { type: 'text', text: 'Session context: repo at /work.' }])
    expect(body).toMatchObject({ thinking: { type: 'adaptive' }, output_config: { effort: 'high' } })
    expect(body.temperature).toBeUndefined()
    // To a 4.5 model the same request's adaptive thinking goes as high's budget.
    const older = encodeAnthropicRequest(decodeAnthropicRequest(original), 'claude-sonnet-4-5')
    expect(older).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 4096 } })
    expect(older).not.toHaveProperty('output_config')
    expect([older.messages, older.system, older.max_tokens]).toEqual([body.messages, body.system, body.max_tokens])
  })

  test('instructions given mid-conversation join the system prompt, and the turns around them merge', () => {
    const body = encodeAnthropicRequest(
      {
        ...base,
        system: [{ type: 'text', text: 'Be brief.' }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
          { role: 'system', content: [{ type: 'text', text: 'Use metric units.' }] },
          { role: 'user', content: [{ type: 'text', text: 'In Paris.' }] },
        ],
      },
      'claude',
    )
    expect(body.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Use metric units.' },
    ])
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Weather?' },
          { type: 'text', text: 'In Paris.' },
        ],
      },
    ])
  })
})

describe('web search', () => {
  const ask: ExchangeRequest = { ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'news?' }] }] }

  test('is the web_search server tool, after the function tools, with only the settings made', () => {
    const body = encodeAnthropicRequest(
      {
        ...ask,
        tools: [{ name: 'exec_command', inputSchema: { type: 'object' } }],
        webSearch: {
          maxUses: 3,
          allowedDomains: ['docs.python.org'],
          userLocation: { city: 'Paris', country: 'FR', timezone: 'Europe/Paris' },
        },
        toolChoice: { type: 'auto', disableParallel: true },
      },
      'claude-x',
    )
    expect(body.tools).toEqual([
      { name: 'exec_command', input_schema: { type: 'object' } },
      {
        type: 'web_search_20250305',
        name: 'web_search',
        max_uses: 3,
        allowed_domains: ['docs.python.org'],
        user_location: { type: 'approximate', city: 'Paris', country: 'FR', timezone: 'Europe/Paris' },
      },
    ])
    expect(body.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
  })

  test('alone it is the only tool, and the tool choice goes with it; blocked domains go as sent', () => {
    const body = encodeAnthropicRequest(
      { ...ask, webSearch: { blockedDomains: ['example.com'] }, toolChoice: { type: 'any' } },
      'claude-x',
    )
    expect(body.tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', blocked_domains: ['example.com'] }])
    expect(body.tool_choice).toEqual({ type: 'any' })
    expect(encodeAnthropicRequest({ ...ask, webSearch: {} }, 'claude-x').tools).toEqual([
      { type: 'web_search_20250305', name: 'web_search' },
    ])
  })

  test("a client function named web_search keeps the name: no second tool of it (Anthropic's names are unique)", () => {
    const body = encodeAnthropicRequest(
      { ...ask, tools: [{ name: 'web_search', inputSchema: { type: 'object' } }], webSearch: {} },
      'claude-x',
    )
    expect(body.tools).toEqual([{ name: 'web_search', input_schema: { type: 'object' } }])
  })

  test("without a system prompt the cache breakpoint on the last tool is the search tool's, covering them all", () => {
    const body = encodeAnthropicRequest(
      { ...ask, tools: [{ name: 'exec_command', inputSchema: { type: 'object' } }], webSearch: {} },
      'claude-x',
      { promptCaching: true },
    )
    expect(body.tools).toEqual([
      { name: 'exec_command', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search', cache_control: { type: 'ephemeral' } },
    ])
  })
})

describe('cache breakpoints for a client that cannot mark them (a model with prompt caching)', () => {
  const toolLoop: ExchangeRequest = {
    ...base,
    system: [{ type: 'text', text: 'You are a coding agent.' }],
    tools: [
      { name: 'exec_command', inputSchema: { type: 'object' } },
      { name: 'write_stdin', inputSchema: { type: 'object' } },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'run the tests' }] },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_1', name: 'exec_command', input: { cmd: 'make test' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'text', text: '1 failed' }] }],
      },
    ],
  }
  const marks = (body: Record<string, unknown>) =>
    JSON.stringify(body).split('"cache_control":{"type":"ephemeral"}').length - 1

  test('the end of the system prompt, the last block, and the end of the user turn before it', () => {
    const body = encodeAnthropicRequest(toolLoop, 'claude-x', { promptCaching: true }) as {
      system: Record<string, unknown>[]
      tools: Record<string, unknown>[]
      messages: { content: Record<string, unknown>[] }[]
    }
    expect(body.system.at(-1)?.cache_control).toEqual({ type: 'ephemeral' })
    expect(body.tools.some((t) => 'cache_control' in t)).toBe(false)
    expect(body.messages[2]?.content.at(-1)).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral' },
    })
    expect(body.messages[0]?.content.at(-1)).toMatchObject({ type: 'text', cache_control: { type: 'ephemeral' } })
    expect(marks(body)).toBe(3)
  })

  test('without a system prompt the last tool; a first turn has one message mark; thinking blocks are passed over', () => {
    const body = encodeAnthropicRequest(
      {
        ...toolLoop,
        system: [],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 'sig' }] },
        ],
      },
      'claude-x',
      { promptCaching: true },
    ) as { tools: Record<string, unknown>[]; messages: { content: Record<string, unknown>[] }[] }
    expect(body.tools.at(-1)?.cache_control).toEqual({ type: 'ephemeral' })
    // The assistant turn holds only thinking, which cannot be marked; the user turn before it is.
    expect(body.messages[1]?.content[0]).not.toHaveProperty('cache_control')
    expect(body.messages[0]?.content[0]).toMatchObject({ cache_control: { type: 'ephemeral' } })
    expect(marks(body)).toBe(2)
  })

  test('none where the client marked its own, or the model does not cache', () => {
    const own: ExchangeRequest = {
      ...toolLoop,
      system: [{ type: 'text', text: 'You are a coding agent.', cacheControl: { type: 'ephemeral' } }],
    }
    expect(marks(encodeAnthropicRequest(own, 'claude-x', { promptCaching: true }))).toBe(1)
    expect(marks(encodeAnthropicRequest(toolLoop, 'claude-x', { promptCaching: false }))).toBe(0)
    expect(marks(encodeAnthropicRequest(toolLoop, 'claude-x'))).toBe(0)
  })
})

describe('an Anthropic-compatible server that is not Anthropic (anthropicSignatures false: DeepSeek, Kimi)', () => {
  const gatewaySigned = btoa('gw1:openai-responses:blob')
  // A Responses client's replayed tool loop: reasoning another server did, then its call.
  const loop = (...thinking: ExchangeRequest['messages'][number]['content']): ExchangeRequest => ({
    ...base,
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'read x' }] },
      {
        role: 'assistant',
        content: [...thinking, { type: 'tool_use', id: 'functions.Read:0', name: 'Read', input: { path: 'x' } }],
      },
      { role: 'user', content: [{ type: 'tool_result', toolUseId: 'functions.Read:0', content: [] }] },
    ],
    thinking: { type: 'enabled', budgetTokens: 2000 },
  })
  const assistant = (body: Record<string, unknown>) => (body.messages as { content: unknown[] }[])[1]!.content

  test('the tool turn keeps its thinking, under its own signature or an empty one, and thinking stays on', () => {
    for (const signature of ['', undefined, '91cfbb94-554b-4136-8e21-fa02280d56ed']) {
      const body = encodeAnthropicRequest(
        loop({ type: 'thinking', thinking: 'I should read x', ...(signature === undefined ? {} : { signature }) }),
        'kimi-k2',
        { anthropicSignatures: false },
      )
      expect(assistant(body)[0]).toEqual({ type: 'thinking', thinking: 'I should read x', signature: signature ?? '' })
      expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 2000 })
    }
    // Anthropic itself, as before: the unsigned block goes, and thinking with it.
    for (const opts of [{}, { anthropicSignatures: true }]) {
      const strict = encodeAnthropicRequest(
        loop({ type: 'thinking', thinking: 'I should read x', signature: '' }),
        'c',
        opts,
      )
      expect(assistant(strict).map((b) => (b as { type: string }).type)).toEqual(['tool_use'])
      expect(strict).not.toHaveProperty('thinking')
    }
  })

  test('thinking svc signed for another dialect keeps its words under an empty signature; wordless, it goes', () => {
    const body = encodeAnthropicRequest(
      loop(
        { type: 'thinking', thinking: '', signature: gatewaySigned },
        { type: 'thinking', thinking: 'o-series summary', signature: gatewaySigned },
      ),
      'deepseek-v4',
      { anthropicSignatures: false },
    )
    expect(assistant(body)[0]).toEqual({ type: 'thinking', thinking: 'o-series summary', signature: '' })
    expect(assistant(body)).toHaveLength(2)
  })
})

describe('sanitizeToolUseId', () => {
  test('valid ids pass unchanged; invalid ones map deterministically and stay distinct', () => {
    expect(sanitizeToolUseId('toolu_01A-b')).toBe('toolu_01A-b')
    const a = sanitizeToolUseId('functions.read:0')
    expect(a).toMatch(/^functions_read_0_[a-z0-9]+$/)
    expect(sanitizeToolUseId('functions.read:0')).toBe(a)
    expect(sanitizeToolUseId('functions:read.0')).not.toBe(a)
    expect(sanitizeToolUseId('')).toMatch(/^_[a-z0-9]+$/)
  })
})
