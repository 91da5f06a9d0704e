// Claude Code's auto and plan modes send `safeguards` for Anthropic's API to judge each tool call,
// and refuse every action that comes back without a verdict (`safeguard_results`). Only Anthropic
// judges: such a request goes to an Anthropic model of the profile, passed through as sent.
import { expect, test } from 'bun:test'
import { requestDetail } from './support/harness'
import { rankedProGateway, translationSimulator } from './support/translation-gateway'

const sim = translationSimulator()

const safeguards = [{ type: 'dangerous_tool_use', classifier_context: { permission_mode: 'auto' } }]

const ask = (h: Awaited<ReturnType<typeof rankedProGateway>>, extra: Record<string, unknown>) =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'dangerous-tool-use-2026-09-03' },
    json: { model: 'svc-pro', max_tokens: 50, messages: [{ role: 'user', content: 'hello' }], ...extra },
  })

test('a request asking for safeguards goes to the Anthropic model, not the higher-ranked Chat one, with its safeguards as sent', async () => {
  const h = await rankedProGateway(sim, [
    { id: 'gpt', kind: 'openai-chat', quality: 95 },
    { id: 'claude', kind: 'anthropic', quality: 80 },
  ])
  const plain = await ask(h, {})
  expect(plain.status).toBe(200)
  expect((await requestDetail(h, plain.headers.get('x-request-id')!)).selected_model_id).toBe('gpt')

  const judged = await ask(h, { safeguards })
  expect(judged.status).toBe(200)
  const detail = await requestDetail(h, judged.headers.get('x-request-id')!)
  expect(detail.selected_model_id).toBe('claude')
  expect(detail.provider_ranks.find((r: { model_id: string }) => r.model_id === 'gpt')).toMatchObject({
    status: 'skipped',
    reason: 'request asks Anthropic to judge its tool calls (Claude Code’s safeguards), which only Anthropic does',
  })
  expect(sim.requests.at(-1)!.body).toMatchObject({ safeguards })
})
