// A prompt that writes the tokenizer's special tokens (`<|endoftext|>`: code and documents about
// language models are full of it) is counted as text wherever svc counts a prompt. The library
// refuses such text by default: count_tokens and long prompts were answered 500, and a stream
// interrupted before the upstream counted its prompt was never recorded while its credit stayed held.
import { expect, test } from 'bun:test'
import { cutResponsesStream } from './support/harness'
import { profileFor, translationGateway, translationSimulator, upstreamModelFor } from './support/translation-gateway'

const sim = translationSimulator()
const aboutTokenizers = 'A document ends with <|endoftext|>, and a prompt with <|endofprompt|>. '

test('count_tokens counted locally takes a prompt that writes them', async () => {
  const h = await translationGateway(sim)
  // svc-pro has no Anthropic model here: counted locally.
  const res = await h.call('/compat-a/v1/messages/count_tokens', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-pro', messages: [{ role: 'user', content: aboutTokenizers }] },
  })
  expect(res.status).toBe(200)
  expect(((await res.json()) as { input_tokens: number }).input_tokens).toBeGreaterThan(10)
})

test('a Responses stream interrupted before its usage is recorded, its prompt estimated, and holds no credit after', async () => {
  const h = await translationGateway(sim)
  const upstream = upstreamModelFor['openai-responses']
  sim.setScenario(upstream, { text: 'one two three four five six', chunks: 6, chunkDelayMs: 100 })
  const detail = await cutResponsesStream(h, {
    model: profileFor['openai-responses'],
    stream: true,
    input: aboutTokenizers.repeat(20),
  })
  expect(detail.status).toBe('aborted')
  expect(detail.usage_events[0]).toMatchObject({ estimated: true, outcome: 'aborted' })
  expect(detail.usage_events[0].input_tokens).toBeGreaterThan(100)
  // Nothing held: the quota gate sees the grants as they stand.
  const grants = await h.deps.ledger.listGrants(h.accountId)
  expect(h.deps.holds.available(grants)).toBe(grants)
})
