// A tool call an upstream cut at the output limit reaches a Responses client with its partial
// arguments (a status `incomplete` answer), and the client sends the call back in every later
// turn, as Codex replays its history. Refusing that history wedged the conversation for good: it
// is read as an answer's unparseable arguments are, `{}` (wire-formats §4.3).
import { expect, test } from 'bun:test'
import type { ProviderKind } from '../src/config/schema'
import { profileFor, translationGateway, translationSimulator, upstreamModelFor } from './support/translation-gateway'

const sim = translationSimulator()

const tools = [{ type: 'function', name: 'write_file', parameters: { type: 'object' } }]
const cutCall = {
  type: 'function_call',
  call_id: 'call_1',
  name: 'write_file',
  arguments: '{"path": "a.txt", "text": "hel',
}

test.each<ProviderKind>(['anthropic', 'openai-chat', 'openai-responses'])(
  'a history holding a call cut mid-arguments is served by %s',
  async (kind) => {
    const h = await translationGateway(sim)
    sim.queue(upstreamModelFor[kind], { text: 'ok' })
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: {
        model: profileFor[kind],
        tools,
        input: [
          { role: 'user', content: 'write a.txt' },
          cutCall,
          { type: 'function_call_output', call_id: 'call_1', output: 'failed to parse function arguments' },
          { role: 'user', content: 'go on' },
        ],
      },
    })
    expect(res.status).toBe(200)
    expect((await res.json()).status).toBe('completed')
    // biome-ignore lint/suspicious/noExplicitAny: the upstream body of one of three dialects, asserted by shape
    const sent = sim.requests.at(-1)!.body as Record<string, any>
    if (kind === 'anthropic') {
      expect(sent.messages[1].content).toEqual([{ type: 'tool_use', id: 'call_1', name: 'write_file', input: {} }])
    } else if (kind === 'openai-chat') {
      expect(sent.messages[1].tool_calls[0].function).toEqual({ name: 'write_file', arguments: '{}' })
    } else {
      // OpenAI itself gets the client's body as it came: its own partial arguments, which it takes.
      expect(sent.input[1]).toMatchObject({ type: 'function_call', arguments: cutCall.arguments })
    }
  },
)
