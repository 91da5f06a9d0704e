// An upstream that answers every request with the status and JSON a test sets, and keeps the bodies
// it was sent: for refusals and failures of a provider that the simulator's scenarios do not shape.
// Stopped after the file's tests; its bodies forgotten before each.
import { afterAll, beforeEach } from 'bun:test'

export function fixedUpstream() {
  const upstream = {
    /** What every request is answered with until a test sets another. */
    answer: { status: 500, body: {} as unknown },
    /** The bodies sent to it since the test began. */
    received: [] as Record<string, unknown>[],
    origin: '',
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      upstream.received.push((await req.json()) as Record<string, unknown>)
      return Response.json(upstream.answer.body, { status: upstream.answer.status })
    },
  })
  upstream.origin = server.url.origin
  afterAll(() => server.stop(true))
  beforeEach(() => {
    upstream.received.length = 0
  })
  return upstream
}
