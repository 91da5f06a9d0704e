// End to end: an Anthropic client's image or document that names a file in its Anthropic store
// (Files API, `source: {type: "file", file_id}`) reaches an Anthropic upstream as sent, with the
// account's own key (BYOK): the store is that key's workspace. The router rules out models of other
// providers, which cannot read it, and Anthropic models served with the platform's key, whose
// workspace holds no file of the account's: a Claude model further down the profile serves, and a
// profile with none answers that no model can, instead of a model answering as if no file had been
// attached.
import { describe, expect, test } from 'bun:test'
import type Anthropic from '@anthropic-ai/sdk'
import { sdkClients } from './support/harness'
import {
  profileFor,
  rankedProGateway,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
  withOwnKey,
} from './support/translation-gateway'

const sim = translationSimulator()

const filesBeta = { 'anthropic-beta': 'files-api-2025-04-14' }
const imageFromStore: Anthropic.ContentBlockParam = { type: 'image', source: { type: 'file', file_id: 'file_img' } }
const question = (model: string, content: Anthropic.ContentBlockParam[]) => ({
  model,
  max_tokens: 200,
  messages: [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'What is in it?' }, ...content] }],
})

/** The Anthropic SDK's error, with the body the gateway answered. */
const refusal = (promise: Promise<unknown>) => promise.then(() => undefined).catch((e: unknown) => e)

describe('an Anthropic client naming a file in its Anthropic store', () => {
  test('an Anthropic upstream gets the file_id as sent; a profile of Chat models only is never asked', async () => {
    const { anthropic } = sdkClients(await withOwnKey(await translationGateway(sim), 'anthropic'))
    sim.queue(upstreamModelFor.anthropic, { text: 'A cat.' })
    const answer = await anthropic.messages.create(question(profileFor.anthropic, [imageFromStore]), {
      headers: filesBeta,
    })
    expect(answer.content as unknown[]).toEqual([{ type: 'text', text: 'A cat.' }])
    expect(sim.requests).toHaveLength(1)
    expect((sim.requests[0]!.body as { messages: unknown }).messages).toEqual([
      question(profileFor.anthropic, [imageFromStore]).messages[0],
    ])

    sim.reset()
    const error = await refusal(
      anthropic.messages.create(question(profileFor['openai-chat'], [imageFromStore]), { headers: filesBeta }),
    )
    // The request, not the gateway, is what this profile cannot serve: a 400 that says what to change.
    expect(error).toMatchObject({
      status: 400,
      error: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message:
            "this request names files stored with Anthropic (file_id), which only an Anthropic model served with your own Anthropic key (BYOK) can read, and none under svc-pro can serve it: send the file's content instead, or add your Anthropic key",
        },
      },
    })
    // No retry can help: the SDK is told not to resend it.
    expect((error as InstanceType<typeof Anthropic.APIError>).headers?.get('x-should-retry')).toBe('false')
    expect(sim.requests).toHaveLength(0)
  })

  test('a Chat model ranked above a Claude one is passed over: the Claude model serves the file', async () => {
    const h = await withOwnKey(
      await rankedProGateway(sim, [
        { id: 'best-chat', kind: 'openai-chat', quality: 95 },
        { id: 'claude', kind: 'anthropic', quality: 80 },
      ]),
      'anthropic',
    )
    const { anthropic } = sdkClients(h)
    sim.queue(upstreamModelFor.anthropic, { text: 'A cat.' })
    const answer = await anthropic.messages
      .create(question('svc-pro', [imageFromStore]), { headers: filesBeta })
      .withResponse()
    expect(answer.data.content as unknown[]).toEqual([{ type: 'text', text: 'A cat.' }])
    expect(sim.requests.map((r) => r.path)).toEqual(['/v1/messages'])
    const record = await (await h.call(`/v1/usage/requests/${answer.response.headers.get('x-request-id')}`)).json()
    expect(record.selected_model_id).toBe('claude')
    expect(record.provider_ranks).toContainEqual(
      expect.objectContaining({ model_id: 'best-chat', reason: expect.stringContaining('file_id') }),
    )
  })

  test('with the platform’s key only, no Claude model is asked: the platform’s workspace holds no file of the account’s', async () => {
    const h = await translationGateway(sim)
    const { anthropic } = sdkClients(h)
    const error = await refusal(
      anthropic.messages.create(question(profileFor.anthropic, [imageFromStore]), { headers: filesBeta }),
    )
    expect(error).toMatchObject({
      status: 400,
      error: {
        error: { type: 'invalid_request_error', message: expect.stringContaining('your own Anthropic key (BYOK)') },
      },
    })
    expect(sim.requests).toHaveLength(0)
  })

  test.each([false, true])(
    'stream %p: a document a tool returned from the store rules out a Responses upstream',
    async (stream) => {
      const { anthropic } = sdkClients(await translationGateway(sim))
      const error = await refusal(
        anthropic.messages.create(
          {
            model: profileFor['openai-responses'],
            max_tokens: 200,
            stream,
            messages: [
              { role: 'user', content: 'Fetch the report.' },
              { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'fetch', input: {} }] },
              {
                role: 'user',
                content: [
                  {
                    type: 'tool_result',
                    tool_use_id: 'toolu_1',
                    content: [{ type: 'document', source: { type: 'file', file_id: 'file_pdf' } }],
                  },
                ],
              },
            ],
          },
          { headers: filesBeta },
        ),
      )
      expect(error).toMatchObject({
        status: 400,
        error: { error: { type: 'invalid_request_error', message: expect.stringContaining('file_id') } },
      })
      expect(sim.requests).toHaveLength(0)
    },
  )
})
