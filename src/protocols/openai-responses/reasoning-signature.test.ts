import { describe, expect, test } from 'bun:test'
import { newUlid } from '../../lib/ids'
import { reasoningItemId } from './encode-responses-response'
import {
  encodeAnthropicReasoning,
  encryptedContentOf,
  readResponsesSignature,
  readServerReasoning,
  readServerSignature,
  tagResponsesSignature,
  withoutUnreadableReasoning,
} from './reasoning-signature'

const user = { role: 'user', content: 'hi' }
const call = { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }
/** A reasoning item OpenAI made and sealed: it reads it back. */
const openAIs = { type: 'reasoning', id: 'rs_68af01', summary: [], encrypted_content: 'gAAAAB-sealed' }
/** Claude's thinking, carried to the client in svc's blob. */
const claudes = {
  type: 'reasoning',
  id: 'rs_x',
  summary: [],
  encrypted_content: encodeAnthropicReasoning({ type: 'thinking', signature: 'EqQB' }),
}
/** A Chat model's reasoning, shown as a summary under an id svc made. */
const chats = {
  type: 'reasoning',
  id: reasoningItemId(`msg_${newUlid()}`, 0),
  summary: [{ type: 'summary_text', text: 'hm' }],
}

describe('withoutUnreadableReasoning', () => {
  test('what OpenAI can read back passes, as the very array', () => {
    const items = [user, openAIs, call]
    expect(withoutUnreadableReasoning(items, false)).toBe(items)
    // Stored, OpenAI looks its own items up by id.
    const byId = [user, { type: 'reasoning', id: 'rs_68af01', summary: [] }, call]
    expect(withoutUnreadableReasoning(byId, true)).toBe(byId)
  })

  test('Claude’s blobs and reasoning svc made go, stored or not', () => {
    for (const stored of [true, false]) {
      expect(withoutUnreadableReasoning([user, claudes, chats, openAIs, call], stored)).toEqual([user, openAIs, call])
    }
  })

  test('not stored, an item with no blob cannot be looked up: it goes, whoever made it', () => {
    const lookedUp = { type: 'reasoning', id: 'rs_68af01', summary: [] }
    expect(withoutUnreadableReasoning([user, lookedUp, { ...openAIs, encrypted_content: '' }, call], false)).toEqual([
      user,
      call,
    ])
  })
})

describe("a compatible server's blob: back to it alone", () => {
  const signature = tagResponsesSignature('gAAAAB-router-blob', 'router')

  test('read back for its maker only; never as OpenAI’s', () => {
    expect(readServerSignature(signature, 'router')).toBe('gAAAAB-router-blob')
    expect(readServerSignature(signature, 'other')).toBeUndefined()
    expect(readResponsesSignature(signature)).toBeUndefined()
    const openai = tagResponsesSignature('gAAAAB-openai-blob')
    expect(readResponsesSignature(openai)).toBe('gAAAAB-openai-blob')
    expect(readServerSignature(openai, 'router')).toBeUndefined()
  })

  test("a Responses client gets it wrapped with its maker's name, which comes back as the same signature", () => {
    const wrapped = encryptedContentOf({ type: 'thinking', thinking: 'Think.', signature })!
    expect(wrapped).not.toContain('router-blob')
    expect(readServerReasoning(wrapped)).toBe(signature)
    expect(readServerReasoning('gAAAAB-openai-blob')).toBeUndefined()
    // A client's forged wrapper naming no provider id (a ':' would split the tag) is nobody's.
    const forged = Buffer.from(JSON.stringify({ v: 1, provider: 'server', maker: 'router:x', blob: 'b' })).toString(
      'base64url',
    )
    expect(readServerReasoning(forged)).toBeUndefined()
    // OpenAI itself is never sent it: a pass-through body loses the item.
    const item = { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: wrapped }
    expect(withoutUnreadableReasoning([item], false)).toEqual([])
  })
})
