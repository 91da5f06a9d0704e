// OpenAI Chat Completions as the simulator speaks it (wire-formats §3.2–3.4): unnamed `data:`
// chunks, DeepSeek-style `reasoning_content`, a `choices: []` usage chunk after the finish chunk
// when `stream_options.include_usage` is set, then `data: [DONE]`.

import {
  type DialectCodec,
  type Frame,
  type Plan,
  type PlanTool,
  planTools,
  type Refusal,
  reportedUsage,
  sseFrame,
} from './simulator-plan'
import { badFunctionName, insufficientQuota, openaiAuthorized, openaiErrorBody, refuse } from './simulator-openai'
import { isObject } from './is-object'

const finishReason = (plan: Plan): string =>
  plan.stop === 'tool_use' ? 'tool_calls' : plan.stop === 'max_tokens' ? 'length' : 'stop'

/** Chat's prompt_tokens includes cache reads and writes; Anthropic's input_tokens does not (§4.7). */
function usageOf(plan: Plan) {
  const u = plan.usage
  const prompt = u.input + u.cacheRead + u.cacheWrite
  return {
    prompt_tokens: prompt,
    completion_tokens: u.output,
    total_tokens: prompt + u.output,
    prompt_tokens_details: {
      cached_tokens: u.cacheRead,
      audio_tokens: 0,
      ...(u.cacheWrite > 0 ? { cache_write_tokens: u.cacheWrite } : {}),
    },
    completion_tokens_details: {
      reasoning_tokens: u.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
}

const toolCallHead = (tool: PlanTool, index: number) => ({
  index,
  id: tool.id,
  type: 'function',
  function: { name: tool.name, arguments: '' },
})

/**
 * The calls' chunks after the first one's head, which may ride on the role chunk: each call whole
 * in turn, or (interleaved) in rounds of one fragment of each call.
 */
function toolCallDeltas(plan: Plan, headSent: boolean): { delta: unknown; paced: boolean }[] {
  const tools = planTools(plan)
  const indexOf = (i: number) => (plan.toolsAtIndexZero ? 0 : i)
  const head = (i: number) => ({ delta: { tool_calls: [toolCallHead(tools[i]!, indexOf(i))] }, paced: false })
  const fragment = (i: number, arguments_: string) => ({
    delta: { tool_calls: [{ index: indexOf(i), function: { arguments: arguments_ } }] },
    paced: true,
  })
  const out: { delta: unknown; paced: boolean }[] = []
  if (!plan.interleaveTools) {
    tools.forEach((tool, i) => {
      if (i > 0 || !headSent) out.push(head(i))
      for (const arguments_ of tool.fragments) out.push(fragment(i, arguments_))
    })
    return out
  }
  const rounds = Math.max(...tools.map((tool) => tool.fragments.length))
  for (let r = 0; r < rounds; r++) {
    tools.forEach((tool, i) => {
      if (r === 0 && (i > 0 || !headSent)) out.push(head(i))
      const arguments_ = tool.fragments[r]
      if (arguments_ !== undefined) out.push(fragment(i, arguments_))
    })
  }
  return out
}

function encodeFrames(plan: Plan): Frame[] {
  const frames: Frame[] = []
  // Chunks carry `usage: null` only when the client asked for the usage chunk, as OpenAI does.
  const chunk = (delta: unknown, finish: string | null, paced = false) =>
    sseFrame(
      null,
      {
        id: plan.id,
        object: 'chat.completion.chunk',
        created: plan.created,
        model: plan.model,
        system_fingerprint: 'fp_sim',
        choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
        ...(plan.includeUsage ? { usage: null } : {}),
      },
      paced,
    )
  const comment: Frame = { text: ': OPENROUTER PROCESSING\n\n', paced: false }

  if (plan.pings === true) frames.push(comment)
  // The role rides on the first delta; a tool-only turn opens its first call in the same chunk.
  const toolOpensFirst = !plan.thinking && !plan.text && !plan.refusal && plan.tool
  if (plan.thinking) frames.push(chunk({ role: 'assistant', content: null, reasoning_content: '' }, null))
  // A refusal's turn holds `content` at null and opens its own key empty, as OpenAI's do.
  else if (plan.refusal && !plan.text) frames.push(chunk({ role: 'assistant', content: null, refusal: '' }, null))
  else if (toolOpensFirst)
    frames.push(
      chunk({ role: 'assistant', content: null, tool_calls: [toolCallHead(plan.tool!, 0)], refusal: null }, null),
    )
  else frames.push(chunk({ role: 'assistant', content: '', refusal: null }, null))

  for (const d of plan.thinking?.deltas ?? []) frames.push(chunk({ reasoning_content: d }, null, true))
  for (const d of plan.text?.deltas ?? []) frames.push(chunk({ content: d }, null, true))
  for (const d of plan.refusal?.deltas ?? []) frames.push(chunk({ refusal: d }, null, true))
  for (const { delta, paced } of toolCallDeltas(plan, Boolean(toolOpensFirst))) frames.push(chunk(delta, null, paced))
  if (plan.pings === true) frames.push(comment)
  frames.push(chunk({}, finishReason(plan)))
  const usage = reportedUsage(plan, usageOf(plan))
  if (plan.includeUsage && usage) {
    frames.push(
      sseFrame(null, {
        id: plan.id,
        object: 'chat.completion.chunk',
        created: plan.created,
        model: plan.model,
        system_fingerprint: 'fp_sim',
        choices: [],
        usage,
      }),
    )
  }
  frames.push({ text: 'data: [DONE]\n\n', paced: false })
  return frames
}

function encodeBody(plan: Plan) {
  const tools = planTools(plan)
  const usage = reportedUsage(plan, usageOf(plan))
  return {
    id: plan.id,
    object: 'chat.completion',
    created: plan.created,
    model: plan.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: plan.text?.text ?? null,
          refusal: plan.refusal?.text ?? null,
          annotations: [],
          ...(plan.thinking ? { reasoning_content: plan.thinking.text } : {}),
          ...(tools.length > 0
            ? {
                tool_calls: tools.map((tool) => ({
                  id: tool.id,
                  type: 'function',
                  function: { name: tool.name, arguments: tool.args },
                })),
              }
            : {}),
        },
        logprobs: null,
        finish_reason: finishReason(plan),
      },
    ],
    ...(usage ? { usage } : {}),
    service_tier: 'default',
    system_fingerprint: 'fp_sim',
  }
}

/**
 * OpenAI's tool-call pairing (§3.1): a `tool` message answers a call of the assistant message its
 * run of tool messages follows, and an assistant's calls are each answered before the next turn.
 */
function toolMessagesRefusal(messages: unknown[]): Refusal | undefined {
  let open: Set<unknown> | undefined
  let asker = -1
  for (const [i, m] of messages.entries()) {
    if (!isObject(m)) continue
    if (m['role'] === 'tool') {
      if (!open?.has(m['tool_call_id']))
        return refuse(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${i}].role`,
        )
      open.delete(m['tool_call_id'])
      continue
    }
    if (open && open.size > 0)
      return refuse(
        `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...open].join(', ')}`,
        `messages.[${asker}].role`,
      )
    const calls = m['role'] === 'assistant' && Array.isArray(m['tool_calls']) ? m['tool_calls'] : []
    open = calls.length > 0 ? new Set(calls.map((c) => (isObject(c) ? c['id'] : undefined))) : undefined
    asker = i
  }
  return undefined
}

/** What OpenAI's Chat Completions refuses before generating (§3.1, §3.4): each a 400 invalid_request_error. */
function validate(body: Record<string, unknown>): Refusal | undefined {
  if (typeof body['model'] !== 'string')
    return refuse("Missing required parameter: 'model'.", 'model', 'missing_required_parameter')
  if (!Array.isArray(body['messages']))
    return refuse("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter')
  // stream_options belongs to streamed requests only.
  if (body['stream_options'] !== undefined && body['stream_options'] !== null && body['stream'] !== true)
    return refuse("The 'stream_options' parameter is only allowed when 'stream' is enabled.", 'stream_options')
  // `stop`: a string or at most 4 of them.
  const stop = body['stop']
  if (Array.isArray(stop) && stop.length > 4)
    return refuse(
      `Invalid 'stop': array too long. Expected an array with maximum length 4, but got an array with length ${stop.length} instead.`,
      'stop',
      'array_above_max_length',
    )
  const tools = Array.isArray(body['tools']) ? body['tools'] : []
  // parallel_tool_calls says how to call tools: there must be some.
  if (body['parallel_tool_calls'] !== undefined && body['parallel_tool_calls'] !== null && tools.length === 0)
    return refuse(
      "Invalid value for 'parallel_tool_calls': 'parallel_tool_calls' is only allowed when 'tools' are specified.",
      'parallel_tool_calls',
    )
  for (const [i, tool] of tools.entries()) {
    const fn = isObject(tool) && isObject(tool['function']) ? tool['function'] : undefined
    const bad = badFunctionName(fn?.['name'], `tools[${i}].function.name`)
    if (bad) return bad
  }
  return toolMessagesRefusal(body['messages'])
}

export const chatCodec: DialectCodec = {
  name: 'chat',
  requestIdHeader: 'x-request-id',
  authorized: openaiAuthorized,
  errorBody: openaiErrorBody,
  contextExceededBody: (tokens, window) => ({
    error: {
      message: `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  }),
  validate,
  encodeBody,
  encodeFrames,
  // OpenAI's in-band error: a chunk whose only key is `error` (openai-node throws on it).
  errorFrame: () =>
    sseFrame(null, {
      error: { message: 'The server is overloaded.', type: 'server_error', param: null, code: 'server_error' },
    }),
  malformedFrame: () => ({ text: 'data: {"id":"chatcmpl-sim-broken","choices":[{\n\n', paced: false }),
  overloadedStatus: 503,
  noCredit: insufficientQuota,
}
