import { describe, expect, test } from 'bun:test'
import type { ExchangeEvent } from '../exchange/types'
import { meterStep, newStreamMeter } from './meter'

describe('meterStep', () => {
  test('counts the output that flowed in UTF-8 bytes: text, thinking and tool arguments alike', () => {
    const meter = newStreamMeter()
    const step = meterStep(meter)
    const events: ExchangeEvent[] = [
      { type: 'text_delta', index: 0, text: 'ab中' },
      { type: 'thinking_delta', index: 1, thinking: '想想' },
      { type: 'tool_args_delta', index: 2, partialJson: '{"t":"字' },
    ]
    for (const event of events) step.push(event)
    // A CJK character is 3 bytes, about a token: counted as 1 character, a cut CJK answer billed a quarter.
    expect(meter.outputBytes).toBe(2 + 3 + 6 + '{"t":"'.length + 3)
  })
})
