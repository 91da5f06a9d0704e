// A provider's own web search across translation. Claude Code's WebSearch tool offers the model
// Anthropic's `web_search` server tool; Codex offers OpenAI's hosted `web_search`. Routed to the
// other provider, the tool used to be dropped and the model answered without searching. Now each
// becomes the other's tool, the searches come back in the client's own shape (what was searched,
// what was found, and which pages the answer cites), and a request with it goes to an upstream
// that can search.
import { describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import type { RankEntry } from '../src/router/rank'
import { requestDetail, sdkClients } from './support/harness'
import {
  onlyUpstreamBody,
  profileFor,
  rankedProGateway,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()

const usage = { input: 100, output: 20, webSearches: 2 }
/** Where the simulator's searches find their one page, and what each searched for. */
const foundUrl = 'https://example.com/'
const queries = ['simulated search 1', 'simulated search 2']

/** Claude Code's WebSearch request: the server tool, limited to some domains, near the user. */
const claudeCodeSearch = (model: string) => ({
  model,
  max_tokens: 1024,
  messages: [{ role: 'user' as const, content: 'Perform a web search for the query: bun sqlite wal' }],
  tools: [
    {
      type: 'web_search_20250305' as const,
      name: 'web_search' as const,
      max_uses: 8,
      allowed_domains: ['bun.sh', 'sqlite.org'],
      user_location: { type: 'approximate' as const, country: 'DE', city: 'Berlin' },
    },
  ],
})

describe('an Anthropic client searching through an OpenAI Responses upstream', () => {
  test.each([false, true])(
    'stream %p: the tool goes as OpenAI’s; searches come back as Anthropic blocks',
    async (stream) => {
      const h = await translationGateway(sim)
      sim.setScenario(upstreamModelFor['openai-responses'], { text: 'Bun uses WAL.', usage })
      const { anthropic } = sdkClients(h)
      const params = claudeCodeSearch(profileFor['openai-responses'])
      const message = stream
        ? await anthropic.messages.stream(params).finalMessage()
        : await anthropic.messages.create(params)

      const body = onlyUpstreamBody(sim)
      // max_uses has no OpenAI equivalent; the sources are asked for, so that results can be named.
      expect(body.tools).toEqual([
        {
          type: 'web_search',
          filters: { allowed_domains: ['bun.sh', 'sqlite.org'] },
          user_location: { type: 'approximate', country: 'DE', city: 'Berlin' },
        },
      ])
      expect(body.include).toContain('web_search_call.action.sources')

      expect(message.content.map((b) => b.type)).toEqual([
        'server_tool_use',
        'web_search_tool_result',
        'server_tool_use',
        'web_search_tool_result',
        'text',
      ])
      const [call, result] = message.content as [Anthropic.ServerToolUseBlock, Anthropic.WebSearchToolResultBlock]
      expect(call).toMatchObject({ type: 'server_tool_use', name: 'web_search', input: { query: queries[0] } })
      expect(call.id).toStartWith('srvtoolu_')
      expect(result.tool_use_id).toBe(call.id)
      // A streamed search is told before the answer that cites it: there the title is the URL.
      expect(result.content).toEqual([
        {
          type: 'web_search_result',
          url: foundUrl,
          title: stream ? foundUrl : queries[0]!,
          encrypted_content: '',
          page_age: null,
        },
      ])
      // OpenAI marks the words each page supports; Anthropic cites on the block, quoting (here, the
      // answer's own words, all OpenAI gives) with a pointer into the page only Anthropic could make.
      expect(message.content.at(-1)).toEqual({
        type: 'text',
        text: 'Bun uses WAL.',
        citations: queries.map((title) => ({
          type: 'web_search_result_location',
          url: foundUrl,
          title,
          cited_text: 'Bun uses WAL.',
          encrypted_index: '',
        })),
      })
      expect(message.usage.server_tool_use?.web_search_requests).toBe(2)

      const detail = await requestDetail(h, message.id.replace(/^msg_/, ''))
      expect(detail.usage_events[0]).toMatchObject({ web_search_requests: 2, estimated: false })
    },
  )
})

describe('a conversation that searched on OpenAI, continued on Claude', () => {
  test("Claude gets the answer's words without the searches it cannot open; its own searches go as sent", async () => {
    const h = await translationGateway(sim)
    const { anthropic } = sdkClients(h)
    sim.setScenario(upstreamModelFor['openai-responses'], { text: 'Bun uses WAL.', usage })
    const first = await anthropic.messages.create(claudeCodeSearch(profileFor['openai-responses']))
    // Claude's own search of an earlier turn, sealed by Anthropic.
    const claudeSearch = [
      { type: 'server_tool_use', id: 'srvtoolu_own', name: 'web_search', input: { query: 'bun' } },
      {
        type: 'web_search_tool_result',
        tool_use_id: 'srvtoolu_own',
        content: [
          { type: 'web_search_result', url: foundUrl, title: 'Bun', encrypted_content: 'c2VhbGVk', page_age: null },
        ],
      },
    ]

    sim.reset()
    sim.setScenario(upstreamModelFor.anthropic, { text: 'Yes.' })
    await anthropic.messages.create({
      ...claudeCodeSearch(profileFor.anthropic),
      messages: [
        { role: 'user', content: 'Does bun:sqlite use WAL?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: 'And before that?' },
        { role: 'assistant', content: claudeSearch as Anthropic.ContentBlockParam[] },
        { role: 'user', content: 'Sure?' },
      ],
    })
    const messages = onlyUpstreamBody(sim).messages as { content: unknown }[]
    expect(messages[1]!.content).toEqual([{ type: 'text', text: 'Bun uses WAL.', citations: null }])
    expect(messages[3]!.content).toEqual(claudeSearch)
  })
})

describe('a Responses client searching through an Anthropic upstream', () => {
  test.each([false, true])(
    'stream %p: the tool goes as Anthropic’s; searches come back as web_search_call items',
    async (stream) => {
      const h = await translationGateway(sim)
      sim.setScenario(upstreamModelFor.anthropic, { text: 'Bun uses WAL.', usage })
      const { openai } = sdkClients(h)
      const params = {
        model: profileFor.anthropic,
        input: 'What journal mode does bun:sqlite use?',
        tools: [
          {
            type: 'web_search' as const,
            filters: { allowed_domains: ['bun.sh'] },
            user_location: { type: 'approximate' as const, country: 'DE' },
            search_context_size: 'low' as const,
          },
        ],
      }
      const response = stream
        ? await openai.responses.stream(params).finalResponse()
        : await openai.responses.create(params)

      const body = onlyUpstreamBody(sim)
      expect(body.tools).toEqual([
        {
          type: 'web_search_20250305',
          name: 'web_search',
          allowed_domains: ['bun.sh'],
          user_location: { type: 'approximate', country: 'DE' },
        },
      ])

      expect(response.output.map((item) => item.type)).toEqual(['web_search_call', 'web_search_call', 'message'])
      const search = response.output[0] as { id: string; status: string; action: unknown }
      expect(search.id).toStartWith('ws_')
      expect(search.status).toBe('completed')
      expect(search.action).toEqual({ type: 'search', query: queries[0], sources: [{ type: 'url', url: foundUrl }] })
      expect(response.output_text).toBe('Bun uses WAL.')
      // Anthropic cites on the whole block: OpenAI's annotation spans it.
      const answer = response.output[2] as { content: { annotations: unknown[] }[] }
      expect(answer.content[0]!.annotations).toEqual(
        queries.map((title) => ({ type: 'url_citation', start_index: 0, end_index: 13, url: foundUrl, title })),
      )

      const detail = await requestDetail(h, response.id.replace(/^resp_/, ''))
      expect(detail.usage_events[0]).toMatchObject({ web_search_requests: 2, estimated: false })
    },
  )
})

describe('a request that offers web search goes where a search can run', () => {
  const ranksOf = async (h: Awaited<ReturnType<typeof rankedProGateway>>, requestId: string): Promise<RankEntry[]> =>
    (await requestDetail(h, requestId)).provider_ranks

  test('a Chat model is passed over for a Responses one, and says why', async () => {
    const h = await rankedProGateway(sim, [
      { id: 'chat-best', kind: 'openai-chat', quality: 95 },
      { id: 'resp-next', kind: 'openai-responses', quality: 80 },
    ])
    const message = await sdkClients(h).anthropic.messages.create(claudeCodeSearch('svc-pro'))
    expect(onlyUpstreamBody(sim).model).toBe(upstreamModelFor['openai-responses'])
    const skipped = (await ranksOf(h, message.id.replace(/^msg_/, ''))).find((r) => r.model_id === 'chat-best')
    expect(skipped).toMatchObject({
      status: 'skipped',
      reason: 'request offers web search; this provider has none (an Anthropic model or OpenAI itself serves it)',
    })
  })

  test('blocked domains, which only Anthropic can honour, go to Anthropic', async () => {
    const h = await rankedProGateway(sim, [
      { id: 'resp-best', kind: 'openai-responses', quality: 95 },
      { id: 'claude-next', kind: 'anthropic', quality: 80 },
    ])
    const params = claudeCodeSearch('svc-pro')
    const { allowed_domains: _, ...tool } = params.tools[0]!
    await sdkClients(h).anthropic.messages.create({
      ...params,
      tools: [{ ...tool, blocked_domains: ['example.org'] }],
    })
    expect(onlyUpstreamBody(sim).model).toBe(upstreamModelFor.anthropic)
  })

  // Codex offers a search on every request: a profile of Chat models must still serve it.
  test('with only Chat models, one answers without searching, and says so', async () => {
    const h = await rankedProGateway(sim, [{ id: 'chat-only', kind: 'openai-chat', quality: 90 }])
    const message = await sdkClients(h).anthropic.messages.create(claudeCodeSearch('svc-pro'))
    const body = onlyUpstreamBody(sim)
    expect(body.model).toBe(upstreamModelFor['openai-chat'])
    expect(body.tools).toBeUndefined()
    const [chosen] = await ranksOf(h, message.id.replace(/^msg_/, ''))
    expect(chosen).toMatchObject({ model_id: 'chat-only', status: 'chosen' })
    expect(chosen!.reason).toContain('no model that could serve it runs one, so this one answers without searching')
  })
})
