import { expect, test } from 'bun:test'
import { heapStats } from 'bun:jsc'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { countRequestTokens } from './count-tokens'

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
  countRequestTokens(prompt(-1))
  const before = heapBytes()
  for (let i = 0; i < 150; i++) countRequestTokens(prompt(i))
  // 150 prompts of 60,000 characters: 6.3 MB more when the counts kept them, ~0.07 MB since.
  expect(heapBytes() - before).toBeLessThan(2_000_000)
})
