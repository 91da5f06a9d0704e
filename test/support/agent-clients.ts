// The two agents of the conversation suites: Claude Code's way over the Anthropic SDK and Codex's
// (store false) over the OpenAI SDK. Each carries its history on from the answer its SDK
// assembled, and checks that answer against what the model that served the turn said. In
// conversation-properties.test.ts the client picks each turn's profile (and so its upstream); in
// fallback-conversations.test.ts it always asks svc-pro, names its session in its agent's own
// header, and the router picks.
//
// Sources, cited by key below:
//   [svc]     README, Model routes: the messages route's `model` is the concrete upstream model
//             that answered, the responses route's the profile sent
import type Anthropic from '@anthropic-ai/sdk'
import type OpenAI from 'openai'
import { toResponseInputItems } from 'openai/lib/responses/ResponseInputItems'
import { messageProblems, responseProblems, same } from './conversation-answers'
import type { ConversationPlan, Turn } from './conversation-plans'
import type { sdkClients } from './harness'

type Json = Record<string, unknown>
type Clients = ReturnType<typeof sdkClients>

/**
 * What the client got for a turn: an answer (kept for `accept`) and the request id svc gave it, or
 * the status of the error its SDK threw.
 */
export type Sent =
  | { answered: true; requestId: string }
  | { answered: false; status: number | undefined; message: string }

export interface AgentClient {
  /** The next request: the history so far, asked (streamed, thinking) as `turn` asks. */
  request(turn: Turn): Json
  send(turn: Turn, body: Json): Promise<Sent>
  /**
   * The problems of the answer `send` got, against `turn` as the model of `upstreamModel` gives
   * it; then the history goes on with it: the answer, the tools' results, the user's next words.
   */
  accept(turn: Turn, upstreamModel: string): string[]
}

/** How a client reaches svc: its SDKs, the profile it asks for a turn, and the header its agent names the session in. */
export interface Reach {
  clients: Clients
  profileOf: (turn: Turn) => string
  session?: { header: string; id: string }
}

const thinkingBudget = 2048

const sessionHeaders = (reach: Reach): Record<string, string> =>
  reach.session ? { [reach.session.header]: reach.session.id } : {}

/** What an SDK threw, as the turn's outcome: an API error's status, anything else as a message. */
function thrown(err: unknown): Sent {
  const status = (err as { status?: unknown }).status
  return {
    answered: false,
    status: typeof status === 'number' ? status : undefined,
    message: err instanceof Error ? err.message : String(err),
  }
}

/** Claude Code's way: the SDK's content back as the assistant turn, then a tool_result per tool_use. */
export function messagesClient(plan: Pick<ConversationPlan, 'first' | 'tools'>, reach: Reach): AgentClient {
  const messages: Json[] = [{ role: 'user', content: plan.first }]
  const tools = plan.tools.map((tool) => ({
    name: tool.name,
    description: 'A tool.',
    input_schema: { type: 'object' },
  }))
  const headers = sessionHeaders(reach)
  let answer: Anthropic.Message | undefined
  return {
    request: (turn) => ({
      model: reach.profileOf(turn),
      max_tokens: 8192,
      messages: structuredClone(messages),
      ...(tools.length > 0 ? { tools } : {}),
      ...(turn.thinking
        ? { thinking: turn.adaptive ? { type: 'adaptive' } : { type: 'enabled', budget_tokens: thinkingBudget } }
        : {}),
      stream: turn.stream,
    }),
    async send(turn, body) {
      const params = body as unknown as Anthropic.MessageCreateParamsNonStreaming
      const anthropic = reach.clients.anthropic
      try {
        answer = turn.stream
          ? await anthropic.messages.stream(params, { headers }).finalMessage()
          : await anthropic.messages.create(params, { headers })
        return { answered: true, requestId: answer.id.replace(/^msg_/, '') }
      } catch (err) {
        return thrown(err)
      }
    },
    accept(turn, upstreamModel) {
      const message = answer!
      const problems = messageProblems(message, turn)
      same(problems, 'model, the upstream model that answered [svc]', message.model, upstreamModel)
      messages.push({ role: 'assistant', content: message.content })
      const uses = message.content.filter((b) => b.type === 'tool_use')
      const results = uses.map((use, i) => ({
        type: 'tool_result',
        tool_use_id: use.id,
        content: turn.calls[i]?.result ?? 'done',
        ...(turn.calls[i]?.isError ? { is_error: true } : {}),
      }))
      const after = turn.next === undefined ? [] : [{ type: 'text', text: turn.next }]
      messages.push({ role: 'user', content: results.length > 0 ? [...results, ...after] : (turn.next ?? 'go on') })
      return problems
    },
  }
}

/** Codex's way, store false: every output item back (as the SDK normalises them), then an output per call. */
export function responsesClient(plan: Pick<ConversationPlan, 'first' | 'tools'>, reach: Reach): AgentClient {
  const input: Json[] = [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: plan.first }] }]
  const tools = plan.tools.map((tool) =>
    tool.custom
      ? { type: 'custom', name: tool.name, description: 'Edit files with a patch.' }
      : { type: 'function', name: tool.name, description: 'A tool.', parameters: { type: 'object' } },
  )
  const headers = sessionHeaders(reach)
  let answer: OpenAI.Responses.Response | undefined
  return {
    request: (turn) => ({
      model: reach.profileOf(turn),
      input: structuredClone(input),
      ...(tools.length > 0 ? { tools } : {}),
      ...(turn.thinking ? { reasoning: { effort: turn.effort, summary: 'auto' } } : {}),
      include: ['reasoning.encrypted_content'],
      store: false,
      stream: turn.stream,
    }),
    async send(turn, body) {
      const openai = reach.clients.openai
      try {
        answer = turn.stream
          ? await openai.responses
              .stream(body as unknown as Parameters<typeof openai.responses.stream>[0], { headers })
              .finalResponse()
          : await openai.responses.create(body as unknown as OpenAI.Responses.ResponseCreateParamsNonStreaming, {
              headers,
            })
        return { answered: true, requestId: answer.id.replace(/^resp_/, '') }
      } catch (err) {
        return thrown(err)
      }
    },
    accept(turn) {
      const response = answer!
      const problems = responseProblems(response, turn)
      same(problems, 'model, the profile sent [svc]', response.model, reach.profileOf(turn))
      input.push(...(toResponseInputItems(response.output) as unknown as Json[]))
      let i = 0
      for (const item of response.output) {
        if (item.type !== 'function_call' && item.type !== 'custom_tool_call') continue
        const call = turn.calls[i++]
        input.push({
          type: item.type === 'function_call' ? 'function_call_output' : 'custom_tool_call_output',
          call_id: item.call_id,
          output: call?.result ?? 'done',
        })
      }
      if (turn.next !== undefined || i === 0)
        input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: turn.next ?? 'go on' }] })
      return problems
    },
  }
}
