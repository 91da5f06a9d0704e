import { describe, expect, test } from 'bun:test'
import { freeformInputStream } from './freeform-input-stream'

const text = '*** Begin Patch\n+say "hi" \\ to\tall 🎉 é \u0001\n*** End Patch\n'

/** Every character outside ASCII as a \u escape, as some models' JSON has it. */
const asciiOnly = (json: string) =>
  json.replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`)

/** The arguments in pieces of `size` characters: what push gives for each, and what finish adds. */
function feed(json: string, size: number) {
  const stream = freeformInputStream()
  const given: string[] = []
  for (let at = 0; at < json.length; at += size) given.push(stream.push(json.slice(at, at + size)))
  return { given, ...stream.finish() }
}

describe('freeformInputStream', () => {
  const forms = {
    compact: JSON.stringify({ input: text }),
    'escaped to ASCII': asciiOnly(JSON.stringify({ input: text })),
    spaced: ` {\n  "input" :  ${JSON.stringify(text)}\n}`,
  }
  for (const [form, json] of Object.entries(forms)) {
    test(`${form}: the text comes whole, in order, however the JSON is cut`, () => {
      for (let size = 1; size <= 9; size++) {
        const { given, input, rest } = feed(json, size)
        expect(given.join('') + rest).toBe(text)
        expect(input).toBe(text)
        // Every piece of text is taken by a strict JSON reader: no half of a surrogate pair alone.
        for (const piece of given) expect(piece).not.toMatch(/[\ud800-\udbff]$|^[\udc00-\udfff]/)
      }
    })
  }

  test('the text streams before the JSON is complete', () => {
    const stream = freeformInputStream()
    expect(stream.push('{"inp')).toBe('')
    expect(stream.push('ut": "*** Begin')).toBe('*** Begin')
    expect(stream.push(' Patch\\')).toBe(' Patch')
    expect(stream.push('n')).toBe('\n')
    expect(stream.push('"}')).toBe('')
    expect(stream.finish()).toEqual({ input: '*** Begin Patch\n', rest: '' })
  })

  test('arguments of another shape stream nothing and end as the input field, else their JSON', () => {
    expect(feed('{"path": "a.md", "input": "x"}', 4)).toEqual({ given: Array(8).fill(''), input: 'x', rest: 'x' })
    expect(feed('{"patch": "x"}', 3)).toEqual({
      given: ['', '', '', '', ''],
      input: '{"patch":"x"}',
      rest: '{"patch":"x"}',
    })
  })

  test('no arguments, or arguments cut short: what there is', () => {
    expect(freeformInputStream().finish()).toEqual({ input: '{}', rest: '{}' })
    const cut = freeformInputStream()
    expect(cut.push('{"input": "half')).toBe('half')
    expect(cut.finish()).toEqual({ input: 'half', rest: '' })
    expect(feed('{"pat', 2)).toEqual({ given: ['', '', ''], input: '{"pat', rest: '{"pat' })
  })
})
