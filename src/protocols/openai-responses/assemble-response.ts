// A Responses stream → the response its non-streaming call would have answered: for a client that
// did not ask for a stream when svc streamed from a Responses upstream for it
// (relay/assembled-answer.ts). The terminal event carries the whole response object; where a
// compatible server sends it with its output left empty, the items its `output_item.done` events
// gave stand in.
import type { SseEvent } from '../sse'
import { isObject, type JsonObject, parseJson, readArray, readNumber, readObject, readString } from '../wire-values'

const terminal = new Set(['response.completed', 'response.incomplete'])
const wanted = new Set([...terminal, 'response.output_item.done'])

export function responsesAssembler() {
  let response: JsonObject | undefined
  /** Each finished output item, by its output_index. */
  const items: unknown[] = []
  return {
    /** One upstream frame (already checked to be JSON by the pass-through meter). */
    push(event: SseEvent) {
      if (event.event !== undefined && !wanted.has(event.event)) return
      const parsed = parseJson(event.data)
      if (!parsed.ok || !isObject(parsed.value)) return
      const payload = parsed.value
      const type = readString(payload, 'type') ?? event.event ?? ''
      if (type === 'response.output_item.done') {
        const index = readNumber(payload, 'output_index')
        if (index !== undefined && index >= 0 && index < 4096 && isObject(payload.item)) items[index] = payload.item
      } else if (terminal.has(type)) {
        response = readObject(payload, 'response')
      }
    },
    /** The response (its usage as the upstream gave it: a Responses stream's terminal event carries it whole). */
    json(_estimatedOutputTokens: number): unknown {
      const output = response && readArray(response, 'output')
      if (!response || (output && output.length > 0) || items.length === 0) return response
      return { ...response, output: items.filter((item) => item !== undefined) }
    },
  }
}
