import { expect, test } from 'bun:test'
import { heapStats } from 'bun:jsc'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { estimateRequestTokens } from './count-tokens'

/** `i` in letters only (a digit or capital would split the word into pieces the tokenizer counts apart). */
const letters = (i: number): string =>
  (i < 26 ? '' : letters(Math.floor(i / 26) - 1)) + String.fromCharCode(97 + (i % 26))

const heapBytes = () => {
  Bun.gc(true)
  return heapStats().heapSize
}

// The tokenizer's merge cache kept each text it had counted alive through the pieces it cached (a
// view of the text in JavaScriptCore, from 14 characters): memory grew with every distinct long
// prompt a gateway counted, ~1 GB in 35 s under agents' prompts.
test('a counted prompt is not kept in memory after its count', () => {
  const readme = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8').slice(0, 60_000)
  // Each prompt its own: a project's rare name of 16 letters through it, as a conversation's files have.
  const prompt = (i: number) => {
    const name = `qzvxprjklmnbwtdf${letters(i)}`
    return {
      system: [],
      tools: [],
      messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: `${name} ${readme} ${name}` }] }],
    }
  }
  estimateRequestTokens(prompt(-1))
  const before = heapBytes()
  for (let i = 0; i < 150; i++) estimateRequestTokens(prompt(i))
  // 150 prompts of 60,000 characters: 6.3 MB more when the counts kept them, ~0.07 MB since.
  expect(heapBytes() - before).toBeLessThan(2_000_000)
})

// Code and documents about language models write the tokenizer's own special tokens: the library
// refuses them by default, and such a prompt was answered 500 (an audit).
test('a prompt that writes <|endoftext|> or another special token is counted as the text it is', () => {
  const saying = (text: string) => ({
    system: [],
    tools: [],
    messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text }] }],
  })
  const plain = estimateRequestTokens(saying('the tokenizer ends a document with its end-of-text token'))
  for (const special of ['<|endoftext|>', '<|endofprompt|>']) {
    const counted = estimateRequestTokens(saying(`the tokenizer ends a document with ${special}`))
    expect(counted).toBeGreaterThan(plain - 5)
    // Long enough to be counted by slices too.
    expect(estimateRequestTokens(saying(`${special} `.repeat(10_000)))).toBeGreaterThan(10_000)
  }
})
