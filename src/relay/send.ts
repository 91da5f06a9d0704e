// One attempt's upstream request: the client's own body for a same-shape upstream, else the
// neutral request encoded for the provider; headers forwarded where the provider kind allows.
import type { Deps } from '../deps'
import type { ExchangeRequest } from '../exchange/types'
import { GatewayError } from '../lib/errors'
import { betasAtListPrice } from '../protocols/anthropic/list-price'
import { callUpstream } from '../providers/call-upstream'
import { codecs } from '../providers/codecs'
import type { Candidate } from '../router/rank'
import { type InboundSurface, passesThrough } from './surface'

export async function send(
  deps: Deps,
  call: {
    surface: InboundSurface
    body: Record<string, unknown>
    exchange: ExchangeRequest
    candidate: Candidate
    apiKey: string
    headers: Headers
    controller: AbortController
    /** Ask the upstream for a stream: the client's own choice, or the relay's for a long answer. */
    stream: boolean
    /**
     * An Anthropic turn paused in its server tools' loop: its blocks as sent, the last assistant
     * turn of the request, for the model to go on (paused-turn.ts).
     */
    pausedTurn?: unknown[]
  },
): Promise<Response> {
  const { provider, model } = call.candidate
  const codec = codecs[provider.kind]
  const passThrough = passesThrough(provider, call.surface)
  const { stream } = call
  const payload = passThrough
    ? call.surface.passThroughBody(call.body, model, call.candidate.maxTokens, provider)
    : codec.encodeRequest({ ...call.exchange, maxTokens: call.candidate.maxTokens, stream }, model, provider)
  // A non-streaming client's request streamed from the upstream (assembled-answer.ts).
  if (passThrough && stream && payload.stream !== true) payload.stream = true
  if (call.pausedTurn) {
    const messages = Array.isArray(payload.messages) ? payload.messages : []
    payload.messages = [...messages, { role: 'assistant', content: call.pausedTurn }]
  }
  const headers: Record<string, string> = { 'content-type': 'application/json', ...provider.headers }
  for (const name of codec.forwardedHeaders) {
    const value = call.headers.get(name)
    if (value) headers[name] = value
  }
  Object.assign(headers, codec.authHeaders(call.apiKey))
  if (passThrough) {
    // The client's own version header wins over our default for a same-shape relay.
    const version = call.headers.get('anthropic-version')
    if (version && provider.kind === 'anthropic') headers['anthropic-version'] = version
  }
  const betas = headers['anthropic-beta']
  if (betas !== undefined) {
    const kept = betasAtListPrice(betas, model.contextWindow)
    if (kept === undefined) delete headers['anthropic-beta']
    else headers['anthropic-beta'] = kept
  }
  const request = {
    url: `${provider.baseUrl}${codec.path}`,
    headers,
    body: JSON.stringify(payload),
    controller: call.controller,
    // A streaming upstream sends its headers as soon as it accepts the request, so for streams
    // the wait for headers is bounded by the connect timeout and the first frame by first-byte;
    // a non-streaming answer's headers come with the whole answer, bounded by first-byte. A
    // stream gathered for a non-streaming client keeps the first-byte bound for its headers and
    // first event together (assembled-answer.ts): some compatible servers send their headers only
    // with the first token, and such a request would otherwise fail sooner than it did as JSON.
    timeouts: {
      firstByteMs: call.exchange.stream ? deps.config.routing.connectTimeoutMs : deps.config.routing.firstByteTimeoutMs,
    },
    decodeError: codec.decodeError,
  }
  if (!codec.resendAfter) return callUpstream(deps.fetch, request)
  try {
    return await callUpstream(deps.fetch, request)
  } catch (err) {
    const again = err instanceof GatewayError ? codec.resendAfter(err, payload, model) : undefined
    if (!again) throw err
    return callUpstream(deps.fetch, { ...request, body: JSON.stringify(again) })
  }
}

/** A 200 with the wrong body type is the provider's fault, found before any byte is relayed. */
export function expectContentType(upstream: Response, wanted: string) {
  const type = upstream.headers.get('content-type') ?? ''
  // Media types are case-insensitive (RFC 9110 §8.3.1): `Text/Event-Stream` is a stream too.
  if (!hasMediaType(type, wanted)) {
    // Nobody will read this body: cancelling it frees the connection (unread, a large one would
    // sit paused on the pool's socket until the upstream gave up).
    upstream.body?.cancel().catch(() => {})
    throw new GatewayError(
      'api_error',
      `upstream answered 200 with content-type ${type || '(none)'}, expected ${wanted}`,
      {
        status: 502,
        retryable: true,
      },
    )
  }
}

/** `wanted` (lower case) within a content-type header, in any case; the usual lower-case one costs no copy. */
export const hasMediaType = (contentType: string, wanted: string): boolean =>
  contentType.includes(wanted) || contentType.toLowerCase().includes(wanted)
