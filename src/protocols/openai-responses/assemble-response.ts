// A Responses stream → the response its non-streaming call would have answered: for a client that
// did not ask for a stream when svc streamed from a Responses upstream for it
// (relay/assembled-answer.ts). The terminal event carries the whole response object.
import type { SseEvent } from '../sse'
import { isObject, parseJson, readObject, readString } from '../wire-values'

const terminal = new Set(['response.completed', 'response.incomplete'])

export function responsesAssembler() {
  let response: unknown
  return {
    /** One upstream frame (already checked to be JSON by the pass-through meter). */
    push(event: SseEvent) {
      if (event.event !== undefined && !terminal.has(event.event)) return
      const parsed = parseJson(event.data)
      if (!parsed.ok || !isObject(parsed.value)) return
      if (!terminal.has(readString(parsed.value, 'type') ?? event.event ?? '')) return
      response = readObject(parsed.value, 'response')
    },
    json: (): unknown => response,
  }
}
