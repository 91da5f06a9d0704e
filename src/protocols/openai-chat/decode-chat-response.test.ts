import { describe, expect, test } from 'bun:test'
import { GatewayError } from '../../lib/errors'
import { isReported } from '../unreported-usage'
import { chatUsage, decodeChatResponse, mapChatFinishReason } from './decode-chat-response'
import { parseToolArguments } from '../../exchange/tool-arguments'
import { shortenToolName } from '../openai-tool-names'

const completion = (message: Record<string, unknown>, finishReason: string, usage?: unknown) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  model: 'gpt-4o-mini-2024-07-18',
  choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
  usage,
})

describe('decodeChatResponse', () => {
  test('§3.2 tool call with cached usage', () => {
    const json = completion(
      {
        content: null,
        refusal: null,
        tool_calls: [
          { id: 'call_abc123', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      'tool_calls',
      {
        prompt_tokens: 2006,
        completion_tokens: 300,
        total_tokens: 2306,
        prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 0 },
      },
    )
    expect(decodeChatResponse(json)).toEqual({
      id: 'chatcmpl-1',
      model: 'gpt-4o-mini-2024-07-18',
      content: [{ type: 'tool_use', id: 'call_abc123', name: 'get_weather', input: { city: 'Paris' } }],
      stopReason: 'tool_use',
      stopSequence: null,
      usage: { input: 86, cacheRead: 1920, cacheWrite: 0, output: 300, reasoning: 0 },
    })
  })

  test('reasoning first, then text, then tools; stop with tool calls is tool_use', () => {
    const json = completion(
      {
        reasoning_content: 'thought',
        content: 'Calling.',
        tool_calls: [{ id: 'c1', function: { name: 'f', arguments: 'not json' } }, { function: { name: 'g' } }],
      },
      'stop',
    )
    expect(decodeChatResponse(json)).toMatchObject({
      content: [
        { type: 'thinking', thinking: 'thought', signature: '' },
        { type: 'text', text: 'Calling.' },
        { type: 'tool_use', id: 'c1', name: 'f', input: {} },
        { type: 'tool_use', id: expect.stringMatching(/^call_[0-9a-f]{24}$/), name: 'g', input: {} },
      ],
      stopReason: 'tool_use',
      usage: { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 },
    })
  })

  test('tool calls without an id get a fresh id each time (unique across turns); upstream ids are kept', () => {
    const json = completion(
      {
        tool_calls: [
          { type: 'function', function: { name: 'f', arguments: '{}' } },
          { id: 'call_upstream', type: 'function', function: { name: 'g', arguments: '{}' } },
          { type: 'function', function: { name: 'h', arguments: '{}' } },
        ],
      },
      'tool_calls',
    )
    const ids = (turn: ReturnType<typeof decodeChatResponse>) =>
      turn.content.map((b) => (b.type === 'tool_use' ? b.id : undefined))
    const [first, second] = [ids(decodeChatResponse(json)), ids(decodeChatResponse(json))]
    for (const turn of [first, second]) {
      // The same shape as the ids the streaming decoder synthesizes.
      expect(turn).toEqual([
        expect.stringMatching(/^call_[0-9a-f]{24}$/),
        'call_upstream',
        expect.stringMatching(/^call_[0-9a-f]{24}$/),
      ])
    }
    const synthesized = [first[0], first[2], second[0], second[2]]
    expect(new Set(synthesized).size).toBe(synthesized.length)
  })

  test('OpenRouter `reasoning`, empty content omitted, refusal as text', () => {
    expect(decodeChatResponse(completion({ reasoning: 'r', content: '' }, 'stop')).content).toEqual([
      { type: 'thinking', thinking: 'r', signature: '' },
    ])
    expect(decodeChatResponse(completion({ content: null, refusal: 'No.' }, 'content_filter'))).toMatchObject({
      content: [{ type: 'text', text: 'No.' }],
      stopReason: 'refusal',
    })
    // A declined structured output finishes with `stop`: still a refusal, as a Responses refusal part
    // is, its words a declined block (a Responses client's refusal part).
    expect(decodeChatResponse(completion({ content: null, refusal: 'No.' }, 'stop'))).toMatchObject({
      content: [{ type: 'text', text: 'No.', refusal: true }],
      stopReason: 'refusal',
    })
    const answered = decodeChatResponse(completion({ content: 'Yes.', refusal: null }, 'stop'))
    expect(answered.stopReason).toBe('end_turn')
    expect(answered.content).toEqual([{ type: 'text', text: 'Yes.' }])
  })

  test('a body without choices is a 502', () => {
    expect(() => decodeChatResponse({ choices: [] })).toThrow(GatewayError)
  })

  test('tool names encodeChatRequest shortened come back as the request named them', () => {
    const long = 'mcp__claude_ai_Atlassian_Rovo__getConfluencePageFooterCommentsWithInlineRepliesAndHistory2'
    const call = (id: string, name: string) => ({ id, type: 'function', function: { name, arguments: '{}' } })
    const json = completion(
      { content: null, tool_calls: [call('c1', shortenToolName(long)), call('c2', 'get_weather')] },
      'tool_calls',
    )
    const names = () => [long, 'get_weather']
    expect(decodeChatResponse(json, names).content).toEqual([
      { type: 'tool_use', id: 'c1', name: long, input: {} },
      { type: 'tool_use', id: 'c2', name: 'get_weather', input: {} },
    ])
    // A name the request did not send shortened stays as it came.
    expect(decodeChatResponse(json, () => ['get_weather']).content[0]).toMatchObject({ name: shortenToolName(long) })
    // Answers without tool calls never read the request's names.
    let asked = 0
    decodeChatResponse(completion({ content: 'hi' }, 'stop'), () => {
      asked++
      return []
    })
    expect(asked).toBe(0)
  })
})

describe('mapChatFinishReason', () => {
  test('§4.6', () => {
    expect(
      ['stop', 'length', 'tool_calls', 'function_call', 'content_filter', 'error', null, 'new'].map(
        mapChatFinishReason,
      ),
    ).toEqual(['end_turn', 'max_tokens', 'tool_use', 'tool_use', 'refusal', 'error', 'end_turn', 'end_turn'])
  })
})

describe('chatUsage', () => {
  test('cache reads and writes are taken out of prompt_tokens', () => {
    expect(
      chatUsage({
        prompt_tokens: 3000,
        completion_tokens: 50,
        prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 500 },
        completion_tokens_details: { reasoning_tokens: 20 },
      }),
    ).toEqual({ input: 1500, cacheRead: 1000, cacheWrite: 500, output: 50, reasoning: 20 })
  })

  test('DeepSeek prompt_cache_hit_tokens, even beside a zero cached_tokens', () => {
    expect(
      chatUsage({
        prompt_tokens: 1200,
        completion_tokens: 95,
        prompt_tokens_details: { cached_tokens: 0 },
        prompt_cache_hit_tokens: 1024,
        prompt_cache_miss_tokens: 176,
      }),
    ).toEqual({ input: 176, cacheRead: 1024, cacheWrite: 0, output: 95, reasoning: 0 })
  })

  test('cached counts past the prompt, or a negative prompt, leave a negative input (not credible), never a free one', () => {
    const usage = { prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 20 } }
    expect(chatUsage(usage)).toEqual({ input: -10, cacheRead: 20, cacheWrite: 0, output: 5, reasoning: 0 })
    expect(chatUsage({ prompt_tokens: -1_000_000, completion_tokens: 5 }).input).toBe(-1_000_000)
  })

  test("reasoning left out of completion_tokens (a bridge from Gemini's API) is billed as output; OpenAI's, counted inside, once", () => {
    const reasoning = (n: number) => ({ completion_tokens_details: { reasoning_tokens: n } })
    // The total says the thoughts were counted apart.
    expect(chatUsage({ prompt_tokens: 20, completion_tokens: 151, total_tokens: 553, ...reasoning(382) }).output).toBe(
      533,
    )
    // No answer text, only thoughts: the completion cannot hold them.
    expect(chatUsage({ prompt_tokens: 21, completion_tokens: 0, total_tokens: 81, ...reasoning(60) }).output).toBe(60)
    expect(chatUsage({ prompt_tokens: 21, completion_tokens: 10, ...reasoning(60) }).output).toBe(70)
    // OpenAI: the total is prompt + completion, reasoning inside.
    expect(chatUsage({ prompt_tokens: 10, completion_tokens: 100, total_tokens: 110, ...reasoning(64) }).output).toBe(
      100,
    )
    expect(chatUsage({ prompt_tokens: 10, completion_tokens: 100, ...reasoning(64) }).output).toBe(100)
  })

  test('absent is zero, and never reported; so are counts that are no numbers', () => {
    expect(chatUsage(null)).toMatchObject({ input: 0, cacheRead: 0, cacheWrite: 0, output: 0, reasoning: 0 })
    expect(isReported(chatUsage({ prompt_tokens: 10, completion_tokens: 5 }))).toBe(true)
    for (const usage of [null, {}, { prompt_tokens: 10 }, { prompt_tokens: '10', completion_tokens: '5' }]) {
      expect(isReported(chatUsage(usage))).toBe(false)
    }
  })
})

describe('parseToolArguments', () => {
  test('objects parse; empty, invalid and non-object arguments become {}; double encoding is unwrapped', () => {
    expect(parseToolArguments('{"a":[1]}')).toEqual({ a: [1] })
    expect(parseToolArguments('')).toEqual({})
    expect(parseToolArguments('{"a":')).toEqual({})
    expect(parseToolArguments('[1,2]')).toEqual({})
    expect(parseToolArguments(JSON.stringify('{"a":1}'))).toEqual({ a: 1 })
  })
})
