// End to end: documents a client attaches (Anthropic `document` blocks, Responses `input_file`
// parts) reach an upstream of another dialect in that dialect's own shape, rather than being
// dropped or refused (a document's context follows it as text). A file only the client's own
// store holds (file_id) is a 400 in the client's error shape, before any upstream is asked; a file
// that is neither PDF nor text goes only to a Responses upstream, since Anthropic's documents and
// Chat's file parts refuse it.
import { describe, expect, test } from 'bun:test'
import { sdkClients } from './support/harness'
import {
  profileFor,
  rankedProGateway,
  onlyUpstreamBody,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()

const pdfBase64 = Buffer.from('%PDF-1.4 a tiny report').toString('base64')
const pdfDataUrl = `data:application/pdf;base64,${pdfBase64}`

/** What the upstream received for the only request of the test. */
const upstreamBody = () => onlyUpstreamBody(sim)
const chatMessages = () => upstreamBody().messages as Record<string, unknown>[]

describe('an Anthropic client attaching documents', () => {
  const documents = [
    {
      type: 'document' as const,
      title: 'report.pdf',
      source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: pdfBase64 },
    },
    {
      type: 'document' as const,
      title: 'Notes',
      source: { type: 'text' as const, media_type: 'text/plain' as const, data: 'Revenue grew 4%.' },
    },
    { type: 'text' as const, text: 'Summarise both.' },
  ]

  test('a Chat upstream gets a file part for the PDF and the text document as text', async () => {
    const { anthropic } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: 'Revenue grew.' })
    const message = await anthropic.messages.create({
      model: profileFor['openai-chat'],
      max_tokens: 200,
      messages: [{ role: 'user', content: documents }],
    })
    expect(message.content as unknown[]).toEqual([{ type: 'text', text: 'Revenue grew.' }])
    expect(chatMessages()).toEqual([
      {
        role: 'user',
        content: [
          { type: 'file', file: { filename: 'report.pdf', file_data: pdfDataUrl } },
          { type: 'text', text: 'Notes\n\nRevenue grew 4%.' },
          { type: 'text', text: 'Summarise both.' },
        ],
      },
    ])
  })

  test('a Responses upstream gets an input_file with the PDF', async () => {
    const { anthropic } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-responses'], { text: 'Revenue grew.' })
    await anthropic.messages.create({
      model: profileFor['openai-responses'],
      max_tokens: 200,
      messages: [{ role: 'user', content: documents }],
    })
    expect(upstreamBody().input).toEqual([
      {
        type: 'message',
        role: 'user',
        content: [
          { type: 'input_file', filename: 'report.pdf', file_data: pdfDataUrl },
          { type: 'input_text', text: 'Notes\n\nRevenue grew 4%.' },
          { type: 'input_text', text: 'Summarise both.' },
        ],
      },
    ])
  })

  test('a PDF a tool returned rides to a Chat upstream in the user message after the tool message', async () => {
    const { anthropic } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: 'It is a report.' })
    await anthropic.messages.create({
      model: profileFor['openai-chat'],
      max_tokens: 200,
      messages: [
        { role: 'user', content: 'Fetch the report.' },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'fetch', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'call_1',
              content: [{ type: 'text', text: 'Fetched.' }, documents[0]!],
            },
          ],
        },
      ],
    })
    expect(chatMessages().slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'call_1', content: 'Fetched.' },
      { role: 'user', content: [{ type: 'file', file: { filename: 'report.pdf', file_data: pdfDataUrl } }] },
    ])
  })

  test("a document's context follows it as text on Chat and Responses; an Anthropic upstream gets it in place", async () => {
    const withContext = { ...documents[0]!, context: 'Draft for the Q3 board meeting.' }
    const asking = (model: string) => ({
      model,
      max_tokens: 200,
      messages: [{ role: 'user' as const, content: [withContext, { type: 'text' as const, text: 'Summarise.' }] }],
    })
    const { anthropic } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: 'A draft.' })
    await anthropic.messages.create(asking(profileFor['openai-chat']))
    expect(chatMessages()[0]?.content).toEqual([
      { type: 'file', file: { filename: 'report.pdf', file_data: pdfDataUrl } },
      { type: 'text', text: 'Draft for the Q3 board meeting.' },
      { type: 'text', text: 'Summarise.' },
    ])

    sim.reset()
    sim.queue(upstreamModelFor['openai-responses'], { text: 'A draft.' })
    await anthropic.messages.create(asking(profileFor['openai-responses']))
    expect((upstreamBody().input as { content: unknown }[])[0]?.content).toEqual([
      { type: 'input_file', filename: 'report.pdf', file_data: pdfDataUrl },
      { type: 'input_text', text: 'Draft for the Q3 board meeting.' },
      { type: 'input_text', text: 'Summarise.' },
    ])

    sim.reset()
    sim.queue(upstreamModelFor.anthropic, { text: 'A draft.' })
    await anthropic.messages.create(asking(profileFor.anthropic))
    expect((upstreamBody().messages as { content: unknown }[])[0]?.content).toEqual([
      withContext,
      { type: 'text', text: 'Summarise.' },
    ])
  })

  test('a document without a source is a 400 in Anthropic’s error shape', async () => {
    const h = await translationGateway(sim)
    const res = await h.call('/compat-a/v1/messages', {
      method: 'POST',
      headers: { 'anthropic-version': '2023-06-01' },
      json: {
        model: profileFor['openai-chat'],
        max_tokens: 100,
        messages: [{ role: 'user', content: [{ type: 'document', title: 'x' }] }],
      },
    })
    expect(res.status).toBe(400)
    expect(await res.json()).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: expect.stringContaining('messages.0.content.0.source') },
    })
    expect(sim.requests).toHaveLength(0)
  })
})

describe('a Responses client attaching input_file parts', () => {
  const files = [
    { type: 'input_text' as const, text: 'Summarise these.' },
    { type: 'input_file' as const, filename: 'report.pdf', file_data: pdfDataUrl },
    { type: 'input_file' as const, file_url: 'https://example.com/spec.pdf' },
  ]

  test('an Anthropic upstream gets document blocks: base64 for the data, url for the link', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor.anthropic, { text: 'Two documents.' })
    const response = await openai.responses.create({
      model: profileFor.anthropic,
      input: [{ role: 'user', content: files }],
    })
    expect(response.output_text).toBe('Two documents.')
    expect(upstreamBody().messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Summarise these.' },
          {
            type: 'document',
            title: 'report.pdf',
            source: { type: 'base64', media_type: 'application/pdf', data: pdfBase64 },
          },
          { type: 'document', source: { type: 'url', url: 'https://example.com/spec.pdf' } },
        ],
      },
    ])
  })

  test('a Chat upstream gets a file part with the same data URL', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: 'A report.' })
    await openai.responses.create({ model: profileFor['openai-chat'], input: [{ role: 'user', content: files }] })
    expect(chatMessages()[0]?.content).toEqual([
      { type: 'text', text: 'Summarise these.' },
      { type: 'file', file: { filename: 'report.pdf', file_data: pdfDataUrl } },
      { type: 'text', text: 'https://example.com/spec.pdf' },
    ])
  })

  test('a file_id is a 400 in OpenAI’s error shape naming the part, and no upstream is asked', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    const error = await openai.responses
      .create({
        model: profileFor['openai-chat'],
        input: [{ role: 'user', content: [files[0]!, { type: 'input_file', file_id: 'file-abc123' }] }],
      })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error', param: 'input[0].content[1].file_id' },
    })
    expect(sim.requests).toHaveLength(0)
  })
})

describe('a file neither PDF nor text (a Word file)', () => {
  const wordType = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
  const wordFile = {
    type: 'input_file' as const,
    filename: 'plan.docx',
    file_data: `data:${wordType};base64,${Buffer.from('PK\u0003\u0004 a tiny docx').toString('base64')}`,
  }
  const asking = (model: string) => ({
    model,
    input: [{ role: 'user' as const, content: [{ type: 'input_text' as const, text: 'Summarise.' }, wordFile] }],
  })

  test('passes over a Claude model ranked first: the Responses model gets the file as sent', async () => {
    const h = await rankedProGateway(sim, [
      { id: 'claude', kind: 'anthropic', quality: 95 },
      { id: 'gpt', kind: 'openai-responses', quality: 80 },
    ])
    const { openai } = sdkClients(h)
    sim.queue(upstreamModelFor['openai-responses'], { text: 'A plan.' })
    const { data, response } = await openai.responses.create(asking('svc-pro')).withResponse()
    expect(data.output_text).toBe('A plan.')
    expect(upstreamBody().input).toEqual([
      { role: 'user', content: [{ type: 'input_text', text: 'Summarise.' }, wordFile] },
    ])
    const record = await (await h.call(`/v1/usage/requests/${response.headers.get('x-request-id')}`)).json()
    expect(record.selected_model_id).toBe('gpt')
    expect(record.provider_ranks).toContainEqual(
      expect.objectContaining({
        model_id: 'claude',
        reason: `request has a file of type ${wordType}; this provider takes PDF and text files only`,
      }),
    )
  })

  test('a profile with no Responses model answers that no model can take it, and asks no upstream', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    for (const profile of [profileFor.anthropic, profileFor['openai-chat']]) {
      const error = await openai.responses.create(asking(profile)).catch((e: unknown) => e)
      // A 400 on the responses route: no resend can help, and Codex retries every 5xx.
      expect(error).toMatchObject({
        status: 400,
        error: { message: expect.stringContaining(`a file of type ${wordType}`) },
      })
    }
    expect(sim.requests).toHaveLength(0)
  })
})
