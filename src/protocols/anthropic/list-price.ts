// A pass-through Messages body that costs the platform's Anthropic account what svc charges for it:
// list-price tokens (cache writes of the TTLs the model has prices for) and web searches (README
// "Money and credit"). The client's body goes to Claude nearly as sent, so whatever in it Anthropic
// bills above that would reach the platform's account unpaid: it is left out, and the request runs
// at list price. Dropped, not refused: agents send these by default (Claude Code's /fast, a 1-hour
// cache), and a 400 would stop them; the answer's usage says what ran (`service_tier`, `speed`,
// `inference_geo`, the cache writes by TTL). The translated path never sends them (its decoder has
// no word for them).
// - `service_tier` other than `auto` and `standard_only` (`priority`, …): another tier's capacity.
// - `speed` other than `standard`: fast mode, several times the token price where offered.
// - `inference_geo` other than `global`: US-only inference is priced at 1.1 ×.
// - server tools other than web search (priced) and web fetch (tokens only), and the `container`
//   they run in: code execution bills container time, another tool svc does not know may bill
//   anything. Tools the client runs itself (bash, text editor, computer, memory) cost tokens only
//   and stay, as do tool search and an MCP toolset. As the translated path leaves such tools out.
// - compaction in `context_management` (`compact_*` edits): its summarizing pass is billed, and
//   reported only in `usage.iterations`, outside the usage svc meters. Clearing edits stay.
// - a cache mark's `ttl: "1h"`, for a model svc has no 1-hour cache-write price for: a 1-hour
//   write costs 2 × input, the 5-minute one (the catalog's cache-write price) 1.25 ×. The mark
//   stays, for 5 minutes. Where svc prices the hour (every built-in Claude row), it goes as sent:
//   an agent that asks for an hour (Claude Code does) would otherwise lose its cache after every
//   5-minute pause and pay to write the whole context again.
import { isObject, type JsonObject } from '../wire-values'

/**
 * The client's `anthropic-beta` header without the betas Anthropic bills above list price:
 * `context-1m-*` lets a prompt run past 200K tokens on a model of a 200K window at 2 × input and
 * 1.5 × output, where svc ranks and charges by the catalog's window and prices (Claude Code sends
 * it by default). Kept for a model the catalog gives a larger window: there the catalog's window and
 * prices (a long-prompt tier where there is one) are the 1M ones. Undefined when nothing is left;
 * the header as it came when it names none (a substring test on every request).
 */
export function betasAtListPrice(header: string, contextWindow: number): string | undefined {
  if (contextWindow > 200_000 || !header.includes('context-1m')) return header
  const kept = header
    .split(',')
    .map((beta) => beta.trim())
    .filter((beta) => beta !== '' && !beta.startsWith('context-1m'))
  return kept.length > 0 ? kept.join(',') : undefined
}

const listPriceTiers = new Set(['auto', 'standard_only'])

/** Typed tools that cost tokens only (or, web search, what svc charges), by their type's prefix. */
const listPriceToolPrefixes = [
  'web_search_',
  'web_fetch_',
  'bash_',
  'text_editor_',
  'computer_',
  'memory_',
  'tool_search_tool_',
  'mcp_toolset',
]

const isListPriceTool = (tool: unknown): boolean => {
  if (!isObject(tool)) return true
  const { type } = tool
  if (type === undefined || type === null || type === 'custom') return true
  return typeof type === 'string' && listPriceToolPrefixes.some((prefix) => type.startsWith(prefix))
}

const isCompaction = (edit: unknown): boolean =>
  isObject(edit) && typeof edit.type === 'string' && edit.type.startsWith('compact')

/**
 * The body without what Anthropic bills above list price; the very object when it has none (the
 * common case). `hourCache`: the model prices 1-hour cache writes, so marks that ask for one stay.
 */
export function atListPrice(body: JsonObject, hourCache: boolean): JsonObject {
  let out = body
  const edit = (): JsonObject => {
    if (out === body) out = { ...body }
    return out
  }
  if (body.service_tier !== undefined && !listPriceTiers.has(body.service_tier as string)) delete edit().service_tier
  if (body.speed !== undefined && body.speed !== 'standard') delete edit().speed
  if (body.inference_geo !== undefined && body.inference_geo !== 'global') delete edit().inference_geo
  if (body.container !== undefined) delete edit().container
  if (Array.isArray(body.tools) && !body.tools.every(isListPriceTool)) withListPriceTools(edit(), body.tools)
  const management = body.context_management
  if (isObject(management) && Array.isArray(management.edits) && management.edits.some(isCompaction)) {
    const edits = management.edits.filter((e) => !isCompaction(e))
    if (edits.length > 0) edit().context_management = { ...management, edits }
    else delete edit().context_management
  }
  if (hourCache || !hasLongCache(out)) return out
  return withShortCache(out === body ? { ...body } : out)
}

/** `out` (a copy) with only list-price tools, and a tool choice that names none of the others. */
function withListPriceTools(out: JsonObject, tools: unknown[]): void {
  const kept = tools.filter(isListPriceTool)
  const dropped = new Set(tools.filter((t) => !isListPriceTool(t)).map((t) => (t as JsonObject).name))
  const choice = out.tool_choice
  if (kept.length === 0) {
    // No tools left: a tool choice would be refused without them.
    delete out.tools
    delete out.tool_choice
    return
  }
  out.tools = kept
  if (isObject(choice) && choice.type === 'tool' && dropped.has(choice.name)) {
    const { name: _name, ...rest } = choice
    out.tool_choice = { ...rest, type: 'auto' }
  }
}

const isLongCache = (value: unknown): boolean => isObject(value) && value.ttl === '1h'

/**
 * The blocks a document's own content holds (`source: {type: "content", content: [...]}`): text
 * and images, which take cache marks as any block does.
 */
const documentBlocks = (block: JsonObject): unknown[] | undefined =>
  isObject(block.source) && Array.isArray(block.source.content) ? block.source.content : undefined

/**
 * Whether any cache mark of the body (top level, system, tools, message blocks, the blocks inside
 * those: a tool result's, a document's) asks for an hour.
 */
function hasLongCache(body: JsonObject): boolean {
  if (isLongCache(body.cache_control)) return true
  const marked = (block: unknown): boolean =>
    isObject(block) &&
    (isLongCache(block.cache_control) ||
      (Array.isArray(block.content) && block.content.some(marked)) ||
      documentBlocks(block)?.some(marked) === true)
  if (Array.isArray(body.system) && body.system.some(marked)) return true
  if (Array.isArray(body.tools) && body.tools.some(marked)) return true
  return Array.isArray(body.messages) && body.messages.some(marked)
}

/** `out` (a copy) with every hour-long cache mark made a 5-minute one; the client's blocks are copied, not changed. */
function withShortCache(out: JsonObject): JsonObject {
  const shorten = (block: unknown): unknown => {
    if (!isObject(block)) return block
    let copy = block
    if (isLongCache(block.cache_control)) {
      const { ttl: _ttl, ...mark } = block.cache_control as JsonObject
      copy = { ...block, cache_control: mark }
    }
    if (Array.isArray(block.content)) {
      const original = block.content
      const content = original.map(shorten)
      if (content.some((b, i) => b !== original[i])) copy = { ...copy, content }
    }
    const inDocument = documentBlocks(block)
    if (inDocument) {
      const content = inDocument.map(shorten)
      if (content.some((b, i) => b !== inDocument[i]))
        copy = { ...copy, source: { ...(block.source as JsonObject), content } }
    }
    return copy
  }
  if (isLongCache(out.cache_control)) {
    const { ttl: _ttl, ...mark } = out.cache_control as JsonObject
    out.cache_control = mark
  }
  for (const key of ['system', 'tools', 'messages']) {
    const list = out[key]
    if (Array.isArray(list)) out[key] = list.map(shorten)
  }
  return out
}
