import { describe, expect, test } from 'bun:test'
import { bytesCutAt, collect, parseSse, readFixture } from './fixture-streams'
import { encodeSse, SseDecoder, type SseEvent } from './sse'

const fixtures = [
  'anthropic/thinking-text.sse',
  'anthropic/text-tool-use.sse',
  'anthropic/mid-stream-error.sse',
  'openai-chat/text-include-usage.sse',
  'openai-chat/tool-call.sse',
  'openai-chat/deepseek-reasoning.sse',
  'openai-chat/thinking-tool-calls.sse',
  'openai-chat/cached-usage-after-finish.sse',
]

const parse = (text: string, cuts: number[] = []): Promise<SseEvent[]> => collect(parseSse(bytesCutAt(text, cuts)))
const byteLength = (text: string): number => new TextEncoder().encode(text).length

describe('SseDecoder', () => {
  test('reads event names, data and the raw frame', async () => {
    const text = 'event: ping\ndata: {"type":"ping"}\n\ndata: [DONE]\n\n'
    expect(await parse(text)).toEqual([
      { event: 'ping', data: '{"type":"ping"}', raw: 'event: ping\ndata: {"type":"ping"}\n\n' },
      { data: '[DONE]', raw: 'data: [DONE]\n\n' },
    ])
  })

  test('joins multiple data lines, strips one space, skips comments and id/retry', async () => {
    const text = ': keep-alive\n\nid: 7\nretry: 10\nevent: x\ndata:  two spaces\ndata:none\n: inline comment\ndata\n\n'
    expect(await parse(text)).toEqual([
      {
        event: 'x',
        data: ' two spaces\nnone\n',
        raw: 'id: 7\nretry: 10\nevent: x\ndata:  two spaces\ndata:none\n: inline comment\ndata\n\n',
      },
    ])
  })

  test('llama.cpp\'s `error:` field is a frame whose data is {"error": …}', async () => {
    // Its raw is that data's frame: a pass-through relay forwarding the field, the client's parser
    // read nothing and never heard the stream fail.
    const data = '{"error":{"code":400,"message":"too long"}}'
    expect(await parse('error: {"code":400,"message":"too long"}\n\n')).toEqual([{ data, raw: `data: ${data}\n\n` }])
    expect(await parse('event: x\nerror: {"code":400,"message":"too long"}')).toEqual([
      { event: 'x', data, raw: `event: x\ndata: ${data}\n\n` },
    ])
    // A value that is not JSON is the error's message.
    expect((await parse('error: the slot died\n\n')).map((e) => e.data)).toEqual(['{"error":"the slot died"}'])
    // Beside data, the data stands.
    expect((await parse('error: x\ndata: {"a":1}\n\n')).map((e) => e.data)).toEqual(['{"a":1}'])
  })

  // A server answering a stream request with its error object alone: dropped, the client never
  // heard why the stream failed.
  test('a body that is a bare JSON object, not fields, is one frame of that data', async () => {
    const json = '{"error":{"message":"too long",\n"code":400}}'
    // Its raw is that data's frame, which a pass-through relay forwards and a client's parser reads.
    const raw = 'data: {"error":{"message":"too long",\ndata: "code":400}}\n\n'
    for (const end of ['', '\n', '\n\n']) {
      for (let cut = 0; cut <= json.length; cut++) {
        expect(await parse(json + end, [cut])).toEqual([{ data: json, raw }])
      }
    }
    // Not an object: nothing, as before.
    expect(await parse('{"error": cut off\n\n[1]\n\n')).toEqual([])
  })

  // A server that ignored stream:true and sent its whole answer as JSON had it read as one chunk:
  // an empty answer, billed as a success, never fallen back from.
  test('a bare JSON object that is not an error is no frame', async () => {
    const answer = '{"object":"chat.completion","choices":[{"message":{"content":"hi"}}]}'
    expect(await parse(answer)).toEqual([])
    // A whole Responses answer says `"error": null`.
    expect(await parse('{"object":"response","error":null,"output":[]}\n\n')).toEqual([])
    expect((await parse('{"error":"the slot died"}')).map((e) => e.data)).toEqual(['{"error":"the slot died"}'])
  })

  test('yields nothing for comment-only streams', async () => {
    expect(await parse(': OPENROUTER PROCESSING\n\n: OPENROUTER PROCESSING\n\n')).toEqual([])
  })

  test('accepts \\r\\n\\r\\n and \\r\\r frame ends', async () => {
    const crlf = 'event: a\r\ndata: 1\r\n\r\nevent: b\r\ndata: 2\r\n\r\n'
    expect((await parse(crlf)).map((e) => [e.event, e.data, e.raw])).toEqual([
      ['a', '1', 'event: a\r\ndata: 1\r\n\r\n'],
      ['b', '2', 'event: b\r\ndata: 2\r\n\r\n'],
    ])
    const cr = 'event: a\rdata: 1\r\rdata: 2\r\r'
    expect((await parse(cr)).map((e) => [e.event, e.data])).toEqual([
      ['a', '1'],
      [undefined, '2'],
    ])
  })

  test('a \\r\\n split across chunks is one line end, not a blank line', async () => {
    const text = 'data: a\r\ndata: b\r\n\r\n'
    for (let cut = 0; cut <= text.length; cut++) {
      // Cut inside the last \r\n, the frame goes at its \r, and the \n that follows is dropped.
      const raw = cut === text.length - 1 ? text.slice(0, -1) : text
      expect(await parse(text, [cut])).toEqual([{ data: 'a\nb', raw }])
    }
    const cutInside = await parse(`${text}data: c\r\n\r\n`, [text.length - 1])
    expect(cutInside.map((e) => e.data)).toEqual(['a\nb', 'c'])
  })

  // A server ending lines in \r alone had each event wait for its next read (the \r might have
  // been half a \r\n): 1.5 s late behind a pause in the answer.
  test('a frame ending in \\r goes out with the read that ends it, not the next', () => {
    const decoder = new SseDecoder()
    const bytes = (text: string) => new TextEncoder().encode(text)
    expect(decoder.push(bytes('data: 1\r\r')).map((e) => e.data)).toEqual(['1'])
    expect(decoder.push(bytes('data: 2\r\n\r')).map((e) => e.data)).toEqual(['2'])
    // The \n completing that \r\n is no blank line of its own.
    expect(decoder.push(bytes('\ndata: 3\r')).map((e) => e.data)).toEqual([])
    expect(decoder.push(bytes('\n')).map((e) => e.data)).toEqual([])
    expect(decoder.push(bytes('\r\n')).map((e) => e.data)).toEqual(['3'])
    expect(decoder.end()).toEqual([])
  })

  test('yields a final frame that has no blank line at EOF', async () => {
    expect(await parse('data: 1\n\ndata: last')).toEqual([
      { data: '1', raw: 'data: 1\n\n' },
      { data: 'last', raw: 'data: last\n\n' },
    ])
    expect(await parse('data: last\r\n')).toEqual([{ data: 'last', raw: 'data: last\r\n\n' }])
    // After a lone \r, a \n would only have made it \r\n: one line end, the frame left open.
    expect(await parse('data: last\r')).toEqual([{ data: 'last', raw: 'data: last\r\n\n' }])
  })

  test('multi-byte characters survive a cut at every byte', async () => {
    const text = 'data: héllo 🌍\n\nevent: e\ndata: ✓ 日本\r\n\r\n'
    const expected = await parse(text)
    expect(expected.map((e) => e.data)).toEqual(['héllo 🌍', '✓ 日本'])
    for (let cut = 0; cut <= byteLength(text); cut++) {
      // Cut inside the last \r\n, the frame goes at its \r (as above).
      const [first, second] = expected as [SseEvent, SseEvent]
      const whole = cut === byteLength(text) - 1 ? [first, { ...second, raw: second.raw.slice(0, -1) }] : expected
      expect(await parse(text, [cut])).toEqual(whole)
    }
  })

  test('raw frames concatenate back to the input', async () => {
    const text = await readFixture('anthropic/thinking-text.sse')
    expect((await parse(text)).map((e) => e.raw).join('')).toBe(text)
  })

  for (const name of fixtures) {
    test(`${name}: same events at every single cut and at every pair of nearby cuts`, async () => {
      const text = await readFixture(name)
      const expected = await parse(text)
      expect(expected.length).toBeGreaterThan(3)
      const size = byteLength(text)
      for (let cut = 0; cut <= size; cut++) expect(await parse(text, [cut])).toEqual(expected)
      for (let cut = 0; cut + 3 <= size; cut += 7) expect(await parse(text, [cut, cut + 1, cut + 3])).toEqual(expected)
      // One byte per chunk.
      expect(
        await parse(
          text,
          Array.from({ length: size }, (_, i) => i),
        ),
      ).toEqual(expected)
    })

    test(`${name}: CRLF line ends give the same event data`, async () => {
      const text = await readFixture(name)
      const crlf = text.replaceAll('\n', '\r\n')
      const expected = (await parse(text)).map(({ event, data }) => ({ event, data }))
      const size = byteLength(crlf)
      for (let cut = 0; cut <= size; cut += 3) {
        expect((await parse(crlf, [cut])).map(({ event, data }) => ({ event, data }))).toEqual(expected)
      }
    })
  }
})

describe('encodeSse', () => {
  test('writes an event line only when named', () => {
    expect(encodeSse('message_stop', { type: 'message_stop' })).toBe(
      'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    )
    expect(encodeSse(undefined, { a: 'line\nbreak' })).toBe('data: {"a":"line\\nbreak"}\n\n')
  })

  test('round-trips through parseSse', async () => {
    const text = encodeSse('x', { text: 'héllo 🌍' }) + encodeSse(undefined, [1, 2])
    expect((await parse(text)).map((e) => [e.event, JSON.parse(e.data)])).toEqual([
      ['x', { text: 'héllo 🌍' }],
      [undefined, [1, 2]],
    ])
  })
})
