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
  })
})
