import { describe, expect, test } from 'bun:test'
import { mapChatFinishReason } from './finish-reason'

describe('mapChatFinishReason', () => {
  // Gemini's compatible endpoint says its own reasons in upper case: all of them were end_turn.
  test("Gemini's reasons, in its upper case or not", () => {
    const mapped = (reasons: string[]) => reasons.map(mapChatFinishReason)
    expect(mapped(['STOP', 'MAX_TOKENS', 'max_tokens', 'LENGTH'])).toEqual([
      'end_turn',
      'max_tokens',
      'max_tokens',
      'max_tokens',
    ])
    expect(mapped(['SAFETY', 'RECITATION', 'PROHIBITED_CONTENT', 'BLOCKLIST', 'SPII', 'safety'])).toEqual(
      Array(6).fill('refusal'),
    )
    // An image filter's stop ended the turn as if the answer were whole.
    expect(mapped(['IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT'])).toEqual(['refusal', 'refusal'])
  })

  // Each ended the turn as if the answer were whole: billed, and the next model never tried.
  test('an answer that broke off is an error: Gemini failing its tool calls, DeepSeek out of capacity', () => {
    const brokeOff = [
      'MALFORMED_FUNCTION_CALL',
      'UNEXPECTED_TOOL_CALL',
      'TOO_MANY_TOOL_CALLS',
      'insufficient_system_resource',
    ]
    expect(brokeOff.map(mapChatFinishReason)).toEqual(Array(4).fill('error'))
  })
})
