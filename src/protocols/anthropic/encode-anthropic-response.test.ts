import { describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import type { ExchangeResponse } from '../../exchange/types'
import { encodeAnthropicResponse, serverToolUseId } from './encode-anthropic-response'

const usage = { input: 40, cacheRead: 0, cacheWrite: 0, output: 12, reasoning: 0 }

describe('encodeAnthropicResponse: web searches', () => {
  test('a search is a server_tool_use and its web_search_tool_result; usage counts the searches', () => {
    const response: ExchangeResponse = {
      id: 'resp_up',
      model: 'gpt-5',
      content: [
        {
          type: 'web_search',
          id: 'ws_1',
          query: 'svc gateway',
          outcome: {
            results: [
              { url: 'https://a.example/', title: 'Page A', pageAge: '2 days ago' },
              { url: 'https://b.example/', title: 'https://b.example/' },
            ],
          },
        },
        { type: 'web_search', id: 'ws_2', query: 'again', outcome: { errorCode: 'unavailable' } },
        { type: 'text', text: 'Found it.' },
      ],
      stopReason: 'end_turn',
      stopSequence: null,
      usage: { ...usage, webSearches: 2 },
    }
    expect(encodeAnthropicResponse(response, { id: 'msg_gw_1', model: 'sonnet' })).toEqual({
      id: 'msg_gw_1',
      type: 'message',
      role: 'assistant',
      model: 'sonnet',
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_ws_1', name: 'web_search', input: { query: 'svc gateway' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_ws_1',
          content: [
            {
              type: 'web_search_result',
              url: 'https://a.example/',
              title: 'Page A',
              encrypted_content: '',
              page_age: '2 days ago',
            },
            {
              type: 'web_search_result',
              url: 'https://b.example/',
              title: 'https://b.example/',
              encrypted_content: '',
              page_age: null,
            },
          ],
        },
        { type: 'server_tool_use', id: 'srvtoolu_ws_2', name: 'web_search', input: { query: 'again' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_ws_2',
          content: { type: 'web_search_tool_result_error', error_code: 'unavailable' },
        },
        { type: 'text', text: 'Found it.' },
      ],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: {
        input_tokens: 40,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 12,
        server_tool_use: { web_search_requests: 2 },
      },
    })
  })

  test('no server_tool_use usage when no searches were reported', () => {
    const encoded = encodeAnthropicResponse(
      { id: 'x', model: 'm', content: [], stopReason: 'end_turn', stopSequence: null, usage },
      { id: 'msg_1', model: 'm' },
    )
    expect(encoded['usage']).not.toHaveProperty('server_tool_use')
  })

  test.each([
    ['srvtoolu_01WYG3ziw53XMcoyKL4XcZmE', 'srvtoolu_01WYG3ziw53XMcoyKL4XcZmE'],
    ['ws_68c1', 'srvtoolu_ws_68c1'],
    ['ws.68:c1', 'srvtoolu_ws_68_c1_hr15g1'],
  ])('server_tool_use id %s → %s', (id, expected) => {
    expect(serverToolUseId(id)).toBe(expected)
  })
})

describe('encodeAnthropicResponse: citations', () => {
  test("a text block's citations are web_search_result_locations of the whole block, not split at spans", () => {
    const response: ExchangeResponse = {
      id: 'resp_up',
      model: 'gpt-5',
      content: [
        {
          type: 'text',
          text: 'Svc is a gateway.',
          citations: [
            { url: 'https://a.example/', title: 'Page A', citedText: 'Svc', span: { start: 0, end: 3 } },
            { url: 'https://b.example/', title: 'Page B', citedText: 'a gateway.', span: { start: 7, end: 17 } },
          ],
        },
        { type: 'text', text: 'Uncited.', citations: [] },
      ],
      stopReason: 'end_turn',
      stopSequence: null,
      usage,
    }
    // Typed as the SDK's blocks: the SDK's types accept what we write.
    const content: Anthropic.ContentBlock[] = [
      {
        type: 'text',
        text: 'Svc is a gateway.',
        citations: [
          {
            type: 'web_search_result_location',
            url: 'https://a.example/',
            title: 'Page A',
            cited_text: 'Svc',
            encrypted_index: '',
          },
          {
            type: 'web_search_result_location',
            url: 'https://b.example/',
            title: 'Page B',
            cited_text: 'a gateway.',
            encrypted_index: '',
          },
        ],
      },
      // The SDK's type names citations on every text block; Anthropic's answers leave an uncited one's out.
      { type: 'text', text: 'Uncited.' } as Anthropic.TextBlock,
    ]
    expect(encodeAnthropicResponse(response, { id: 'msg_gw_1', model: 'sonnet' })['content']).toEqual(content)
  })
})
