// Chat Completions non-streaming response → ExchangeResponse (wire-formats §4.3).

import type { ExchangeResponse, OutputBlock } from '../../exchange/types'
import { GatewayError } from '../../lib/errors'
import { isObject, readArray, readObject, readString } from '../wire-values'
import { synthesizeCallId } from './decode-chat-stream'
import { mapChatFinishReason, stopReasonOfContent } from './finish-reason'
import { parseToolArguments } from '../../exchange/tool-arguments'
import { noToolNames, type RequestToolNames, toolNameRestorer } from '../openai-tool-names'
import { type ContentPart, chatContentParts } from './content-parts'
import { chatUsage } from './usage'
import { openRouterCallSignatures, thoughtSignatureOf, withThoughtSignature } from '../thought-signature'

export { mapChatFinishReason } from './finish-reason'
export { chatUsage } from './usage'

/** `toolNames`: the request's, to restore the names encodeChatRequest shortened. */
export function decodeChatResponse(json: unknown, toolNames: RequestToolNames = noToolNames): ExchangeResponse {
  const choice = isObject(json) ? readArray(json, 'choices')?.[0] : undefined
  const message = isObject(choice) ? readObject(choice, 'message') : undefined
  if (!isObject(json) || !isObject(choice) || !message) {
    throw new GatewayError('api_error', 'upstream returned a chat completion without choices[0].message', {
      status: 502,
    })
  }

  // Order matters to Anthropic clients: thinking, then text, then tool calls.
  const content: OutputBlock[] = []
  const parts = chatContentParts(message.content)
  const partsOf = (kind: ContentPart['kind']) =>
    parts
      .filter((part) => part.kind === kind)
      .map((part) => part.text)
      .join('')
  const reasoning = readString(message, 'reasoning_content') || readString(message, 'reasoning') || partsOf('thinking')
  if (reasoning) content.push({ type: 'thinking', thinking: reasoning, signature: '' })
  // A model that declined says so in `refusal`, `content` null: a declined block (TextBlock.refusal).
  const said = partsOf('text')
  const refusal = said ? undefined : readString(message, 'refusal')
  if (said) content.push({ type: 'text', text: said })
  else if (refusal) content.push({ type: 'text', text: refusal, refusal: true })
  const restoreName = toolNameRestorer(toolNames)
  const openRouterSignatures = openRouterCallSignatures(message.reasoning_details)
  ;(readArray(message, 'tool_calls') ?? []).forEach((call) => {
    if (!isObject(call)) return
    const fn = readObject(call, 'function') ?? {}
    const givenId = readString(call, 'id')
    const id = givenId || synthesizeCallId()
    const signature = thoughtSignatureOf(call) ?? (givenId ? openRouterSignatures?.get(givenId) : undefined)
    content.push({
      type: 'tool_use',
      id: signature === undefined ? id : withThoughtSignature(id, signature),
      name: restoreName(readString(fn, 'name') ?? ''),
      // Some compatible servers send the arguments as an object, not its JSON text.
      input: isObject(fn.arguments) ? fn.arguments : parseToolArguments(readString(fn, 'arguments') ?? ''),
    })
  })

  const sawToolCall = content.some((b) => b.type === 'tool_use')
  return {
    id: readString(json, 'id') ?? '',
    model: readString(json, 'model') ?? '',
    content,
    stopReason: stopReasonOfContent(mapChatFinishReason(choice.finish_reason), sawToolCall, Boolean(refusal)),
    stopSequence: null,
    usage: chatUsage(json.usage),
  }
}
