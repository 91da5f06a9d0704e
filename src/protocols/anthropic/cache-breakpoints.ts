// Prompt caching for clients that cannot ask for it. OpenAI caches a prompt's prefix by itself;
// Anthropic caches only up to the blocks a request marks with `cache_control`. A Responses client
// (Codex, say) has no way to mark one, so translated to Claude its agent loop would pay the
// full input price for the same growing conversation on every turn. Where the client marked
// nothing, the request gets the breakpoints an agent would set itself:
//   - the end of the system prompt (or of the tools, without one): the part every turn shares;
//   - the last block of the conversation: the next turn reads all of this one from the cache;
//   - the last block of the user turn before it: that turn's entry, for a next turn whose new
//     blocks are too many for Anthropic's lookback (~20 blocks) to find the newest one.
// Anthropic takes up to four; a prompt below its cacheable minimum is served uncached, unbilled
// for the marks. Writes cost 1.25 × input and reads 0.1 ×, both charged as the upstream reports.

export type WireBlock = Record<string, unknown> & { type: string }
export interface WireMessage {
  role: 'user' | 'assistant'
  content: WireBlock[]
}

/** Block types Anthropic lets carry `cache_control` (thinking blocks cannot). */
const markable = new Set(['text', 'image', 'document', 'tool_use', 'tool_result'])

const ephemeral = () => ({ type: 'ephemeral' })

function markLast(blocks: WireBlock[] | undefined): boolean {
  const block = blocks?.findLast((b) => markable.has(b.type))
  if (!block) return false
  block.cache_control = ephemeral()
  return true
}

/** What the breakpoints go on: the encoded system prompt, tool definitions and conversation. */
interface EncodedPrompt {
  system: WireBlock[]
  tools: Record<string, unknown>[]
  messages: WireMessage[]
}

/** Whether the body already marks anything: then the client chose, and nothing is added. */
function marksAnything(body: EncodedPrompt): boolean {
  const marked = (b: Record<string, unknown>) => b.cache_control !== undefined
  return body.system.some(marked) || body.tools.some(marked) || body.messages.some((m) => m.content.some(marked))
}

/** Adds the breakpoints above to an encoded Messages body, in place, unless it marks something already. */
export function addCacheBreakpoints(body: EncodedPrompt) {
  if (marksAnything(body)) return
  const lastTool = body.tools.at(-1)
  if (!markLast(body.system) && lastTool) lastTool.cache_control = ephemeral()
  const { messages } = body
  markLast(messages.at(-1)?.content)
  const previousUser = messages.findLast((m, i) => i < messages.length - 1 && m.role === 'user')
  markLast(previousUser?.content)
}
