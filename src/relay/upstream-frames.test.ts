import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../lib/errors'
import { UpstreamFrames, upstreamFrames } from './upstream-frames'

const frame = (i: number) => `event: e\ndata: {"i":${i}}\n\n`

/** A body sending each piece after its delay; ignores cancellation's reason, like a slow source. */
function paced(pieces: [delayMs: number, text: string][]): {
  body: ReadableStream<Uint8Array>
  cancelled: () => boolean
} {
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const [ms, text] of pieces) {
        await Bun.sleep(ms)
        if (cancelled) return
        controller.enqueue(new TextEncoder().encode(text))
      }
      controller.close()
    },
    cancel() {
      cancelled = true
    },
  })
  return { body, cancelled: () => cancelled }
}

const drain = async (frames: UpstreamFrames, perReadMs = 0) => {
  const got: string[][] = []
  for (;;) {
    const events = await frames.next()
    if (events === undefined) return got
    got.push(events.map((e) => e.data))
    if (perReadMs) await Bun.sleep(perReadMs)
  }
}

describe('UpstreamFrames', () => {
  test('hands out what each read completes: frames that travelled together stay together', async () => {
    const { body } = paced([
      [0, frame(0) + frame(1)],
      [5, 'event: e\nda'],
      [5, `ta: {"i":2}\n\n${frame(3)}`],
      [5, 'data: {"i":4}'], // the last frame, without its blank line
    ])
    expect(await drain(new UpstreamFrames(body, 1000, () => {}))).toEqual([
      ['{"i":0}', '{"i":1}'],
      ['{"i":2}', '{"i":3}'],
      ['{"i":4}'],
    ])
  })

  test('passes a steady stream through, however long it lasts in all', async () => {
    let timedOut = false
    const { body } = paced([20, 20, 20, 20, 20, 20].map((ms, i) => [ms, frame(i)]))
    const got = await drain(new UpstreamFrames(body, 60, () => (timedOut = true)))
    expect(got.flat()).toHaveLength(6)
    expect(timedOut).toBe(false)
  })

  test('ends a stream silent past the limit with a retryable timeout, calls onTimeout, cancels the body', async () => {
    let timedOut = false
    const { body, cancelled } = paced([
      [10, frame(0)],
      [10, frame(1)],
      [500, frame(2)],
    ])
    const started = performance.now()
    const error = await drain(new UpstreamFrames(body, 80, () => (timedOut = true))).catch((e) => e)
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ kind: 'timeout', retryable: true, message: 'upstream stream was silent for 80 ms' })
    expect(timedOut).toBe(true)
    expect(cancelled()).toBe(true)
    // Silent from ~20 ms: ends at ~100 ms, not when the source would have gone on.
    expect(performance.now() - started).toBeLessThan(400)
  })

  test('a consumer slow to take each read is not upstream silence', async () => {
    let timedOut = false
    const { body } = paced([5, 5, 5, 5].map((ms, i) => [ms, frame(i)]))
    const got = await drain(new UpstreamFrames(body, 60, () => (timedOut = true)), 100)
    expect(got.flat()).toHaveLength(4)
    expect(timedOut).toBe(false)
  })

  test('calls onQuiet once per quiet interval of a silence, and not while the consumer holds a read', async () => {
    // 250 ms of silence after the first frame, then a steady 10 ms pace, then a consumer that
    // sits on one read for 250 ms: only the first silence is the upstream's.
    const { body } = paced([
      [0, frame(0)],
      [250, frame(1)],
      [10, frame(2)],
      [10, frame(3)],
    ])
    const frames = new UpstreamFrames(body, 1000, () => {}, 60)
    const quiet: number[] = []
    const started = performance.now()
    frames.onQuiet = () => quiet.push(performance.now() - started)
    expect((await frames.next())?.length).toBe(1)
    expect((await frames.next())?.length).toBe(1)
    const heard = quiet.length
    // Four intervals fit in 250 ms; on a loaded machine late timers may lose one or two.
    expect(heard).toBeGreaterThanOrEqual(2)
    expect(heard).toBeLessThanOrEqual(4)
    expect(quiet[0]).toBeGreaterThanOrEqual(55)
    await Bun.sleep(250)
    expect((await drain(frames)).flat()).toEqual(['{"i":2}', '{"i":3}'])
    expect(quiet.length).toBe(heard)
  })

  test("no onQuiet, no calls: before it is set the silence is only the watchdog's", async () => {
    let timedOut = false
    const { body } = paced([
      [0, frame(0)],
      [150, frame(1)],
    ])
    const frames = new UpstreamFrames(body, 1000, () => (timedOut = true), 20)
    expect((await drain(frames)).flat()).toHaveLength(2)
    expect(timedOut).toBe(false)
  })

  test('a body that fails mid-stream fails the read with its own error', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(frame(0)))
        setTimeout(() => controller.error(new Error('upstream closed the connection before the body ended')), 5)
      },
    })
    const frames = new UpstreamFrames(body, 1000, () => {})
    expect((await frames.next())?.map((e) => e.data)).toEqual(['{"i":0}'])
    expect(frames.next()).rejects.toThrow('upstream closed the connection before the body ended')
  })

  test('a frame that grows past the limit without ending: a retryable 502, and the body is cancelled', async () => {
    const endless = paced([
      [0, frame(0)],
      [0, 'data: {"text":"'],
      ...Array.from({ length: 20 }, (): [number, string] => [1, 'x'.repeat(100)]),
    ])
    const frames = new UpstreamFrames(endless.body, 1000, () => {}, 1000, 1000)
    expect((await frames.next())?.map((e) => e.data)).toEqual(['{"i":0}'])
    const err = (await frames.next().catch((e: unknown) => e)) as GatewayError
    expect(err).toBeInstanceOf(GatewayError)
    expect({ status: err.status, retryable: err.retryable, message: err.message }).toEqual({
      status: 502,
      retryable: true,
      message: 'upstream sent a stream frame of more than 1,000 characters',
    })
    expect(endless.cancelled()).toBe(true)
  })

  test('frames of any number and total size pass, each under the limit', async () => {
    const long = (i: number) => `event: e\ndata: {"i":${i},"pad":"${'p'.repeat(900)}"}\n\n`
    const many = paced(Array.from({ length: 30 }, (_, i): [number, string] => [0, long(i)]))
    const frames = new UpstreamFrames(many.body, 1000, () => {}, 1000, 1000)
    expect((await drain(frames)).flat()).toHaveLength(30)
  })

  test('close cancels a body still sending', async () => {
    const first = paced([0, 50, 50].map((ms, i) => [ms, frame(i)]))
    const frames = new UpstreamFrames(first.body, 1000, () => {})
    await frames.next()
    await frames.close()
    expect(first.cancelled()).toBe(true)
    expect(await frames.next()).toBeUndefined()
  })
})

describe('upstreamFrames', () => {
  const answer = (contentType?: string) =>
    new Response(new TextEncoder().encode(frame(0)), {
      headers: contentType === undefined ? {} : { 'content-type': contentType },
    })

  // Some compatible servers (llama.cpp builds, proxies) label their SSE so, or not at all: refused,
  // every such answer failed.
  test('a stream labelled text/plain or not at all is read as one', async () => {
    for (const type of ['text/event-stream', 'Text/Plain; charset=utf-8', '', undefined]) {
      expect(await drain(upstreamFrames(answer(type), 1000, () => {}))).toEqual([['{"i":0}']])
    }
  })

  test('a body that says it is something else (an HTML page, JSON) is a retryable 502', () => {
    for (const type of ['text/html; charset=utf-8', 'application/json']) {
      let refusal: unknown
      try {
        upstreamFrames(answer(type), 1000, () => {})
      } catch (error) {
        refusal = error
      }
      expect(refusal).toBeInstanceOf(GatewayError)
      expect(refusal).toMatchObject({
        status: 502,
        retryable: true,
        message: `upstream answered 200 with content-type ${type}, expected text/event-stream`,
      })
    }
  })
})
