// What the relay needs to know about the shape the client spoke: how to decode it, when the
// upstream speaks the same shape (pass-through), and how to encode answers and errors back.
import type { CatalogModel, ProviderConfig } from '../config/load'
import type { ProviderKind } from '../config/schema'
import type { StreamEncoder } from '../exchange/stream-codec'
import type { ExchangeRequest, ExchangeResponse, Usage } from '../exchange/types'
import type { Surface } from '../http/errors'
import type { GatewayError } from '../lib/errors'
import type { PassThroughMeter } from '../protocols/pass-through-meter'
import { isReported } from '../protocols/unreported-usage'
import type { SseEvent } from '../protocols/sse'

export interface ClientIds {
  requestId: string
  /** The routing profile the client sent, e.g. svc-pro. */
  profile: string
  createdAt: number
}

/** What encoding a translated answer needs beyond its ids. */
export interface EncodeContext {
  /** The catalog's name for the model that answered. */
  upstreamModel: string
  /** The client's body, as parsed. */
  body: Record<string, unknown>
  /** The gateway's wall clock (ms), never before the request's creation: when the answer completed. */
  now: () => number
}

/** Metering and rewriting of a same-shape upstream stream, frame by frame. */
export interface PassThroughStream extends PassThroughMeter {
  /** Observes the frame and returns the text to send the client. */
  frame(event: SseEvent): string
  /**
   * The body ended cleanly before the terminal event: the frame that completes an answer whole
   * nonetheless (Anthropic's message_stop after a named stop reason), or '' (finished() says which).
   */
  closeCleanly(): string
  /** The error event to append when the upstream stream breaks after the first byte. */
  errorFrame(error: GatewayError): string
}

/**
 * A same-shape upstream's stream, gathered into the JSON its non-streaming call would have
 * answered (relay/assembled-answer.ts).
 */
export interface PassThroughAssembly {
  push(event: SseEvent): void
  /** The answer's JSON; whole once the stream has finished. Output the upstream never counted says `estimatedOutputTokens`. */
  json(estimatedOutputTokens: number): unknown
}

/** What a leg's billed usage is worked out from (RequestTrace.billedUsage). */
export interface BilledFrom {
  usage: Usage
  reported: boolean
  outputBytes: number
}

/**
 * What a same-shape stream has received so far, as its leg is billed: a message cut before its end
 * has its output estimated from what flowed, and one that finished without its usage (no
 * message_delta usage, no usage object) is estimated where its counts are missing.
 */
export function receivedSoFar(stream: PassThroughMeter): BilledFrom {
  const finished = stream.finished()
  const usage = stream.usage()
  if (!finished) usage.output = stream.estimatedOutputTokens()
  // A finished stream's output is estimated only where it was never reported or cannot be billed.
  return { usage, reported: finished && isReported(usage), outputBytes: finished ? stream.outputBytes() : 0 }
}

/**
 * Whether a provider is relayed the client's own body and frames: it speaks the client's shape and
 * takes everything a client of that shape sends. A Responses-compatible server that is not OpenAI
 * (openai_itself off) refuses Codex's own tool types, so it is translated for as any other kind is.
 */
export const passesThrough = (provider: ProviderConfig, surface: InboundSurface): boolean =>
  provider.kind === surface.nativeKind && (provider.kind !== 'openai-responses' || provider.openaiItself !== false)

export interface InboundSurface {
  name: 'messages' | 'responses'
  errorShape: Surface
  /** Upstreams of this kind are relayed as bytes, rewriting only ids (and model where required). */
  nativeKind: ProviderKind
  decode(body: Record<string, unknown>): ExchangeRequest
  metadata(body: Record<string, unknown>): Record<string, unknown> | undefined
  /**
   * The client's own body for a same-shape upstream: only model and the token limit change, and
   * what that provider could not read back (`provider`: whether it is Anthropic itself, say).
   */
  passThroughBody(
    body: Record<string, unknown>,
    model: CatalogModel,
    maxTokens: number,
    provider: ProviderConfig,
  ): Record<string, unknown>
  /** Non-streaming: the upstream's own JSON under the gateway's ids, and the usage it reports. */
  passThroughJson(json: unknown, ids: ClientIds): { body: Record<string, unknown>; usage: Usage }
  /**
   * That JSON telling the usage svc bills (an estimate) where the upstream reported none it can
   * bill: a client that tracks its context from usage (Claude Code, Codex) would read zeros.
   */
  withBilledUsage(body: Record<string, unknown>, usage: Usage): Record<string, unknown>
  /**
   * Non-streaming, for a surface that can: the upstream's own text under the gateway's ids, put in
   * place, or undefined where they cannot be. `json` is that text parsed, as passThroughJson took it.
   */
  passThroughText?(text: string, json: unknown, ids: ClientIds): string | undefined
  /**
   * `billed`: the usage svc bills for what the stream received, for a surface whose stream tells
   * the client its usage at the end and can be told the estimate where the upstream reported none.
   */
  passThroughStream(ids: ClientIds, billed?: (received: BilledFrom) => Usage): PassThroughStream
  /** A fresh gatherer of one same-shape stream into the upstream's non-streaming JSON. */
  passThroughAssembly(): PassThroughAssembly
  encodeResponse(response: ExchangeResponse, ids: ClientIds, ctx: EncodeContext): unknown
  /** What a started stream sends while the upstream is silent, so that the connection stays alive. */
  keepAliveFrame: string
  /** Translated streams: the encoder itself turns upstream failures into the surface's error events. */
  streamEncoder(ids: ClientIds, ctx: EncodeContext): StreamEncoder
}
