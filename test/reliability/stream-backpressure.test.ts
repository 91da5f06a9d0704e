// A client that reads a stream slower than the upstream sends it: svc reads the upstream only as
// the client takes what it has, so it holds a frame rather than the whole answer. Before, it read
// on regardless: an audit's 8 clients that never read took svc to 4.4 GB.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHarness } from '../support/harness'
import { simClaude, simProviders } from '../support/sim-models'
import { startSimulator } from '../support/simulator'
import { parseFrames } from './helpers'

const sim = startSimulator({ apiKey: 'sim' })
afterAll(() => sim.stop())

/** 16 MB of text in 4,000 deltas of 4 KB, sent as fast as the socket takes them. */
const answer = 'abcd'.repeat(4 * 1024 * 1024)

describe('a client that does not read', () => {
  test('holds the upstream back; read afterwards, the whole answer arrives', async () => {
    const h = await createHarness({
      grantUsd: 5,
      env: { SIM_KEY: 'sim' },
      config: { catalog: { builtin: false }, providers: simProviders(sim.url), models: [simClaude()] },
    })
    sim.setScenario('claude-c-up', { text: answer, chunks: 4000, usage: { input: 10, output: 4000 } })
    await using server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => h.app.handle(r) })
    const body = JSON.stringify({
      model: 'svc-max',
      max_tokens: 64_000,
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const received: string[] = []
    const socket = await Bun.connect({
      hostname: '127.0.0.1',
      port: server.port!,
      socket: { data: (_, chunk) => void received.push(chunk.toString('latin1')) },
    })
    socket.pause()
    socket.write(
      `POST /compat-a/v1/messages HTTP/1.1\r\nHost: localhost\r\nx-api-key: ${h.key}\r\nanthropic-version: 2023-06-01\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
    // The client reads nothing for a while: the upstream is still writing (held back), not done.
    await Bun.sleep(1_000)
    expect(sim.requests).toHaveLength(1)
    expect(sim.requests[0]!.finished).toBe(false)

    const closed = new Promise<void>((resolve) => {
      socket.reload({
        socket: { data: (_, chunk) => void received.push(chunk.toString('latin1')), close: () => resolve() },
      })
    })
    socket.resume()
    await closed
    const text = received.join('')
    // Chunked transfer: the frames' text, whatever the chunk boundaries.
    const frames = parseFrames(dechunk(text.slice(text.indexOf('\r\n\r\n') + 4)))
    expect(frames.at(-1)!.event).toBe('message_stop')
    const relayed = frames
      .filter((f) => f.event === 'content_block_delta')
      .map((f) => f.data.delta.text)
      .join('')
    expect(relayed).toBe(answer)
  }, 30_000)
})

/** An HTTP/1.1 chunked body's data. */
function dechunk(raw: string): string {
  let out = ''
  let at = 0
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', at)
    const size = Number.parseInt(raw.slice(at, lineEnd), 16)
    if (!size) return out
    out += raw.slice(lineEnd + 2, lineEnd + 2 + size)
    at = lineEnd + 2 + size + 2
  }
}
