// An upstream's body read whole (a JSON answer, an error's message) must not be allowed to grow
// without bound: a broken or hostile upstream, or a small gzip body that inflates to gigabytes,
// would take the whole gateway down, every stream in flight with it. Streams are read a frame at
// a time and bounded per frame instead (protocols/sse.ts).
import { GatewayError } from '../lib/errors'

/**
 * Far above any JSON answer a model gives (128k output tokens are ~0.5 MB; a Responses answer with
 * generated images a few MB), and far below what would strain the gateway.
 */
export const maxAnswerBytes = 64 * 1024 * 1024

/**
 * The body as text, or a retryable 502 when it is longer than `maxBytes`. A declared length
 * within bounds is read natively, as before (the client never reads past it); a body of unknown
 * length (chunked, compressed) is read a chunk at a time and abandoned once past the bound.
 */
export async function readAnswerText(response: Response, maxBytes = maxAnswerBytes): Promise<string> {
  const declared = response.headers.get('content-length')
  if (declared !== null && Number(declared) <= maxBytes) return response.text()
  const text = await readUpTo(response, maxBytes)
  if (text === undefined) throw answerTooLarge(maxBytes)
  return text
}

/** A retryable 502 for an answer past the bound: another candidate's may be within it. */
export const answerTooLarge = (maxBytes = maxAnswerBytes) =>
  new GatewayError('api_error', `upstream answer is larger than ${maxBytes / 1024 / 1024} MB`, {
    status: 502,
    retryable: true,
  })

/** The first `maxBytes` of the body as text, the rest left unread: enough of an error body to quote. */
export async function readTextPrefix(response: Response, maxBytes: number): Promise<string> {
  return (await readUpTo(response, maxBytes, { keepPrefix: true })) ?? ''
}

/** The body's text; past `maxBytes`, undefined (or, keeping the prefix, the first `maxBytes`). */
async function readUpTo(response: Response, maxBytes: number, opts = { keepPrefix: false }) {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let length = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      if (length + value.length > maxBytes) {
        if (!opts.keepPrefix) return undefined
        chunks.push(value.subarray(0, maxBytes - length))
        length = maxBytes
        break
      }
      chunks.push(value)
      length += value.length
    }
  } finally {
    reader.cancel().catch(() => {})
  }
  return Buffer.concat(chunks, length).toString('utf8')
}
