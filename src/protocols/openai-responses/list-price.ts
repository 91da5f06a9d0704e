// A pass-through Responses body that costs the platform's OpenAI account what svc charges for it:
// list-price tokens and web searches (README "Money and credit"). The client's body goes to OpenAI
// nearly as sent, so whatever in it OpenAI bills above that would reach the platform's account
// unpaid: it is left out, and the request runs at list price. Dropped, not refused: agents send
// some of these by default (Codex's fast mode is `service_tier: "priority"`), and a 400 would stop
// them; the answer says what ran (its own `service_tier`, `background` and `tools`). The translated
// path never sends them (its encoder has no word for them).
// - `service_tier` other than `auto` and `default`: `priority` (and any dearer tier) costs more;
//   `flex` costs about half, and svc, which has no flex price, would charge the user list price
//   for a slower answer that may be refused for want of capacity. Without it, the user gets the
//   standard tier at the price svc charges.
// - `background: true`: the answer is a `queued` response with no usage, which svc would record at
//   no cost while OpenAI ran it in full; its result is fetched by id from a store svc does not
//   serve (the route is stateless). The request runs in the foreground instead, and without its
//   `background_options` (the 2h and 8h completion windows), which OpenAI refuses without it.
// - hosted tools other than web search: code interpreter (its container's time), file search (per
//   call and the vector store), image generation (per image), a shell in a hosted container, and
//   any hosted tool svc does not know; the translated path leaves them out too. Tools the client
//   runs itself (functions, custom, local shell, apply_patch, computer use) cost tokens only and
//   stay, as do remote MCP and tool search. A tool choice naming a dropped tool becomes `auto`, and
//   `include` stops asking for those tools' outputs. Codex's "Responses lite" offers its tools in an
//   `additional_tools` input item instead: the same tools are left out of it.
// `store` and `prompt_cache_retention: "24h"` are priced as without them, and stay.
import { isObject, type JsonObject } from '../wire-values'

const listPriceTiers = new Set(['auto', 'default'])

/** Tool types that cost tokens only (or, web search, what svc charges). */
const listPriceToolTypes = new Set([
  'function',
  'custom',
  'namespace',
  'local_shell',
  'apply_patch',
  'computer_use_preview',
  'computer',
  'mcp',
  'tool_search',
])

export const isListPriceTool = (tool: unknown): boolean => {
  if (!isObject(tool) || typeof tool.type !== 'string') return true
  const { type } = tool
  if (type.startsWith('web_search') || listPriceToolTypes.has(type)) return true
  // The shell tool runs on the client's machine unless given one of OpenAI's containers.
  if (type !== 'shell') return false
  const environment = tool.environment
  return !(isObject(environment) && typeof environment.type === 'string' && environment.type.startsWith('container'))
}

/** What `include` asks of the tools left out. */
const droppedToolOutputs = new Set(['code_interpreter_call.outputs', 'file_search_call.results'])

/** Leaves out of `body` (the caller's own copy) what OpenAI bills above list price. */
export function fitResponsesToListPrice(body: JsonObject): void {
  if (body.service_tier !== undefined && !listPriceTiers.has(body.service_tier as string)) delete body.service_tier
  if (body.background === true) delete body.background
  delete body.background_options
  if (Array.isArray(body.tools) && !body.tools.every(isListPriceTool)) withListPriceTools(body, body.tools)
  if (Array.isArray(body.input) && body.input.some(offersDearTools)) body.input = body.input.map(withListPriceOffer)
  if (Array.isArray(body.include) && body.include.some((entry) => droppedToolOutputs.has(entry))) {
    const include = body.include.filter((entry) => !droppedToolOutputs.has(entry))
    if (include.length > 0) body.include = include
    else delete body.include
  }
}

/** An `additional_tools` input item offering a tool billed above list price. */
const offersDearTools = (item: unknown): boolean =>
  isObject(item) && item.type === 'additional_tools' && Array.isArray(item.tools) && !item.tools.every(isListPriceTool)

/** The item without those tools: a copy, since the input array's items are the client's own. */
const withListPriceOffer = (item: unknown): unknown =>
  offersDearTools(item)
    ? { ...(item as JsonObject), tools: ((item as JsonObject).tools as unknown[]).filter(isListPriceTool) }
    : item

function withListPriceTools(body: JsonObject, tools: unknown[]): void {
  const kept = tools.filter(isListPriceTool)
  const dropped = new Set(tools.filter((t) => !isListPriceTool(t)).map((t) => (t as JsonObject).type))
  if (kept.length === 0) {
    // No tools left: `required` or a named tool would be refused without them.
    delete body.tools
    delete body.tool_choice
    return
  }
  body.tools = kept
  const choice = body.tool_choice
  if (!isObject(choice)) return
  if (dropped.has(choice.type)) body.tool_choice = 'auto'
  else if (choice.type === 'allowed_tools' && Array.isArray(choice.tools)) {
    const allowed = choice.tools.filter((tool) => !(isObject(tool) && dropped.has(tool.type)))
    body.tool_choice = allowed.length > 0 ? { ...choice, tools: allowed } : 'auto'
  }
}
