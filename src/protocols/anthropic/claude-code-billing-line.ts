// Claude Code opens its system prompt with a line for Anthropic alone:
// `x-anthropic-billing-header: cc_version=2.1.330.<3 hex>; cc_entrypoint=sdk-cli;`, the hex following
// the session's first prompt. Anthropic reads it and leaves it out of the prompt; any other server
// takes it as the prompt's first words, which differ from session to session, so its prefix cache
// misses the whole static system prompt and tool list (~12K tokens) at the start of every session
// and subagent (anthropics/claude-code#68900). Only Anthropic itself gets it.
import { isObject } from '../wire-values'

const billingLine = 'x-anthropic-billing-header:'

/** Whether a system text is Claude Code's billing line. */
export const isClaudeCodeBillingLine = (text: string): boolean => text.startsWith(billingLine)

/** The body without the billing line in its system blocks; the very body when it has none. */
export function withoutClaudeCodeBillingLine(body: Record<string, unknown>): Record<string, unknown> {
  const { system } = body
  if (!Array.isArray(system)) return body
  const isLine = (block: unknown) =>
    isObject(block) && typeof block.text === 'string' && isClaudeCodeBillingLine(block.text)
  return system.some(isLine) ? { ...body, system: system.filter((block) => !isLine(block)) } : body
}
