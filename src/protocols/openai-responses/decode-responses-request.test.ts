import { describe, expect, test } from 'bun:test'
import type { ExchangeRequest } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { encodeAnthropicRequest } from '../anthropic/encode-anthropic-request'
import { decodeResponsesRequest, offeredTools } from './decode-responses-request'
import { encodeResponsesRequest } from './encode-responses-request'
import { encodeAnthropicReasoning, tagResponsesSignature } from './reasoning-signature'
import type { ResponsesBody } from './schema'

const decode = (body: Record<string, unknown>) =>
  decodeResponsesRequest({ model: 'svc-pro', input: 'hi', ...body } as ResponsesBody, { defaultMaxTokens: 4096 })

/** A request without max_output_tokens: the default is a ceiling (openOutput), not the client's limit. */
const base: ExchangeRequest = {
  system: [],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }],
  tools: [],
  maxTokens: 4096,
  openOutput: true,
  stream: false,
}

describe('decodeResponsesRequest', () => {
  test('string input is one user text message; defaults fill the rest', () => {
    expect(decode({ input: 'Hello' })).toEqual({
      ...base,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hello' }] }],
    })
  })

  test('instructions and leading system/developer messages are the system prompt; later ones stay in place', () => {
    const request = decode({
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Use metric units.' },
        { role: 'system', content: 'No emoji.' },
        { role: 'user', content: 'Weather?' },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: 'Late rule.' }] },
        { role: 'developer', content: 'Another.' },
        { role: 'user', content: 'And tomorrow?' },
      ],
    })
    expect(request.system).toEqual([
      { type: 'text', text: 'Be brief.' },
      { type: 'text', text: 'Use metric units.' },
      { type: 'text', text: 'No emoji.' },
    ])
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
      {
        role: 'system',
        content: [
          { type: 'text', text: 'Late rule.' },
          { type: 'text', text: 'Another.' },
        ],
      },
      { role: 'user', content: [{ type: 'text', text: 'And tomorrow?' }] },
    ])
  })

  test('a call whose arguments were cut mid-JSON (an upstream stopped at the output limit) is read as {}', () => {
    const request = decode({
      input: [
        { type: 'function_call', call_id: 'call_1', name: 'write_file', arguments: '{"path": "a.txt", "text": "hel' },
        { type: 'function_call_output', call_id: 'call_1', output: 'failed to parse function arguments' },
      ],
    })
    expect(request.messages[0]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'call_1', name: 'write_file', input: {} }],
    })
  })

  test('a function-call turn decodes to tool_use / tool_result, merging same-role items', () => {
    const request = decode({
      input: [
        { role: 'user', content: [{ type: 'input_text', text: 'Weather in Paris and Rome?' }] },
        {
          type: 'message',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Checking.', annotations: [] }],
        },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { type: 'function_call', call_id: 'call_2', name: 'get_weather', arguments: '' },
        { type: 'function_call_output', call_id: 'call_1', output: '18°C' },
        {
          type: 'function_call_output',
          call_id: 'call_2',
          output: [{ type: 'input_text', text: '21°C' }],
        },
        { role: 'user', content: 'Thanks' },
      ],
    })
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', toolUseId: 'call_1', content: [{ type: 'text', text: '18°C' }] },
          { type: 'tool_result', toolUseId: 'call_2', content: [{ type: 'text', text: '21°C' }] },
          { type: 'text', text: 'Thanks' },
        ],
      },
    ])
  })

  test('function calls survive a round trip through the upstream encoder', () => {
    const body = {
      model: 'svc-pro',
      input: [
        { role: 'user', content: 'Go' },
        { type: 'function_call', call_id: 'call_1', name: 'run', arguments: '{"cmd":"ls","n":[1,2]}' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
      ],
    }
    const encoded = encodeResponsesRequest(decode(body), 'gpt-5')
    expect(encoded['input']).toEqual([
      { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Go' }] },
      { type: 'function_call', call_id: 'call_1', name: 'run', arguments: '{"cmd":"ls","n":[1,2]}' },
      { type: 'function_call_output', call_id: 'call_1', output: 'a.txt' },
    ])
  })

  test('images: data URLs become base64 blocks, http URLs url blocks, each with its detail', () => {
    const request = decode({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Compare' },
            { type: 'input_image', image_url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' },
            { type: 'input_image', image_url: 'https://example.com/cat.jpg' },
          ],
        },
      ],
    })
    expect(request.messages[0]?.content).toEqual([
      { type: 'text', text: 'Compare' },
      { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' }, detail: 'auto' },
      { type: 'image', source: { kind: 'url', url: 'https://example.com/cat.jpg' } },
    ])
  })

  test('an image in a tool output keeps its detail, original included', () => {
    const request = decode({
      input: [
        { type: 'function_call', call_id: 'call_1', name: 'screenshot', arguments: '{}' },
        {
          type: 'function_call_output',
          call_id: 'call_1',
          output: [{ type: 'input_image', image_url: 'https://example.com/s.png', detail: 'original' }],
        },
      ],
    })
    expect(request.messages[1]?.content).toEqual([
      {
        type: 'tool_result',
        toolUseId: 'call_1',
        content: [{ type: 'image', source: { kind: 'url', url: 'https://example.com/s.png' }, detail: 'original' }],
      },
    ])
  })

  test('files: data URLs become base64 documents, text files plain text, file_url a link; in tool output too', () => {
    const text = Buffer.from('Line one.').toString('base64')
    const request = decode({
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_file', filename: 'report.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' },
            { type: 'input_file', filename: 'notes.txt', file_data: `data:text/plain;charset=utf-8;base64,${text}` },
            { type: 'input_file', file_url: 'https://example.com/spec.pdf' },
            { type: 'input_file', filename: 'empty.txt', file_data: 'data:text/plain;base64,' },
          ],
        },
        { type: 'function_call', call_id: 'call_1', name: 'fetch', arguments: '{}' },
        {
          type: 'function_call_output',
          call_id: 'call_1',
          output: [{ type: 'input_file', filename: 'a.pdf', file_data: 'data:application/pdf;base64,QQ==' }],
        },
      ],
    })
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          {
            type: 'document',
            title: 'report.pdf',
            source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0=' },
          },
          { type: 'document', title: 'notes.txt', source: { kind: 'text', text: 'Line one.' } },
          { type: 'document', source: { kind: 'url', url: 'https://example.com/spec.pdf' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'fetch', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            toolUseId: 'call_1',
            content: [
              {
                type: 'document',
                title: 'a.pdf',
                source: { kind: 'base64', mediaType: 'application/pdf', data: 'QQ==' },
              },
            ],
          },
        ],
      },
    ])
  })

  test('reasoning items become thinking with the blob tagged as a signature', () => {
    const request = decode({
      input: [
        { role: 'user', content: 'q' },
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [
            { type: 'summary_text', text: 'a' },
            { type: 'summary_text', text: 'b' },
          ],
          encrypted_content: 'blob',
        },
        { type: 'reasoning', id: 'rs_2', summary: [] },
        { role: 'assistant', content: 'answer' },
        { role: 'user', content: 'and then?' },
      ],
    })
    expect(request.messages[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'a\n\nb', signature: tagResponsesSignature('blob') },
        { type: 'text', text: 'answer' },
      ],
    })
  })

  test('a reasoning item with both a summary and its raw text becomes thinking of the summary alone', () => {
    const thinkingOf = (item: Record<string, unknown>) =>
      decode({
        input: [
          { role: 'user', content: 'q' },
          { type: 'reasoning', id: 'rs_1', ...item },
          { role: 'user', content: 'go on' },
        ],
      }).messages[1]?.content
    const summary = [{ type: 'summary_text', text: 'short' }]
    const content = [{ type: 'reasoning_text', text: 'long raw' }]
    expect(thinkingOf({ summary, content, encrypted_content: 'blob' })).toEqual([
      { type: 'thinking', thinking: 'short', signature: tagResponsesSignature('blob') },
    ])
    expect(thinkingOf({ summary: [], content, encrypted_content: 'blob' })).toEqual([
      { type: 'thinking', thinking: 'long raw', signature: tagResponsesSignature('blob') },
    ])
  })

  describe('reasoning items carrying an Anthropic blob', () => {
    const signature = 'EqQBCkYIBxgCKkBsig'
    const blob = encodeAnthropicReasoning({ type: 'thinking', signature })
    const redacted = encodeAnthropicReasoning({ type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' })
    /** A Codex tool loop: the reasoning and the call it made, then the call's output. */
    const toolLoop = (reasoning: Record<string, unknown>[]) =>
      decode({
        reasoning: { effort: 'low' },
        tools: [{ type: 'function', name: 'get_weather', parameters: { type: 'object' } }],
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          ...reasoning,
          { type: 'function_call', call_id: 'toolu_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call_output', call_id: 'toolu_1', output: '18°C' },
        ],
      })

    test('become the signed thinking and redacted_thinking blocks Anthropic sent', () => {
      const request = toolLoop([
        {
          type: 'reasoning',
          id: 'rs_1',
          summary: [{ type: 'summary_text', text: 'Need a lookup.' }],
          encrypted_content: blob,
        },
        { type: 'reasoning', id: 'rs_2', summary: [], encrypted_content: redacted },
      ])
      expect(request.messages[1]).toEqual({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'Need a lookup.', signature },
          { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
      })
      // The Anthropic encoder keeps both blocks, and thinking stays on through the tool loop.
      const body = encodeAnthropicRequest(request, 'claude')
      expect(body['thinking']).toEqual({ type: 'enabled', budget_tokens: 1024 })
      expect((body['messages'] as { content: unknown[] }[])[1]?.content.slice(0, 2)).toEqual([
        { type: 'thinking', thinking: 'Need a lookup.', signature },
        { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va' },
      ])
    })

    test.each([
      ['an OpenAI blob', 'gAAAAABo-openai-fernet-token=='],
      ['garbage', '!!not base64 at all'],
      ['our prefix with broken JSON', `${blob.slice(0, 40)}AAAA`],
      [
        'an unknown version',
        Buffer.from(JSON.stringify({ v: 2, provider: 'anthropic', type: 'thinking', signature })).toString('base64url'),
      ],
      [
        'an empty signature',
        Buffer.from(JSON.stringify({ v: 1, provider: 'anthropic', type: 'thinking', signature: '' })).toString(
          'base64url',
        ),
      ],
    ])('%s stays a tagged blob: never sent to Anthropic, and thinking goes off', (_, encrypted) => {
      const request = toolLoop([
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'x' }], encrypted_content: encrypted },
      ])
      expect(request.messages[1]?.content[0]).toEqual({
        type: 'thinking',
        thinking: 'x',
        signature: tagResponsesSignature(encrypted),
      })
      const body = encodeAnthropicRequest(request, 'claude')
      expect(body).not.toHaveProperty('thinking')
      expect((body['messages'] as { content: { type: string }[] }[])[1]?.content.map((b) => b.type)).toEqual([
        'tool_use',
      ])
    })

    test('a reasoning item without encrypted_content (the old behaviour) still turns thinking off', () => {
      const request = toolLoop([{ type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'x' }] }])
      expect(request.messages[1]?.content[0]).toEqual({ type: 'thinking', thinking: 'x' })
      expect(encodeAnthropicRequest(request, 'claude')).not.toHaveProperty('thinking')
    })

    test('an OpenAI Responses upstream gets no Anthropic reasoning', () => {
      const request = toolLoop([
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'x' }], encrypted_content: blob },
      ])
      const body = encodeResponsesRequest(request, 'gpt-5')
      expect((body['input'] as { type: string }[]).map((item) => item.type)).toEqual([
        'message',
        'function_call',
        'function_call_output',
      ])
    })
  })

  test.each([
    ['auto', undefined, { type: 'auto' }],
    ['none', undefined, { type: 'none' }],
    ['required', undefined, { type: 'any' }],
    [{ type: 'function', name: 'get_weather' }, undefined, { type: 'tool', name: 'get_weather' }],
    ['required', false, { type: 'any', disableParallel: true }],
    [undefined, false, { type: 'auto', disableParallel: true }],
    [undefined, undefined, undefined],
    [{ type: 'allowed_tools', mode: 'required', tools: [] }, undefined, { type: 'any' }],
    // A hosted tool cannot be forced elsewhere: the model chooses, still one call at a time.
    [{ type: 'file_search' }, false, { type: 'auto', disableParallel: true }],
  ])('tool_choice %j with parallel_tool_calls %j → %j', (choice, parallel, expected) => {
    expect(decode({ tool_choice: choice, parallel_tool_calls: parallel }).toolChoice).toEqual(expected as never)
  })

  // Other dialects have no such choice: every tool was offered, and the model could call one the
  // client had excluded (a parameters audit).
  test('allowed_tools narrows the offer to the tools it lists; one left and required is that tool', () => {
    const tools = [{ type: 'function', name: 'read' }, { type: 'function', name: 'delete_all' }, { type: 'web_search' }]
    const auto = decode({
      tools,
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'read' }] },
    })
    expect({ tools: auto.tools.map((t) => t.name), webSearch: auto.webSearch, choice: auto.toolChoice }).toEqual({
      tools: ['read'],
      webSearch: undefined,
      choice: { type: 'auto' },
    })
    const required = decode({
      tools,
      tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'read' }] },
      parallel_tool_calls: false,
    })
    expect(required.toolChoice).toEqual({ type: 'tool', name: 'read', disableParallel: true })
    const withSearch = decode({
      tools,
      tool_choice: {
        type: 'allowed_tools',
        mode: 'required',
        tools: [{ type: 'function', name: 'read' }, { type: 'web_search' }],
      },
    })
    expect({ tools: withSearch.tools.map((t) => t.name), search: withSearch.webSearch !== undefined }).toEqual({
      tools: ['read'],
      search: true,
    })
    expect(withSearch.toolChoice).toEqual({ type: 'any' })
  })

  test('function tools become definitions; hosted tools are skipped', () => {
    const closed = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    }
    const request = decode({
      tools: [
        { type: 'function', name: 'get_weather', description: 'Weather', parameters: closed, strict: true },
        { type: 'web_search' },
        { type: 'function', name: 'ping' },
        // Not a schema strict mode takes (an open object): sent unstrict rather than refused.
        { type: 'function', name: 'open', parameters: { type: 'object' }, strict: true },
      ],
    })
    expect(request.tools).toEqual([
      { name: 'get_weather', description: 'Weather', inputSchema: closed, strict: true },
      { name: 'ping', inputSchema: { type: 'object', properties: {} } },
      { name: 'open', inputSchema: { type: 'object' } },
    ])
  })

  test('the hosted web search, under any of its names, is offered as the web search tool; other hosted tools are not', () => {
    for (const type of ['web_search', 'web_search_2025_08_26', 'web_search_preview', 'web_search_preview_2025_03_11']) {
      const request = decode({ tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }, { type }] })
      expect(request).toEqual({ ...base, webSearch: {} })
    }
    expect(decode({ tools: [{ type: 'file_search', vector_store_ids: ['vs_1'] }] })).toEqual(base)
  })

  test("web search keeps its domain filter and the user's location; search_context_size has no equivalent", () => {
    const request = decode({
      tools: [
        { type: 'function', name: 'ping' },
        {
          type: 'web_search',
          filters: { allowed_domains: ['docs.python.org', '', 7] },
          user_location: { type: 'approximate', city: 'Paris', region: '', country: 'FR', timezone: 'Europe/Paris' },
          search_context_size: 'high',
          external_web_access: true,
        },
      ],
    })
    expect(request.tools.map((t) => t.name)).toEqual(['ping'])
    expect(request.webSearch).toEqual({
      allowedDomains: ['docs.python.org'],
      userLocation: { city: 'Paris', country: 'FR', timezone: 'Europe/Paris' },
    })
    // Empty settings are no settings.
    expect(
      decode({
        tools: [{ type: 'web_search', filters: { allowed_domains: [] }, user_location: { type: 'approximate' } }],
      }).webSearch,
    ).toEqual({})
  })

  test("a search of OpenAI's cached pages only (Codex's default) is not offered elsewhere: the live web was not asked for", () => {
    const codexDefault = { type: 'web_search', external_web_access: false }
    expect(decode({ tools: [codexDefault] }).webSearch).toBeUndefined()
    expect(decode({ tools: [{ ...codexDefault, external_web_access: true }] }).webSearch).toEqual({})
  })

  test('a web search in the history is skipped, as before', () => {
    const request = decode({
      input: [
        { role: 'user', content: 'news?' },
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'news' } },
        { role: 'assistant', content: [{ type: 'output_text', text: 'Here.' }] },
        { role: 'user', content: 'more?' },
      ],
    })
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'news?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Here.' }] },
      { role: 'user', content: [{ type: 'text', text: 'more?' }] },
    ])
  })

  // Codex resends a turn whose stream broke with what had finished of it last; Claude took that
  // as a prefill (refused under thinking, and by its 5.x models at all).
  test('an answer after the last user turn, words and reasoning only, is left out: the model answers again', () => {
    const asked = { role: 'user', content: 'fix the test' }
    const reasoning = { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'look' }] }
    const said = { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Looking.' }] }
    const userOnly = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'fix the test' }] }]
    expect(decode({ input: [asked, reasoning] }).messages).toEqual(userOnly)
    expect(decode({ input: [asked, reasoning, said] }).messages).toEqual(userOnly)
    // A call stays: its output is owed, and the turn is no answer to give again.
    const call = { type: 'function_call', call_id: 'call_1', name: 'exec', arguments: '{}' }
    expect(decode({ input: [asked, reasoning, call] }).messages.at(-1)).toMatchObject({ role: 'assistant' })
    // Instructions given after the answer do not hide it; they stay.
    const developer = { role: 'developer', content: 'Be brief.' }
    expect(decode({ input: [asked, reasoning, said, developer] }).messages).toEqual([
      ...userOnly,
      { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
    ])
    // An assistant turn alone is all there is.
    expect(decode({ input: [said] }).messages).toEqual([
      { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }] },
    ])
  })

  test("a namespace's function tools follow the others, named <namespace>__<name>, and so do calls to them", () => {
    const request = decode({
      tools: [
        { type: 'function', name: 'exec_command', parameters: { type: 'object' } },
        {
          type: 'namespace',
          name: 'docs',
          description: 'The project documentation server.',
          tools: [
            { type: 'function', name: 'search', description: 'Search the docs.', parameters: { type: 'object' } },
            { type: 'function', name: 'fetch' },
            { type: 'web_search' },
          ],
        },
        // A top-level function of the same qualified name keeps it; the namespaced one is not offered.
        { type: 'function', name: 'tools__ping' },
        { type: 'namespace', name: 'tools', tools: [{ type: 'function', name: 'ping' }] },
      ],
      input: [
        { role: 'user', content: 'find the setup page' },
        { type: 'function_call', call_id: 'c1', namespace: 'docs', name: 'search', arguments: '{"q":"setup"}' },
        { type: 'function_call_output', call_id: 'c1', output: 'setup.md' },
      ],
    })
    expect(request.tools.map((t) => t.name)).toEqual(['exec_command', 'tools__ping', 'docs__search', 'docs__fetch'])
    expect(request.tools[2]).toEqual({
      name: 'docs__search',
      description: 'Search the docs.',
      inputSchema: { type: 'object' },
    })
    expect(request.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'c1', name: 'docs__search', input: { q: 'setup' } }],
    })
  })

  // Codex 0.169 for a model whose metadata says use_responses_lite (GPT-6's), as captured: no
  // top-level tools, every tool in one leading `additional_tools` item (descriptions shortened).
  const liteTools = [
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
          description: 'Waits on a yielded `exec` cell.',
          strict: false,
          parameters: { type: 'object', properties: { cell_id: { type: 'string' } }, required: ['cell_id'] },
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
          strict: false,
          parameters: { type: 'object', properties: { duration_ms: { type: 'number' } } },
        },
      ],
    },
    { type: 'web_search', external_web_access: true },
    { type: 'file_search', vector_store_ids: ['vs_1'] },
  ]
  const liteConversation = [
    { role: 'developer', content: [{ type: 'input_text', text: '<permissions instructions>' }] },
    { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'say hi' }] },
  ]

  test("Codex's responses-lite additional_tools item: its tools are the request's, decoded as top-level ones", () => {
    const item = { type: 'additional_tools', id: 'at_01', role: 'developer', tools: liteTools }
    const request = decode({ input: [item, ...liteConversation], tool_choice: 'auto', parallel_tool_calls: false })
    expect(request.tools.map((t) => t.name)).toEqual(['functions__exec', 'functions__wait', 'clock__sleep'])
    // Exactly what the same tools at the top level decode to (custom, namespaced, hosted alike).
    expect(request).toEqual(
      decode({ input: liteConversation, tools: liteTools, tool_choice: 'auto', parallel_tool_calls: false }),
    )
    expect(request.webSearch).toEqual({})
    // The item is no turn: the developer message after it still opens the conversation, as the system prompt.
    expect(request.system).toEqual([{ type: 'text', text: '<permissions instructions>' }])
    expect(request.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'say hi' }] }])
  })

  test('additional_tools join the top-level tools; a name offered again is its latest offer, in its first place', () => {
    const fn = (name: string, description: string) => ({ type: 'function', name, description })
    const ns = (name: string, tools: unknown[]) => ({ type: 'namespace', name, tools })
    const request = decode({
      tools: [fn('ping', 'top'), fn('shared', 'top')],
      input: [
        { type: 'additional_tools', tools: [fn('shared', 'first item'), ns('docs', [fn('search', 'old')])] },
        { role: 'user', content: 'hi' },
        { type: 'function_call', call_id: 'c1', namespace: 'docs', name: 'search', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'none' },
        // Mid-conversation: a newer definition, and a namespace offered again with one more member.
        {
          type: 'additional_tools',
          tools: [fn('shared', 'second item'), ns('docs', [fn('fetch', 'new'), fn('search', 'new')]), fn('late', 'x')],
        },
      ],
    })
    expect(request.tools.map((t) => [t.name, t.description])).toEqual([
      ['ping', 'top'],
      ['shared', 'second item'],
      ['late', 'x'],
      ['docs__search', 'new'],
      ['docs__fetch', 'new'],
    ])
    expect(request.messages[1]).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'c1', name: 'docs__search', input: {} }],
    })
  })

  test("offeredTools: what the answer's encoders read a call's namespace and kind from", () => {
    const tools = [{ type: 'function', name: 'ping' }]
    // Without an additional_tools item: the top-level tools, the very array.
    expect(offeredTools({ tools, input: 'hi' })).toBe(tools)
    expect(offeredTools({ input: [{ role: 'user', content: 'hi' }] })).toBeUndefined()
    expect(offeredTools(undefined)).toBeUndefined()
    expect(
      offeredTools({ tools, input: [{ type: 'additional_tools', tools: liteTools }, ...liteConversation] }),
    ).toEqual([...tools, ...liteTools])
  })

  test.each([
    [{ effort: 'high' }, { type: 'adaptive', effort: 'high' }],
    [
      { effort: 'minimal', summary: 'auto' },
      { type: 'adaptive', effort: 'minimal', summary: true },
    ],
    [
      { effort: 'low', summary: null },
      { type: 'adaptive', effort: 'low' },
    ],
    [{ effort: 'none' }, { type: 'disabled' }],
    [{ summary: 'auto' }, undefined],
  ])('reasoning %j → thinking %j', (reasoning, expected) => {
    expect(decode({ reasoning }).thinking).toEqual(expected as never)
  })

  test('text.format: json_schema (flat) and json_object become the response format; text is the default', () => {
    const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }
    expect(
      decode({
        text: { format: { type: 'json_schema', name: 'weather', description: 'A city', schema, strict: true } },
      }).responseFormat,
    ).toEqual({ type: 'json_schema', name: 'weather', description: 'A city', schema, strict: true })
    expect(decode({ text: { format: { type: 'json_object' } } }).responseFormat).toEqual({ type: 'json_object' })
    expect(decode({ text: { format: { type: 'text' }, verbosity: 'low' } })).toEqual(base)
    expect(decode({ text: null })).toEqual(base)
  })

  test('sampling, limits, stream and user carry over', () => {
    expect(
      decode({
        max_output_tokens: 300,
        temperature: 0.2,
        top_p: 0.9,
        stream: true,
        user: 'u1',
        safety_identifier: 's1',
      }),
    ).toEqual({
      ...base,
      maxTokens: 300,
      openOutput: undefined,
      temperature: 0.2,
      topP: 0.9,
      stream: true,
      user: 's1',
    })
  })

  test.each([
    [{ input: [{ role: 'robot', content: 'x' }] }, 'input[0].role'],
    [{ input: [{ role: 'user', content: 5 }] }, 'input[0].content'],
    [
      { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] },
      'input[0].content[0].file_id',
    ],
    [{ input: [{ role: 'user', content: [{ type: 'input_image' }] }] }, 'input[0].content[0].image_url'],
    [
      { input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'data:image/png,raw' }] }] },
      'input[0].content[0].image_url',
    ],
    [
      {
        input: [
          { role: 'user', content: [{ type: 'input_image', image_url: 'https://example.com/a.png', detail: 'max' }] },
        ],
      },
      'input[0].content[0].detail',
    ],
    [{ input: [{ role: 'user', content: [{ type: 'input_file', file_data: 'x' }] }] }, 'input[0].content[0].file_data'],
    [
      { input: [{ role: 'user', content: [{ type: 'input_file', file_id: 'file-1' }] }] },
      'input[0].content[0].file_id',
    ],
    [
      { input: [{ role: 'user', content: [{ type: 'input_file', file_url: 'ftp://example.com/a.pdf' }] }] },
      'input[0].content[0].file_url',
    ],
    [{ input: [{ role: 'user', content: [{ type: 'input_file', filename: 'a.pdf' }] }] }, 'input[0].content[0]'],
    [
      { input: [{ role: 'developer', content: [{ type: 'input_file', file_url: 'https://example.com/a.pdf' }] }] },
      'input[0].content',
    ],
    [{ input: ['hi'] }, 'input[0]'],
    [{ input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: 7 }] }, 'input[0].arguments'],
    [{ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }, 'input[0].call_id'],
    [{ input: [{ type: 'function_call_output', call_id: 'c' }] }, 'input[0].output'],
    [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input[0].type'],
    [{ input: [] }, 'input'],
    [{ previous_response_id: 'resp_1' }, 'previous_response_id'],
    [{ tools: [{ type: 'function' }] }, 'tools[0].name'],
    [
      { tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f', parameters: 'x' }] }] },
      'tools[0].tools[0].parameters',
    ],
    [{ tool_choice: 'sometimes' }, 'tool_choice'],
    [{ tool_choice: { type: 'function' } }, 'tool_choice.name'],
    [{ tool_choice: { type: 'custom', name: '' } }, 'tool_choice.name'],
    [{ tools: [{ type: 'custom' }] }, 'tools[0].name'],
    [{ tools: [{ type: 'custom', name: 'apply_patch', format: 'lark' }] }, 'tools[0].format'],
    [
      { tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'custom', name: 'c', format: 'lark' }] }] },
      'tools[0].tools[0].format',
    ],
    // An additional_tools item svc cannot read is refused as top-level tools are, where it is.
    [{ input: [{ type: 'additional_tools' }, { role: 'user', content: 'hi' }] }, 'input[0].tools'],
    [
      {
        input: [
          { type: 'additional_tools', tools: {} },
          { role: 'user', content: 'hi' },
        ],
      },
      'input[0].tools',
    ],
    [
      {
        input: [
          { type: 'additional_tools', tools: [7] },
          { role: 'user', content: 'hi' },
        ],
      },
      'input[0].tools[0]',
    ],
    [
      {
        input: [
          { role: 'user', content: 'hi' },
          { type: 'additional_tools', tools: [{ type: 'function' }] },
        ],
      },
      'input[1].tools[0].name',
    ],
    [
      {
        tools: [
          { type: 'function', name: 'a' },
          { type: 'custom', name: 'b' },
        ],
        input: [
          { role: 'user', content: 'hi' },
          {
            type: 'additional_tools',
            tools: [{ type: 'namespace', name: 'ns', tools: [{ type: 'function', name: 'f', parameters: 'x' }] }],
          },
        ],
      },
      'input[1].tools[0].tools[0].parameters',
    ],
    [
      {
        input: [
          {
            type: 'additional_tools',
            tools: [
              { type: 'function', name: 'f' },
              { type: 'namespace', name: 'ns', tools: [{ type: 'custom', name: 'c', format: 'lark' }] },
            ],
          },
          { role: 'user', content: 'hi' },
        ],
      },
      'input[0].tools[1].tools[0].format',
    ],
    [{ reasoning: { effort: 'extreme' } }, 'reasoning.effort'],
    [{ max_output_tokens: 0 }, 'max_output_tokens'],
    [{ text: { format: 'json' } }, 'text.format'],
    [{ text: { format: { type: 'yaml' } } }, 'text.format.type'],
    [{ text: { format: { type: 'json_schema', name: 'x' } } }, 'text.format.schema'],
  ])('%j is rejected naming %s', (body, param) => {
    let error: unknown
    try {
      decode(body)
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ kind: 'invalid_request', status: 400, param })
  })
})
