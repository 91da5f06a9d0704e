import { afterEach, describe, expect, test } from 'bun:test'
import type { ExchangeResponse } from '../../exchange/types'
import { decodeResponsesResponse } from './decode-responses-response'
import { encodeResponsesResponse } from './encode-responses-response'
import { readAnthropicReasoning, tagResponsesSignature } from './reasoning-signature'
import { serveResponses } from './test-support'

const ids = { responseId: 'resp_01JX', messageId: 'msg_01JX', model: 'svc-max', createdAt: 1_760_000_000 }
/** What Codex sends on every turn (stateless: store false). */
const includeEncrypted = { include: ['reasoning.encrypted_content'], store: false }

const answer: ExchangeResponse = {
  id: 'msg_upstream',
  model: 'claude-opus',
  content: [
    { type: 'thinking', thinking: 'Consider.', signature: 'anthropic-signature' },
    { type: 'redacted_thinking', data: 'opaque' },
    { type: 'text', text: 'Here you go.' },
    { type: 'tool_use', id: 'toolu_9', name: 'lookup', input: { q: 'x' } },
    { type: 'text', text: 'Done.' },
  ],
  stopReason: 'tool_use',
  stopSequence: null,
  usage: { input: 100, cacheRead: 900, cacheWrite: 50, output: 40, reasoning: 10 },
}

describe('encodeResponsesResponse', () => {
  let stop: (() => void) | undefined
  afterEach(() => {
    stop?.()
    stop = undefined
  })

  test('says the tier that ran, the standard one, whatever tier the request asked for', () => {
    for (const tier of ['priority', 'flex', 'auto']) {
      const encoded = encodeResponsesResponse(answer, { ...ids, completedAt: 1, request: { service_tier: tier } })
      expect(encoded.service_tier).toBe('default')
    }
    expect(encodeResponsesResponse(answer, { ...ids, completedAt: 1, request: {} })).not.toHaveProperty('service_tier')
  })

  test('builds the full Response object', () => {
    expect(
      encodeResponsesResponse(answer, {
        ...ids,
        completedAt: 1_760_000_003,
        request: { instructions: 'Be nice.', max_output_tokens: 500, temperature: 0.3, metadata: { a: '1' } },
      }),
    ).toEqual({
      id: 'resp_01JX',
      object: 'response',
      created_at: 1_760_000_000,
      status: 'completed',
      completed_at: 1_760_000_003,
      error: null,
      incomplete_details: null,
      instructions: 'Be nice.',
      max_output_tokens: 500,
      model: 'svc-max',
      output: [
        // An Anthropic signature is not replayable on OpenAI, so no encrypted_content.
        { id: 'rs_01JX_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'Consider.' }] },
        {
          id: 'msg_01JX',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Here you go.', annotations: [], logprobs: [] }],
        },
        {
          id: 'fc_01JX_2',
          type: 'function_call',
          status: 'completed',
          arguments: '{"q":"x"}',
          call_id: 'toolu_9',
          name: 'lookup',
        },
        {
          id: 'msg_01JX_3',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Done.', annotations: [], logprobs: [] }],
        },
      ],
      parallel_tool_calls: true,
      previous_response_id: null,
      reasoning: { effort: null, summary: null },
      store: false,
      temperature: 0.3,
      text: { format: { type: 'text' } },
      tool_choice: 'auto',
      tools: [],
      top_p: 1,
      truncation: 'disabled',
      usage: {
        input_tokens: 1050,
        input_tokens_details: { cached_tokens: 900, cache_write_tokens: 50 },
        output_tokens: 40,
        output_tokens_details: { reasoning_tokens: 10 },
        total_tokens: 1090,
      },
      user: null,
      metadata: { a: '1' },
    })
  })

  test.each([
    ['max_tokens', 'incomplete', { reason: 'max_output_tokens' }],
    ['context_exceeded', 'incomplete', { reason: 'max_output_tokens' }],
    ['refusal', 'incomplete', { reason: 'content_filter' }],
    ['end_turn', 'completed', null],
    ['stop_sequence', 'completed', null],
  ] as const)('stop reason %s → %s', (stopReason, status, incomplete) => {
    const encoded = encodeResponsesResponse({ ...answer, stopReason }, ids)
    expect(encoded['status']).toBe(status)
    expect(encoded['incomplete_details']).toEqual(incomplete)
  })

  test("a declined block (the model's refusal) is a message with a refusal part in a completed response; the SDK reads it", async () => {
    const declined: ExchangeResponse = {
      ...answer,
      content: [{ type: 'text', text: "I can't help with that.", refusal: true }],
      stopReason: 'refusal',
    }
    const encoded = encodeResponsesResponse(declined, { ...ids, completedAt: 7 })
    expect(encoded).toMatchObject({ status: 'completed', completed_at: 7, incomplete_details: null })
    expect(encoded['output']).toEqual([
      {
        id: 'msg_01JX',
        type: 'message',
        status: 'completed',
        role: 'assistant',
        content: [{ type: 'refusal', refusal: "I can't help with that." }],
      },
    ])
    // Anthropic's classifier stopping an answer (no declined block) is still a content filter's cut.
    const cut = encodeResponsesResponse({ ...declined, content: [{ type: 'text', text: 'Here is' }] }, ids)
    expect(cut).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'content_filter' },
      output: [{ status: 'incomplete', content: [{ type: 'output_text', text: 'Here is' }] }],
    })
    const server = serveResponses(() => Response.json(encoded))
    stop = server.stop
    const parsed = await server.client.responses.create({ model: 'svc-max', input: 'q' })
    expect(parsed.status).toBe('completed')
    expect(parsed.output).toMatchObject([{ content: [{ type: 'refusal', refusal: "I can't help with that." }] }])
  })

  test('the item the output limit cut is incomplete, the items before it completed', () => {
    const statuses = (content: ExchangeResponse['content']) =>
      (
        encodeResponsesResponse({ ...answer, content, stopReason: 'max_tokens' }, ids)['output'] as {
          status?: string
        }[]
      ).map((item) => item.status)
    expect(statuses(answer.content)).toEqual([undefined, 'completed', 'completed', 'incomplete'])
    expect(statuses(answer.content.slice(0, 4))).toEqual([undefined, 'completed', 'incomplete'])
    // Reasoning the limit cut has no status to say it; the text before it stays completed.
    expect(statuses([answer.content[2]!, answer.content[0]!])).toEqual(['completed', undefined])
    expect(
      (encodeResponsesResponse({ ...answer, stopReason: 'end_turn' }, ids)['output'] as { status?: string }[]).map(
        (item) => item.status,
      ),
    ).toEqual([undefined, 'completed', 'completed', 'completed'])
  })

  test('text echoes the format the client asked for, and free text when it named none', () => {
    const format = { type: 'json_schema', name: 'weather', schema: { type: 'object' }, strict: true }
    const textOf = (request: Record<string, unknown>) => encodeResponsesResponse(answer, { ...ids, request }).text
    expect(textOf({ text: { format, verbosity: 'low' } })).toEqual({ format, verbosity: 'low' })
    expect(textOf({ text: { verbosity: 'low' } })).toEqual({ format: { type: 'text' }, verbosity: 'low' })
    expect(textOf({ text: null })).toEqual({ format: { type: 'text' } })
    expect(textOf({})).toEqual({ format: { type: 'text' } })
  })

  test('OpenAI reasoning round-trips its encrypted_content', () => {
    const upstream = {
      id: 'resp_up',
      status: 'completed',
      model: 'gpt-5',
      output: [
        { type: 'reasoning', id: 'rs_up', summary: [{ type: 'summary_text', text: 's' }], encrypted_content: 'E' },
      ],
      usage: null,
    }
    const encoded = encodeResponsesResponse(decodeResponsesResponse(upstream), { ...ids, request: includeEncrypted })
    expect(encoded['output']).toEqual([
      { id: 'rs_01JX_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 's' }], encrypted_content: 'E' },
    ])
    // Like the real API: without the include, no encrypted_content.
    expect(encodeResponsesResponse(decodeResponsesResponse(upstream), ids)['output']).toEqual([
      { id: 'rs_01JX_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 's' }] },
    ])
  })

  test('include reasoning.encrypted_content: Anthropic thinking carries its signature, redacted thinking its data', () => {
    const encoded = encodeResponsesResponse(answer, { ...ids, request: includeEncrypted })
    const output = encoded['output'] as Record<string, unknown>[]
    expect(output.map((item) => [item['type'], item['id']])).toEqual([
      ['reasoning', 'rs_01JX_0'],
      // The redacted block becomes a summary-less reasoning item of its own.
      ['reasoning', 'rs_01JX_1'],
      ['message', 'msg_01JX'],
      ['function_call', 'fc_01JX_3'],
      ['message', 'msg_01JX_4'],
    ])
    expect(output[0]).toEqual({
      id: 'rs_01JX_0',
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: 'Consider.' }],
      encrypted_content: expect.any(String),
    })
    expect(output[1]).toEqual({
      id: 'rs_01JX_1',
      type: 'reasoning',
      summary: [],
      encrypted_content: expect.any(String),
    })
    const thinkingBlob = output[0]!['encrypted_content'] as string
    const redactedBlob = output[1]!['encrypted_content'] as string
    // Opaque to the client (base64url, no signature in clear), readable by the gateway.
    expect(thinkingBlob).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(thinkingBlob).not.toContain('anthropic-signature')
    expect(JSON.parse(Buffer.from(thinkingBlob, 'base64url').toString('utf8'))).toEqual({
      v: 1,
      provider: 'anthropic',
      type: 'thinking',
      signature: 'anthropic-signature',
    })
    expect(readAnthropicReasoning(thinkingBlob)).toEqual({ type: 'thinking', signature: 'anthropic-signature' })
    expect(readAnthropicReasoning(redactedBlob)).toEqual({ type: 'redacted_thinking', data: 'opaque' })
  })

  test('thinking with no signature, or one the gateway made for another provider, has no encrypted_content', () => {
    const encoded = encodeResponsesResponse(
      {
        ...answer,
        content: [
          { type: 'thinking', thinking: 'from chat', signature: '' },
          { type: 'thinking', thinking: 'no field' },
          { type: 'thinking', thinking: 'synthetic', signature: Buffer.from('gw1:deepseek:abc').toString('base64') },
        ],
      },
      { ...ids, request: includeEncrypted },
    )
    expect(encoded['output']).toEqual([
      { id: 'rs_01JX_0', type: 'reasoning', summary: [{ type: 'summary_text', text: 'from chat' }] },
      { id: 'rs_01JX_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 'no field' }] },
      { id: 'rs_01JX_2', type: 'reasoning', summary: [{ type: 'summary_text', text: 'synthetic' }] },
    ])
    // An OpenAI blob (tagged by the Responses decoders) goes back as it came.
    const openai = encodeResponsesResponse(
      { ...answer, content: [{ type: 'thinking', thinking: 't', signature: tagResponsesSignature('gAAAA-blob') }] },
      { ...ids, request: includeEncrypted },
    )
    expect((openai['output'] as Record<string, unknown>[])[0]?.['encrypted_content']).toBe('gAAAA-blob')
  })

  test('the OpenAI SDK reads the encrypted_content of a reasoning item', async () => {
    const server = serveResponses(() =>
      Response.json(encodeResponsesResponse(answer, { ...ids, request: includeEncrypted })),
    )
    stop = server.stop
    const response = await server.client.responses.create({
      model: 'svc-max',
      input: 'hi',
      include: ['reasoning.encrypted_content'],
      store: false,
    })
    const reasoning = response.output.filter((item) => item.type === 'reasoning')
    expect(reasoning.map((item) => readAnthropicReasoning(item.encrypted_content ?? ''))).toEqual([
      { type: 'thinking', signature: 'anthropic-signature' },
      { type: 'redacted_thinking', data: 'opaque' },
    ])
  })

  test('the OpenAI SDK reads the JSON response', async () => {
    const server = serveResponses(() => Response.json(encodeResponsesResponse(answer, ids)))
    stop = server.stop
    const response = await server.client.responses.create({ model: 'svc-max', input: 'hi' })
    expect(response.id).toBe('resp_01JX')
    expect(response.model).toBe('svc-max')
    expect(response.output_text).toBe('Here you go.Done.')
    expect(response.output.find((item) => item.type === 'function_call')).toMatchObject({
      call_id: 'toolu_9',
      arguments: '{"q":"x"}',
    })
    expect(response.usage?.input_tokens_details.cached_tokens).toBe(900)
    expect(response.usage?.output_tokens_details.reasoning_tokens).toBe(10)
  })

  describe('web search', () => {
    const searched: ExchangeResponse = {
      ...answer,
      content: [
        {
          type: 'web_search',
          id: 'srvtoolu_01',
          query: 'bun 1.4',
          outcome: {
            results: [
              { url: 'https://bun.sh/blog/bun-v1.4', title: 'Bun 1.4', pageAge: '2 days ago' },
              { url: 'https://example.com/', title: 'Example' },
            ],
          },
        },
        { type: 'web_search', id: 'srvtoolu_02', query: 'bun 1.5', outcome: { errorCode: 'max_uses_exceeded' } },
        { type: 'text', text: 'Bun 1.4 is out.' },
      ],
      stopReason: 'end_turn',
    }

    test('each search is a web_search_call item in output order, ws_ ids; a failed one has no sources', () => {
      const response = encodeResponsesResponse(searched, ids) as { output: unknown[] }
      expect(response.output).toEqual([
        {
          id: 'ws_01JX_0',
          type: 'web_search_call',
          status: 'completed',
          action: {
            type: 'search',
            query: 'bun 1.4',
            sources: [
              { type: 'url', url: 'https://bun.sh/blog/bun-v1.4' },
              { type: 'url', url: 'https://example.com/' },
            ],
          },
        },
        { id: 'ws_01JX_1', type: 'web_search_call', status: 'failed', action: { type: 'search', query: 'bun 1.5' } },
        {
          id: 'msg_01JX',
          type: 'message',
          status: 'completed',
          role: 'assistant',
          content: [{ type: 'output_text', text: 'Bun 1.4 is out.', annotations: [], logprobs: [] }],
        },
      ])
    })

    test('the OpenAI SDK reads the web_search_call items', async () => {
      const server = serveResponses(() => Response.json(encodeResponsesResponse(searched, ids)))
      stop = server.stop
      const response = await server.client.responses.create({ model: 'svc-max', input: 'news?' })
      const searches = response.output.filter((item) => item.type === 'web_search_call')
      expect(searches.map((item) => [item.status, item.action.type === 'search' && item.action.query])).toEqual([
        ['completed', 'bun 1.4'],
        ['failed', 'bun 1.5'],
      ])
      expect(response.output_text).toBe('Bun 1.4 is out.')
    })
  })

  describe('citations', () => {
    const page = { url: 'https://bun.sh/blog/bun-v1.4', title: 'Bun 1.4', citedText: 'Bun 1.4 ships.' }
    const other = { url: 'https://example.com/', title: 'Example', citedText: 'the answer' }
    // Claude after a search: one text block per cited passage, each cited as a whole.
    const cited: ExchangeResponse = {
      ...answer,
      content: [
        { type: 'text', text: 'Per the notes, ' },
        { type: 'text', text: 'Bun 1.4 is out.', citations: [page, other] },
        // From OpenAI: spans of the answer, given here out of order.
        {
          type: 'text',
          text: 'It is fast and small.',
          citations: [
            { ...other, span: { start: 11, end: 21 } },
            { ...page, span: { start: 0, end: 10 } },
          ],
        },
      ],
      stopReason: 'end_turn',
    }
    const annotation = (c: typeof page, start: number, end: number) => ({
      type: 'url_citation',
      start_index: start,
      end_index: end,
      url: c.url,
      title: c.title,
    })
    const texts = (output: unknown[]) =>
      output.map((item) => (item as { id: string; content: unknown[] }).content[0] as Record<string, unknown>)

    test("each text block's citations are url_citation annotations of its output_text, by start_index", () => {
      const response = encodeResponsesResponse(cited, ids) as { output: { id: string; content: unknown[] }[] }
      expect(response.output.map((item) => item.id)).toEqual(['msg_01JX', 'msg_01JX_1', 'msg_01JX_2'])
      expect(texts(response.output)).toEqual([
        { type: 'output_text', text: 'Per the notes, ', annotations: [], logprobs: [] },
        {
          type: 'output_text',
          text: 'Bun 1.4 is out.',
          // No span: the whole block, which is the whole output_text (each block is its own message).
          annotations: [annotation(page, 0, 15), annotation(other, 0, 15)],
          logprobs: [],
        },
        {
          type: 'output_text',
          text: 'It is fast and small.',
          annotations: [annotation(page, 0, 10), annotation(other, 11, 21)],
          logprobs: [],
        },
      ])
    })

    test('the OpenAI SDK reads the annotations', async () => {
      const server = serveResponses(() => Response.json(encodeResponsesResponse(cited, ids)))
      stop = server.stop
      const response = await server.client.responses.create({ model: 'svc-max', input: 'news?' })
      const annotations = response.output.flatMap((item) =>
        item.type === 'message'
          ? item.content.flatMap((part) => (part.type === 'output_text' ? part.annotations : []))
          : [],
      )
      expect(annotations).toEqual([
        annotation(page, 0, 15),
        annotation(other, 0, 15),
        annotation(page, 0, 10),
        annotation(other, 11, 21),
      ] as never)
      expect(response.output_text).toBe('Per the notes, Bun 1.4 is out.It is fast and small.')
    })
  })

  test('a call to a namespaced tool goes back under its namespace and own name', () => {
    const namespaced: ExchangeResponse = {
      ...answer,
      content: [
        { type: 'tool_use', id: 'toolu_1', name: 'multi_agent_v1__spawn_agent', input: { message: 'go' } },
        { type: 'tool_use', id: 'toolu_2', name: 'exec_command', input: { cmd: 'ls' } },
      ],
    }
    const tools = [
      { type: 'function', name: 'exec_command' },
      { type: 'namespace', name: 'multi_agent_v1', tools: [{ type: 'function', name: 'spawn_agent' }] },
    ]
    const response = encodeResponsesResponse(namespaced, { ...ids, request: { tools } }) as { output: unknown[] }
    expect(response.output).toEqual([
      {
        id: 'fc_01JX_0',
        type: 'function_call',
        status: 'completed',
        arguments: '{"message":"go"}',
        call_id: 'toolu_1',
        namespace: 'multi_agent_v1',
        name: 'spawn_agent',
      },
      {
        id: 'fc_01JX_1',
        type: 'function_call',
        status: 'completed',
        arguments: '{"cmd":"ls"}',
        call_id: 'toolu_2',
        name: 'exec_command',
      },
    ])
  })
})

test("thinking with no words (Anthropic's omitted display) is a reasoning item with an empty summary", () => {
  const omitted: ExchangeResponse = {
    ...answer,
    content: [
      { type: 'thinking', thinking: '', signature: 'EqQBCkYIBxgCKkBsig' },
      { type: 'text', text: 'Done.' },
    ],
    stopReason: 'end_turn',
  }
  const encoded = encodeResponsesResponse(omitted, { ...ids, request: includeEncrypted }) as {
    output: Record<string, unknown>[]
  }
  expect(encoded.output[0]).toMatchObject({ type: 'reasoning', summary: [], encrypted_content: expect.any(String) })
})
