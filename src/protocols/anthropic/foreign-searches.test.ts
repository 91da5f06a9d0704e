import { describe, expect, test } from 'bun:test'
import { withoutForeignSearches } from './foreign-searches'

const ownSearch = [
  { type: 'server_tool_use', id: 'srvtoolu_a', name: 'web_search', input: { query: 'a' } },
  {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_a',
    content: [
      { type: 'web_search_result', url: 'https://a/', title: 'A', encrypted_content: 'sealed', page_age: null },
    ],
  },
]
const foreignSearch = [
  { type: 'server_tool_use', id: 'srvtoolu_ws_1', name: 'web_search', input: { query: 'b' } },
  {
    type: 'web_search_tool_result',
    tool_use_id: 'srvtoolu_ws_1',
    content: [{ type: 'web_search_result', url: 'https://b/', title: 'B', encrypted_content: '', page_age: null }],
  },
]
const citation = (encrypted_index: string) => ({
  type: 'web_search_result_location',
  url: 'https://b/',
  title: 'B',
  cited_text: 'b',
  encrypted_index,
})

describe('withoutForeignSearches', () => {
  test('a body with no search another provider made is the very object', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [...ownSearch, { type: 'text', text: 'A.', citations: [citation('idx')] }] },
      ],
    }
    expect(withoutForeignSearches(body)).toBe(body)
    expect(withoutForeignSearches({ model: 'm' })).toEqual({ model: 'm' })
  })

  test("another provider's search goes, with its citations; Claude's own, and the words, stay", () => {
    const user = { role: 'user', content: 'hi' }
    const body = {
      model: 'm',
      messages: [
        user,
        {
          role: 'assistant',
          content: [
            ...foreignSearch,
            ...ownSearch,
            { type: 'text', text: 'B.', citations: [citation(''), citation('idx')] },
            { type: 'text', text: 'Only B.', citations: [citation('')] },
          ],
        },
      ],
    }
    const out = withoutForeignSearches(body)
    expect(out.messages).toEqual([
      user,
      {
        role: 'assistant',
        content: [
          ...ownSearch,
          { type: 'text', text: 'B.', citations: [citation('idx')] },
          { type: 'text', text: 'Only B.', citations: null },
        ],
      },
    ])
    // The client's body is not changed in place.
    expect(body.messages[1]!.content).toHaveLength(6)
    expect((out.messages as unknown[])[0]).toBe(user)
  })
})
