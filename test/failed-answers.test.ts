// A 200 whose answer says it broke off (Chat's finish_reason "error", a Responses answer
// "failed") is a failed attempt, not a finished answer: the next candidate is tried.
import { afterAll, expect, test } from 'bun:test'
import { createHarness, sdkClients } from './support/harness'
import { startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'k' })
/** Answers every POST with the JSON the test sets: an upstream whose 200 says it failed. */
let brokenAnswer: unknown = {}
const broken = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => Response.json(brokenAnswer) })
afterAll(async () => {
  broken.stop(true)
  await sim.stop()
})

const price = { input_usd_per_mtok: 1, output_usd_per_mtok: 1 }

/** `first` (quality 95) on the broken upstream, then the simulator's Anthropic model (80). */
const gateway = (kind: 'openai-chat' | 'openai-responses') =>
  createHarness({
    grantUsd: 5,
    env: { K: 'k' },
    config: {
      catalog: { builtin: false },
      providers: {
        broken: { kind, base_url: `${broken.url.origin}/v1`, api_key_env: 'K' },
        sim: { kind: 'anthropic', base_url: sim.url, api_key_env: 'K' },
      },
      models: [
        { id: 'first', provider: 'broken', upstream_model: 'first-up', profiles: ['max'], quality: 95, ...price },
        { id: 'backup', provider: 'sim', upstream_model: 'backup-up', profiles: ['max'], quality: 80, ...price },
      ],
    },
  })

const cases = [
  {
    kind: 'openai-chat' as const,
    answer: {
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1_735_689_600,
      model: 'first-up',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Half an ans' }, finish_reason: 'error' }],
      usage: { prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 },
    },
  },
  {
    kind: 'openai-responses' as const,
    // Read as the upstream's own failure, in its words, as its stream's response.failed is.
    legError: 'The model failed.',
    answer: {
      id: 'resp_1',
      object: 'response',
      created_at: 1_735_689_600,
      model: 'first-up',
      status: 'failed',
      error: { code: 'server_error', message: 'The model failed.' },
      output: [],
      usage: { input_tokens: 5, output_tokens: 0, total_tokens: 5 },
    },
  },
]

for (const { kind, answer, legError = 'upstream answer ended in an error' } of cases) {
  test(`a ${kind} 200 that says it failed falls back; the client gets the backup's whole answer`, async () => {
    const h = await gateway(kind)
    brokenAnswer = answer
    sim.setScenario('backup-up', { text: 'Backup here.' })
    const client = sdkClients(h).anthropic
    const { data: message, response } = await client.messages
      .create({ model: 'svc-max', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
      .withResponse()
    expect(message.content).toEqual([expect.objectContaining({ type: 'text', text: 'Backup here.' })])
    expect(message.stop_reason).toBe('end_turn')
    const record = await (await h.call(`/v1/usage/requests/${response.headers.get('x-request-id')}`)).json()
    expect(record.status).toBe('completed')
    expect(record.usage_events.map((e: { model_id: string; outcome: string }) => [e.model_id, e.outcome])).toEqual([
      ['first', 'failed'],
      ['backup', 'ok'],
    ])
    expect(record.usage_events[0].error).toContain(legError)
  })
}
