// Chat Completions stream chunks → neutral exchange events (wire-formats §3.3, §4.9). The exchange
// wants one block open at a time, dense indices, thinking first, and whole tool calls; Chat gives
// interleavable fragments keyed by tool index, so this is a small state machine.

import type { StreamCodec } from '../../exchange/stream-codec'
import type { ExchangeEvent, StopReason, Usage } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import type { SseEvent } from '../sse'
import {
  isJson,
  isObject,
  type JsonObject,
  parseJson,
  readArray,
  readNumber,
  readObject,
  readString,
} from '../wire-values'
import { decodeChatErrorPayload } from './errors'
import { mapChatFinishReason, stopReasonOfContent } from './finish-reason'
import { noToolNames, type RequestToolNames, toolNameRestorer } from '../openai-tool-names'
import { isReported } from '../unreported-usage'
import { chatContentParts } from './content-parts'
import { chatUsage } from './usage'
import {
  openRouterCallSignatures,
  thoughtSignatureOf,
  withoutThoughtSignature,
  withThoughtSignature,
} from '../thought-signature'

interface ToolCall {
  id: string
  /** The id the upstream gave, to notice providers that reuse one index for several calls. */
  upstreamId: string | undefined
  name: string
  args: string
  /**
   * The arguments began as a JSON string: double-encoded (the JSON text inside a string), as some
   * servers send them. Held, and sent (unwrapped where they hold an object) as the call's block
   * closes, or as the answer ends before it does (releaseHeld).
   */
  quoted: boolean
  state: 'pending' | 'open' | 'closed'
}

/** `refusal`: a text block of the model's words declining (TextBlock.refusal), apart from its answer's text. */
type OpenBlock =
  | { kind: 'thinking' | 'text' | 'refusal'; index: number }
  | { kind: 'tool_use'; index: number; call: ToolCall }

/** `toolNames`: the request's, to restore the names encodeChatRequest shortened. */
export function chatStreamDecoder(toolNames: RequestToolNames = noToolNames): StreamCodec<SseEvent, ExchangeEvent> {
  const restoreName = toolNameRestorer(toolNames)
  let started = false
  /** A choice numbered 0 has come: chunks of other choices are a second answer's. */
  let sawFirstChoice = false
  let nextIndex = 0
  let open: OpenBlock | undefined
  let sawTextOrTool = false
  /** The model declined: its words came as `refusal`, not `content`. */
  let refused = false
  let done = false
  let finishReason: string | undefined
  let usage: Usage | undefined
  /** The prompt's counts went out ahead of the finish (a server that reports usage on every chunk). */
  let promptTold = false
  const calls: ToolCall[] = []
  const callByIndex = new Map<number, ToolCall>()
  /** Signatures OpenRouter sent in reasoning_details, by call id, for calls not yet seen. */
  let openRouterSignatures: Map<string, string> | undefined

  const closeOpen = (out: ExchangeEvent[]) => {
    if (!open) return
    if (open.kind === 'tool_use') {
      releaseHeld(out)
      open.call.state = 'closed'
    }
    out.push({ type: 'block_stop', index: open.index })
    open = undefined
  }

  /**
   * The open call's held (double-encoded) arguments, as its block closes, or as the answer ends
   * before that (cut, an error in the stream, or a broken read): still held then, the client saw
   * none of them and the meter billed none.
   */
  const releaseHeld = (out: ExchangeEvent[]) => {
    if (open?.kind !== 'tool_use' || !open.call.quoted) return
    open.call.quoted = false
    if (open.call.args !== '')
      out.push({ type: 'tool_args_delta', index: open.index, partialJson: unwrapped(open.call.args) })
  }

  const ensureBlock = (kind: 'thinking' | 'text' | 'refusal', out: ExchangeEvent[]): number => {
    if (open?.kind === kind) return open.index
    closeOpen(out)
    const index = nextIndex++
    open = { kind, index }
    out.push({ type: 'block_start', index, block: kind === 'refusal' ? { kind: 'text', refusal: true } : { kind } })
    return index
  }

  const think = (thinking: string, out: ExchangeEvent[]) => {
    // Reasoning after text or a tool call has started would break Anthropic clients; dropped.
    if (sawTextOrTool) return
    const index = ensureBlock('thinking', out)
    out.push({ type: 'thinking_delta', index, thinking })
  }

  const say = (text: string, out: ExchangeEvent[]) => {
    const index = ensureBlock('text', out)
    sawTextOrTool = true
    out.push({ type: 'text_delta', index, text })
  }

  /** The model's words declining, in a block of their own: a Responses client's refusal part. */
  const decline = (text: string, out: ExchangeEvent[]) => {
    const index = ensureBlock('refusal', out)
    sawTextOrTool = true
    refused = true
    out.push({ type: 'text_delta', index, text })
  }

  const openTool = (call: ToolCall, out: ExchangeEvent[]) => {
    closeOpen(out)
    const index = nextIndex++
    call.state = 'open'
    open = { kind: 'tool_use', index, call }
    sawTextOrTool = true
    out.push({ type: 'block_start', index, block: { kind: 'tool_use', id: call.id, name: call.name } })
    if (call.args !== '' && !call.quoted) out.push({ type: 'tool_args_delta', index, partialJson: call.args })
  }

  const onToolFragment = (fragment: JsonObject, out: ExchangeEvent[]) => {
    const givenIndex = readNumber(fragment, 'index')
    const upstreamIndex = givenIndex ?? 0
    const id = readString(fragment, 'id') || undefined
    const fn = readObject(fragment, 'function') ?? {}
    const name = readString(fn, 'name')
    const fragmentArgs = isObject(fn.arguments) ? JSON.stringify(fn.arguments) : (readString(fn, 'arguments') ?? '')
    let call = callByIndex.get(upstreamIndex)
    // Some providers repeat index 0 for every parallel call: a different id means a new call.
    // Gemini behind some proxies sends neither an index nor an id, each call whole in one
    // fragment: a named fragment whose arguments are whole, after a whole call, is the next call.
    // Whole is an object, or a string (double-encoded): a double-encoded call took the next call's
    // arguments as its own. (The fragment is tested first: the call's text only when
    // it could be whole.)
    const nextUnmarkedCall =
      givenIndex === undefined &&
      !id &&
      name &&
      call?.name &&
      isWholeArguments(fragmentArgs) &&
      isWholeArguments(call.args)
    if (!call || (id && call.upstreamId && id !== call.upstreamId) || nextUnmarkedCall) {
      call = { id: id ?? synthesizeCallId(), upstreamId: id, name: '', args: '', quoted: false, state: 'pending' }
      callByIndex.set(upstreamIndex, call)
      calls.push(call)
    }
    if (name && !call.name) call.name = restoreName(name)
    // Gemini's signature comes on the call's (whole) fragment, or through OpenRouter in the chunk's
    // reasoning_details; the id carries it to the next turn. One that came once the call's block
    // had opened, its id already sent, cannot be delivered.
    const signature =
      thoughtSignatureOf(fragment) ?? (call.upstreamId ? openRouterSignatures?.get(call.upstreamId) : undefined)
    if (signature !== undefined && call.state === 'pending')
      call.id = withThoughtSignature(withoutThoughtSignature(call.id), signature)
    // A fragment for a call whose block is closed can no longer be delivered.
    if (call.state === 'closed') return
    // Told by its first character: arguments that open with `{` stream as they come.
    if (call.args === '' && fragmentArgs.trimStart().startsWith('"')) call.quoted = true
    call.args += fragmentArgs
    if (call.state === 'open') {
      if (fragmentArgs !== '' && open && !call.quoted)
        out.push({ type: 'tool_args_delta', index: open.index, partialJson: fragmentArgs })
      return
    }
    // Calls usually stream one after another, so a new index means the previous call is done. If
    // the open call's JSON is still incomplete, the provider interleaves: this one waits. Waiting
    // calls open in the order they came (their `index` is their place in the message), each once
    // the one before it is whole: a client may run them one after another, in that order.
    while (!(open?.kind === 'tool_use' && !isJson(open.call.args))) {
      const next = calls.find((waiting) => waiting.state === 'pending')
      if (!next?.name) return
      openTool(next, out)
    }
  }

  const decodeChunk = (data: string): ExchangeEvent[] => {
    const chunk = parseChunk(data)
    const error = decodeChatErrorPayload(200, chunk)
    if (error) {
      done = true
      const out: ExchangeEvent[] = []
      releaseHeld(out)
      out.push({ type: 'error', error })
      return out
    }
    const out: ExchangeEvent[] = []
    if (!started) {
      started = true
      out.push({ type: 'start', id: readString(chunk, 'id') ?? '', model: readString(chunk, 'model') ?? '' })
    }
    const choices = readArray(chunk, 'choices') ?? []
    // The first choice's: a server that sends several (a proxy echoing n > 1) keeps them apart by
    // index; one that numbers its only choice otherwise (1, null) has that one.
    let choice = choices.find((c) => isObject(c) && (c.index === 0 || c.index === undefined))
    if (choice !== undefined) sawFirstChoice ||= (choice as JsonObject).index === 0
    else if (!sawFirstChoice && choices.length === 1) choice = choices[0]
    // Usually a separate chunk with empty choices after the finish; some providers attach it to
    // the finish chunk or to every chunk. The last one with numeric counts wins: a usage event
    // says the upstream reported its usage (relay/meter.ts), and one without is estimated.
    // Groq's, where it sends its usage under `x_groq` only; Moonshot's, in the finish chunk's choice.
    const chunkUsage =
      chunk.usage ?? readObject(chunk, 'x_groq')?.usage ?? (isObject(choice) ? choice.usage : undefined)
    if (isObject(chunkUsage)) {
      const reported = chatUsage(chunkUsage)
      if (isReported(reported)) usage = reported
    }
    // OpenAI's usage chunk comes last, after the finish: the message is whole, whether or not the
    // server goes on to send [DONE] (one that held the connection open kept the client waiting
    // for the idle timeout, then told it the answer failed).
    if (choices.length === 0 && finishReason !== undefined && usage !== undefined) return [...out, ...finishMessage()]
    if (!isObject(choice)) return out
    const delta = readObject(choice, 'delta') ?? {}

    const reasoning = readString(delta, 'reasoning_content') || readString(delta, 'reasoning')
    if (reasoning) think(reasoning, out)
    openRouterSignatures = openRouterCallSignatures(delta.reasoning_details, openRouterSignatures)
    // A string, or Mistral's list of chunks (content-parts.ts); a string allocates nothing more.
    let said = false
    if (typeof delta.content === 'string') {
      said = delta.content !== ''
      if (said) say(delta.content, out)
    } else {
      for (const part of chatContentParts(delta.content)) {
        if (part.kind === 'thinking') think(part.text, out)
        else {
          said = true
          say(part.text, out)
        }
      }
    }
    const refusal = said ? undefined : readString(delta, 'refusal')
    if (refusal) decline(refusal, out)
    for (const fragment of readArray(delta, 'tool_calls') ?? []) {
      if (isObject(fragment)) onToolFragment(fragment, out)
    }
    const finish = choice.finish_reason
    if (typeof finish === 'string' && finish !== '') finishReason = finish
    // A server that reports usage on every chunk has counted the prompt from the start: a stream
    // cut before its end is billed that prompt (its cached part at the cache price), as Anthropic's
    // message_start count is, and only its output estimated. No output count: still unreported. On
    // the finish's own chunk the whole usage follows at once.
    if (usage !== undefined && !promptTold && finishReason === undefined) {
      promptTold = true
      out.push({
        type: 'usage',
        usage: { input: usage.input, cacheRead: usage.cacheRead, cacheWrite: usage.cacheWrite },
      })
    }
    return out
  }

  /** The message's close, once [DONE] came or the body ended after a finish_reason. */
  const finishMessage = (): ExchangeEvent[] => {
    done = true
    const out: ExchangeEvent[] = []
    closeOpen(out)
    // Calls buffered behind an interleaved one go out now, whole.
    for (const call of calls) {
      if (call.state !== 'pending') continue
      openTool(call, out)
      closeOpen(out)
    }
    if (usage) out.push({ type: 'usage', usage })
    const reason: StopReason = finishReason === undefined ? 'end_turn' : mapChatFinishReason(finishReason)
    out.push({ type: 'finish', reason: stopReasonOfContent(reason, calls.length > 0, refused), stopSequence: null })
    return out
  }

  /** An answer that stops here without its finish: what it held goes out as it came. */
  const cutShort = (): ExchangeEvent[] => {
    if (done) return []
    const out: ExchangeEvent[] = []
    releaseHeld(out)
    return out
  }

  return {
    push(event) {
      if (done || isBlank(event.data)) return []
      if (event.data !== '[DONE]') return decodeChunk(event.data)
      if (!started) throw endedEmpty()
      return finishMessage()
    },
    end() {
      if (done) return []
      if (finishReason !== undefined) return finishMessage()
      // Cut off before both [DONE] and a finish_reason: no finish, so the encoder reports an error.
      return cutShort()
    },
    release: cutShort,
    get done() {
      return done
    },
  }
}

/**
 * An empty `data:` frame, which some servers send to keep a quiet stream alive: nothing to read.
 * Parsed, it failed the answer as a malformed chunk. Tested on the first character first: a chunk
 * is never copied for it.
 */
const isBlank = (data: string): boolean => data === '' || (data.charCodeAt(0) <= 32 && data.trim() === '')

/**
 * A double-encoded call's input, the JSON text its string holds, as a JSON answer's is read
 * (tool-arguments.ts): streamed as sent, the client's tool got a string for its input. Arguments
 * that hold no object (cut at the output limit, or a plain string) go as they came: sent as `{}`,
 * what the model wrote was neither shown nor billed.
 */
function unwrapped(args: string): string {
  const outer = parseJson(args)
  if (!outer.ok || typeof outer.value !== 'string') return args
  const inner = parseJson(outer.value)
  return inner.ok && isObject(inner.value) ? outer.value : args
}

const openingBrace = 123
const closingBrace = 125
const quote = 34

/** Arguments that are a whole object, or a whole string (double-encoded): told by their ends first. */
function isWholeArguments(text: string): boolean {
  const trimmed = text.trim()
  const first = trimmed.charCodeAt(0)
  const last = trimmed.charCodeAt(trimmed.length - 1)
  const ends = (first === openingBrace && last === closingBrace) || (first === quote && last === quote)
  return ends && isJson(trimmed)
}

function parseChunk(data: string): JsonObject {
  const parsed = parseJson(data)
  if (parsed.ok && isObject(parsed.value)) return parsed.value
  // The provider's fault: where the client has nothing yet, the next candidate is tried.
  throw new GatewayError('api_error', 'upstream sent a malformed JSON chunk', { status: 502, retryable: true })
}

/**
 * [DONE] before any chunk: the server gave up without a word (llama.cpp after a failed prompt).
 * Read as an empty answer it was billed and never fell back.
 */
const endedEmpty = () =>
  new GatewayError('api_error', 'upstream ended its stream before any chunk', { status: 502, retryable: true })

/** An id for a tool call the upstream sent without one: unique, so ids never repeat across a conversation's turns. */
export const synthesizeCallId = (): string => `call_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`
