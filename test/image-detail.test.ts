// End to end: the detail a Responses client asks an image to be seen at (input_image.detail)
// reaches a Chat upstream as image_url.detail, rather than being dropped; a detail OpenAI does not
// know is a 400 in OpenAI's error shape.
import { describe, expect, test } from 'bun:test'
import type { ResponseInputImage } from 'openai/resources/responses/responses'
import { sdkClients } from './support/harness'
import { profileFor, translationGateway, translationSimulator, upstreamModelFor } from './support/translation-gateway'

const sim = translationSimulator()

const pngDataUrl = 'data:image/png;base64,iVBORw0KGgo='
const chartUrl = 'https://example.com/chart.png'

describe('a Responses client choosing how closely images are seen', () => {
  test('a Chat upstream gets each detail, original as high, and none where none was chosen', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    sim.queue(upstreamModelFor['openai-chat'], { text: 'A cat and a chart.' })
    const response = await openai.responses.create({
      model: profileFor['openai-chat'],
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'Describe both.' },
            { type: 'input_image', image_url: pngDataUrl, detail: 'low' },
            { type: 'input_image', image_url: chartUrl, detail: 'original' },
            // The SDK's type requires a detail; clients such as Codex leave it out.
            { type: 'input_image', image_url: chartUrl } as ResponseInputImage,
          ],
        },
      ],
    })
    expect(response.output_text).toBe('A cat and a chart.')
    expect(sim.requests).toHaveLength(1)
    expect((sim.requests[0]!.body as { messages: unknown }).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Describe both.' },
          { type: 'image_url', image_url: { url: pngDataUrl, detail: 'low' } },
          { type: 'image_url', image_url: { url: chartUrl, detail: 'high' } },
          { type: 'image_url', image_url: { url: chartUrl } },
        ],
      },
    ])
  })

  test('an unknown detail is a 400 in OpenAI’s error shape naming the part, and no upstream is asked', async () => {
    const { openai } = sdkClients(await translationGateway(sim))
    const error = await openai.responses
      .create({
        model: profileFor['openai-chat'],
        input: [
          {
            role: 'user',
            content: [{ type: 'input_image', image_url: chartUrl, detail: 'max' } as unknown as ResponseInputImage],
          },
        ],
      })
      .catch((e: unknown) => e)
    expect(error).toMatchObject({
      status: 400,
      error: { type: 'invalid_request_error', param: 'input[0].content[0].detail' },
    })
    expect(sim.requests).toHaveLength(0)
  })
})
