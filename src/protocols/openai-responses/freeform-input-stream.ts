// A custom tool's text as it streams in. Other dialects' models call a custom tool as a function
// of one string argument (client-tools.ts), so its text arrives as JSON in pieces:
// `{"input": "*** Begin Pat` … `ch\n*** Add File` …. A Responses client expects the text itself in
// `response.custom_tool_call_input.delta` events, as it comes; this reads the string's value out
// of the partial JSON, piece by piece, without waiting for the whole.
import { freeformArgument, freeformInput } from './client-tools'

const opening = new RegExp(`^\\s*\\{\\s*"${freeformArgument}"\\s*:\\s*"`)
const compactOpening = `{"${freeformArgument}":"`

/** Text with nothing to decode: up to the next quote or escape. */
const plainRun = /[^"\\]+/y
const isHighSurrogate = (unit: string) => unit.charCodeAt(0) >= 0xd800 && unit.charCodeAt(0) <= 0xdbff
const isLowSurrogate = (unit: string) => unit.charCodeAt(0) >= 0xdc00 && unit.charCodeAt(0) <= 0xdfff

const escapes: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' }

export interface FreeformInputStream {
  /** The text that a piece of the arguments' JSON adds, '' while there is none yet. */
  push(partialJson: string): string
  /** The whole text, from the complete arguments, and what of it `push` has not yet given. */
  finish(): { input: string; rest: string }
}

export function freeformInputStream(): FreeformInputStream {
  let json = ''
  /** Where the string's undecoded part begins; -1 before its opening quote is seen. */
  let at = -1
  /** The string closed, or the JSON is of another shape: nothing more streams. */
  let stopped = false
  let given = ''

  const findOpening = (): void => {
    const match = opening.exec(json)
    if (match) {
      at = match[0].length
      return
    }
    // Not the opening, nor the start of it: another shape, read whole at the end.
    const compact = json.replace(/\s+/g, '')
    if (compact.length >= compactOpening.length || !compactOpening.startsWith(compact)) stopped = true
  }

  /** The next unit of the string's text at `at`, and where the one after it begins; undefined until it is all here. */
  const nextUnit = (): { unit: string; next: number } | undefined => {
    const char = json[at]
    if (char === undefined) return undefined
    if (char !== '\\') return { unit: char, next: at + 1 }
    const kind = json[at + 1]
    if (kind === undefined) return undefined
    if (kind !== 'u') return { unit: escapes[kind] ?? kind, next: at + 2 }
    const hex = json.slice(at + 2, at + 6)
    return hex.length < 4 ? undefined : { unit: String.fromCharCode(Number.parseInt(hex, 16)), next: at + 6 }
  }

  const decodeAvailable = (): string => {
    let text = ''
    for (;;) {
      plainRun.lastIndex = at
      const run = plainRun.exec(json)
      if (run) {
        // A piece cut between a pair's two halves holds the first back until the second comes.
        const cut = plainRun.lastIndex === json.length && isHighSurrogate(run[0].at(-1)!) ? 1 : 0
        text += cut ? run[0].slice(0, -1) : run[0]
        at = plainRun.lastIndex - cut
        if (cut) break
      }
      if (json[at] === '"') {
        stopped = true
        break
      }
      const unit = nextUnit()
      if (!unit) break
      // An escaped high surrogate waits for its pair: alone, it is not text a JSON reader takes.
      if (isHighSurrogate(unit.unit)) {
        const high = unit.unit
        const from = at
        at = unit.next
        const low = nextUnit()
        if (!low) {
          at = from
          break
        }
        text += high
        if (!isLowSurrogate(low.unit)) continue
        text += low.unit
        at = low.next
        continue
      }
      text += unit.unit
      at = unit.next
    }
    return text
  }

  return {
    push(partialJson) {
      json += partialJson
      if (stopped || partialJson === '') return ''
      if (at < 0) findOpening()
      if (at < 0 || stopped) return ''
      const text = decodeAvailable()
      given += text
      return text
    },
    finish() {
      let args: unknown = {}
      try {
        args = json.trim() === '' ? {} : JSON.parse(json)
      } catch {
        // Cut short (the answer hit its token limit mid-call): the text as far as it came.
        if (at >= 0) return { input: given, rest: '' }
        args = json
      }
      const input = freeformInput(args)
      return { input, rest: input.startsWith(given) ? input.slice(given.length) : '' }
    },
  }
}
