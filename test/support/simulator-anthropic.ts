// Anthropic Messages as the simulator speaks it (wire-formats §1.6–1.8): one block open at a time,
// every frame named by an `event:` line, usage in Anthropic semantics (input excludes cache).

import {
  type DialectCodec,
  type Frame,
  type Plan,
  planTools,
  type Refusal,
  reportedUsage,
  sseFrame,
} from './simulator-plan'
import { isObject } from './is-object'

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
        encrypted_content: search.sealedPage,
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
  if (plan.redactedThinking !== undefined) content.push({ type: 'redacted_thinking', data: plan.redactedThinking })
  if (plan.text) {
    const citations = citationsOf(plan)
    // Anthropic's JSON gives an uncited block no citations member (the Vercel AI SDK refuses a null there).
    content.push(
      citations.length > 0 ? { type: 'text', text: plan.text.text, citations } : { type: 'text', text: plan.text.text },
    )
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
  // Anthropic's one ping comes right after the first content_block_start (golden transcript §5.1).
  const ping = () => {
    if (plan.pings !== false) frames.push(sseFrame('ping', { type: 'ping' }))
  }

  let index = 0
  const block = (contentBlock: unknown, deltas: unknown[]) => {
    frames.push(sseFrame('content_block_start', { type: 'content_block_start', index, content_block: contentBlock }))
    if (index === 0) ping()
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
  // Complete at its start: no deltas carry any of it (wire-formats §1.7).
  if (plan.redactedThinking !== undefined) block({ type: 'redacted_thinking', data: plan.redactedThinking }, [])
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

  // An answer of no blocks at all has its ping before message_delta.
  if (index === 0) ping()

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

type Block = Record<string, unknown>

/** A message's content as blocks: a string is one text block (§1.2). */
const blocksOf = (content: unknown): Block[] =>
  typeof content === 'string'
    ? [{ type: 'text', text: content }]
    : Array.isArray(content)
      ? content.filter(isObject)
      : []

/** Anthropic merges consecutive turns of one role before checking them (§1.2): so does the simulator. */
function turnsOf(messages: unknown[]): { role: unknown; blocks: Block[]; index: number }[] {
  const turns: { role: unknown; blocks: Block[]; index: number }[] = []
  messages.forEach((m, index) => {
    if (!isObject(m)) return
    const last = turns.at(-1)
    if (last && last.role === m['role']) last.blocks.push(...blocksOf(m['content']))
    else turns.push({ role: m['role'], blocks: blocksOf(m['content']), index })
  })
  return turns
}

/** Anthropic's pattern for a client tool id (§1.3): `tool_use.id` and `tool_result.tool_use_id`. */
const toolIdPattern = /^[a-zA-Z0-9_-]+$/

/** What thinking forbids, for a request that has it on (§1.2, extended-thinking docs). */
function thinkingRefusal(body: Record<string, unknown>, headers: Headers): string | undefined {
  const thinking = body['thinking']
  if (!isObject(thinking) || (thinking['type'] !== 'enabled' && thinking['type'] !== 'adaptive')) return undefined
  if (thinking['type'] === 'enabled') {
    const budget = thinking['budget_tokens']
    if (typeof budget === 'number' && budget < 1024)
      return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024'
    // Interleaved thinking lets the budget span the whole turn, past max_tokens (extended-thinking docs).
    const interleaved = (headers.get('anthropic-beta') ?? '').includes('interleaved-thinking')
    if (typeof budget === 'number' && budget >= (body['max_tokens'] as number) && !interleaved)
      return '`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size'
  }
  const temperature = body['temperature']
  if (temperature !== undefined && temperature !== null && temperature !== 1)
    return '`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility'
  if (body['top_k'] !== undefined && body['top_k'] !== null)
    return '`top_k` must be unset when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility'
  const choice = body['tool_choice']
  if (isObject(choice) && (choice['type'] === 'any' || choice['type'] === 'tool'))
    return 'Thinking may not be enabled when tool_choice forces tool use.'
  // "Prefilling is only available for non-extended thinking modes" (Anthropic's prefill guide);
  // the words are the simulator's own.
  const messages = Array.isArray(body['messages']) ? body['messages'] : []
  const last = messages.at(-1)
  // A turn paused in the server tools' loop, sent back to go on, is no prefill (Anthropic's pause_turn docs).
  const paused = isObject(last) && blocksOf(last['content']).some((block) => block['type'] === 'server_tool_use')
  if (isObject(last) && last['role'] === 'assistant' && !paused)
    return 'messages: a final `assistant` message (a prefill) is not supported when thinking is enabled'
  return undefined
}

/** The content rules Anthropic applies to history (§1.3). */
function messagesRefusal(messages: unknown[], hasTools: boolean): string | undefined {
  for (const [i, m] of messages.entries()) {
    if (!isObject(m)) continue
    const content = m['content']
    const last = i === messages.length - 1 && m['role'] === 'assistant'
    // Only the final assistant turn (a prefill) may be empty.
    if (!last && (content === '' || (Array.isArray(content) && content.length === 0)))
      return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`
    for (const [j, block] of blocksOf(content).entries()) {
      const type = block['type']
      if (type === 'text' && block['text'] === '' && Array.isArray(content))
        return `messages.${i}.content.${j}.text: text content blocks must be non-empty`
      if ((type === 'tool_use' || type === 'tool_result') && !hasTools)
        return 'Requests which include `tool_use` or `tool_result` blocks must define tools.'
      if (type === 'tool_use' && typeof block['id'] === 'string' && !toolIdPattern.test(block['id']))
        return `messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`
      if (
        type === 'tool_result' &&
        typeof block['tool_use_id'] === 'string' &&
        !toolIdPattern.test(block['tool_use_id'])
      )
        return `messages.${i}.content.${j}.tool_result.tool_use_id: String should match pattern '^[a-zA-Z0-9_-]+$'`
    }
  }
  // Each assistant turn's tool_use blocks are answered by tool_result blocks leading the next user
  // turn, and each tool_result answers a tool_use of the turn before it (§1.3).
  const turns = turnsOf(messages)
  for (const [t, turn] of turns.entries()) {
    const previous = turns[t - 1]
    const asked = new Set(
      previous?.role === 'assistant' ? previous.blocks.filter((b) => b['type'] === 'tool_use').map((b) => b['id']) : [],
    )
    if (turn.role === 'user') {
      const results = turn.blocks.filter((b) => b['type'] === 'tool_result').map((b) => b['tool_use_id'])
      const stray = results.filter((id) => !asked.has(id))
      if (stray.length > 0)
        return `messages.${turn.index}.content.0: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${stray.join(', ')}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
    }
    if (asked.size === 0) continue
    const leading = new Set<unknown>()
    if (turn.role === 'user') {
      for (const b of turn.blocks) {
        if (b['type'] !== 'tool_result') break
        leading.add(b['tool_use_id'])
      }
    }
    const unanswered = [...asked].filter((id) => !leading.has(id))
    if (unanswered.length > 0)
      return `messages.${turn.index}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
  }
  return undefined
}

/** What Anthropic refuses before generating (§1.1–1.4); each a 400 invalid_request_error. */
function validate(body: Record<string, unknown>, headers: Headers): Refusal | undefined {
  const refusal = (message: string | undefined) => (message === undefined ? undefined : { message })
  // Every Anthropic API call names its version (§1.1).
  if (!headers.has('anthropic-version')) return refusal('anthropic-version: header is required')
  if (typeof body['model'] !== 'string') return refusal('model: Field required')
  if (typeof body['max_tokens'] !== 'number') return refusal('max_tokens: Field required')
  if (!Array.isArray(body['messages'])) return refusal('messages: Field required')
  const system = body['system']
  if (Array.isArray(system) && system.some((b) => isObject(b) && b['type'] === 'text' && b['text'] === ''))
    return refusal('system: text content blocks must be non-empty')
  const tools = body['tools']
  const hasTools = Array.isArray(tools) && tools.length > 0
  // No check of `temperature` with `top_p` (refused together from Claude 4.5 on): the simulator's
  // models have no generation.
  return refusal(thinkingRefusal(body, headers) ?? messagesRefusal(body['messages'], hasTools))
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
  // What Anthropic's API answers a key whose organization has no credit left: a 400, not a 402.
  noCredit: (requestId) => ({
    status: 400,
    body: {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message:
          'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.',
      },
      request_id: requestId,
    },
  }),
}
