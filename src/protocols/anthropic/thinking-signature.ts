// Thinking sent back to Claude: only Anthropic-made signatures (others ⇒ 400), and with thinking
// on with a budget, a tool loop's last assistant turn opening with its own (else ⇒ 400). Adaptive
// thinking asks no such thing: under it Claude decides turn by turn whether to think, and calls
// tools without thinking first on simple steps; Anthropic takes those turns back with thinking on.
// Turning thinking off for such a turn and on again at the next changed the request's thinking
// parameters turn to turn, which Anthropic's cache does not survive: an audit's Claude Code
// conversation paid a whole cache write (1.25–2 × input) instead of a read (0.1 ×) each time. Both the translated
// request (encode-anthropic-request.ts) and the pass-through body (foreign-history.ts) keep to it
// for Anthropic itself. Anthropic-compatible servers that are not Anthropic (DeepSeek, Kimi) sign
// thinking their own way, or not at all, and want a tool-call turn's thinking back: they get what
// the client sent, only a signature svc made meaning nothing to them.
import { isObject } from '../wire-values'

// Gateway-made signatures are base64('gw1:<provider>:<hash>'); every such string starts with 'Z3cxO'.
const gatewayPrefix = 'Z3cxO'

/** True for a signature svc made for another dialect's reasoning, which no server can check. */
export const isGatewaySignature = (signature: string | undefined): boolean =>
  signature?.startsWith(gatewayPrefix) === true

/** True when Anthropic would reject the signature: missing, empty or made by this gateway. */
export const isForeignSignature = (signature: string | undefined): boolean =>
  signature === undefined || signature === '' || isGatewaySignature(signature)

/**
 * False when the last assistant turn called tools without opening with thinking: with thinking on
 * with a budget, Claude refuses that ("a final assistant message must start with a thinking block"). History from
 * another provider has none. Messages as on the wire (a client's JSON or the encoder's).
 */
export function lastToolTurnOpensWithThinking(messages: readonly unknown[]): boolean {
  const last = messages.findLast((m) => isObject(m) && m.role === 'assistant') as { content?: unknown } | undefined
  const content = last?.content
  if (!Array.isArray(content) || !content.some((b) => isObject(b) && b.type === 'tool_use')) return true
  const first = content[0]
  return isObject(first) && (first.type === 'thinking' || first.type === 'redacted_thinking')
}
