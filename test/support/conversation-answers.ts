// What an agent's SDK assembled from svc's answer, checked against the turn the upstream was told
// to give: the conversation suites' one statement of it (conversation-properties.test.ts, where
// the client picks the upstream, and fallback-conversations.test.ts, where the router does).
//
// Sources, cited by key below:
//   [a-msg]   https://platform.claude.com/docs/en/api/messages (the content blocks of an answer)
//   [r-resp]  https://platform.openai.com/docs/api-reference/responses/object (reasoning, message,
//             function_call and custom_tool_call items; status incomplete at the output limit)
import type Anthropic from '@anthropic-ai/sdk'
import { expect } from 'bun:test'
import type OpenAI from 'openai'
import type { PlannedCall, Turn } from './conversation-plans'

type Json = Record<string, unknown>

/** Collects a check's failure as a sentence, the values compared quoted. */
export function same(problems: string[], what: string, got: unknown, want: unknown): void {
  try {
    expect(got).toEqual(want)
  } catch {
    problems.push(`${what}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`)
  }
}

/** A call's arguments as JSON text carries them. */
const asSent = (args: Json): Json => JSON.parse(JSON.stringify(args))

export function messageProblems(message: Anthropic.Message, turn: Turn): string[] {
  const problems: string[] = []
  same(
    problems,
    'block types [a-msg]',
    message.content.map((b) => b.type),
    [...(turn.thought ? ['thinking'] : []), ...(turn.text ? ['text'] : []), ...turn.calls.map(() => 'tool_use')],
  )
  same(
    problems,
    'thinking and text [a-msg]',
    message.content.flatMap((b) => (b.type === 'thinking' ? [b.thinking] : b.type === 'text' ? [b.text] : [])),
    [...(turn.thought ? [turn.thought] : []), ...(turn.text ? [turn.text] : [])],
  )
  same(
    problems,
    'tool calls [a-msg]',
    message.content.flatMap((b) => (b.type === 'tool_use' ? [{ name: b.name, input: b.input }] : [])),
    turn.calls.map((call) => ({ name: call.tool.name, input: asSent(call.arguments) })),
  )
  const stop = turn.calls.length > 0 ? 'tool_use' : turn.truncated ? 'max_tokens' : 'end_turn'
  same(problems, 'stop_reason [a-msg]', message.stop_reason, stop)
  return problems
}

export function responseProblems(response: OpenAI.Responses.Response, turn: Turn): string[] {
  const problems: string[] = []
  const callType = (call: PlannedCall) => (call.tool.custom ? 'custom_tool_call' : 'function_call')
  same(
    problems,
    'item types [r-resp]',
    response.output.map((item) => item.type),
    [...(turn.thought ? ['reasoning'] : []), ...(turn.text ? ['message'] : []), ...turn.calls.map(callType)],
  )
  same(
    problems,
    'reasoning summaries and text [r-resp]',
    response.output.flatMap((item) =>
      item.type === 'reasoning'
        ? [item.summary.map((s) => s.text).join('')]
        : item.type === 'message'
          ? [item.content.map((c) => (c.type === 'output_text' ? c.text : `<${c.type}>`)).join('')]
          : [],
    ),
    [...(turn.thought ? [turn.thought] : []), ...(turn.text ? [turn.text] : [])],
  )
  same(
    problems,
    'calls [r-resp]',
    response.output.flatMap((item) =>
      item.type === 'function_call'
        ? [{ name: item.name, what: JSON.parse(item.arguments) }]
        : item.type === 'custom_tool_call'
          ? [{ name: item.name, what: item.input }]
          : [],
    ),
    turn.calls.map((call) => ({
      name: call.tool.name,
      what: call.tool.custom ? call.arguments.input : asSent(call.arguments),
    })),
  )
  same(problems, 'status [r-resp]', response.status, turn.truncated ? 'incomplete' : 'completed')
  return problems
}
