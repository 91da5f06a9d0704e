// End to end: an Anthropic client's image or document that names a file in its Anthropic store
// (Files API, `source: {type: "file", file_id}`) reaches an Anthropic upstream as sent; routed to
// a model of another provider, which cannot read it, it is a 400 in Anthropic's error shape naming
// the block, instead of a model answering as if no file had been attached.
import { afterAll, beforeEach, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { sdkClients } from './support/harness'
import { startSimulator } from './support/simulator'
import {
  profileFor,
  translationGateway,
  translationSimulatorOptions,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = startSimulator(translationSimulatorOptions)
afterAll(() => sim.stop())
beforeEach(() => sim.reset())

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
  test('an Anthropic upstream gets the file_id as sent; a Chat one is never asked, the client gets a 400', async () => {
    const { anthropic } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor.anthropic, { text: 'A cat.' })
    const answer = await anthropic.messages.create(question(profileFor.anthropic, [imageFromStore]), {
      headers: filesBeta,
    })
    expect(answer.content).toEqual([{ type: 'text', text: 'A cat.', citations: null }])
    expect(sim.requests).toHaveLength(1)
    expect((sim.requests[0]!.body as { messages: unknown }).messages).toEqual([
      question(profileFor.anthropic, [imageFromStore]).messages[0],
    ])

    sim.reset()
    const error = await refusal(
      anthropic.messages.create(question(profileFor['openai-chat'], [imageFromStore]), { headers: filesBeta }),
    )
    expect(error).toBeInstanceOf(Anthropic.BadRequestError)
    expect(error).toMatchObject({
      status: 400,
      error: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: expect.stringMatching(/^messages\.0\.content\.1\.source\.file_id cannot be read here/),
        },
      },
    })
    expect(sim.requests).toHaveLength(0)
  })

  test.each([false, true])(
    'stream %p: a document a tool returned from the store is a 400 on a Responses upstream',
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
        error: {
          error: {
            type: 'invalid_request_error',
            message: expect.stringContaining('messages.2.content.0.content.0.source.file_id'),
          },
        },
      })
      expect(sim.requests).toHaveLength(0)
    },
  )
})
