// An upstream answer too large to hold: a 70 MB JSON answer sent as 70 KB of gzip, the same as an
// error body. Read whole, one such answer would take the gateway and every stream in it down;
// svc reads at most 64 MB of an answer (64 KB of an error), and the next candidate serves.
import { afterAll, describe, expect, test } from 'bun:test'
import { createHarness, requestDetail } from './support/harness'
import { startSimulator } from './support/simulator'

const sim = startSimulator({ apiKey: 'sim' })

/** 70 MB of JSON once inflated: an answer whose text is 'x' over and over. */
const bomb = Bun.gzipSync(
  Buffer.concat([
    Buffer.from('{"id":"msg_big","type":"message","role":"assistant","content":[{"type":"text","text":"'),
    Buffer.alloc(70 * 1024 * 1024, 'x'),
    Buffer.from('"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}'),
  ]),
)

let answerStatus = 200
const big = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch: () =>
    new Response(bomb, {
      status: answerStatus,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    }),
})
afterAll(async () => {
  big.stop(true)
  await sim.stop()
})

const prices = { input_usd_per_mtok: 3, output_usd_per_mtok: 15 }
const h = await createHarness({
  grantUsd: 5,
  env: { SIM_KEY: 'sim' },
  config: {
    catalog: { builtin: false },
    providers: {
      big: { kind: 'anthropic', base_url: `http://127.0.0.1:${big.port}`, api_key_env: 'SIM_KEY' },
      sim: { kind: 'anthropic', base_url: sim.url, api_key_env: 'SIM_KEY' },
    },
    models: [
      { id: 'huge', provider: 'big', upstream_model: 'huge-up', profiles: ['max'], quality: 95, ...prices },
      { id: 'fine', provider: 'sim', upstream_model: 'fine-up', profiles: ['max'], quality: 80, ...prices },
    ],
  },
})

const ask = () =>
  h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: 'svc-max', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] },
  })

describe('answers too large to hold', () => {
  test('a 200 whose JSON inflates past 64 MB: a failed leg, and the next candidate answers', async () => {
    answerStatus = 200
    const res = await ask()
    expect(res.status).toBe(200)
    expect((await res.json()).type).toBe('message')
    const detail = await requestDetail(h, res.headers.get('request-id')!)
    expect(detail.usage_events.map((l: { model_id: string; outcome: string }) => [l.model_id, l.outcome])).toEqual([
      ['huge', 'failed'],
      ['fine', 'ok'],
    ])
    expect(detail.usage_events[0].error).toBe('upstream answer is larger than 64 MB')
  })

  test('an error whose body inflates past 64 MB: only its start is read, and the next candidate answers', async () => {
    answerStatus = 500
    const res = await ask()
    expect(res.status).toBe(200)
    const detail = await requestDetail(h, res.headers.get('request-id')!)
    expect(detail.usage_events.map((l: { outcome: string }) => l.outcome)).toEqual(['failed', 'ok'])
    expect(detail.usage_events[0].error).toStartWith('upstream returned HTTP 500')
  })
})
