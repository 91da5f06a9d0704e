// End to end: a client's structured-output request (Responses text.format, Anthropic
// output_config.format) reaches an upstream of another dialect in that dialect's own field, and
// the answer says what was asked. Bad formats are a 400 in the client's own error shape.
import { describe, expect, test } from 'bun:test'
import { jsonSchemaOutputFormat } from '@anthropic-ai/sdk/helpers/json-schema'
import { sdkClients } from './support/harness'
import {
  profileFor,
  onlyUpstreamBody,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()

const weather = {
  type: 'object',
  properties: { city: { type: 'string' }, celsius: { type: 'number' } },
  required: ['city', 'celsius'],
  additionalProperties: false,
} as const
const answer = { city: 'Paris', celsius: 18 }
const question = 'Weather in Paris, as JSON.'

/** The body the upstream received for the only request of the test. */
const upstreamBody = () => onlyUpstreamBody(sim)

describe('a Responses client asking for text.format', () => {
  const format = { type: 'json_schema' as const, name: 'weather', schema: weather, strict: true }

  test.each([false, true])('stream %p: a Chat upstream gets response_format, the answer echoes it', async (stream) => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: JSON.stringify(answer) })
    const request = { model: profileFor['openai-chat'], input: question, text: { format } }
    const response = stream
      ? await openai.responses.stream(request).finalResponse()
      : await openai.responses.create(request)

    expect(upstreamBody().response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'weather', schema: weather, strict: true },
    })
    expect(response.text?.format).toEqual(format)
    expect(JSON.parse(response.output_text)).toEqual(answer)
  })

  test('an Anthropic upstream gets output_config.format with the schema', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor.anthropic, { text: JSON.stringify(answer) })
    const response = await openai.responses.create({ model: profileFor.anthropic, input: question, text: { format } })
    expect(upstreamBody().output_config).toEqual({ format: { type: 'json_schema', schema: weather } })
    expect(response.text?.format).toEqual(format)
  })

  test('json_object reaches a Chat upstream as response_format json_object', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: '{}' })
    const response = await openai.responses.create({
      model: profileFor['openai-chat'],
      input: question,
      text: { format: { type: 'json_object' } },
    })
    expect(upstreamBody().response_format).toEqual({ type: 'json_object' })
    expect(response.text?.format).toEqual({ type: 'json_object' })
  })

  test('a text setting without a format is answered with the default format', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: 'Sunny.' })
    const response = await openai.responses.create({
      model: profileFor['openai-chat'],
      input: 'Weather in Paris?',
      text: { verbosity: 'low' },
    })
    expect(response.text).toEqual({ format: { type: 'text' }, verbosity: 'low' })
    expect(upstreamBody()).not.toHaveProperty('response_format')
  })

  test('an unknown format type is a 400 in OpenAI’s error shape', async () => {
    const h = await translationGateway(sim)
    const res = await h.call('/compat-b/v1/responses', {
      method: 'POST',
      json: { model: profileFor['openai-chat'], input: question, text: { format: { type: 'yaml' } } },
    })
    expect(res.status).toBe(400)
    expect((await res.json()).error).toMatchObject({ type: 'invalid_request_error', param: 'text.format.type' })
    expect(sim.requests).toHaveLength(0)
  })
})

describe('an Anthropic client asking for output_config.format', () => {
  test.each([
    ['openai-chat', (body: Record<string, unknown>) => (body.response_format as { json_schema: unknown }).json_schema],
    ['openai-responses', (body: Record<string, unknown>) => (body.text as { format: unknown }).format],
  ] as const)('a %s upstream gets the schema under the default name; parse() reads the answer', async (kind, sent) => {
    const { anthropic } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor[kind], { text: JSON.stringify(answer) })
    const message = await anthropic.messages.parse({
      model: profileFor[kind],
      max_tokens: 200,
      messages: [{ role: 'user', content: question }],
      output_config: { format: jsonSchemaOutputFormat(weather) },
    })
    expect(message.parsed_output).toEqual(answer)
    expect(sent(upstreamBody())).toMatchObject({ name: 'output', schema: { properties: weather.properties } })
  })

  test('a format that is not json_schema is a 400 in Anthropic’s error shape', async () => {
    const h = await translationGateway(sim)
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: {
        model: profileFor['openai-chat'],
        max_tokens: 100,
        messages: [{ role: 'user', content: question }],
        output_config: { format: { type: 'json_object' } },
      },
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(sim.requests).toHaveLength(0)
  })
})
