import { expect, test } from 'bun:test'
import { sanitizeToolUseId } from './anthropic/tool-use-id'
import {
  openRouterCallSignatures,
  splitThoughtSignature,
  thoughtSignatureOf,
  withoutThoughtSignature,
  withThoughtSignature,
} from './thought-signature'

const signature = 'CrICAdHt+im8/27fQ=='

test('a signature carried in an id comes back as it was given, and the id with it', () => {
  const carried = withThoughtSignature('function-call-1', signature)
  expect(carried).toMatch(/^[a-zA-Z0-9_-]+$/)
  expect(splitThoughtSignature(carried)).toEqual({ id: 'function-call-1', signature })
  expect(withoutThoughtSignature(carried)).toBe('function-call-1')
  expect(splitThoughtSignature('toolu_01')).toEqual({ id: 'toolu_01' })
})

test('an id Anthropic clients could not send back is rewritten around the signature, which stays readable', () => {
  const carried = withThoughtSignature('functions.Read:0', signature)
  const sanitized = sanitizeToolUseId(carried)
  expect(sanitized).toMatch(/^[a-zA-Z0-9_-]+$/)
  expect(splitThoughtSignature(sanitized)).toEqual({ id: sanitizeToolUseId('functions.Read:0'), signature })
})

test("Google's extra_content is read where it is, and nowhere else", () => {
  expect(thoughtSignatureOf({ extra_content: { google: { thought_signature: signature } } })).toBe(signature)
  for (const extra of [undefined, null, 'x', { google: null }, { google: { thought_signature: '' } }, { other: {} }])
    expect(thoughtSignatureOf({ extra_content: extra })).toBeUndefined()
})

test("OpenRouter's encrypted details are read by call id, Gemini's only", () => {
  const detail = (extra: Record<string, unknown>) => ({
    type: 'reasoning.encrypted',
    data: signature,
    id: 'c1',
    ...extra,
  })
  expect(openRouterCallSignatures([detail({ format: 'google-gemini-v1' })])).toEqual(new Map([['c1', signature]]))
  expect(openRouterCallSignatures([detail({}), { type: 'reasoning.text', text: 'x', id: 'c2' }])?.size).toBe(1)
  expect(
    openRouterCallSignatures([detail({ format: 'anthropic-claude-v1' }), detail({ id: undefined })]),
  ).toBeUndefined()
  const soFar = new Map([['c0', 's0']])
  expect(openRouterCallSignatures([detail({})], soFar)).toBe(soFar)
  expect(soFar.size).toBe(2)
  expect(openRouterCallSignatures(null, soFar)).toBe(soFar)
})
