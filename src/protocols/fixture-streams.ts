// Test-only helpers for the codec tests: load golden transcripts and replay them in awkward chunks.

import { join } from 'node:path'
import { parseSse, type SseEvent } from './sse'

const fixturesDir = join(import.meta.dir, '../../test/fixtures')

export const readFixture = (name: string): Promise<string> => Bun.file(join(fixturesDir, name)).text()

/** Bytes of `text` cut at the given byte offsets (which may fall inside a UTF-8 character or `\r\n`). */
export async function* bytesCutAt(text: string, cuts: number[]): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  let from = 0
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    yield bytes.subarray(from, cut)
    from = cut
  }
  yield bytes.subarray(from)
}

export async function* iterate<T>(items: Iterable<T>): AsyncGenerator<T> {
  for (const item of items) yield item
}

export async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

export const sseOf = (text: string): AsyncGenerator<SseEvent> => parseSse(bytesCutAt(text, []))

/** Frames as `{event, data}` with data parsed, for whole-object comparison of encoded streams. */
export async function framesOf(text: string): Promise<{ event: string | undefined; data: unknown }[]> {
  const events = await collect(sseOf(text))
  return events.map((e) => ({ event: e.event, data: e.data === '[DONE]' ? e.data : JSON.parse(e.data) }))
}
