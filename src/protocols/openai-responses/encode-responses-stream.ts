// Neutral exchange events → the client's Responses SSE stream (wire-formats §2.6, §4.10, §4.11).
//
// One output item per neutral block: text → message (a declined block, TextBlock.refusal, as one
// whose one part is a `refusal`, streamed as refusal deltas: the response then completed),
// thinking → reasoning (summary text), tool_use → function_call (custom_tool_call for a custom
// tool's, its text streamed as the JSON of its one argument arrives), web_search →
// web_search_call; redacted_thinking → a summary-less reasoning item, only when the client asked
// for `reasoning.encrypted_content` (without its blob it would be empty). A search arrives
// complete, so its item goes through its whole lifecycle at once
// (added, in_progress, searching, completed, done). A thinking block's signature arrives last, so
// its blob is on the item's `output_item.done` and the terminal output. A citation with a span
// becomes a `url_citation` annotation at once; one of the whole block (Anthropic's, which comes
// before the text) waits until the text is complete, just before `output_text.done`.
// Every frame has an `event:` line equal to its `type` and a `sequence_number` counting up from 0.
// The terminal event waits for the end of the source, because usage may arrive after `finish`
// (Chat upstreams). An item's `done` frames wait for whatever follows its block's end in the same
// network read: the item the output limit cut is `incomplete`, as OpenAI's own, and only the finish
// tells which one that is (the decoders send the last block's end with it). At the end of a read
// they go out as completed, so nothing waits on a server tool's run or a slow next block.
import { encoderOf, type StreamEncoder } from '../../exchange/stream-codec'
import type { Citation, ExchangeEvent, StopReason, Usage, WebSearchBlock } from '../../exchange/types'
import { type ErrorKind, GatewayError } from '../../lib/errors'
import { errorKindForAnthropicType } from '../anthropic/errors'
import { encodeSse } from '../sse'
import { mapErrorKindToOpenAI } from './errors'
import {
  buildCustomToolCallItem,
  buildFunctionCallItem,
  buildMessageItem,
  buildReasoningItem,
  buildRefusalItem,
  buildResponseObject,
  buildWebSearchItem,
  customToolCallItemId,
  emitsReasoningItem,
  functionCallItemId,
  mapStopReasonToStatus,
  messageItemId,
  type ResponseIds,
  type ResponsesEcho,
  reasoningItemId,
  type UrlCitation,
  urlCitation,
  webSearchItemId,
} from './encode-responses-response'
import { type ClientTool, clientTool, specialToolNames } from './client-tools'
import { offeredTools } from './decode-responses-request'
import { type FreeformInputStream, freeformInputStream } from './freeform-input-stream'
import { wantsEncryptedReasoning } from './reasoning-signature'

export interface EncodeResponsesStreamOptions extends ResponseIds {
  request?: ResponsesEcho
  /** Unix seconds for `completed_at`; defaults to the clock. */
  now?: () => number
}

type OpenItem =
  | {
      kind: 'message'
      id: string
      outputIndex: number
      text: string
      /** Annotations sent so far, in annotation_index order. */
      annotations: UrlCitation[]
      /** Citations of the whole block, sent once its text is complete. */
      held: Citation[]
    }
  /** A message of the model's words declining: its one part a `refusal`. */
  | { kind: 'refusal'; id: string; outputIndex: number; text: string }
  | { kind: 'reasoning'; id: string; outputIndex: number; text: string; signature: string }
  | { kind: 'redacted_reasoning'; id: string; outputIndex: number; data: string }
  | { kind: 'function_call'; id: string; outputIndex: number; callId: string; tool: ClientTool; arguments: string }
  | {
      kind: 'custom_tool_call'
      id: string
      outputIndex: number
      callId: string
      tool: ClientTool
      /** The text sent so far, all of it once done. */
      input: string
      reader: FreeformInputStream
    }
  | { kind: 'web_search'; id: string; outputIndex: number; search: Omit<WebSearchBlock, 'type'> }
  | { kind: 'skip' }

type ItemStatus = 'in_progress' | 'completed' | 'incomplete'

const snapshotItem = (
  item: Exclude<OpenItem, { kind: 'skip' }>,
  status: ItemStatus,
  includeEncrypted: boolean,
): Record<string, unknown> => {
  switch (item.kind) {
    case 'message':
      return buildMessageItem(item.id, item.text, status, item.annotations)
    case 'refusal':
      return buildRefusalItem(item.id, item.text, status)
    case 'reasoning':
      return buildReasoningItem(
        item.id,
        { type: 'thinking', thinking: item.text, signature: item.signature },
        includeEncrypted,
      )
    case 'redacted_reasoning':
      return buildReasoningItem(item.id, { type: 'redacted_thinking', data: item.data }, includeEncrypted)
    case 'function_call':
      // An argument-less call streams nothing; clients JSON.parse arguments, so '' would break them.
      return buildFunctionCallItem(
        item.id,
        { callId: item.callId, tool: item.tool, arguments: item.arguments === '' ? '{}' : item.arguments },
        status,
      )
    case 'custom_tool_call':
      return buildCustomToolCallItem(item.id, { callId: item.callId, tool: item.tool, input: item.input }, status)
    case 'web_search':
      return buildWebSearchItem(item.id, item.search, status === 'in_progress' ? 'in_progress' : 'completed')
  }
}

/** What a flush with nothing held returns, for every read of every stream: never pushed to. */
const noFrames: string[] = []

/** The status of an answer's last item when it finished for this reason (`declined`: mapStopReasonToStatus). */
const cutItemStatus = (finish: StopReason, declined: boolean): ItemStatus =>
  mapStopReasonToStatus(finish, declined).status === 'incomplete' ? 'incomplete' : 'completed'

/**
 * The `response.error.code` (§2.5) of a failure: the upstream's own code where it gave one, else the
 * code every OpenAI error body svc writes gives its kind (errors.ts), server_error where that is none.
 */
const failureCode = (kind: ErrorKind, ownCode: string | undefined): string =>
  ownCode ?? mapErrorKindToOpenAI(kind).code ?? 'server_error'

export function responsesStreamEncoder(opts: EncodeResponsesStreamOptions): StreamEncoder {
  let sequence = 0
  let started = false
  /** Every item in output order, done or not: the terminal event's `output`. */
  const output: { item: Exclude<OpenItem, { kind: 'skip' }>; closedAs?: ItemStatus }[] = []
  /** Items whose block has ended, their `done` frames not yet sent. */
  let ended: Exclude<OpenItem, { kind: 'skip' }>[] = []
  const blocks = new Map<number, OpenItem>()
  let messages = 0
  const usage: Usage = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 }
  let finish: StopReason | undefined
  /** A refusal item has opened: the model declined, and a `refusal` finish is a completed answer. */
  let declined = false
  const includeEncrypted = wantsEncryptedReasoning(opts.request?.include)
  const special = specialToolNames(offeredTools(opts.request))
  const snapshot = (item: Exclude<OpenItem, { kind: 'skip' }>, status: ItemStatus) =>
    snapshotItem(item, status, includeEncrypted)

  const frame = (type: string, payload: Record<string, unknown>): string =>
    encodeSse(type, { type, sequence_number: sequence++, ...payload })

  const outputSnapshot = () =>
    output.map(({ item, closedAs }) => snapshot(item, closedAs ?? (finish ? 'incomplete' : 'in_progress')))

  const start = (): string[] => {
    if (started) return []
    started = true
    const response = buildResponseObject(opts, { status: 'in_progress', output: [], usage: null })
    return [frame('response.created', { response }), frame('response.in_progress', { response })]
  }

  const mergeUsage = (partial: Partial<Usage> | undefined) => {
    if (!partial) return
    // Neutral usage events are cumulative: overwrite, never add.
    for (const key of ['input', 'cacheRead', 'cacheWrite', 'output', 'reasoning'] as const) {
      const value = partial[key]
      if (value !== undefined) usage[key] = value
    }
  }

  const openBlock = (event: Extract<ExchangeEvent, { type: 'block_start' }>): string[] => {
    const outputIndex = output.length
    const { block } = event
    let item: OpenItem
    const frames: string[] = []
    if (block.kind === 'text' && block.refusal) {
      declined = true
      item = { kind: 'refusal', id: messageItemId(opts.messageId, outputIndex, messages++), outputIndex, text: '' }
      frames.push(
        frame('response.output_item.added', { output_index: outputIndex, item: snapshot(item, 'in_progress') }),
        frame('response.content_part.added', {
          item_id: item.id,
          output_index: outputIndex,
          content_index: 0,
          part: { type: 'refusal', refusal: '' },
        }),
      )
    } else if (block.kind === 'text') {
      const id = messageItemId(opts.messageId, outputIndex, messages++)
      item = { kind: 'message', id, outputIndex, text: '', annotations: [], held: [] }
      frames.push(
        frame('response.output_item.added', { output_index: outputIndex, item: snapshot(item, 'in_progress') }),
      )
      frames.push(
        frame('response.content_part.added', {
          item_id: item.id,
          output_index: outputIndex,
          content_index: 0,
          part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
        }),
      )
    } else if (block.kind === 'thinking') {
      item = {
        kind: 'reasoning',
        id: reasoningItemId(opts.messageId, outputIndex),
        outputIndex,
        text: '',
        signature: '',
      }
      // Its summary part opens with its first words: thinking with none (Anthropic's omitted
      // display) is a reasoning item with an empty summary, as OpenAI's own.
      frames.push(
        frame('response.output_item.added', {
          output_index: outputIndex,
          item: { id: item.id, type: 'reasoning', summary: [] },
        }),
      )
    } else if (block.kind === 'tool_use') {
      const tool = clientTool(special, block.name)
      item = tool.custom
        ? {
            kind: 'custom_tool_call',
            id: customToolCallItemId(opts.messageId, outputIndex),
            outputIndex,
            callId: block.id,
            tool,
            input: '',
            reader: freeformInputStream(),
          }
        : {
            kind: 'function_call',
            id: functionCallItemId(opts.messageId, outputIndex),
            outputIndex,
            callId: block.id,
            tool,
            arguments: '',
          }
      // Arguments are '' while none have come, not the '{}' a snapshot shows for a call that has none.
      const added =
        item.kind === 'function_call'
          ? buildFunctionCallItem(item.id, { callId: block.id, tool, arguments: '' }, 'in_progress')
          : snapshot(item, 'in_progress')
      frames.push(frame('response.output_item.added', { output_index: outputIndex, item: added }))
    } else if (block.kind === 'web_search') {
      item = { kind: 'web_search', id: webSearchItemId(opts.messageId, outputIndex), outputIndex, search: block.search }
      frames.push(
        frame('response.output_item.added', { output_index: outputIndex, item: snapshot(item, 'in_progress') }),
      )
      const at = { item_id: item.id, output_index: outputIndex }
      // OpenAI has no event for a failed search: its item's status says so.
      for (const phase of ['in_progress', 'searching', 'completed']) {
        frames.push(frame(`response.web_search_call.${phase}`, at))
      }
    } else if (emitsReasoningItem({ type: 'redacted_thinking', data: block.data }, includeEncrypted)) {
      // Its data is known from the start: the blob is on the item from output_item.added on.
      item = {
        kind: 'redacted_reasoning',
        id: reasoningItemId(opts.messageId, outputIndex),
        outputIndex,
        data: block.data,
      }
      frames.push(
        frame('response.output_item.added', { output_index: outputIndex, item: snapshot(item, 'in_progress') }),
      )
    } else {
      // redacted_thinking has no text to show, and the client did not ask for its blob.
      item = { kind: 'skip' }
    }
    blocks.set(event.index, item)
    if (item.kind !== 'skip') output.push({ item })
    // A search opens complete: its item is done at once, and its block_stop adds nothing.
    if (item.kind === 'web_search') frames.push(...closeItem(item, 'completed'))
    return frames
  }

  /**
   * The `done` frames of items, in output order: the last item of the output as `last` says (the
   * one a limit cut), the rest completed.
   */
  const closeItems = (items: Exclude<OpenItem, { kind: 'skip' }>[], last: ItemStatus): string[] =>
    items
      .toSorted((a, b) => a.outputIndex - b.outputIndex)
      .flatMap((item) => closeItem(item, item.outputIndex === output.length - 1 ? last : 'completed'))

  /** Sends the ended items' `done` frames: the source has gone on, so none was cut. */
  const closeEnded = (): string[] => {
    if (ended.length === 0) return noFrames
    const items = ended
    ended = []
    return closeItems(items, 'completed')
  }

  const closeItem = (item: OpenItem, status: ItemStatus): string[] => {
    if (item.kind === 'skip') return []
    const entry = output[item.outputIndex]
    if (!entry || entry.closedAs) return []
    entry.closedAs = status
    const base = { item_id: item.id, output_index: item.outputIndex }
    // A thunk: sequence numbers are taken when a frame is built, and this one goes last.
    const done = () =>
      frame('response.output_item.done', { output_index: item.outputIndex, item: snapshot(item, status) })
    switch (item.kind) {
      case 'message': {
        const annotated = item.held.map((citation) => annotate(item, citation))
        item.held = []
        const part = { type: 'output_text', text: item.text, annotations: item.annotations, logprobs: [] }
        return [
          ...annotated,
          frame('response.output_text.done', { ...base, content_index: 0, text: item.text, logprobs: [] }),
          frame('response.content_part.done', { ...base, content_index: 0, part }),
          done(),
        ]
      }
      case 'refusal': {
        const part = { type: 'refusal', refusal: item.text }
        return [
          frame('response.refusal.done', { ...base, content_index: 0, refusal: item.text }),
          frame('response.content_part.done', { ...base, content_index: 0, part }),
          done(),
        ]
      }
      case 'reasoning': {
        if (item.text === '') return [done()]
        const part = { type: 'summary_text', text: item.text }
        return [
          frame('response.reasoning_summary_text.done', { ...base, summary_index: 0, text: item.text }),
          frame('response.reasoning_summary_part.done', { ...base, summary_index: 0, part }),
          done(),
        ]
      }
      case 'redacted_reasoning':
      case 'web_search':
        return [done()]
      case 'function_call': {
        const args = item.arguments === '' ? '{}' : item.arguments
        const { name } = item.tool
        return [frame('response.function_call_arguments.done', { ...base, name, arguments: args }), done()]
      }
      case 'custom_tool_call': {
        const { input, rest } = item.reader.finish()
        item.input = input
        const last = rest === '' ? [] : [frame('response.custom_tool_call_input.delta', { ...base, delta: rest })]
        return [...last, frame('response.custom_tool_call_input.done', { ...base, input }), done()]
      }
    }
  }

  /** The annotation of a message's output_text for a citation, as the frame that adds it. */
  const annotate = (item: Extract<OpenItem, { kind: 'message' }>, citation: Citation): string => {
    const annotation = urlCitation(citation, item.text)
    const annotationIndex = item.annotations.push(annotation) - 1
    return frame('response.output_text.annotation.added', {
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: 0,
      annotation_index: annotationIndex,
      annotation,
    })
  }

  /** A refusal's words as they come, the way OpenAI streams them. */
  const refuse = (item: Extract<OpenItem, { kind: 'refusal' }>, text: string): string => {
    item.text += text
    return frame('response.refusal.delta', {
      item_id: item.id,
      output_index: item.outputIndex,
      content_index: 0,
      delta: text,
    })
  }

  const fail = (code: string, message: string): string[] => {
    const frames = [...start(), ...closeEnded()]
    const response = buildResponseObject(opts, {
      status: 'failed',
      output: outputSnapshot(),
      usage,
      error: { code, message },
    })
    frames.push(frame('response.failed', { response }))
    return frames
  }

  /** Frames for one event, and whether the stream has ended. */
  const encode = (event: ExchangeEvent): { frames: string[]; ended: boolean } => {
    const frames = event.type === 'usage' || event.type === 'finish' || event.type === 'error' ? [] : start()
    if (ended.length > 0 && event.type !== 'block_stop' && event.type !== 'usage' && event.type !== 'finish')
      frames.push(...closeEnded())
    switch (event.type) {
      case 'start':
        mergeUsage(event.usage)
        break
      case 'block_start':
        frames.push(...openBlock(event))
        break
      case 'text_delta': {
        const item = blocks.get(event.index)
        if (item?.kind !== 'message' || event.text === '') {
          // A refusal's words: tested only for what is not an answer's text.
          if (item?.kind === 'refusal' && event.text !== '') frames.push(refuse(item, event.text))
          break
        }
        item.text += event.text
        frames.push(
          frame('response.output_text.delta', {
            item_id: item.id,
            output_index: item.outputIndex,
            content_index: 0,
            delta: event.text,
            logprobs: [],
          }),
        )
        break
      }
      case 'citation': {
        const item = blocks.get(event.index)
        // A citation of a closed block would change an output_text the client has seen done.
        if (item?.kind !== 'message' || output[item.outputIndex]?.closedAs) break
        if (event.citation.span) frames.push(annotate(item, event.citation))
        else item.held.push(event.citation)
        break
      }
      case 'thinking_delta': {
        const item = blocks.get(event.index)
        if (item?.kind !== 'reasoning' || event.thinking === '') break
        if (item.text === '') {
          frames.push(
            frame('response.reasoning_summary_part.added', {
              item_id: item.id,
              output_index: item.outputIndex,
              summary_index: 0,
              part: { type: 'summary_text', text: '' },
            }),
          )
        }
        item.text += event.thinking
        frames.push(
          frame('response.reasoning_summary_text.delta', {
            item_id: item.id,
            output_index: item.outputIndex,
            summary_index: 0,
            delta: event.thinking,
          }),
        )
        break
      }
      case 'signature_delta': {
        const item = blocks.get(event.index)
        if (item?.kind === 'reasoning') item.signature += event.signature
        break
      }
      case 'tool_args_delta': {
        const item = blocks.get(event.index)
        if (item?.kind === 'custom_tool_call') {
          const text = item.reader.push(event.partialJson)
          if (text === '') break
          item.input += text
          frames.push(
            frame('response.custom_tool_call_input.delta', {
              item_id: item.id,
              output_index: item.outputIndex,
              delta: text,
            }),
          )
          break
        }
        if (item?.kind !== 'function_call' || event.partialJson === '') break
        item.arguments += event.partialJson
        frames.push(
          frame('response.function_call_arguments.delta', {
            item_id: item.id,
            output_index: item.outputIndex,
            delta: event.partialJson,
          }),
        )
        break
      }
      case 'block_stop': {
        const item = blocks.get(event.index)
        if (item && item.kind !== 'skip') ended.push(item)
        break
      }
      case 'usage':
        mergeUsage(event.usage)
        break
      case 'finish': {
        finish = event.reason
        const items = ended
        ended = []
        frames.push(...closeItems(items, cutItemStatus(finish, declined)))
        break
      }
      case 'error':
        frames.push(
          ...fail(failureCode(errorKindForAnthropicType(event.error.type), event.error.code), event.error.message),
        )
        return { frames, ended: true }
    }
    return { frames, ended: false }
  }

  const close = (): string[] => {
    if (!finish || finish === 'error')
      return fail('server_error', 'the upstream stream ended before the response finished')
    // Items the source left open are finished here, so the terminal output has no in-progress item.
    const frames = start()
    const open = output.filter((entry) => !entry.closedAs).map((entry) => entry.item)
    frames.push(...closeItems(open, cutItemStatus(finish, declined)))
    const { status, incompleteReason } = mapStopReasonToStatus(finish, declined)
    const response = buildResponseObject(opts, {
      status,
      output: outputSnapshot(),
      usage,
      completedAt: status === 'completed' ? (opts.now?.() ?? Math.floor(Date.now() / 1000)) : null,
      ...(incompleteReason ? { incompleteReason } : {}),
    })
    frames.push(frame(status === 'completed' ? 'response.completed' : 'response.incomplete', { response }))
    return frames
  }

  const failed = (error: unknown): string[] => {
    if (!(error instanceof GatewayError)) return fail('server_error', 'the upstream stream failed')
    return fail(failureCode(error.kind, error.code), error.message)
  }

  return encoderOf({ encode, close, failed, flush: closeEnded })
}
