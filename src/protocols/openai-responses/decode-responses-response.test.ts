import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../../lib/errors'
import { isReported } from '../unreported-usage'
import { decodeResponsesResponse, responsesUsage } from './decode-responses-response'
import { tagResponsesSignature } from './reasoning-signature'

const response = (patch: Record<string, unknown>) => ({
  id: 'resp_up',
  object: 'response',
  status: 'completed',
  model: 'gpt-5',
  output: [],
  usage: { input_tokens: 36, input_tokens_details: { cached_tokens: 0 }, output_tokens: 87, total_tokens: 123 },
  ...patch,
})

describe('decodeResponsesResponse', () => {
  test('the §2.5 example: reasoning, message and function call', () => {
    expect(
      decodeResponsesResponse(
        response({
          output: [
            {
              type: 'reasoning',
              id: 'rs_123',
              summary: [{ type: 'summary_text', text: 'why' }],
              encrypted_content: 'e',
            },
            { type: 'reasoning', id: 'rs_124', summary: [] },
            {
              type: 'message',
              id: 'msg_123',
              status: 'completed',
              role: 'assistant',
              content: [{ type: 'output_text', text: 'Hi!', annotations: [] }],
            },
            { type: 'web_search_call', id: 'ws_1', status: 'completed' },
            {
              type: 'function_call',
              id: 'fc_123',
              call_id: 'call_unLAR8',
              name: 'get_current_weather',
              arguments: '{"location":"Boston, MA"}',
              status: 'completed',
            },
          ],
        }),
      ),
    ).toEqual({
      id: 'resp_up',
      model: 'gpt-5',
      content: [
        { type: 'thinking', thinking: 'why', signature: tagResponsesSignature('e') },
        { type: 'text', text: 'Hi!' },
        { type: 'tool_use', id: 'call_unLAR8', name: 'get_current_weather', input: { location: 'Boston, MA' } },
      ],
      stopReason: 'tool_use',
      stopSequence: null,
      // The hosted web search call has no block, but it is billed: one search.
      usage: { input: 36, cacheRead: 0, cacheWrite: 0, output: 87, reasoning: 0, webSearches: 1 },
    })
  })

  test("searches become web_search blocks in output order, titled by the answer's citations", () => {
    const decoded = decodeResponsesResponse(
      response({
        output: [
          {
            type: 'web_search_call',
            id: 'ws_1',
            status: 'completed',
            action: {
              type: 'search',
              query: 'svc gateway',
              sources: [
                { type: 'url', url: 'https://a.example/' },
                { type: 'api', name: 'oai-weather' },
                { type: 'url', url: 'https://b.example/' },
              ],
            },
          },
          {
            type: 'web_search_call',
            id: 'ws_2',
            status: 'completed',
            action: { type: 'open_page', url: 'https://a.example/' },
          },
          { type: 'web_search_call', id: 'ws_3', status: 'failed', action: { type: 'search', query: 'again' } },
          { type: 'web_search_call', id: 'ws_4', status: 'completed', action: { type: 'search', query: 'no sources' } },
          {
            type: 'message',
            role: 'assistant',
            content: [
              {
                type: 'output_text',
                text: 'Found it.',
                annotations: [
                  { type: 'url_citation', start_index: 0, end_index: 5, url: 'https://a.example/', title: 'Page A' },
                  { type: 'url_citation', start_index: 6, end_index: 9, url: 'https://a.example/', title: 'Later' },
                ],
              },
            ],
          },
        ],
      }),
    )
    expect(decoded.content).toEqual([
      {
        type: 'web_search',
        id: 'ws_1',
        query: 'svc gateway',
        outcome: {
          results: [
            { url: 'https://a.example/', title: 'Page A' },
            { url: 'https://b.example/', title: 'https://b.example/' },
          ],
        },
      },
      { type: 'web_search', id: 'ws_3', query: 'again', outcome: { errorCode: 'unavailable' } },
      { type: 'web_search', id: 'ws_4', query: 'no sources', outcome: { results: [] } },
      {
        type: 'text',
        text: 'Found it.',
        citations: [
          { url: 'https://a.example/', title: 'Page A', citedText: 'Found', span: { start: 0, end: 5 } },
          { url: 'https://a.example/', title: 'Later', citedText: 'it.', span: { start: 6, end: 9 } },
        ],
      },
    ])
    expect(decoded.stopReason).toBe('end_turn')
    // Billed per search action that did not fail: an open_page is a call of the tool, not a search.
    expect(decoded.usage.webSearches).toBe(2)
  })

  test('url_citation annotations become citations of the joined text: offset, clamped, empty spans dropped', () => {
    const cite = (start_index: number, end_index: number, extra: Record<string, unknown> = {}) => ({
      type: 'url_citation',
      start_index,
      end_index,
      url: 'https://a.example/',
      title: 'Page A',
      ...extra,
    })
    const decoded = decodeResponsesResponse(
      response({
        output: [
          {
            type: 'message',
            role: 'assistant',
            content: [
              {
                type: 'output_text',
                text: 'Hello ',
                annotations: [cite(0, 5), { type: 'file_citation', index: 0, file_id: 'file_1', filename: 'a.pdf' }],
              },
              {
                type: 'output_text',
                text: 'world wide',
                annotations: [
                  cite(0, 5, { url: 'https://b.example/', title: 'Page B' }),
                  cite(6, 99),
                  cite(-3, 2, { title: undefined }),
                  cite(4, 4),
                  cite(8, 3),
                  cite(20, 30),
                  { type: 'url_citation', url: 'https://c.example/', title: 'No span' },
                ],
              },
            ],
          },
          {
            type: 'message',
            role: 'assistant',
            content: [{ type: 'output_text', text: 'Plain.', annotations: [] }],
          },
        ],
      }),
    )
    expect(decoded.content).toEqual([
      {
        type: 'text',
        text: 'Hello world wide',
        citations: [
          { url: 'https://a.example/', title: 'Page A', citedText: 'Hello', span: { start: 0, end: 5 } },
          { url: 'https://b.example/', title: 'Page B', citedText: 'world', span: { start: 6, end: 11 } },
          // Past the end of its part: clamped to it.
          { url: 'https://a.example/', title: 'Page A', citedText: 'wide', span: { start: 12, end: 16 } },
          // Before the start: clamped; no title, so titled by its URL.
          { url: 'https://a.example/', title: 'https://a.example/', citedText: 'wo', span: { start: 6, end: 8 } },
        ],
      },
      { type: 'text', text: 'Plain.' },
    ])
  })

  test.each([
    [{ status: 'completed' }, 'end_turn'],
    [{ status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } }, 'max_tokens'],
    [{ status: 'incomplete', incomplete_details: { reason: 'max_tokens' } }, 'max_tokens'],
    [{ status: 'incomplete', incomplete_details: { reason: 'content_filter' } }, 'refusal'],
    [{ status: 'failed', error: { code: 'server_error', message: 'x' } }, 'error'],
    [
      { output: [{ type: 'message', role: 'assistant', content: [{ type: 'refusal', refusal: 'I cannot.' }] }] },
      'refusal',
    ],
  ])('%j → %s', (patch, stopReason) => {
    expect(decodeResponsesResponse(response(patch)).stopReason).toBe(stopReason as never)
  })

  test("a message of refusal parts is a declined block (the model's refusal); one mixing in output_text stays text", () => {
    const message = (content: unknown[]) => ({ type: 'message', role: 'assistant', status: 'completed', content })
    const refusal = { type: 'refusal', refusal: 'I cannot.' }
    expect(decodeResponsesResponse(response({ output: [message([refusal])] }))).toMatchObject({
      content: [{ type: 'text', text: 'I cannot.', refusal: true }],
      stopReason: 'refusal',
    })
    const mixed = decodeResponsesResponse(
      response({ output: [message([{ type: 'output_text', text: 'Well. ', annotations: [] }, refusal])] }),
    )
    expect(mixed.content).toEqual([{ type: 'text', text: 'Well. I cannot.' }])
    expect(mixed.stopReason).toBe('refusal')
    // An empty refusal says nothing: no block.
    expect(
      decodeResponsesResponse(response({ output: [message([{ type: 'refusal', refusal: '' }])] })).content,
    ).toEqual([])
  })

  test('usage: input excludes cache reads and writes; reasoning from output details (§4.7)', () => {
    expect(
      responsesUsage({
        input_tokens: 2006,
        input_tokens_details: { cached_tokens: 1920, cache_write_tokens: 6 },
        output_tokens: 300,
        output_tokens_details: { reasoning_tokens: 120 },
        total_tokens: 2306,
      }),
    ).toEqual({ input: 80, cacheRead: 1920, cacheWrite: 6, output: 300, reasoning: 120 })
    expect(responsesUsage(null)).toMatchObject({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 })
  })

  test("usage under Chat's names (a proxy bridging a Chat server) is read where Responses' are absent", () => {
    const usage = responsesUsage({
      prompt_tokens: 20,
      prompt_tokens_details: { cached_tokens: 8 },
      completion_tokens: 4,
      completion_tokens_details: { reasoning_tokens: 1 },
      total_tokens: 24,
    })
    expect(usage).toEqual({ input: 12, cacheRead: 8, cacheWrite: 0, output: 4, reasoning: 1 })
    expect(isReported(usage)).toBe(true)
  })

  test('usage: none, or counts that are no numbers, was never reported; reported counts were', () => {
    expect(isReported(responsesUsage({ input_tokens: 10, output_tokens: 225 }))).toBe(true)
    for (const usage of [null, undefined, {}, { input_tokens: '10', output_tokens: '225' }, { input_tokens: 10 }]) {
      expect(isReported(responsesUsage(usage))).toBe(false)
    }
  })

  test('usage: cached counts past the prompt, or a negative prompt, leave a negative input, never a free one', () => {
    const cached = responsesUsage({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 1_000_000 },
      output_tokens: 5,
    })
    expect(cached).toEqual({ input: 10 - 1_000_000, cacheRead: 1_000_000, cacheWrite: 0, output: 5, reasoning: 0 })
    expect(responsesUsage({ input_tokens: -1_000_000, output_tokens: 5 }).input).toBe(-1_000_000)
  })

  test('a body that is not a response is a 502', () => {
    expect(() => decodeResponsesResponse({ error: 'nope' })).toThrow(GatewayError)
  })
})
