// Anthropic runs some tools itself and writes what they brought into the assistant's turn: a
// fetched page (web fetch), an MCP server's tool call and result. Such a conversation may later be
// served by a model of another dialect (a fallback, a profile without Claude, a request that no
// longer offers the tool). Those blocks have no form there: before, they were dropped, and the
// model answered as though the page had never been read; the prompt's estimate left the page out
// too, so a conversation far past a model's window was sent to it.
import { describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { sdkClients } from './support/harness'
import { onlyUpstreamBody, profileFor, translationGateway, translationSimulator } from './support/translation-gateway'

const sim = translationSimulator()

const page = 'The spec says every frame ends with a blank line.'

/** A conversation whose assistant turn fetched a page and asked an MCP server, then a follow-up. */
const conversation = (pageText = page) =>
  [
    { role: 'user', content: 'Read https://example.com/spec and ask the docs server about ids.' },
    {
      role: 'assistant',
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_fetch', input: { url: 'https://example.com/spec' } },
        {
          type: 'web_fetch_tool_result',
          tool_use_id: 'srvtoolu_1',
          content: {
            type: 'web_fetch_result',
            url: 'https://example.com/spec',
            retrieved_at: '2026-11-28T04:00:00Z',
            content: {
              type: 'document',
              source: { type: 'text', media_type: 'text/plain', data: pageText },
              title: 'Spec',
            },
          },
        },
        { type: 'mcp_tool_use', id: 'mcptoolu_1', name: 'lookup', server_name: 'docs', input: { q: 'ids' } },
        {
          type: 'mcp_tool_result',
          tool_use_id: 'mcptoolu_1',
          is_error: false,
          content: [{ type: 'text', text: 'Ids are ULIDs.' }],
        },
        { type: 'text', text: 'Frames end with a blank line; ids are ULIDs.' },
      ],
    },
    { role: 'user', content: 'So how does a client split the stream?' },
  ] as unknown as Anthropic.MessageParam[]

/** The assistant's turn as the upstream got it, in its dialect's words. */
function assistantText(body: Record<string, unknown>): string {
  if (Array.isArray(body.messages)) {
    const assistant = (body.messages as { role: string; content: unknown }[]).find((m) => m.role === 'assistant')!
    return typeof assistant.content === 'string' ? assistant.content : JSON.stringify(assistant.content)
  }
  const items = body.input as { role?: string; content?: { text?: string }[] }[]
  return items
    .filter((item) => item.role === 'assistant')
    .flatMap((item) => item.content?.map((part) => part.text ?? '') ?? [])
    .join('\n')
}

describe("an Anthropic conversation's fetched page and MCP call, served by another dialect", () => {
  test.each(['openai-chat', 'openai-responses'] as const)(
    "%s: the model reads them as the turn's text",
    async (kind) => {
      const { anthropic } = sdkClients(await translationGateway(sim))
      await anthropic.messages.create({ model: profileFor[kind], max_tokens: 256, messages: conversation() })
      const text = assistantText(onlyUpstreamBody(sim))
      expect(text).toContain(`Fetched https://example.com/spec (Spec):\n\n${page}`)
      expect(text).toContain('Called the tool lookup on the MCP server docs with {"q":"ids"}.')
      expect(text).toContain('The tool returned:\n\nIds are ULIDs.')
      expect(text).toContain('Frames end with a blank line; ids are ULIDs.')
    },
  )

  test('a fetched page counts in the prompt: one past every window is refused before any upstream is asked', async () => {
    const h = await translationGateway(sim)
    // ~150,000 tokens against the simulator models' 128,000-token windows.
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: { model: profileFor.anthropic, max_tokens: 256, messages: conversation('word '.repeat(120_000)) },
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(sim.requests).toHaveLength(0)
  })
})
