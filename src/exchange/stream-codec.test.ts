import { describe, expect, test } from 'bun:test'
import { pipe, type StreamCodec } from './stream-codec'

/** Doubles each number; done at `stopAt`; its end says 'end'. Records what it was fed. */
const doubler = (stopAt?: number) => {
  const seen: number[] = []
  let done = false
  const codec: StreamCodec<number, string> = {
    push(n) {
      seen.push(n)
      if (n === stopAt) done = true
      return [`${n * 2}`]
    },
    end: () => ['end'],
    get done() {
      return done
    },
  }
  return { codec, seen }
}

/** Splits a word into its letters; done after the word 'stop'. */
const letters = (): StreamCodec<string, number> => {
  let done = false
  return {
    push(word) {
      if (word === 'stop') done = true
      return [...word].map(Number)
    },
    end: () => [9],
    get done() {
      return done
    },
  }
}

describe('pipe', () => {
  test('feeds every output of the first to the second, in order, and ends both at the end', () => {
    const second = doubler()
    const both = pipe(letters(), second.codec)
    expect(both.push('12')).toEqual(['2', '4'])
    expect(both.done).toBe(false)
    expect(both.end()).toEqual(['18', 'end'])
    expect(both.done).toBe(true)
    expect(both.push('3')).toEqual([])
    expect(both.end()).toEqual([])
  })

  test("the first step's terminal input ends the second at once", () => {
    const second = doubler()
    const both = pipe(letters(), second.codec)
    expect(both.push('stop').at(-1)).toBe('end')
    expect(both.done).toBe(true)
    expect(both.push('1')).toEqual([])
    expect(second.seen).toHaveLength(4)
  })

  test('once the second step is done, the rest of a push is not fed to it', () => {
    const second = doubler(2)
    const both = pipe(letters(), second.codec)
    expect(both.push('123')).toEqual(['2', '4'])
    expect(second.seen).toEqual([1, 2])
    expect(both.done).toBe(true)
    expect(both.end()).toEqual([])
  })

  test('what a step holds is released through the next at a break, without ending either', () => {
    let held = '7'
    const holding: StreamCodec<string, number> = {
      ...letters(),
      release() {
        const out = [...held].map(Number)
        held = ''
        return out
      },
    }
    const second = doubler()
    const both = pipe(holding, second.codec)
    expect(both.push('1')).toEqual(['2'])
    expect(both.release?.()).toEqual(['14'])
    expect(both.release?.()).toEqual([])
    expect(both.done).toBe(false)
    expect(second.seen).toEqual([1, 7])
  })
})
