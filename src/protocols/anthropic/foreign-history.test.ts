import { describe, expect, test } from 'bun:test'
import { withoutForeignHistory } from './foreign-history'

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

describe('withoutForeignHistory: searches', () => {
  test('a body with no search another provider made is the very object', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [...ownSearch, { type: 'text', text: 'A.', citations: [citation('idx')] }] },
      ],
    }
    expect(withoutForeignHistory(body)).toBe(body)
    expect(withoutForeignHistory({ model: 'm' })).toEqual({ model: 'm' })
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
    const out = withoutForeignHistory(body)
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

// base64('gw1:openai-responses:blob'): the signature svc gives thinking another provider did.
const svcSignature = Buffer.from('gw1:openai-responses:blob').toString('base64')
const claudeThinking = { type: 'thinking', thinking: 'mine', signature: 'EqQBCkgIBBAB' }
const toolUse = (id: string) => ({ type: 'tool_use', id, name: 'Read', input: { path: 'a' } })
const toolResult = (id: string) => ({ role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'a' }] })

describe('withoutForeignHistory: thinking', () => {
  test('thinking another provider did goes (empty or svc-made signature); Claude’s own stays', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'chat reasoning', signature: '' },
            { type: 'text', text: 'from GPT' },
          ],
        },
        { role: 'user', content: 'and?' },
        {
          role: 'assistant',
          content: [{ type: 'thinking', thinking: 'o-series', signature: svcSignature }, toolUse('t1')],
        },
        toolResult('t1'),
        { role: 'assistant', content: [claudeThinking, { type: 'text', text: 'from Claude' }] },
        { role: 'user', content: 'thanks' },
      ],
    }
    const out = withoutForeignHistory(body)
    expect(out.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'from GPT' }] },
      { role: 'user', content: 'and?' },
      { role: 'assistant', content: [toolUse('t1')] },
      toolResult('t1'),
      { role: 'assistant', content: [claudeThinking, { type: 'text', text: 'from Claude' }] },
      { role: 'user', content: 'thanks' },
    ])
    expect((body.messages[1]!.content as unknown[]).length).toBe(2)
  })

  test('a turn that was only another provider’s thinking goes whole', () => {
    const body = {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'cut off at max_tokens', signature: '' }] },
        { role: 'user', content: 'go on' },
      ],
    }
    expect(withoutForeignHistory(body).messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'user', content: 'go on' },
    ])
  })

  test('in a tool loop another provider’s turn ended, thinking is off for the request; Claude’s own turn keeps it', () => {
    const loop = (last: unknown[]) => ({
      model: 'm',
      max_tokens: 32_000,
      thinking: { type: 'enabled', budget_tokens: 10_000 },
      messages: [{ role: 'user', content: 'fix it' }, { role: 'assistant', content: last }, toolResult('t1')],
    })
    const foreign = withoutForeignHistory(loop([{ type: 'thinking', thinking: 'x', signature: '' }, toolUse('t1')]))
    expect(foreign.thinking).toBeUndefined()
    expect(foreign.max_tokens).toBe(32_000)
    expect(withoutForeignHistory(loop([toolUse('t1')])).thinking).toBeUndefined()
    expect(withoutForeignHistory({ ...loop([toolUse('t1')]), thinking: { type: 'adaptive' } }).thinking).toBeUndefined()

    const own = loop([claudeThinking, toolUse('t1')])
    expect(withoutForeignHistory(own)).toBe(own)
    const redacted = loop([{ type: 'redacted_thinking', data: 'sealed' }, toolUse('t1')])
    expect(withoutForeignHistory(redacted)).toBe(redacted)
    // Not in a tool loop, or thinking off: nothing to switch off.
    const answered = { ...loop([{ type: 'text', text: 'done' }]), messages: [{ role: 'user', content: 'hi' }] }
    expect(withoutForeignHistory(answered)).toBe(answered)
    const off = { ...loop([toolUse('t1')]), thinking: { type: 'disabled' } }
    expect(withoutForeignHistory(off)).toBe(off)
  })
})
