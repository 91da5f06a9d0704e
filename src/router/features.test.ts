import { describe, expect, test } from 'bun:test'
import type { DocumentBlock, ExchangeRequest, UserContentBlock } from '../exchange/types'
import { countRequestTokens } from './count-tokens'
import { jsonLength, readRequestFeatures } from './features'

const pdf: DocumentBlock = {
  type: 'document',
  title: 'Q3',
  source: { kind: 'base64', mediaType: 'application/pdf', data: 'JVBERi0xLjQK'.repeat(1000) },
}
const notes: DocumentBlock = { type: 'document', title: 'Notes', source: { kind: 'text', text: 'Body of the notes.' } }

const asking = (...content: UserContentBlock[]): ExchangeRequest => ({
  system: [],
  messages: [{ role: 'user', content: [{ type: 'text', text: 'Summarise.' }, ...content] }],
  tools: [],
  maxTokens: 100,
  stream: false,
})

const inToolResult = (part: UserContentBlock): ExchangeRequest => ({
  ...asking(),
  messages: [
    { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'fetch', input: {} }] },
    { role: 'user', content: [{ type: 'tool_result', toolUseId: 't1', content: [part] }] },
  ],
})

describe('documents in the request features and token counts', () => {
  test('a file needs a vision model and costs a flat estimate, whatever its size; a text document is text', () => {
    const plain = readRequestFeatures(asking())
    const withFile = readRequestFeatures(asking(pdf))
    expect(plain.images).toBe(false)
    expect(withFile.images).toBe(true)
    expect(withFile.estimatedInputTokens - plain.estimatedInputTokens).toBe(6200)
    const withText = readRequestFeatures(asking(notes))
    expect(withText.images).toBe(false)
    expect(withText.estimatedInputTokens).toBe(Math.ceil('Summarise.Notes\n\nBody of the notes.'.length / 4))
  })

  test('a file inside a tool result counts as one, not as an image', () => {
    expect(readRequestFeatures(inToolResult(pdf))).toMatchObject({ images: true })
    expect(countRequestTokens(inToolResult(pdf)) - countRequestTokens(inToolResult(notes))).toBeGreaterThan(6000)
  })

  test('an image or document named by an Anthropic file id, in a turn or a tool result, needs an Anthropic upstream', () => {
    const fromStore: DocumentBlock = { type: 'document', source: { kind: 'file', fileId: 'file_1', param: 'p' } }
    expect(readRequestFeatures(asking(pdf)).anthropicFiles).toBe(false)
    expect(readRequestFeatures(asking(fromStore)).anthropicFiles).toBe(true)
    expect(readRequestFeatures(inToolResult(fromStore)).anthropicFiles).toBe(true)
    const image: UserContentBlock = { type: 'image', source: { kind: 'file', fileId: 'file_2', param: 'p' } }
    expect(readRequestFeatures(asking(image))).toMatchObject({ anthropicFiles: true, images: true })
  })

  test('a file neither PDF nor text is named by its type, in a turn or a tool result; the first one counts', () => {
    const word: DocumentBlock = {
      type: 'document',
      source: { kind: 'base64', mediaType: 'application/msword', data: 'AAAA' },
    }
    const sheet: DocumentBlock = { type: 'document', source: { kind: 'base64', mediaType: 'text/csv', data: 'AAAA' } }
    expect(readRequestFeatures(asking(pdf)).otherFileType).toBeUndefined()
    expect(readRequestFeatures(asking(notes)).otherFileType).toBeUndefined()
    expect(readRequestFeatures(asking(word)).otherFileType).toBe('application/msword')
    expect(readRequestFeatures(inToolResult(word)).otherFileType).toBe('application/msword')
    expect(readRequestFeatures(asking(word, sheet)).otherFileType).toBe('application/msword')
  })

  test('count_tokens counts a file as the router estimates it, and a text document by its text', () => {
    expect(countRequestTokens(asking(pdf)) - countRequestTokens(asking())).toBe(6200)
    expect(countRequestTokens(asking(notes))).toBeGreaterThan(countRequestTokens(asking()))
  })
})

describe('jsonLength', () => {
  test('is the length of the JSON text for values without escapes, without building it', () => {
    const values: unknown[] = [
      {},
      [],
      'text',
      42,
      -1.5,
      true,
      null,
      { type: 'object', properties: { path: { type: 'string', enum: ['a', 'b'] } }, required: ['path'] },
      [1, 'two', { three: [3, null, false] }, []],
      { skipped: undefined, kept: 1 },
    ]
    for (const value of values) expect(jsonLength(value)).toBe(JSON.stringify(value).length)
  })
})
