// OpenAI's own Responses stream that fails part-way (`response.failed`, no usage): relayed as it came,
// the client read no usage where svc billed the output that flowed. The README promises the client
// the usage svc bills, in a stream's final event; the translated path kept it, the pass-through not.
import { expect, test } from 'bun:test'
import { endedRequestDetail } from './support/harness'
import { scriptedPair, scriptedUpstream, sseFrame } from './support/scripted-upstream'
import { parseFrames } from './support/sse-frames'

const words = 'A long partial answer that the upstream streamed before failing. '.repeat(20)

/** A Responses stream: the text, then `response.failed` with `usage` (none, or OpenAI's partial one). */
function failingStream(usage: unknown): string[] {
  let sequence = 0
  const event = (type: string, data: Record<string, unknown>) =>
    sseFrame(type, { type, sequence_number: sequence++, ...data })
  const response = (status: string, extra: Record<string, unknown> = {}) => ({
    id: 'resp_up',
    object: 'response',
    model: 'first-up',
    status,
    output: [],
    ...extra,
  })
  const item = { id: 'msg_up', type: 'message', role: 'assistant', status: 'in_progress', content: [] }
  return [
    event('response.created', { response: response('in_progress') }),
    event('response.output_item.added', { output_index: 0, item }),
    event('response.content_part.added', {
      item_id: 'msg_up',
      output_index: 0,
      content_index: 0,
      part: { type: 'output_text', text: '' },
    }),
    event('response.output_text.delta', { item_id: 'msg_up', output_index: 0, content_index: 0, delta: words }),
    event('response.failed', {
      response: response('failed', { error: { code: 'server_error', message: 'The model failed.' }, usage }),
    }),
  ]
}

test.each([
  // The output that flowed, estimated at 4 characters a token.
  ['no usage', null, Math.ceil(words.length / 4)],
  // A failed stream's own count stands, as the ledger's rule for one is (token-estimate.ts).
  ["OpenAI's partial usage", { input_tokens: 12, output_tokens: 3, total_tokens: 15 }, 3],
])(
  'a pass-through Responses stream failing part-way, %s: the client is told the usage svc bills',
  async (_, usage, output) => {
    const h = await scriptedPair('openai-responses', {}, 5, { openai_itself: true })
    scriptedUpstream(h, () => ({ sse: failingStream(usage) }))
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: 'svc-pro', input: 'hi', stream: true },
    })
    const frames = parseFrames(await res.text())
    const failed = frames.find((f) => f.data.type === 'response.failed')!.data.response as {
      usage: { input_tokens: number; output_tokens: number }
      error: unknown
    }
    const leg = (await endedRequestDetail(h, res.headers.get('x-request-id')!)).usage_events[0]
    expect(leg).toMatchObject({ outcome: 'failed', estimated: true })
    expect(leg.output_tokens).toBe(output)
    expect(failed.usage).toMatchObject({ input_tokens: leg.input_tokens, output_tokens: leg.output_tokens })
    // The rest of the failure is OpenAI's, as it came.
    expect(failed.error).toEqual({ code: 'server_error', message: 'The model failed.' })
  },
)
