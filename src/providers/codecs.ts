// One codec per upstream kind: where requests go, how they authenticate, and how their bodies,
// streams and errors map to the neutral exchange. No provider-name branches anywhere else.
import { type CatalogModel, isRoutedClaude, type ProviderConfig } from '../config/load'
import type { ProviderKind } from '../config/schema'
import type { StreamCodec } from '../exchange/stream-codec'
import type { ExchangeEvent, ExchangeRequest, ExchangeResponse, UpstreamErrorInfo } from '../exchange/types'
import type { GatewayError } from '../lib/errors'
import { decodeAnthropicError, statusForAnthropicErrorType } from '../protocols/anthropic/errors'
import { decodeAnthropicResponse } from '../protocols/anthropic/decode-anthropic-response'
import { anthropicStreamDecoder } from '../protocols/anthropic/decode-anthropic-stream'
import { encodeAnthropicRequest } from '../protocols/anthropic/encode-anthropic-request'
import { fitToModel } from '../protocols/anthropic/model-fit'
import {
  refusesThinkingSignature,
  refusesTurnWithoutThinking,
  withoutThinking,
  withoutThinkingHistory,
} from '../protocols/anthropic/foreign-history'
import { decodeChatResponse } from '../protocols/openai-chat/decode-chat-response'
import { chatStreamDecoder } from '../protocols/openai-chat/decode-chat-stream'
import { encodeChatRequest } from '../protocols/openai-chat/encode-chat-request'
import { decodeChatError, decodeChatErrorPayload } from '../protocols/openai-chat/errors'
import type { RequestToolNames } from '../protocols/openai-tool-names'
import { decodeResponsesResponse } from '../protocols/openai-responses/decode-responses-response'
import { readResponsesFailure, responsesStreamDecoder } from '../protocols/openai-responses/decode-responses-stream'
import { encodeResponsesRequest } from '../protocols/openai-responses/encode-responses-request'
import { decodeResponsesError } from '../protocols/openai-responses/errors'
import type { SseEvent } from '../protocols/sse'
import { isObject, readObject, readString } from '../protocols/wire-values'

export interface ProviderCodec {
  /** Appended to the provider's base_url. */
  path: string
  authHeaders(apiKey: string): Record<string, string>
  /** Inbound headers that travel to this kind of upstream unchanged. */
  forwardedHeaders: readonly string[]
  /** The body for `model` (the candidate's catalog entry: its upstream name and capabilities). */
  encodeRequest(req: ExchangeRequest, model: CatalogModel, provider: ProviderConfig): Record<string, unknown>
  /**
   * `toolNames` (see requestToolNames): the request's tool names, for a codec that renamed tools
   * upstream and gives the answer's tool calls their names back (Chat: names OpenAI refuses).
   * `provider`: the server that answered, where its dialect's servers differ (a Responses-compatible
   * server's `encrypted_content` is not OpenAI's).
   */
  decodeResponse(json: unknown, toolNames: RequestToolNames, provider: ProviderConfig): ExchangeResponse
  /**
   * A fresh decoder for one stream: upstream SSE frames → neutral events. `pausedTurn`: Anthropic's
   * turn as svc sent it back to go on (relay/paused-turn.ts), whose searches the stream may answer.
   */
  streamDecoder(
    toolNames: RequestToolNames,
    provider: ProviderConfig,
    pausedTurn?: unknown[],
  ): StreamCodec<SseEvent, ExchangeEvent>
  decodeError(status: number, bodyText: string): UpstreamErrorInfo
  /**
   * The error a 200 JSON answer carries instead of an answer, where the dialect's servers send one
   * (OpenRouter's and vLLM's `{"error":…}` under a 200): a failed attempt, not a malformed answer.
   */
  inBandError?(json: unknown): UpstreamErrorInfo | undefined
  /**
   * The body to send once more after the upstream refused this one for something svc can take out
   * (Anthropic refusing thinking another server signed), or undefined: the refusal stands.
   */
  resendAfter?(
    error: GatewayError,
    body: Record<string, unknown>,
    model: CatalogModel,
  ): Record<string, unknown> | undefined
}

/**
 * The tool names of a client's request, read only when a decoder asks. Both inbound shapes
 * (Messages, Responses) name a tool `tools[i].name`, as the exchange request keeps it; tools the
 * encoders drop (hosted ones) are harmless extras.
 */
export const requestToolNames =
  (body: Record<string, unknown>): RequestToolNames =>
  () =>
    Array.isArray(body.tools)
      ? body.tools.flatMap((tool: unknown) => (isObject(tool) && typeof tool.name === 'string' ? [tool.name] : []))
      : []

const anthropicVersion = '2023-06-01'

/** A Claude model behind a router that caches. */
const isCachingClaude = (model: CatalogModel) => model.capabilities.promptCaching && isRoutedClaude(model)

/** A Responses-compatible server's reasoning blobs are its own: tagged with it (ResponsesDecodeOptions). */
const blobsOf = (provider: ProviderConfig) => (provider.openaiItself === false ? { blobMaker: provider.id } : {})

/**
 * Anthropic's error object under a 200 (a proxy's way: `{"type":"error","error":{…}}`), its type
 * kept as a stream's in-band error keeps it: `overloaded_error` fails as a 529 would.
 */
function readAnthropicInBandError(json: unknown): UpstreamErrorInfo | undefined {
  if (!isObject(json) || json.type !== 'error') return undefined
  const error = readObject(json, 'error') ?? {}
  const type = readString(error, 'type') ?? 'api_error'
  const message = readString(error, 'message') || 'upstream answered 200 with an error'
  return { status: statusForAnthropicErrorType(type), type, message }
}

/**
 * A 200 Responses body that is an error (OpenRouter's `{"error":…}` with no output), or a Response
 * that says it failed or was cancelled (OpenAI's, `output: []`): a failed attempt, as its stream's
 * `response.failed` is. An `incomplete` one is an answer (the output limit).
 */
function readResponsesInBandError(json: unknown): UpstreamErrorInfo | undefined {
  if (!isObject(json)) return undefined
  if (json.status === 'failed' || json.status === 'cancelled') {
    return json.error == null
      ? { status: 500, type: 'api_error', message: `upstream response ${json.status}` }
      : readResponsesFailure(json)
  }
  return !Array.isArray(json.output) && json.error != null ? readResponsesFailure(json) : undefined
}

export const codecs: Record<ProviderKind, ProviderCodec> = {
  anthropic: {
    path: '/v1/messages',
    authHeaders: (apiKey) => ({ 'x-api-key': apiKey, 'anthropic-version': anthropicVersion }),
    forwardedHeaders: ['anthropic-version', 'anthropic-beta'],
    encodeRequest: (req, model, provider) =>
      encodeAnthropicRequest(
        req,
        model.upstreamModel,
        { ...model.capabilities, anthropicSignatures: provider.anthropicSignatures },
        model.maxOutputTokens,
      ),
    decodeResponse: decodeAnthropicResponse,
    streamDecoder: (_toolNames, _provider, pausedTurn) => anthropicStreamDecoder(pausedTurn),
    decodeError: decodeAnthropicError,
    inBandError: readAnthropicInBandError,
    // Thinking another server signed in Claude's own form, which svc cannot tell apart, refused:
    // the same request without the thinking history (one round trip more, and no tokens). A tool
    // turn without thinking refused under adaptive thinking: the same request with thinking off, in
    // the model's own form of off (Sonnet 5.5 thinks unless told `between_tools`: model-fit.ts).
    resendAfter: (error, body, model) =>
      refusesThinkingSignature(error.message)
        ? withoutThinkingHistory(body)
        : refusesTurnWithoutThinking(error.message)
          ? fitToModel({ ...withoutThinking(body), thinking: { type: 'disabled' } }, model.capabilities)
          : undefined,
  },
  'openai-chat': {
    path: '/chat/completions',
    authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
    forwardedHeaders: [],
    encodeRequest: (req, model, provider) =>
      encodeChatRequest(req, model.upstreamModel, {
        maxTokensField: provider.maxTokensField,
        reasoningContent: provider.reasoningContent,
        thinkingToggle: provider.thinkingToggle,
        systemMessages: provider.systemMessages,
        cacheControl: provider.anthropicCacheControl && isCachingClaude(model),
        samplingParameters: model.capabilities.samplingParameters,
        topK: provider.topK,
        // A router that takes Anthropic's cache_control (OpenRouter) takes its `reasoning` too.
        claude: isRoutedClaude(model) ? { routerReasoning: provider.anthropicCacheControl } : undefined,
        reasoningEfforts: model.capabilities.reasoningEfforts,
        thoughtSignatures: provider.thoughtSignatures,
      }),
    decodeResponse: decodeChatResponse,
    streamDecoder: chatStreamDecoder,
    decodeError: decodeChatError,
    inBandError: (json) =>
      isObject(json) && json.choices === undefined ? decodeChatErrorPayload(200, json) : undefined,
  },
  'openai-responses': {
    path: '/responses',
    authHeaders: (apiKey) => ({ authorization: `Bearer ${apiKey}` }),
    forwardedHeaders: [],
    encodeRequest: (req, model, provider) =>
      encodeResponsesRequest(req, model.upstreamModel, {
        ...model.capabilities,
        compatible: provider.openaiItself === false,
        provider: provider.id,
        reasoningInEncryptedContent: provider.reasoningInEncryptedContent === true,
      }),
    decodeResponse: (json, toolNames, provider) => decodeResponsesResponse(json, toolNames, blobsOf(provider)),
    streamDecoder: (toolNames, provider) => responsesStreamDecoder(toolNames, blobsOf(provider)),
    decodeError: decodeResponsesError,
    inBandError: readResponsesInBandError,
  },
}
