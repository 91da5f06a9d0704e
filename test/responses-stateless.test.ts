// The Responses route keeps nothing: what the openai SDK asks of a stored response, a stored prompt
// and the endpoints beside POST /v1/responses are refused with words that say so, in OpenAI's shape,
// and the SDK does not retry them. Also the Anthropic models list's cursors (the same audit).
import { afterAll, expect, test } from 'bun:test'
import { sdkClients } from './support/harness'
import { translationGateway, translationSimulator } from './support/translation-gateway'

const sim = translationSimulator()
afterAll(() => sim.stop())

/** The SDK's error for `call`: its status and OpenAI's error body. */
async function refusal(call: () => Promise<unknown>) {
  try {
    await call()
  } catch (err) {
    const { status, error } = err as { status: number; error: Record<string, unknown> }
    return { status, error }
  }
  throw new Error('the call succeeded')
}

test("a response's id cannot be retrieved, listed, deleted or cancelled: the 404 says svc keeps none", async () => {
  const h = await translationGateway(sim)
  const { openai } = sdkClients(h)
  const created = await openai.responses.create({ model: 'svc-ultra-saver', input: 'hi' })
  const said = `response ${created.id} is not kept: this gateway stores no responses (it is stateless), so none can be read, cancelled or deleted; keep the output you received and send the whole conversation in input`
  for (const call of [
    () => openai.responses.retrieve(created.id),
    () => openai.responses.inputItems.list(created.id),
    () => openai.responses.delete(created.id),
    () => openai.responses.cancel(created.id),
  ]) {
    expect(await refusal(call)).toEqual({
      status: 404,
      error: { message: said, type: 'invalid_request_error', param: null, code: null },
    })
  }
  const notServed = await refusal(() => openai.responses.inputTokens.count({ model: 'svc-pro', input: 'hi' }))
  expect(notServed.status).toBe(404)
  expect(notServed.error.message).toBe(
    'counting input tokens (POST /v1/responses/input_tokens) is not served by this gateway: only POST /v1/responses and the models list are',
  )
  // One upstream call: the create. Nothing retried, nothing sent on.
  expect(sim.requests).toHaveLength(1)
})

test('a stored prompt template without input is refused for the prompt, not for a missing input', async () => {
  const h = await translationGateway(sim)
  const { openai } = sdkClients(h)
  const prompt = { id: 'pmpt_123', variables: { city: 'Paris' } }
  expect(await refusal(() => openai.responses.create({ model: 'svc-pro', prompt }))).toEqual({
    status: 400,
    error: {
      message: 'prompt (a stored prompt template) is not supported: send its text as instructions and input',
      type: 'invalid_request_error',
      param: 'prompt',
      code: null,
    },
  })
  // No input and nothing else: the decoder's own words.
  const bare = await h.call('/compat-b/v1/responses', { method: 'POST', json: { model: 'svc-pro' } })
  expect(((await bare.json()) as { error: { message: string; param: string } }).error).toMatchObject({
    message: 'input must be a string or an array of input items',
    param: 'input',
  })
})

test('the Anthropic models list: a cursor naming no model pages nothing, in either direction', async () => {
  const h = await translationGateway(sim)
  const { anthropic } = sdkClients(h)
  const all = (await anthropic.models.list()).data.map((m) => m.id)
  expect(all.length).toBeGreaterThan(1)
  const after = await anthropic.models.list({ after_id: all[0]! })
  expect(after.data.map((m) => m.id)).toEqual(all.slice(1))
  for (const cursor of [{ after_id: 'claude-sonnet-4-5' }, { before_id: 'claude-sonnet-4-5' }]) {
    const page = await anthropic.models.list(cursor)
    expect({ ids: page.data.map((m) => m.id), more: page.has_more }).toEqual({ ids: [], more: false })
  }
})

test('an item_reference (the Vercel AI SDK’s default for earlier answers) is refused in words that say what to send', async () => {
  const h = await translationGateway(sim)
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    json: {
      model: 'svc-pro',
      input: [
        { role: 'user', content: 'hi' },
        { type: 'item_reference', id: 'msg_1' },
        { role: 'user', content: 'and again' },
      ],
    },
  })
  expect(res.status).toBe(400)
  expect(await res.json()).toMatchObject({
    error: {
      type: 'invalid_request_error',
      param: 'input[1].type',
      message:
        'item_reference is not supported: this gateway is stateless, so send the item itself (with store: false; the Vercel AI SDK: providerOptions.openai.store = false)',
    },
  })
})

test('an item reference without its optional type is refused the same way', async () => {
  const h = await translationGateway(sim)
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    json: { model: 'svc-pro', input: [{ role: 'user', content: 'hi' }, { id: 'msg_1' }] },
  })
  expect(res.status).toBe(400)
  const { error } = (await res.json()) as { error: { param: string; message: string } }
  expect(error.param).toBe('input[1]')
  expect(error.message).toStartWith('item_reference is not supported: this gateway is stateless')
})
