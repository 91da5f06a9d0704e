import { describe, expect, test } from 'bun:test'
import type { RoutingMode } from '../config/schema'
import type { DocumentBlock, ExchangeRequest, UserContentBlock } from '../exchange/types'
import { estimateRequestTokens, pdfPages } from './count-tokens'
import { jsonLength, readRequestFeatures } from './features'
import { decodeAnthropicRequest } from '../protocols/anthropic/decode-anthropic-request'

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
  test('a file needs a vision model and, its pages unknown, costs two pages; a text document is text', () => {
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
    expect(estimateRequestTokens(inToolResult(pdf)) - estimateRequestTokens(inToolResult(notes))).toBeGreaterThan(6000)
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

  test('an inline PDF counts its pages, read off its page tree; without one in plain text, two', () => {
    const treeOf = (pages: number) =>
      `%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [3 0 R 4 0 R] /Count ${pages} >>\nendobj\n3 0 obj\n<< /Count 7 /Type /Pages /Parent 2 0 R >>\nendobj\n5 0 obj\n<< /Type /Outlines /Count 900 >>\nendobj\n`
    const pdfOf = (text: string): DocumentBlock => ({
      type: 'document',
      source: { kind: 'base64', mediaType: 'application/pdf', data: Buffer.from(text).toString('base64') },
    })
    const plain = readRequestFeatures(asking()).estimatedInputTokens
    // The root's count, not a kid's (7) nor an outline's (900, not a /Pages node).
    expect(readRequestFeatures(asking(pdfOf(treeOf(300)))).estimatedInputTokens - plain).toBe(300 * 3100)
    expect(estimateRequestTokens(asking(pdfOf(treeOf(300)))) - estimateRequestTokens(asking())).toBe(300 * 3100)
    // A compressed tree (no /Type /Pages in plain text), or no PDF at all: two pages.
    expect(readRequestFeatures(asking(pdfOf('%PDF-1.7\n<< /Type /ObjStm /N 40 >>'))).estimatedInputTokens - plain).toBe(
      6200,
    )
    expect(readRequestFeatures(asking(pdfOf('not a pdf'))).estimatedInputTokens - plain).toBe(6200)
  })

  test("a PDF's pages are its root's, as the catalog names it: a long flat tree, nested dictionaries, a later revision", () => {
    const b64 = (text: string) => Buffer.from(text, 'latin1').toString('base64')
    const catalog = '1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n'
    const kids = Array.from({ length: 300 }, (_, i) => `${i + 10} 0 R`).join(' ')
    // /Kids (2.5 KB) before /Count, and a resource dictionary inside the root.
    const flat = `%PDF-1.4\n${catalog}2 0 obj\n<< /Type /Pages /Resources << /ProcSet [/PDF] >> /Kids [${kids}] /Count 300 >>\nendobj\n`
    expect(pdfPages(b64(flat))).toBe(300)
    // An incremental save that dropped pages appends the root again: the last version counts,
    // not the larger tree it replaced; "12 0 obj" is not "2 0 obj".
    const revised = `${flat}12 0 obj\n<< /Type /Pages /Count 900 >>\nendobj\n2 0 obj\n<< /Type /Pages /Kids [10 0 R] /Count 10 >>\nendobj\n`
    expect(pdfPages(b64(revised))).toBe(10)
  })

  test('count_tokens counts a file as the router estimates it, and a text document by its text', () => {
    expect(estimateRequestTokens(asking(pdf)) - estimateRequestTokens(asking())).toBe(6200)
    expect(estimateRequestTokens(asking(notes))).toBeGreaterThan(estimateRequestTokens(asking()))
  })
})

describe('Anthropic client-run tools in the request features', () => {
  test('the first one offered is named, and the request counts as using tools', () => {
    const offering = { ...asking(), anthropicTools: ['bash_20250124', 'memory_20250818'] }
    expect(readRequestFeatures(offering)).toMatchObject({
      exclusiveTool: { type: 'bash_20250124', of: 'Anthropic' },
      tools: true,
    })
    expect(readRequestFeatures({ ...asking(), openaiTools: ['local_shell'] }).exclusiveTool).toEqual({
      type: 'local_shell',
      of: 'OpenAI',
    })
    expect(readRequestFeatures(asking()).exclusiveTool).toBeUndefined()
  })
})

describe('the prompt size the router checks windows against', () => {
  const saying = (text: string, maxTokens = 1000): ExchangeRequest => ({
    ...asking(),
    messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    maxTokens,
  })
  const window = (contextWindow: number, profiles: RoutingMode[] = ['pro']) => ({
    profiles,
    contextWindow,
    maxOutputTokens: 8192,
  })
  const ranked = (...models: ReturnType<typeof window>[]) => ['pro', models] as const
  // 3 bytes a character in UTF-8: ~0.75 of a token each, to o200k as to the rough size.
  const chinese = '这是一个很长的中文句子，用来测试令牌估计的准确性。'.repeat(2000)
  const roughChinese = Math.ceil((chinese.length * 3) / 4)

  test('UTF-8 bytes ÷ 4 where even three times that and the output fit every window of the profile', () => {
    // Counted in characters, a Chinese prompt was a quarter of its bytes' size, a third of o200k's count.
    expect(readRequestFeatures(saying(chinese), ...ranked(window(500_000))).estimatedInputTokens).toBe(roughChinese)
    // No models to check against: the rough size.
    expect(readRequestFeatures(saying(chinese)).estimatedInputTokens).toBe(roughChinese)
  })

  test('the tokenizer’s count where the prompt may come near a window, three times the rough size', () => {
    // JSON, which o200k counts at ~2 × its characters ÷ 4.
    const json = JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ id: i, ok: i % 2 === 0, v: [i, -i] })))
    const counted = estimateRequestTokens(saying(json))
    expect(counted).toBeGreaterThan(1.5 * Math.ceil(json.length / 4))
    expect(readRequestFeatures(saying(json), ...ranked(window(200_000), window(40_000))).estimatedInputTokens).toBe(
      counted,
    )
    // The output asked for takes room too.
    expect(
      readRequestFeatures(saying(json, 160_000), ...ranked({ ...window(200_000), maxOutputTokens: 160_000 }))
        .estimatedInputTokens,
    ).toBe(counted)
  })

  test('the count only ever raises the rough size: English near a window keeps characters ÷ 4', () => {
    const english = 'The quick brown fox jumps over the lazy dog. '.repeat(3000)
    const rough = Math.ceil(english.length / 4)
    expect(estimateRequestTokens(saying(english))).toBeLessThan(rough)
    expect(readRequestFeatures(saying(english), ...ranked(window(100_000))).estimatedInputTokens).toBe(rough)
  })

  test('system prompt and tool descriptions are counted in UTF-8 bytes too', () => {
    const system = { ...saying('hi'), system: [{ type: 'text' as const, text: chinese }] }
    expect(readRequestFeatures(system).estimatedInputTokens).toBe(roughChinese + 1)
    const described = {
      ...saying('hi'),
      tools: [{ name: 't', description: chinese, inputSchema: {} }],
    }
    expect(readRequestFeatures(described).estimatedInputTokens).toBe(
      Math.ceil((2 + chinese.length * 3 + 1 + '{}'.length) / 4),
    )
  })

  test('a small window in another profile does not matter', () => {
    const features = readRequestFeatures(saying(chinese), ...ranked(window(200_000), window(8_000, ['max'])))
    expect(features.estimatedInputTokens).toBe(roughChinese)
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

// Instructions given last go into Anthropic's system prompt: the conversation Claude sees then
// ends on the turn before them, and an assistant turn there is a prefill the 5.x models refuse.
test('a prefill is read past instructions given last', () => {
  const prefill = (...tail: ExchangeRequest['messages']) =>
    readRequestFeatures({ ...asking(), messages: [...asking().messages, ...tail] }).assistantPrefill
  const said = { role: 'assistant' as const, content: [{ type: 'text' as const, text: '{"a":' }] }
  const instructions = { role: 'system' as const, content: [{ type: 'text' as const, text: 'Be brief.' }] }
  expect(prefill()).toBe(false)
  expect(prefill(said)).toBe(true)
  expect(prefill(said, instructions)).toBe(true)
  expect(prefill(instructions)).toBe(false)
  // A turn Anthropic paused in its server tools, sent back to resume them (the decoder marks it):
  // still a prefill to a model it is translated for, which gets no server-tool blocks (rank.ts).
  expect(readRequestFeatures({ ...asking(), messages: [said], continuesPausedTurn: true })).toMatchObject({
    assistantPrefill: true,
    continuesPausedTurn: true,
  })
})

describe('cache marks asking for an hour', () => {
  const hour = { type: 'ephemeral' as const, ttl: '1h' as const }
  const marked = (body: Record<string, unknown>) =>
    readRequestFeatures(decodeAnthropicRequest({ model: 'svc-pro', max_tokens: 10, ...body })).hourCacheWrites
  const ask = [{ role: 'user', content: 'hi' }]

  test('anywhere a mark goes: the top level, system, a tool, a message block, a tool result’s part', () => {
    expect(marked({ messages: ask, cache_control: hour })).toBe(true)
    expect(marked({ messages: ask, system: [{ type: 'text', text: 's', cache_control: hour }] })).toBe(true)
    expect(
      marked({ messages: ask, tools: [{ name: 't', input_schema: { type: 'object' }, cache_control: hour }] }),
    ).toBe(true)
    expect(marked({ messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: hour }] }] })).toBe(
      true,
    )
    expect(readRequestFeatures(inToolResult({ type: 'text', text: 'r', cacheControl: hour })).hourCacheWrites).toBe(
      true,
    )
  })

  test('none where every mark is of 5 minutes, or there is none', () => {
    const fiveMinutes = { type: 'ephemeral' as const }
    expect(marked({ messages: ask })).toBe(false)
    expect(marked({ messages: ask, cache_control: fiveMinutes })).toBe(false)
    expect(
      marked({ messages: ask, system: [{ type: 'text', text: 's', cache_control: { ...fiveMinutes, ttl: '5m' } }] }),
    ).toBe(false)
  })
})
