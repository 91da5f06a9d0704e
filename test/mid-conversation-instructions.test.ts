// End to end: system and developer messages a Responses client puts in the middle of its input
// reach a Chat upstream where they were given, as system messages, instead of joining the system
// prompt at the top as if they had held from the start; a Chat provider set to `merged` (for chat
// templates that refuse a later system message) gets them joined to the leading one.
import { describe, expect, test } from 'bun:test'
import { sdkClients } from './support/harness'
import {
  profileFor,
  onlyUpstreamBody,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()

/** Instructions at the top, one before the first turn, and one after the first answer. */
const weatherConversation = {
  model: profileFor['openai-chat'],
  instructions: 'Be brief.',
  input: [
    { role: 'developer' as const, content: 'Answer in English.' },
    { role: 'user' as const, content: 'Weather in Paris?' },
    { role: 'assistant' as const, content: 'Sunny, 64 °F.' },
    { role: 'developer' as const, content: 'From now on, use metric units.' },
    { role: 'user' as const, content: 'And tomorrow?' },
  ],
}

/** The messages the Chat upstream received for the only request of the test. */
const chatMessages = () => onlyUpstreamBody(sim).messages as Record<string, unknown>[]

describe('a Responses client giving instructions mid-conversation, to a Chat upstream', () => {
  test('leading ones join the instructions at the top; later ones stay in place as system messages', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: '18 °C.' })
    const response = await openai.responses.create(weatherConversation)
    expect(response.output_text).toBe('18 °C.')
    expect(chatMessages()).toEqual([
      { role: 'system', content: 'Be brief.\n\nAnswer in English.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Sunny, 64 °F.' },
      { role: 'system', content: 'From now on, use metric units.' },
      { role: 'user', content: 'And tomorrow?' },
    ])
  })

  test('one given between a tool call and its output follows the tool message, where Chat allows it', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: 'Two files.' })
    await openai.responses.create({
      model: profileFor['openai-chat'],
      input: [
        { role: 'user', content: 'List the files.' },
        { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"cmd":"ls"}' },
        { role: 'system', content: 'The sandbox now allows writes.' },
        { type: 'function_call_output', call_id: 'call_1', output: 'a.txt b.txt' },
      ],
      tools: [{ type: 'function', name: 'shell', parameters: { type: 'object' }, strict: false }],
    })
    expect(chatMessages().slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'shell', arguments: '{"cmd":"ls"}' } }],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'a.txt b.txt' },
      { role: 'system', content: 'The sandbox now allows writes.' },
    ])
  })
})

describe('to a Chat server whose template takes a system message only at the start', () => {
  test('system_messages = "merged": later instructions join the leading system message, in order', async () => {
    const { openai } = sdkClients(await translationGateway(sim, { 'openai-chat': { system_messages: 'merged' } }))
    sim.queue(upstreamModelFor['openai-chat'], { text: '18 °C.' })
    await openai.responses.create(weatherConversation)
    expect(chatMessages()).toEqual([
      { role: 'system', content: 'Be brief.\n\nAnswer in English.\n\nFrom now on, use metric units.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'Sunny, 64 °F.' },
      { role: 'user', content: 'And tomorrow?' },
    ])
  })
})
