// The four ways a model request crosses the gateway: each surface to an upstream of its own shape
// (bytes relayed, ids rewritten) and to one of another shape (translated through the neutral types).
import type { ConfigFile, ProviderKind } from '../../src/config/schema'
import { decodeAnthropicRequest } from '../../src/protocols/anthropic/decode-anthropic-request'
import { decodeResponsesRequest } from '../../src/protocols/openai-responses/decode-responses-request'
import type { ResponsesBody } from '../../src/protocols/openai-responses/schema'
import { estimateRequestTokens } from '../../src/router/count-tokens'
import type { Harness } from '../support/harness'
import type { SseFrame } from './helpers'

export interface Route {
  name: string
  surface: 'messages' | 'responses'
  kind: ProviderKind
  /** Upstream frames the simulator sends before a mid-stream fault: two text deltas' worth. */
  afterFrames: number
  /**
   * Upstream frames that are the opening alone, held until the answer begins: Anthropic's
   * message_start (its ping comes after the first block's start), Chat's role chunk, Responses'
   * response.created and in_progress.
   */
  openingFrames: number
  /** Client events before the first text delta. */
  prelude: string[]
  /** The upstream reports the prompt in its first frame (Anthropic's message_start); otherwise the tokenizer counts it. */
  reportsPrompt: boolean
  /** How a stream that breaks after the first byte ends: an `error` event, or Responses' own `response.failed`. */
  brokenStreamEnd: 'error' | 'response.failed'
}

export const responsesPrelude = [
  'response.created',
  'response.in_progress',
  'response.output_item.added',
  'response.content_part.added',
]

/** A one-message Responses stream, whole: the prelude, one text delta, and each part closed. */
export const responsesCleanEvents = [
  ...responsesPrelude,
  'response.output_text.delta',
  'response.output_text.done',
  'response.content_part.done',
  'response.output_item.done',
  'response.completed',
]

export const routes: Route[] = [
  {
    name: 'messages → anthropic (pass-through)',
    surface: 'messages',
    kind: 'anthropic',
    afterFrames: 5,
    openingFrames: 1,
    prelude: ['message_start', 'content_block_start', 'ping'],
    reportsPrompt: true,
    brokenStreamEnd: 'error',
  },
  {
    name: 'messages → openai-chat (translated)',
    surface: 'messages',
    kind: 'openai-chat',
    afterFrames: 3,
    openingFrames: 1,
    prelude: ['message_start', 'content_block_start'],
    reportsPrompt: false,
    brokenStreamEnd: 'error',
  },
  {
    name: 'responses → openai-responses (pass-through)',
    surface: 'responses',
    kind: 'openai-responses',
    afterFrames: 6,
    openingFrames: 2,
    prelude: responsesPrelude,
    reportsPrompt: false,
    brokenStreamEnd: 'error',
  },
  {
    name: 'responses → anthropic (translated)',
    surface: 'responses',
    kind: 'anthropic',
    afterFrames: 5,
    openingFrames: 1,
    prelude: responsesPrelude,
    reportsPrompt: true,
    // The translated Responses stream fails the response itself, as OpenAI does.
    brokenStreamEnd: 'response.failed',
  },
]

/** A provider of the route's kind at `url` (OpenAI kinds take the `/v1` in their base URL). */
export const providerFor = (route: Route, url: string): NonNullable<ConfigFile['providers']>[string] => ({
  kind: route.kind,
  base_url: route.kind === 'anthropic' ? url : `${url}/v1`,
  api_key_env: 'SIM_KEY',
  // The simulator plays OpenAI itself: a Responses client's body passes through.
  ...(route.kind === 'openai-responses' ? { openai_itself: true } : {}),
})

export const pathFor = (route: Route) =>
  route.surface === 'messages' ? '/compat-a/v1/messages' : '/compat-b/v1/responses'

export const bodyFor = (route: Route, stream: boolean): Record<string, unknown> =>
  route.surface === 'messages'
    ? { model: 'svc-max', max_tokens: 100, messages: [{ role: 'user', content: 'hello' }], stream }
    : { model: 'svc-max', input: 'hello', max_output_tokens: 100, stream }

/** The gateway's own prompt estimate (README: "prompt tokens counted with the tokenizer"). */
export const tokenizerCount = (route: Route, body: Record<string, unknown>) =>
  estimateRequestTokens(
    route.surface === 'messages'
      ? decodeAnthropicRequest(body)
      : decodeResponsesRequest(body as ResponsesBody, { defaultMaxTokens: 128_000 }),
  )

export function send(h: Harness, route: Route, body: Record<string, unknown>) {
  return h.call(pathFor(route), { method: 'POST', json: body, headers: { 'anthropic-version': '2023-06-01' } })
}

export const deltaEvent = (route: Route) =>
  route.surface === 'messages' ? 'content_block_delta' : 'response.output_text.delta'

export const deltaText = (route: Route, f: SseFrame): string =>
  route.surface === 'messages' ? f.data.delta.text : f.data.delta
