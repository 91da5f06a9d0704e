import { describe, expect, test } from 'bun:test'
import { decodeAnthropicResponse } from './decode-anthropic-response'

const message = (content: unknown[]) => ({
  id: 'msg_01',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content,
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 2 } },
})

describe('decodeAnthropicResponse: web search', () => {
  test('a search call and its result are one block at the result; an error is its code; other server tools go', () => {
    const decoded = decodeAnthropicResponse(
      message([
        { type: 'text', text: "I'll search." },
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'bun 1.4 release' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: [
            {
              type: 'web_search_result',
              url: 'https://bun.sh/blog/bun-v1.4',
              title: 'Bun 1.4',
              encrypted_content: 'EqgfCioIARgB',
              page_age: '2 days ago',
            },
            { type: 'web_search_result', url: 'https://example.com/', title: 'Example', page_age: null },
          ],
        },
        { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: { query: 'bun 1.5' } },
        { type: 'server_tool_use', id: 'srvtoolu_3', name: 'web_fetch', input: { url: 'https://bun.sh/' } },
        { type: 'web_fetch_tool_result', tool_use_id: 'srvtoolu_3', content: { type: 'web_fetch_result' } },
        {
          type: 'web_search_tool_result',
          tool_use_id: 'srvtoolu_2',
          content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' },
        },
        { type: 'text', text: 'Bun 1.4 is out.', citations: [{ type: 'web_search_result_location' }] },
      ]),
    )
    expect(decoded.content).toEqual([
      { type: 'text', text: "I'll search." },
      {
        type: 'web_search',
        id: 'srvtoolu_1',
        query: 'bun 1.4 release',
        outcome: {
          results: [
            { url: 'https://bun.sh/blog/bun-v1.4', title: 'Bun 1.4', pageAge: '2 days ago' },
            { url: 'https://example.com/', title: 'Example' },
          ],
        },
      },
      { type: 'web_search', id: 'srvtoolu_2', query: 'bun 1.5', outcome: { errorCode: 'max_uses_exceeded' } },
      { type: 'text', text: 'Bun 1.4 is out.' },
    ])
    expect(decoded.usage.webSearches).toBe(2)
  })

  test('a call whose result never came (the turn paused) is left out; a search with no results has none', () => {
    const decoded = decodeAnthropicResponse(
      message([
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'q1' } },
        { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
        { type: 'server_tool_use', id: 'srvtoolu_2', name: 'web_search', input: { query: 'q2' } },
      ]),
    )
    expect(decoded.content).toEqual([{ type: 'web_search', id: 'srvtoolu_1', query: 'q1', outcome: { results: [] } }])
  })
})

describe('decodeAnthropicResponse: citations', () => {
  const cited = (title: unknown) => ({
    type: 'web_search_result_location',
    url: 'https://bun.sh/blog/bun-v1.4',
    title,
    cited_text: 'Bun 1.4 ships a faster installer.',
    encrypted_index: 'EpIBCioIBhgC',
  })

  test("a text block's web search citations cite the whole block; document citations and ones without a URL go", () => {
    const decoded = decodeAnthropicResponse(
      message([
        { type: 'text', text: 'Per the release notes, ', citations: null },
        {
          type: 'text',
          text: 'the installer is faster.',
          citations: [
            cited('Bun 1.4'),
            { type: 'char_location', cited_text: 'x', document_index: 0, start_char_index: 0, end_char_index: 1 },
            { type: 'web_search_result_location', title: 'No URL', cited_text: 'y', encrypted_index: 'E' },
            // A page with no title is named by its URL: OpenAI's url_citation needs a title.
            cited(null),
          ],
        },
        { type: 'text', text: '.', citations: [{ type: 'page_location', cited_text: 'z' }] },
      ]),
    )
    const citation = {
      url: 'https://bun.sh/blog/bun-v1.4',
      title: 'Bun 1.4',
      citedText: 'Bun 1.4 ships a faster installer.',
    }
    expect(decoded.content).toEqual([
      { type: 'text', text: 'Per the release notes, ' },
      {
        type: 'text',
        text: 'the installer is faster.',
        citations: [citation, { ...citation, title: 'https://bun.sh/blog/bun-v1.4' }],
      },
      { type: 'text', text: '.' },
    ])
  })
})

describe('decodeAnthropicResponse: tool_use', () => {
  test('an input sent as JSON text (some compatible servers) is read as the object it holds', () => {
    const decoded = decodeAnthropicResponse(
      message([
        { type: 'tool_use', id: 'call_1', name: 'Read', input: '{"path":"x"}' },
        { type: 'tool_use', id: 'call_2', name: 'Read', input: 'not JSON' },
      ]),
    )
    expect(decoded.content).toEqual([
      { type: 'tool_use', id: 'call_1', name: 'Read', input: { path: 'x' } },
      { type: 'tool_use', id: 'call_2', name: 'Read', input: {} },
    ])
  })
})
