// An uncited text block has no `citations` member in an Anthropic JSON answer. svc wrote
// `citations: null` on the answers it builds (translated, and a pass-through stream gathered into
// JSON), which the Vercel AI SDK refuses ("expected array, received null"): every generateText on
// a translated profile threw (an audit).
import { expect, test } from 'bun:test'
import { profileFor, translationGateway, translationSimulator, upstreamModelFor } from './support/translation-gateway'

const sim = translationSimulator()

test.each([
  ['openai-chat', 100],
  ['openai-responses', 100],
  // Past 4,096 output tokens svc streams from the upstream and gathers the answer itself.
  ['anthropic', 8000],
] as const)('%s upstream, max_tokens %d: the text block has no citations member', async (kind, maxTokens) => {
  const h = await translationGateway(sim)
  sim.setScenario(upstreamModelFor[kind], { text: 'Plain words.', usage: { input: 5, output: 3 } })
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: profileFor[kind], max_tokens: maxTokens, messages: [{ role: 'user', content: 'hi' }] },
  })
  expect(res.status).toBe(200)
  const { content } = (await res.json()) as { content: Record<string, unknown>[] }
  expect(content).toEqual([{ type: 'text', text: 'Plain words.' }])
  expect('citations' in content[0]!).toBe(false)
})
