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

// Eight slices of 8,000 were 13–18 % off where a CJK file fell on one slice of a long English
// prompt (a review): a slice stood for 60,000 characters of the prompt. 64 of 1,000 stay close.
test('a long prompt of mixed text is estimated within a few per cent, wherever its parts fall', () => {
  const o200k = require('gpt-tokenizer/encoding/o200k_base') as {
    countTokens: (text: string, options: { disallowedSpecial: Set<string> }) => number
  }
  const whole = (text: string) => o200k.countTokens(text, { disallowedSpecial: new Set() })
  const readme = readFileSync(join(import.meta.dir, '../../README.md'), 'utf8')
  const code = readFileSync(join(import.meta.dir, 'rank.ts'), 'utf8')
  const json = JSON.stringify(Array.from({ length: 3000 }, (_, i) => ({ id: i, name: `item-${i}`, ok: i % 2 === 0 })))
  const take = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n)
  const cjk = take(
    '東京都は日本の首都であり、世界最大級の都市圏を形成している。経済、政治、文化の中心地として知られる。',
    60_000,
  )
  const prompts = [
    take(readme, 300_000) + cjk,
    Array.from(
      { length: 5 },
      () => take(code, 20_000) + take(readme, 20_000) + take(json, 20_000) + cjk.slice(0, 20_000),
    ).join('\n'),
    ...[0, 1, 2, 3].map(
      (k) => take(readme, 100_000 + k * 17_000) + cjk.slice(0, 8_000) + take(readme, 400_000 - k * 17_000),
    ),
  ]
  for (const text of prompts) {
    const estimated = estimateRequestTokens({
      system: [],
      tools: [],
      messages: [{ role: 'user', content: [{ type: 'text', text }] }],
    })
    const exact = whole(text) + 4
    expect(Math.abs(estimated - exact) / exact).toBeLessThan(0.03)
  }
})
