// The surface hands fitResponsesToListPrice its own shallow copy of the client's body, which is read
// again for each attempt of a fallback: what it changes inside is replaced, never changed in place.
import { describe, expect, test } from 'bun:test'
import { fitResponsesToListPrice } from './list-price'

const deepFreeze = <T>(value: T): T => {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

describe('fitResponsesToListPrice', () => {
  test("the client's nested values, frozen, are left as they were", () => {
    const client = deepFreeze({
      model: 'm',
      service_tier: 'priority',
      background: true,
      tools: [{ type: 'function', name: 'f' }, { type: 'image_generation' }],
      tool_choice: {
        type: 'allowed_tools',
        mode: 'auto',
        tools: [{ type: 'function', name: 'f' }, { type: 'image_generation' }],
      },
      include: ['file_search_call.results', 'reasoning.encrypted_content'],
    })
    const before = JSON.stringify(client)
    const out: Record<string, unknown> = { ...client }
    fitResponsesToListPrice(out)
    expect(out).toEqual({
      model: 'm',
      tools: [{ type: 'function', name: 'f' }],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'function', name: 'f' }] },
      include: ['reasoning.encrypted_content'],
    })
    expect(JSON.stringify(client)).toBe(before)
  })

  test("Codex's additional_tools item (Responses lite) loses the same tools; other items stay the client's own", () => {
    const offer = {
      type: 'additional_tools',
      role: 'developer',
      tools: [{ type: 'namespace', name: 'functions', tools: [] }, { type: 'code_interpreter' }],
    }
    const message = { type: 'message', role: 'user', content: 'hi' }
    const client = deepFreeze({ model: 'm', input: [offer, message] })
    const out: Record<string, unknown> = { ...client }
    fitResponsesToListPrice(out)
    expect(out.input).toEqual([{ ...offer, tools: [{ type: 'namespace', name: 'functions', tools: [] }] }, message])
    expect((out.input as unknown[])[1]).toBe(message)
    const cheap = deepFreeze({ model: 'm', input: [{ ...offer, tools: [offer.tools[0]] }, message] })
    const kept: Record<string, unknown> = { ...cheap }
    fitResponsesToListPrice(kept)
    expect(kept.input).toBe(cheap.input)
  })
})
