// An upstream that answers with exact bytes a test writes: for wire corners the simulator does not
// play (a provider's dated model name, nulls in usage, a stream cut mid-tool-call…). It takes the
// harness's upstream fetch: every call is answered, streamed or not as the request's body asks.
import type { ProviderKind } from '../../src/config/schema'
import { createHarness, type Harness } from './harness'

type Json = Record<string, unknown>

/** An SSE frame as the providers write them. */
export const sseFrame = (event: string | undefined, data: unknown) =>
  `${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`

/** An Anthropic stream event: the frame of `type` whose data carries its type beside `data`. */
export const anthropicEvent = (type: string, data: Json = {}) => sseFrame(type, { type, ...data })

/** Anthropic's message_start from `model`, counting `inputTokens` of prompt (null: no usage at all). */
export const anthropicMessageStart = (model: string, inputTokens: number | null = 20) =>
  anthropicEvent('message_start', {
    message: {
      id: 'msg_up',
      type: 'message',
      role: 'assistant',
      model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      ...(inputTokens === null ? {} : { usage: { input_tokens: inputTokens, output_tokens: 1 } }),
    },
  })

/** A whole Anthropic stream from `model` answering `text` in one delta, ended `end_turn`. */
export const anthropicTextAnswer = (model: string, text = 'hi', inputTokens = 10): string[] => [
  anthropicMessageStart(model, inputTokens),
  anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
  anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text } }),
  anthropicEvent('content_block_stop', { index: 0 }),
  anthropicEvent('message_delta', {
    delta: { stop_reason: 'end_turn', stop_sequence: null },
    usage: { output_tokens: 2 },
  }),
  anthropicEvent('message_stop'),
]

/** A whole Anthropic message of one text block, as a JSON answer gives it. */
export const anthropicJsonAnswer = (model: string, text: string, usage: Json) => ({
  id: 'msg_up',
  type: 'message',
  role: 'assistant',
  model,
  content: [{ type: 'text', text }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  usage,
})

export interface ScriptedAnswer {
  /** The frames of a streamed answer, each one network write. */
  sse?: string[]
  /** A non-streaming answer's JSON body. */
  json?: unknown
  /** How long the response's headers wait. */
  headerDelayMs?: number
  /** The JSON answer's status (200 unless given). */
  status?: number
  /**
   * How the stream goes on after its frames: it ends (unless given), breaks as a connection reset
   * does, or stalls until the request is aborted.
   */
  after?: 'reset' | 'stall'
}

/**
 * h's upstream calls answered by `answer` (given the upstream request's body and URL); returns the
 * bodies sent.
 */
export function scriptedUpstream(h: Harness, answer: (body: Json, url: URL) => ScriptedAnswer): Json[] {
  const sent: Json[] = []
  h.deps.fetch = (async (url: string, init: RequestInit) => {
    const body = JSON.parse(String(init.body)) as Json
    sent.push(body)
    const script = answer(body, new URL(url))
    if (script.headerDelayMs) await Bun.sleep(script.headerDelayMs)
    // JSON for a stream request too where the script has no frames: a server that cannot stream.
    if (body.stream !== true || script.sse === undefined)
      return Response.json(script.json ?? {}, { status: script.status ?? 200 })
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const frame of script.sse ?? []) controller.enqueue(new TextEncoder().encode(frame))
        if (script.after === 'stall')
          init.signal?.addEventListener('abort', () => controller.error(new DOMException('aborted', 'AbortError')))
        else if (script.after !== 'reset') controller.close()
      },
      // Asked for more once the frames are read: a reset now is one the reader meets after them.
      pull(controller) {
        if (script.after === 'reset') controller.error(new Error('read ECONNRESET'))
      },
    })
    return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
  }) as unknown as typeof fetch
  return sent
}

/**
 * svc-pro on two models of one provider of `kind`: `first` (asking for `first-up`) ranked above
 * `second` (`second-up`), 1 USD/Mtok in and out (and `model`'s settings), under these routing
 * settings, on a grant of `grantUsd`. The base URL is dialled only where a test keeps the harness's
 * own fetch (a real server on loopback).
 */
export const twoModelGateway = (opts: {
  kind: ProviderKind
  routing?: Record<string, number>
  grantUsd?: number
  baseUrl?: string
  model?: Record<string, unknown>
  /** The provider's svc.toml keys beyond kind, base_url and api_key_env (openai_itself, say). */
  provider?: Record<string, unknown>
}): Promise<Harness> =>
  createHarness({
    grantUsd: opts.grantUsd ?? 5,
    env: { K: 'upstream-key-0123456789' },
    config: {
      catalog: { builtin: false },
      routing: opts.routing ?? {},
      providers: {
        p: { kind: opts.kind, base_url: opts.baseUrl ?? 'http://127.0.0.1:9/v1', api_key_env: 'K', ...opts.provider },
      },
      models: ['first', 'second'].map((name, i) => ({
        id: name,
        provider: 'p',
        upstream_model: `${name}-up`,
        profiles: ['pro'],
        quality: 90 - i,
        input_usd_per_mtok: 1,
        output_usd_per_mtok: 1,
        ...opts.model,
      })),
    },
  })

/**
 * An Anthropic server on a real loopback socket for twoModelGateway's models, for what only the
 * HTTP layer sees (a body that stalls, a redirect): `second-up` answers "hi", `first-up` whatever
 * `first` returns. Its base URL goes in twoModelGateway's `baseUrl`.
 */
export function loopbackPair(first: () => Response): { baseUrl: string; stop: () => void } {
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      const { model } = (await request.json()) as { model: string }
      if (model === 'first-up') return first()
      return Response.json(anthropicJsonAnswer(model, 'hi', { input_tokens: 10, output_tokens: 2 }))
    },
  })
  return { baseUrl: server.url.href.replace(/\/$/, ''), stop: () => server.stop(true) }
}

/** twoModelGateway for answers a test scripts (its fetch replaced): one of them and the fallback to the next. */
export const scriptedPair = (
  kind: ProviderKind,
  routing: Record<string, number> = {},
  grantUsd = 5,
  provider?: Record<string, unknown>,
): Promise<Harness> => twoModelGateway({ kind, routing, grantUsd, provider })
