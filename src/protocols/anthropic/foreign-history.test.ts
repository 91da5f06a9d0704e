import { describe, expect, test } from 'bun:test'
import { withThoughtSignature } from '../thought-signature'
import { refusesThinkingSignature, withoutForeignHistory, withoutThinkingHistory } from './foreign-history'

const anthropic = { anthropicSignatures: true }

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
    expect(withoutForeignHistory(body, anthropic)).toBe(body)
    expect(withoutForeignHistory({ model: 'm' }, anthropic)).toEqual({ model: 'm' })
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
    const out = withoutForeignHistory(body, anthropic)
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
    const out = withoutForeignHistory(body, anthropic)
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
    expect(withoutForeignHistory(body, anthropic).messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'user', content: 'go on' },
    ])
  })

  test('in a tool loop another provider’s turn ended, thinking with a budget is off for the request; Claude’s own turn and adaptive thinking keep it', () => {
    const loop = (last: unknown[]) => ({
      model: 'm',
      max_tokens: 32_000,
      thinking: { type: 'enabled', budget_tokens: 10_000 },
      messages: [{ role: 'user', content: 'fix it' }, { role: 'assistant', content: last }, toolResult('t1')],
    })
    const foreign = withoutForeignHistory(
      loop([{ type: 'thinking', thinking: 'x', signature: '' }, toolUse('t1')]),
      anthropic,
    )
    expect(foreign.thinking).toBeUndefined()
    expect(foreign.max_tokens).toBe(32_000)
    expect(withoutForeignHistory(loop([toolUse('t1')]), anthropic).thinking).toBeUndefined()
    // Adaptive thinking asks nothing of the turn: Claude itself calls tools without thinking under it.
    // To a model that takes no adaptive thinking it goes as a budget (model-fit.ts), which does.
    const adaptive = { ...loop([toolUse('t1')]), thinking: { type: 'adaptive' } }
    expect(withoutForeignHistory(adaptive, anthropic, { adaptiveThinking: true })).toBe(adaptive)
    expect(withoutForeignHistory(adaptive, anthropic, { adaptiveThinking: false }).thinking).toBeUndefined()
    // And a budget goes as adaptive to a model that takes no budget.
    expect(withoutForeignHistory(loop([toolUse('t1')]), anthropic, { budgetThinking: false }).thinking).toEqual({
      type: 'enabled',
      budget_tokens: 10_000,
    })

    const own = loop([claudeThinking, toolUse('t1')])
    expect(withoutForeignHistory(own, anthropic)).toBe(own)
    const redacted = loop([{ type: 'redacted_thinking', data: 'sealed' }, toolUse('t1')])
    expect(withoutForeignHistory(redacted, anthropic)).toBe(redacted)
    // Not in a tool loop, or thinking off: nothing to switch off.
    const answered = { ...loop([{ type: 'text', text: 'done' }]), messages: [{ role: 'user', content: 'hi' }] }
    expect(withoutForeignHistory(answered, anthropic)).toBe(answered)
    const off = { ...loop([toolUse('t1')]), thinking: { type: 'disabled' } }
    expect(withoutForeignHistory(off, anthropic)).toBe(off)
  })
})

describe('withoutForeignHistory: tool ids', () => {
  const loop = (id: string) => ({
    model: 'm',
    messages: [
      { role: 'user', content: 'read a' },
      { role: 'assistant', content: [claudeThinking, toolUse(id), toolUse('toolu_2')] },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: id, content: 'a' }, ...toolResult('toolu_2').content],
      },
    ],
  })

  test('ids Anthropic refuses (Kimi’s functions.Read:0) go rewritten to Anthropic, calls and results alike', () => {
    const out = withoutForeignHistory(loop('functions.Read:0'), anthropic)
    const messages = out.messages as { content: { id?: string; tool_use_id?: string }[] }[]
    const id = messages[1]!.content[1]!.id
    expect(id).toMatch(/^[a-zA-Z0-9_-]+$/)
    expect(messages[2]!.content.map((b) => b.tool_use_id)).toEqual([id, 'toolu_2'])
    expect(messages[1]!.content[2]!.id).toBe('toolu_2')
    // The same id every time, so the next turn's history names the same calls.
    expect(
      (withoutForeignHistory(loop('functions.Read:0'), anthropic).messages as typeof messages)[1]!.content[1]!.id,
    ).toBe(id)
    const valid = loop('call_00_abc-1')
    expect(withoutForeignHistory(valid, anthropic)).toBe(valid)
  })

  test('a server that is not Anthropic gets them as its own answers named them', () => {
    const kimi = loop('functions.Read:0')
    expect(withoutForeignHistory(kimi, { anthropicSignatures: false })).toBe(kimi)
  })

  test('every server gets a Gemini call’s id as Gemini gave it, without the signature svc carries in it', () => {
    const carried = withThoughtSignature('function-call-1', 'c2lnbmF0dXJl+/==')
    for (const reader of [anthropic, { anthropicSignatures: false }]) {
      const messages = withoutForeignHistory(loop(carried), reader).messages as {
        content: { id?: string; tool_use_id?: string }[]
      }[]
      expect([messages[1]!.content[1]!.id, messages[2]!.content[0]!.tool_use_id]).toEqual([
        'function-call-1',
        'function-call-1',
      ])
    }
  })
})

describe('withoutForeignHistory: an Anthropic-compatible server that is not Anthropic (DeepSeek, Kimi)', () => {
  const compatible = { anthropicSignatures: false }
  const loop = (...head: unknown[]) => ({
    model: 'm',
    thinking: { type: 'enabled', budget_tokens: 1024 },
    messages: [
      { role: 'user', content: 'fix it' },
      { role: 'assistant', content: [...head, toolUse('t1')] },
      toolResult('t1'),
    ],
  })

  test('its own thinking goes back as sent, with thinking on: an empty signature, none at all, or its own', () => {
    for (const thinking of [
      { type: 'thinking', thinking: 'I should read a', signature: '' },
      { type: 'thinking', thinking: 'I should read a' },
      { type: 'thinking', thinking: 'I should read a', signature: '91cfbb94-554b-4136-8e21-fa02280d56ed' },
    ]) {
      const body = loop(thinking)
      expect(withoutForeignHistory(body, compatible)).toBe(body)
    }
    // A tool loop another model ended without thinking: the request still thinks, as the client asked.
    const bare = loop()
    expect(withoutForeignHistory(bare, compatible)).toBe(bare)
  })

  test('an earlier tool turn keeps its thinking too (these servers refuse any tool-call turn without it)', () => {
    const unsigned = { type: 'thinking', thinking: 'read a first', signature: '' }
    const body = {
      ...loop(unsigned),
      messages: [
        ...loop(unsigned).messages,
        {
          role: 'assistant',
          content: [
            { ...unsigned, thinking: 'now answer' },
            { type: 'text', text: 'a says hi' },
          ],
        },
        { role: 'user', content: 'now b' },
      ],
    }
    expect(withoutForeignHistory(body, compatible)).toBe(body)
  })

  test('thinking svc signed for another dialect keeps its words under an empty signature; wordless, it goes', () => {
    const out = withoutForeignHistory(
      {
        ...loop({ type: 'thinking', thinking: 'o-series summary', signature: svcSignature }),
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'thinking', thinking: '', signature: svcSignature }] },
          { role: 'user', content: 'fix it' },
          {
            role: 'assistant',
            content: [{ type: 'thinking', thinking: 'o-series summary', signature: svcSignature }, toolUse('t1')],
          },
          toolResult('t1'),
        ],
      },
      compatible,
    )
    expect(out.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 })
    expect(out.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'user', content: 'fix it' },
      {
        role: 'assistant',
        content: [{ type: 'thinking', thinking: 'o-series summary', signature: '' }, toolUse('t1')],
      },
      toolResult('t1'),
    ])
  })

  test('another provider’s search still goes: its sealed parts are Anthropic’s to read, and svc left them empty', () => {
    const body = {
      model: 'm',
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [...foreignSearch, { type: 'text', text: 'B.' }] },
      ],
    }
    expect(withoutForeignHistory(body, compatible).messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: [{ type: 'text', text: 'B.' }] },
    ])
  })
})

test("Claude Code's billing line goes to Anthropic itself only: a compatible server's prefix cache would miss on it", () => {
  const line = { type: 'text', text: 'x-anthropic-billing-header: cc_version=2.1.330.440; cc_entrypoint=sdk-cli;' }
  const prompt = { type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }
  const body = { model: 'm', system: [line, prompt], messages: [{ role: 'user', content: 'hi' }] }
  expect(withoutForeignHistory(body, anthropic)).toBe(body)
  expect(withoutForeignHistory(body, { anthropicSignatures: false })).toEqual({ ...body, system: [prompt] })
})

describe('withoutThinkingHistory (Anthropic refused a signature it could not have made)', () => {
  test('every thinking and redacted block goes, a turn of nothing else with it; thinking stays on after a turn in words', () => {
    const body = {
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [{ type: 'redacted_thinking', data: 'x' }] },
        { role: 'user', content: 'again' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'a', signature: 's' },
            { type: 'text', text: 'ok' },
          ],
        },
        { role: 'user', content: 'thanks' },
      ],
    }
    expect(withoutThinkingHistory(body)).toEqual({
      thinking: body.thinking,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'user', content: 'again' },
        { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
        { role: 'user', content: 'thanks' },
      ],
    })
  })

  test('thinking turned off takes its clear_thinking context edit with it, and other edits stay', () => {
    const toolLoop = [
      { role: 'user', content: 'read a' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 'a', signature: 's' }, toolUse('t1')] },
      toolResult('t1'),
    ]
    const clearThinking = { type: 'clear_thinking_20251015', keep: { type: 'thinking_turns', value: 1 } }
    const clearTools = { type: 'clear_tool_uses_20250919' }
    const body = (edits: unknown[]) => ({
      thinking: { type: 'enabled', budget_tokens: 1024 },
      context_management: { edits },
      messages: toolLoop,
    })
    expect(withoutThinkingHistory(body([clearThinking, clearTools]))).toEqual({
      context_management: { edits: [clearTools] },
      messages: [toolLoop[0], { role: 'assistant', content: [toolUse('t1')] }, toolLoop[2]],
    })
    expect(withoutThinkingHistory(body([clearThinking]))).not.toHaveProperty('context_management')
    // The same where another provider's thinking is left out before Anthropic (thinking off for the loop).
    const foreign = {
      ...body([clearThinking]),
      messages: [
        toolLoop[0],
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'b', signature: '' }, toolUse('t1')] },
        toolLoop[2],
      ],
    }
    expect(withoutForeignHistory(foreign, anthropic)).not.toHaveProperty('context_management')
  })

  test('the wording Anthropic refuses with, and not another', () => {
    expect(refusesThinkingSignature('messages.1.content.0: Invalid `signature` in `thinking` block')).toBe(true)
    expect(refusesThinkingSignature('messages.1.content.0: unexpected `tool_use_id`')).toBe(false)
  })
})
