// Anthropic Messages as the simulator speaks it (wire-formats §1.6–1.8): one block open at a time,
// every frame named by an `event:` line, usage in Anthropic semantics (input excludes cache).

import { type DialectCodec, type Frame, type Plan, planTools, reportedUsage, sseFrame } from './simulator-plan'

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
}

const errorType = (status: number): string =>
  errorTypes[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error')

/** The cache writes by TTL, as Anthropic splits cache_creation_input_tokens. */
const cacheCreationOf = ({ usage: u }: Plan) => ({
  ephemeral_5m_input_tokens: u.cacheWrite - u.cacheWrite1h,
  ephemeral_1h_input_tokens: u.cacheWrite1h,
})

function usageOf(plan: Plan, outputTokens: number) {
  const u = plan.usage
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: u.cacheWrite,
    cache_read_input_tokens: u.cacheRead,
    cache_creation: cacheCreationOf(plan),
    output_tokens: outputTokens,
    service_tier: 'standard',
    ...(plan.reasoningGiven ? { output_tokens_details: { thinking_tokens: u.reasoning } } : {}),
  }
}

/** Anthropic's web search server tool: the call, then its result, ahead of the answer. */
const searchBlocks = (search: Plan['searches'][number]) => [
  { type: 'server_tool_use', id: search.id, name: 'web_search', input: { query: search.query } },
  {
    type: 'web_search_tool_result',
    tool_use_id: search.id,
    content: [
      {
        type: 'web_search_result',
        url: 'https://example.com/',
        title: search.query,
        encrypted_content: 'c2ltLXJlc3VsdA==',
        page_age: null,
      },
    ],
  },
]

/**
 * An answer after searches cites the page each found, as Anthropic does: on the text block, with
 * a quote of the page (`cited_text`) and a sealed pointer into it that only Anthropic reads.
 */
const citationsOf = (plan: Plan) =>
  plan.searches.map((search) => ({
    type: 'web_search_result_location',
    url: 'https://example.com/',
    title: search.query,
    cited_text: `What the page says about ${search.query}.`,
    encrypted_index: 'c2ltLWluZGV4',
  }))

/** Final usage only: server tool counts, where any ran. */
const serverToolUse = (plan: Plan) =>
  plan.usage.webSearches > 0 ? { server_tool_use: { web_search_requests: plan.usage.webSearches } } : {}

function contentOf(plan: Plan) {
  const content: unknown[] = plan.searches.flatMap(searchBlocks)
  if (plan.thinking)
    content.push({ type: 'thinking', thinking: plan.thinking.text, signature: plan.thinking.signature })
  if (plan.text) {
    const citations = citationsOf(plan)
    content.push({ type: 'text', text: plan.text.text, citations: citations.length > 0 ? citations : null })
  }
  for (const tool of planTools(plan)) {
    content.push({ type: 'tool_use', id: tool.id, name: tool.name, input: JSON.parse(tool.args) })
  }
  return content
}

const message = (
  plan: Plan,
  content: unknown[],
  stopReason: string | null,
  stopSequence: string | null,
  out: number,
) => {
  const usage = reportedUsage(plan, { ...usageOf(plan, out), ...(stopReason === null ? {} : serverToolUse(plan)) })
  return {
    id: plan.id,
    type: 'message',
    role: 'assistant',
    model: plan.model,
    content,
    stop_reason: stopReason,
    stop_sequence: stopSequence,
    ...(usage ? { usage } : {}),
  }
}

function encodeFrames(plan: Plan): Frame[] {
  const frames: Frame[] = [
    // output_tokens 1 at start, like Anthropic; the final count arrives in message_delta.
    sseFrame('message_start', { type: 'message_start', message: message(plan, [], null, null, 1) }),
  ]
  if (plan.pings !== false) frames.push(sseFrame('ping', { type: 'ping' }))

  let index = 0
  const block = (contentBlock: unknown, deltas: unknown[]) => {
    frames.push(sseFrame('content_block_start', { type: 'content_block_start', index, content_block: contentBlock }))
    for (const delta of deltas) {
      frames.push(sseFrame('content_block_delta', { type: 'content_block_delta', index, delta }, true))
    }
    frames.push(sseFrame('content_block_stop', { type: 'content_block_stop', index }))
    index++
  }

  for (const search of plan.searches) {
    const [call, result] = searchBlocks(search)
    block({ ...call, input: {} }, [{ type: 'input_json_delta', partial_json: JSON.stringify(call!.input) }])
    block(result, [])
  }
  if (plan.thinking) {
    const t = plan.thinking
    block({ type: 'thinking', thinking: '', signature: '' }, [
      ...t.deltas.map((thinking) => ({ type: 'thinking_delta', thinking })),
      // The signature goes out once, just before the block closes.
      { type: 'signature_delta', signature: t.signature },
    ])
  }
  if (plan.text)
    block({ type: 'text', text: '' }, [
      // A cited block's citations come first, before its text.
      ...citationsOf(plan).map((citation) => ({ type: 'citations_delta', citation })),
      ...plan.text.deltas.map((text) => ({ type: 'text_delta', text })),
    ])
  for (const tool of planTools(plan)) {
    // Input starts as {} and arrives only through input_json_delta; real streams lead with "".
    block({ type: 'tool_use', id: tool.id, name: tool.name, input: {} }, [
      { type: 'input_json_delta', partial_json: '' },
      ...tool.fragments.map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    ])
  }

  const u = usageOf(plan, plan.usage.output)
  // Cumulative, and carrying the input counts too, as Anthropic now sends them.
  const finalUsage =
    plan.usageReport === 'final-omitted'
      ? undefined
      : reportedUsage(plan, {
          input_tokens: u.input_tokens,
          cache_creation_input_tokens: u.cache_creation_input_tokens,
          cache_read_input_tokens: u.cache_read_input_tokens,
          // Repeated where an hour's writes make the split worth a meter's reading again.
          ...(plan.usage.cacheWrite1h > 0 ? { cache_creation: u.cache_creation } : {}),
          output_tokens: u.output_tokens,
          ...serverToolUse(plan),
        })
  frames.push(
    sseFrame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: plan.stop, stop_sequence: plan.stopSequence },
      ...(finalUsage ? { usage: finalUsage } : {}),
    }),
    sseFrame('message_stop', { type: 'message_stop' }),
  )
  return frames
}

function validate(body: Record<string, unknown>): string | undefined {
  if (typeof body['model'] !== 'string') return 'model: Field required'
  if (typeof body['max_tokens'] !== 'number') return 'max_tokens: Field required'
  if (!Array.isArray(body['messages'])) return 'messages: Field required'
  return undefined
}

export const anthropicCodec: DialectCodec = {
  name: 'anthropic',
  requestIdHeader: 'request-id',
  // The SDK sends `x-api-key`, or `Authorization: Bearer` (newer SDKs, OAuth tokens): accept both.
  authorized: (headers, apiKey) =>
    headers.get('x-api-key') === apiKey || headers.get('authorization') === `Bearer ${apiKey}`,
  errorBody: (status, message, requestId) => ({
    type: 'error',
    error: { type: errorType(status), message },
    request_id: requestId,
  }),
  contextExceededBody: (tokens, window, requestId) => ({
    type: 'error',
    error: { type: 'invalid_request_error', message: `prompt is too long: ${tokens} tokens > ${window} maximum` },
    request_id: requestId,
  }),
  validate,
  encodeBody: (plan) => message(plan, contentOf(plan), plan.stop, plan.stopSequence, plan.usage.output),
  encodeFrames,
  errorFrame: () => sseFrame('error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
  malformedFrame: () => ({
    text: 'event: content_block_delta\ndata: {"type":"content_block_delta",\n\n',
    paced: false,
  }),
  overloadedStatus: 529,
}
