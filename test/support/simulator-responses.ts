// OpenAI Responses as the simulator speaks it (wire-formats §2.5–2.7): the full item lifecycle
// (added → parts → deltas → done) with a `sequence_number` that rises by one per event, and a
// terminal response carrying the complete output and usage.

import { badFunctionName, insufficientQuota, openaiAuthorized, openaiErrorBody, refuse } from './simulator-openai'
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

/** Responses' input_tokens includes cache reads and writes; Anthropic's input_tokens does not (§4.7). */
function usageOf(plan: Plan) {
  const u = plan.usage
  const input = u.input + u.cacheRead + u.cacheWrite
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: u.cacheRead,
      ...(u.cacheWrite > 0 ? { cache_write_tokens: u.cacheWrite } : {}),
    },
    output_tokens: u.output,
    output_tokens_details: { reasoning_tokens: u.reasoning },
    total_tokens: input + u.output,
  }
}

/** Where the simulator's searches find their one page. */
const searchResultUrl = 'https://example.com/'

/** An answer after searches cites the page each found, over the whole text, as OpenAI's do. */
const citationsOf = (plan: Plan, text: string) =>
  plan.searches.map((search) => ({
    type: 'url_citation',
    start_index: 0,
    end_index: text.length,
    url: searchResultUrl,
    title: search.query,
  }))

const outputText = (plan: Plan, text: string) => ({
  type: 'output_text',
  text,
  annotations: citationsOf(plan, text),
  logprobs: [],
})

const sourcesWanted = (plan: Plan) =>
  Array.isArray(plan.request['include']) && plan.request['include'].includes('web_search_call.action.sources')

/**
 * OpenAI's hosted web search: one item a search, ahead of the answer. The action names its sources
 * only for a request that asked for them, and only once the search is done.
 */
const searchItem = (plan: Plan, search: Plan['searches'][number], status: string) => ({
  id: search.id,
  type: 'web_search_call',
  status,
  action: {
    type: 'search',
    query: search.query,
    ...(status === 'completed' && sourcesWanted(plan) ? { sources: [{ type: 'url', url: searchResultUrl }] } : {}),
  },
})

/** A finished reasoning item: its summary, and its blob where the request asked for it. */
const reasoningItem = (t: NonNullable<Plan['thinking']>) => ({
  id: t.itemId,
  type: 'reasoning',
  summary: [{ type: 'summary_text', text: t.text }],
  ...(t.encrypted !== undefined ? { encrypted_content: t.encrypted } : {}),
})

/** An item's status once done: the last one is incomplete when the output limit cut the answer. */
const doneStatus = (plan: Plan, itemId: string): Status => {
  const last = planTools(plan).at(-1)?.itemId ?? plan.text?.itemId
  return plan.stop === 'max_tokens' && itemId === last ? 'incomplete' : 'completed'
}

function completedItems(plan: Plan): unknown[] {
  const items: unknown[] = plan.searches.map((search) => searchItem(plan, search, 'completed'))
  if (plan.thinking) items.push(reasoningItem(plan.thinking))
  if (plan.text) {
    items.push({
      id: plan.text.itemId,
      type: 'message',
      status: doneStatus(plan, plan.text.itemId),
      role: 'assistant',
      content: [outputText(plan, plan.text.text)],
    })
  }
  if (plan.refusal) items.push(refusalMessage(plan.refusal, 'completed'))
  for (const t of planTools(plan)) {
    items.push({
      id: t.itemId,
      type: 'function_call',
      status: doneStatus(plan, t.itemId),
      arguments: t.args,
      call_id: t.id,
      name: t.name,
    })
  }
  return items
}

type Status = 'in_progress' | 'completed' | 'incomplete' | 'failed'

/** A message item whose one content part is the model's refusal. */
const refusalMessage = (r: NonNullable<Plan['refusal']>, status: string) => ({
  id: r.itemId,
  type: 'message',
  status,
  role: 'assistant',
  content: [{ type: 'refusal', refusal: r.text }],
})

function responseOf(plan: Plan, status: Status, output: unknown[]) {
  const req = plan.request
  const reasoning = (req['reasoning'] ?? {}) as { effort?: unknown; summary?: unknown }
  return {
    id: plan.id,
    object: 'response',
    created_at: plan.created,
    status,
    background: false,
    completed_at: status === 'in_progress' || status === 'failed' ? null : plan.created,
    error: status === 'failed' ? (plan.failure ?? null) : null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    instructions: req['instructions'] ?? null,
    max_output_tokens: req['max_output_tokens'] ?? null,
    model: plan.model,
    output,
    parallel_tool_calls: req['parallel_tool_calls'] ?? true,
    previous_response_id: null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    store: req['store'] ?? true,
    temperature: req['temperature'] ?? 1,
    text: req['text'] ?? { format: { type: 'text' } },
    tool_choice: req['tool_choice'] ?? 'auto',
    tools: req['tools'] ?? [],
    top_p: req['top_p'] ?? 1,
    truncation: 'disabled',
    usage: status === 'in_progress' || status === 'failed' ? null : (reportedUsage(plan, usageOf(plan)) ?? null),
    user: null,
    metadata: req['metadata'] ?? {},
  }
}

const terminalStatus = (plan: Plan): Status =>
  plan.failure ? 'failed' : plan.stop === 'max_tokens' ? 'incomplete' : 'completed'

function encodeFrames(plan: Plan): Frame[] {
  const frames: Frame[] = []
  let seq = 0
  const emit = (type: string, fields: Record<string, unknown>, paced = false) => {
    frames.push(sseFrame(type, { type, sequence_number: seq++, ...fields }, paced))
  }
  const start = responseOf(plan, 'in_progress', [])
  emit('response.created', { response: start })
  emit('response.in_progress', { response: start })
  if (plan.failure) {
    // Failed before any output: nothing but the failure follows the opening.
    emit('response.failed', { response: responseOf(plan, 'failed', []) })
    return frames
  }

  let outputIndex = 0
  for (const search of plan.searches) {
    const at = { item_id: search.id, output_index: outputIndex }
    emit('response.output_item.added', { output_index: outputIndex, item: searchItem(plan, search, 'in_progress') })
    emit('response.web_search_call.in_progress', at)
    emit('response.web_search_call.searching', at, true)
    emit('response.web_search_call.completed', at)
    emit('response.output_item.done', { output_index: outputIndex, item: searchItem(plan, search, 'completed') })
    outputIndex++
  }
  if (plan.thinking) {
    const t = plan.thinking
    const at = { item_id: t.itemId, output_index: outputIndex, summary_index: 0 }
    emit('response.output_item.added', {
      output_index: outputIndex,
      item: { id: t.itemId, type: 'reasoning', summary: [] },
    })
    emit('response.reasoning_summary_part.added', { ...at, part: { type: 'summary_text', text: '' } })
    for (const delta of t.deltas) emit('response.reasoning_summary_text.delta', { ...at, delta }, true)
    emit('response.reasoning_summary_text.done', { ...at, text: t.text })
    emit('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: t.text } })
    emit('response.output_item.done', { output_index: outputIndex, item: reasoningItem(t) })
    outputIndex++
  }
  if (plan.text) {
    const m = plan.text
    const at = { item_id: m.itemId, output_index: outputIndex, content_index: 0 }
    emit('response.output_item.added', {
      output_index: outputIndex,
      item: { id: m.itemId, type: 'message', status: 'in_progress', role: 'assistant', content: [] },
    })
    emit('response.content_part.added', { ...at, part: { ...outputText(plan, ''), annotations: [] } })
    for (const delta of m.deltas) emit('response.output_text.delta', { ...at, delta, logprobs: [] }, true)
    citationsOf(plan, m.text).forEach((annotation, annotation_index) => {
      emit('response.output_text.annotation.added', { ...at, annotation_index, annotation })
    })
    emit('response.output_text.done', { ...at, text: m.text, logprobs: [] })
    emit('response.content_part.done', { ...at, part: outputText(plan, m.text) })
    emit('response.output_item.done', {
      output_index: outputIndex,
      item: {
        id: m.itemId,
        type: 'message',
        status: doneStatus(plan, m.itemId),
        role: 'assistant',
        content: [outputText(plan, m.text)],
      },
    })
    outputIndex++
  }
  if (plan.refusal) {
    const r = plan.refusal
    const at = { item_id: r.itemId, output_index: outputIndex, content_index: 0 }
    emit('response.output_item.added', {
      output_index: outputIndex,
      item: { ...refusalMessage(r, 'in_progress'), content: [] },
    })
    emit('response.content_part.added', { ...at, part: { type: 'refusal', refusal: '' } })
    for (const delta of r.deltas) emit('response.refusal.delta', { ...at, delta }, true)
    emit('response.refusal.done', { ...at, refusal: r.text })
    emit('response.content_part.done', { ...at, part: { type: 'refusal', refusal: r.text } })
    emit('response.output_item.done', { output_index: outputIndex, item: refusalMessage(r, 'completed') })
    outputIndex++
  }
  // Each call's lifecycle: added, its argument deltas, done. Interleaved calls (as compatible
  // upstreams send them, §4.11) are all added first, their deltas then go in rounds of one each.
  const calls = planTools(plan).map((t, i) => {
    const index = outputIndex + i
    const at = { item_id: t.itemId, output_index: index }
    const item = (status: string, args: string) => ({
      id: t.itemId,
      type: 'function_call',
      status,
      arguments: args,
      call_id: t.id,
      name: t.name,
    })
    return {
      fragments: t.fragments,
      added: () => emit('response.output_item.added', { output_index: index, item: item('in_progress', '') }),
      delta: (delta: string) => emit('response.function_call_arguments.delta', { ...at, delta }, true),
      done: () => {
        emit('response.function_call_arguments.done', { ...at, name: t.name, arguments: t.args })
        emit('response.output_item.done', { output_index: index, item: item(doneStatus(plan, t.itemId), t.args) })
      },
    }
  })
  if (plan.interleaveTools) {
    for (const call of calls) call.added()
    const rounds = Math.max(...calls.map((call) => call.fragments.length))
    for (let r = 0; r < rounds; r++) {
      for (const call of calls) if (r < call.fragments.length) call.delta(call.fragments[r]!)
    }
    for (const call of calls) call.done()
  } else {
    for (const call of calls) {
      call.added()
      for (const delta of call.fragments) call.delta(delta)
      call.done()
    }
  }

  const status = terminalStatus(plan)
  emit(status === 'incomplete' ? 'response.incomplete' : 'response.completed', {
    response: responseOf(plan, status, completedItems(plan)),
  })
  return frames
}

/** What OpenAI's Responses refuses before generating (§2.2–2.4, §2.8): each a 400 invalid_request_error unless said. */
function validate(body: Record<string, unknown>): Refusal | undefined {
  if (typeof body['model'] !== 'string')
    return refuse("Missing required parameter: 'model'.", 'model', 'missing_required_parameter')
  // The simulator stores nothing, so every previous response is unknown: OpenAI's 404 for one (§2.8).
  const previous = body['previous_response_id']
  if (typeof previous === 'string')
    return refuse(
      `Previous response with id '${previous}' not found.`,
      'previous_response_id',
      'previous_response_not_found',
      404,
    )
  // Without stored state only a prompt template could stand in for the input.
  if (body['input'] === undefined && body['prompt'] === undefined)
    return refuse("Missing required parameter: 'input'.", 'input', 'missing_required_parameter')
  const max = body['max_output_tokens']
  if (typeof max === 'number' && max < 16)
    return refuse(
      `Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got ${max} instead.`,
      'max_output_tokens',
      'integer_below_min_value',
    )
  const tools = Array.isArray(body['tools']) ? body['tools'] : []
  for (const [i, tool] of tools.entries()) {
    if (!isObject(tool) || tool['type'] !== 'function') continue
    const bad = badFunctionName(tool['name'], `tools[${i}].name`)
    if (bad) return bad
  }
  // A function_call_output answers a function_call the same input carries (nothing is stored).
  const input = Array.isArray(body['input']) ? body['input'].filter(isObject) : []
  const calls = new Set(input.filter((item) => item['type'] === 'function_call').map((item) => item['call_id']))
  const orphan = input.find((item) => item['type'] === 'function_call_output' && !calls.has(item['call_id']))
  if (orphan)
    return refuse(`No tool call found for function call output with call_id ${String(orphan['call_id'])}.`, 'input')
  return undefined
}

export const responsesCodec: DialectCodec = {
  name: 'responses',
  requestIdHeader: 'x-request-id',
  authorized: openaiAuthorized,
  errorBody: openaiErrorBody,
  contextExceededBody: () => ({
    error: {
      message: 'Your input exceeds the context window of this model. Please adjust your input and try again.',
      type: 'invalid_request_error',
      param: 'input',
      code: 'context_length_exceeded',
    },
  }),
  validate,
  encodeBody: (plan) => responseOf(plan, terminalStatus(plan), plan.failure ? [] : completedItems(plan)),
  encodeFrames,
  // Top-level code/message/param (§2.6); openai-node throws on the `error` event name.
  errorFrame: (_plan, seq) =>
    sseFrame('error', {
      type: 'error',
      code: 'server_error',
      message: 'The server is overloaded.',
      param: null,
      sequence_number: seq,
    }),
  malformedFrame: () => ({
    text: 'event: response.output_text.delta\ndata: {"type":"response.output_text\n\n',
    paced: false,
  }),
  overloadedStatus: 503,
  noCredit: insufficientQuota,
}
