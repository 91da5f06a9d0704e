// A same-dialect request goes upstream nearly as the client wrote it (pass-through), and svc charges
// it at the model's list token prices plus web searches. What in such a body the provider bills
// above that (a priority tier, fast mode, US-only inference, code execution, image generation, a
// background run svc cannot meter…) is left out before it reaches the platform's account, and the
// request runs at list price: the client gets an answer, never a premium it was not charged for.
// Before, each of these reached the upstream as sent (the probe behind this file saw them there).
import { describe, expect, test } from 'bun:test'
import { remainingNanos, requestDetail } from './support/harness'
import {
  onlyUpstreamBody,
  profileFor,
  translationGateway,
  translationSimulator,
  upstreamModelFor,
} from './support/translation-gateway'

const sim = translationSimulator()

/** The simulator's models cost 1 USD/Mtok in and 2 out: 1,000 and 2,000 nanos a token. */
const usage = { input: 100, output: 20 }
const listPriceNanos = 100 * 1000 + 20 * 2000

type Json = Record<string, unknown>

const userTurn = { role: 'user', content: 'Hello there.' }

/** What the Anthropic upstream received for a Messages request with `fields`; the answer must be a 200. */
async function anthropicUpstreamBody(fields: Json, stream = false): Promise<Json> {
  const h = await translationGateway(sim)
  sim.setScenario(upstreamModelFor.anthropic, { text: 'Hi.', usage })
  const res = await h.call('/compat-a/v1/messages', {
    method: 'POST',
    headers: { 'anthropic-version': '2023-06-01' },
    json: { model: profileFor.anthropic, max_tokens: 256, messages: [userTurn], stream, ...fields },
  })
  expect(res.status).toBe(200)
  await res.text()
  return onlyUpstreamBody(sim)
}

/** What the Responses upstream received for a Responses request with `fields`; the answer must be a 200. */
async function responsesUpstreamBody(fields: Json, stream = false): Promise<Json> {
  const h = await translationGateway(sim)
  sim.setScenario(upstreamModelFor['openai-responses'], { text: 'Hi.', usage })
  const res = await h.call('/compat-b/v1/responses', {
    method: 'POST',
    json: { model: profileFor['openai-responses'], input: 'Hello there.', stream, ...fields },
  })
  expect(res.status).toBe(200)
  await res.text()
  return onlyUpstreamBody(sim)
}

describe('Anthropic pass-through: what Anthropic bills above list price is left out', () => {
  test.each([false, true])(
    'service_tier priority is left out, and the leg costs list price (stream %p)',
    async (stream) => {
      const h = await translationGateway(sim)
      const before = await remainingNanos(h)
      sim.setScenario(upstreamModelFor.anthropic, { text: 'Hi.', usage })
      const res = await h.call('/compat-a/v1/messages', {
        method: 'POST',
        headers: { 'anthropic-version': '2023-06-01' },
        json: { model: profileFor.anthropic, max_tokens: 256, messages: [userTurn], stream, service_tier: 'priority' },
      })
      expect(res.status).toBe(200)
      await res.text()
      expect(onlyUpstreamBody(sim)).not.toHaveProperty('service_tier')
      const detail = await requestDetail(h, res.headers.get('x-request-id')!)
      expect(detail.total_cost_nanos).toBe(listPriceNanos)
      expect(await remainingNanos(h)).toBe(before - listPriceNanos)
    },
  )

  test.each(['auto', 'standard_only'])('service_tier %s (no dearer than list price) goes as sent', async (tier) => {
    expect(await anthropicUpstreamBody({ service_tier: tier })).toMatchObject({ service_tier: tier })
  })

  test.each([false, true])(
    'speed fast (fast mode) is left out; the rest of the body goes (stream %p)',
    async (stream) => {
      const body = await anthropicUpstreamBody({ speed: 'fast', temperature: 0.5 }, stream)
      expect(body).not.toHaveProperty('speed')
      expect(body).toMatchObject({ temperature: 0.5, messages: [userTurn] })
    },
  )

  test('speed standard goes as sent', async () => {
    expect(await anthropicUpstreamBody({ speed: 'standard' })).toMatchObject({ speed: 'standard' })
  })

  test('inference_geo us (1.1 × on the models that take it) is left out; global goes as sent', async () => {
    expect(await anthropicUpstreamBody({ inference_geo: 'us' })).not.toHaveProperty('inference_geo')
    sim.reset()
    expect(await anthropicUpstreamBody({ inference_geo: 'global' })).toMatchObject({ inference_geo: 'global' })
  })

  test('code execution and its container are left out; web search, web fetch and client-run tools stay', async () => {
    const kept = [
      { name: 'get_weather', description: 'Weather.', input_schema: { type: 'object' } },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
      { type: 'web_fetch_20250910', name: 'web_fetch', max_uses: 2 },
      { type: 'bash_20250124', name: 'bash' },
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
    ]
    const body = await anthropicUpstreamBody({
      tools: [{ type: 'code_execution_20250825', name: 'code_execution' }, ...kept],
      container: 'container_123',
      tool_choice: { type: 'tool', name: 'code_execution', disable_parallel_tool_use: true },
    })
    expect(body.tools).toEqual(kept)
    expect(body).not.toHaveProperty('container')
    // A choice of the tool left out would be refused: the model chooses, in the client's parallel setting.
    expect(body.tool_choice).toEqual({ type: 'auto', disable_parallel_tool_use: true })
  })

  test('a server tool svc does not know is left out; a choice of a tool that stays is kept', async () => {
    const body = await anthropicUpstreamBody({
      tools: [
        { type: 'advisor_20260301', name: 'advisor' },
        { name: 'lookup', input_schema: { type: 'object' } },
      ],
      tool_choice: { type: 'tool', name: 'lookup' },
    })
    expect(body.tools).toEqual([{ name: 'lookup', input_schema: { type: 'object' } }])
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'lookup' })
  })

  test('a request offering only code execution goes without tools and without a tool choice', async () => {
    const body = await anthropicUpstreamBody({
      tools: [{ type: 'code_execution_20250825', name: 'code_execution' }],
      tool_choice: { type: 'any' },
    })
    expect(body).not.toHaveProperty('tools')
    expect(body).not.toHaveProperty('tool_choice')
  })

  test('compaction (a billed pass outside the reported usage) is left out; clearing edits stay', async () => {
    const clear = { type: 'clear_tool_uses_20250919', trigger: { type: 'input_tokens', value: 100_000 } }
    const compact = { type: 'compact_20260112', trigger: { type: 'input_tokens', value: 150_000 } }
    const body = await anthropicUpstreamBody({ context_management: { edits: [compact, clear] } })
    expect(body.context_management).toEqual({ edits: [clear] })
    sim.reset()
    expect(await anthropicUpstreamBody({ context_management: { edits: [compact] } })).not.toHaveProperty(
      'context_management',
    )
  })

  // The simulator's models are configured without a 1-hour cache-write price (hour-cache-pricing.test.ts has one that has).
  test('an hour-long cache mark goes as a 5-minute one, wherever it is; 5-minute marks go as sent', async () => {
    const hour = { type: 'ephemeral', ttl: '1h' }
    const fiveMinutes = { type: 'ephemeral', ttl: '5m' }
    const body = await anthropicUpstreamBody({
      system: [
        { type: 'text', text: 'Be brief.', cache_control: hour },
        { type: 'text', text: 'Be kind.', cache_control: fiveMinutes },
      ],
      tools: [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: hour }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Look it up.', cache_control: hour }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              content: [{ type: 'text', text: 'Found.', cache_control: hour }],
            },
          ],
        },
      ],
    })
    const ephemeral = { type: 'ephemeral' }
    expect(body.system).toEqual([
      { type: 'text', text: 'Be brief.', cache_control: ephemeral },
      { type: 'text', text: 'Be kind.', cache_control: fiveMinutes },
    ])
    expect(body.tools).toEqual([{ name: 'lookup', input_schema: { type: 'object' }, cache_control: ephemeral }])
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Look it up.', cache_control: ephemeral }] },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
      {
        role: 'user',
        content: [
          {
            type: 'tool_result',
            tool_use_id: 'toolu_1',
            content: [{ type: 'text', text: 'Found.', cache_control: ephemeral }],
          },
        ],
      },
    ])
  })
})

describe('Responses pass-through: what OpenAI bills above list price is left out', () => {
  test.each([false, true])(
    'service_tier priority is left out, and the leg costs list price (stream %p)',
    async (stream) => {
      const h = await translationGateway(sim)
      const before = await remainingNanos(h)
      sim.setScenario(upstreamModelFor['openai-responses'], { text: 'Hi.', usage })
      const res = await h.call('/compat-b/v1/responses', {
        method: 'POST',
        json: { model: profileFor['openai-responses'], input: 'Hello there.', stream, service_tier: 'priority' },
      })
      expect(res.status).toBe(200)
      await res.text()
      expect(onlyUpstreamBody(sim)).not.toHaveProperty('service_tier')
      const detail = await requestDetail(h, res.headers.get('x-request-id')!)
      expect(detail.total_cost_nanos).toBe(listPriceNanos)
      expect(await remainingNanos(h)).toBe(before - listPriceNanos)
    },
  )

  // flex is cheaper, but svc has no flex price: it would charge list price for a slower answer.
  test.each(['flex', 'scale', 'ultrafast'])('service_tier %s is left out', async (tier) => {
    expect(await responsesUpstreamBody({ service_tier: tier })).not.toHaveProperty('service_tier')
  })

  test.each(['auto', 'default'])('service_tier %s goes as sent', async (tier) => {
    expect(await responsesUpstreamBody({ service_tier: tier })).toMatchObject({ service_tier: tier })
  })

  test.each([false, true])(
    'background: true is left out, its options with it: the request runs in the foreground (stream %p)',
    async (stream) => {
      // openai 7.58's background_options: OpenAI refuses its 2h and 8h windows without background: true.
      const body = await responsesUpstreamBody(
        { background: true, background_options: { completion_window: '8h' }, store: true },
        stream,
      )
      expect(body).not.toHaveProperty('background')
      expect(body).not.toHaveProperty('background_options')
      expect(body).toMatchObject({ store: true })
    },
  )

  test('store and a 24-hour prompt cache (priced as without them) go as sent', async () => {
    expect(await responsesUpstreamBody({ store: false, prompt_cache_retention: '24h' })).toMatchObject({
      store: false,
      prompt_cache_retention: '24h',
    })
  })

  test('hosted tools other than web search are left out (a shell in any of OpenAI’s containers too); client-run tools and web search stay', async () => {
    const kept = [
      { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} } },
      { type: 'custom', name: 'apply_patch' },
      { type: 'web_search' },
      { type: 'local_shell' },
      { type: 'shell' },
    ]
    const body = await responsesUpstreamBody({
      tools: [
        { type: 'code_interpreter', container: { type: 'auto' } },
        { type: 'image_generation' },
        { type: 'file_search', vector_store_ids: ['vs_1'] },
        { type: 'shell', environment: { type: 'container_auto' } },
        { type: 'shell', environment: { type: 'container_reference', container_id: 'cntr_1' } },
        ...kept,
      ],
      tool_choice: { type: 'file_search' },
      include: ['code_interpreter_call.outputs', 'file_search_call.results', 'reasoning.encrypted_content'],
    })
    expect(body.tools).toEqual(kept)
    expect(body.tool_choice).toBe('auto')
    expect(body.include).toEqual(['reasoning.encrypted_content'])
  })

  test('allowed_tools keeps the tools that stay, and is auto when none stays; a function choice goes as sent', async () => {
    const fn = { type: 'function', name: 'f', parameters: { type: 'object', properties: {} } }
    const allowed = await responsesUpstreamBody({
      tools: [fn, { type: 'image_generation' }],
      tool_choice: {
        type: 'allowed_tools',
        mode: 'auto',
        tools: [{ type: 'function', name: 'f' }, { type: 'image_generation' }],
      },
    })
    expect(allowed.tools).toEqual([fn])
    expect(allowed.tool_choice).toEqual({
      type: 'allowed_tools',
      mode: 'auto',
      tools: [{ type: 'function', name: 'f' }],
    })
    sim.reset()
    const noneLeft = await responsesUpstreamBody({
      tools: [fn, { type: 'code_interpreter', container: { type: 'auto' } }],
      tool_choice: { type: 'allowed_tools', mode: 'auto', tools: [{ type: 'code_interpreter' }] },
    })
    expect(noneLeft.tools).toEqual([fn])
    expect(noneLeft.tool_choice).toBe('auto')
    sim.reset()
    const named = await responsesUpstreamBody({
      tools: [fn, { type: 'code_interpreter', container: { type: 'auto' } }],
      tool_choice: { type: 'function', name: 'f' },
    })
    expect(named.tool_choice).toEqual({ type: 'function', name: 'f' })
  })

  test('a request offering only hosted tools goes without tools and without a tool choice', async () => {
    const body = await responsesUpstreamBody({ tools: [{ type: 'image_generation' }], tool_choice: 'required' })
    expect(body).not.toHaveProperty('tools')
    expect(body).not.toHaveProperty('tool_choice')
  })
})
