// Test-only helpers for the codec tests: load golden transcripts and replay them in awkward chunks.

import { join } from 'node:path'
import type { StreamCodec } from '../exchange/stream-codec'
import { type SseEvent, SseDecoder } from './sse'

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

/**
 * A stream codec run over an async source one item at a time, as the relay runs it one read at a
 * time: it stops reading once the codec is done, and a source failure (a thrown read, a
 * malformed frame in an earlier step) goes to the encoder's `fail`, or is thrown.
 */
export async function* runCodec<In, Out>(
  codec: StreamCodec<In, Out> & { fail?(error: unknown): Out[] },
  source: AsyncIterable<In>,
): AsyncGenerator<Out> {
  try {
    for await (const item of source) {
      yield* codec.push(item)
      if (codec.done) return
    }
  } catch (error) {
    if (!codec.fail) throw error
    yield* codec.fail(error)
    return
  }
  yield* codec.end()
}

/** The frames of a byte stream, decoded as the relay decodes an upstream's body. */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new SseDecoder()
  for await (const chunk of chunks) yield* decoder.push(chunk)
  yield* decoder.end()
}

export const sseOf = (text: string): AsyncGenerator<SseEvent> => parseSse(bytesCutAt(text, []))

/** Frames as `{event, data}` with data parsed, for whole-object comparison of encoded streams. */
export async function framesOf(text: string): Promise<{ event: string | undefined; data: unknown }[]> {
  const events = await collect(sseOf(text))
  return events.map((e) => ({ event: e.event, data: e.data === '[DONE]' ? e.data : JSON.parse(e.data) }))
}
