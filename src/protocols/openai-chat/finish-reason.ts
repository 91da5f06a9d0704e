// Chat finish_reason → exchange StopReason (wire-formats §4.6).

import type { StopReason } from '../../exchange/types'

export function mapChatFinishReason(reason: unknown): StopReason {
  // Gemini's compatible endpoint (and bridges from its own API) passes its reasons on in its own
  // upper case: MAX_TOKENS, SAFETY, STOP.
  switch (typeof reason === 'string' ? reason.toLowerCase() : reason) {
    case 'length':
    // Mistral's: the context window filled before the answer ended.
    case 'model_length':
    // Gemini's MAX_TOKENS.
    case 'max_tokens':
      return 'max_tokens'
    case 'tool_calls':
    case 'function_call':
      return 'tool_use'
    // Nothing in Anthropic's vocabulary is closer than refusal. GLM says `sensitive`; Gemini names
    // the filter that stopped it (safety, recitation of a source, prohibited content, its block
    // list, personal data, and its image filters).
    case 'content_filter':
    case 'sensitive':
    case 'safety':
    case 'recitation':
    case 'prohibited_content':
    case 'blocklist':
    case 'spii':
    case 'image_safety':
    case 'image_prohibited_content':
      return 'refusal'
    // The answer broke off, a failed attempt: OpenRouter's mid-generation failure; vLLM's and
    // SGLang's request aborted mid-answer; GLM's inference failing mid-answer; DeepSeek's servers
    // running out of capacity; Gemini's tool calls it could not make (malformed, to a tool it was
    // not given, or too many), which ended the turn with no call for the client to run.
    case 'error':
    case 'abort':
    case 'network_error':
    case 'insufficient_system_resource':
    case 'malformed_function_call':
    case 'unexpected_tool_call':
    case 'too_many_tool_calls':
      return 'error'
    default:
      // `stop` covers both a natural end and a matched stop sequence, which Chat doesn't tell apart.
      return 'end_turn'
  }
}

/**
 * The stop reason as the answer's content tells it: Ollama and others say `stop` on tool turns,
 * and Anthropic clients only run tools on tool_use; vLLM says `tool_calls` when its tool parser
 * found none, and a client told tool_use with no call waits for results it cannot send; a model
 * that declined (Chat's `refusal`, which finishes with `stop`) refused, as a Responses upstream's
 * refusal part says.
 */
export const stopReasonOfContent = (reason: StopReason, sawToolCall: boolean, refused: boolean): StopReason => {
  if (reason === 'tool_use' && !sawToolCall) return refused ? 'refusal' : 'end_turn'
  return reason !== 'end_turn' ? reason : sawToolCall ? 'tool_use' : refused ? 'refusal' : reason
}
