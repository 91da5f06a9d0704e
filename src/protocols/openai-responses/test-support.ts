// Test helpers: replay recorded SSE in awkward chunks, serve a stream to the OpenAI SDK.
import OpenAI from 'openai'

const fixtureDir = new URL('../../../test/fixtures/openai-responses/', import.meta.url)

export const readFixture = (name: string): Promise<string> => Bun.file(new URL(name, fixtureDir)).text()

/** The text as bytes cut every `size` bytes, so lines and UTF-8 sequences break mid-way. */
export async function* chunkBytes(text: string, size = 7): AsyncGenerator<Uint8Array> {
  const bytes = new TextEncoder().encode(text)
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size)
}

export async function* fromArray<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) yield item
}

export const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
  const out: T[] = []
  for await (const item of items) out.push(item)
  return out
}

/** A server on a free port answering every POST /v1/responses with `respond()`, and an SDK client for it. */
export const serveResponses = (respond: () => Response) => {
  const server = Bun.serve({ port: 0, fetch: () => respond() })
  const client = new OpenAI({ apiKey: 'test', baseURL: `${server.url.origin}/v1`, maxRetries: 0 })
  return { client, stop: () => server.stop(true) }
}

export const sseResponse = (frames: AsyncIterable<string> | string[]): Response => {
  const source = (Array.isArray(frames) ? fromArray(frames) : frames)[Symbol.asyncIterator]()
  const encoder = new TextEncoder()
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await source.next()
      if (next.done) controller.close()
      else controller.enqueue(encoder.encode(next.value))
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
}
