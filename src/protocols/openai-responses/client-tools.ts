// The Responses tools other dialects have no word for, offered to their models as plain functions.
//
// Namespaces. A Responses client may group tools under a namespace — Codex sends its sub-agent
// tools as `{type: "namespace", name: "multi_agent_v1", tools: [...]}` — and a call to one carries
// `namespace` beside its `name`. Anthropic and Chat have no namespaces: their models are offered
// each such tool under `<namespace>__<name>` (the way Claude Code names MCP tools).
//
// Custom tools. A `{type: "custom"}` tool takes free text instead of JSON arguments (Codex's
// apply_patch, for GPT models, is one, with a Lark grammar of the patch format), and its calls
// are `custom_tool_call` items with an `input` string. Other dialects' models are offered a
// function of one string argument, `input`, whose description carries the grammar; their calls
// go back to the client as custom tool calls of that argument's text.
import { isObject, type JsonObject } from '../wire-values'

export const qualifiedToolName = (namespace: string, name: string): string => `${namespace}__${name}`

/** A tool as the client knows it: its own name, its namespace, and whether it takes free text. */
export interface ClientTool {
  name: string
  namespace?: string
  custom: boolean
}

/** A tool other dialects see under another name or shape: its definition, and where the request has it. */
export interface SpecialTool extends ClientTool {
  tool: JsonObject
  path: string
}

const isSpecial = (tool: unknown) => isObject(tool) && (tool.type === 'namespace' || tool.type === 'custom')

/**
 * The client's namespaced and custom tools, by the name other dialects offer them under;
 * undefined when the request has none (the usual case, without building anything). A qualified
 * name that a top-level tool already has stays that tool's.
 */
export function specialToolNames(tools: unknown): Map<string, SpecialTool> | undefined {
  if (!Array.isArray(tools) || !tools.some(isSpecial)) return undefined
  const topLevel = new Set(
    tools.flatMap((tool) =>
      isObject(tool) && (tool.type === 'function' || tool.type === 'custom') ? [tool.name] : [],
    ),
  )
  const names = new Map<string, SpecialTool>()
  tools.forEach((tool, i) => {
    if (!isObject(tool)) return
    if (tool.type === 'custom' && typeof tool.name === 'string') {
      names.set(tool.name, { name: tool.name, custom: true, tool, path: `tools[${i}]` })
      return
    }
    if (tool.type !== 'namespace' || typeof tool.name !== 'string' || !Array.isArray(tool.tools)) return
    const namespace = tool.name
    tool.tools.forEach((member, j) => {
      if (!isObject(member) || typeof member.name !== 'string') return
      if (member.type !== 'function' && member.type !== 'custom') return
      const qualified = qualifiedToolName(namespace, member.name)
      if (topLevel.has(qualified)) return
      const path = `tools[${i}].tools[${j}]`
      names.set(qualified, { namespace, name: member.name, custom: member.type === 'custom', tool: member, path })
    })
  })
  return names
}

/** A call to `name` as the client knows it: under its namespace, as a custom tool, or as it is. */
export function clientTool(names: Map<string, ClientTool> | undefined, name: string): ClientTool {
  return names?.get(name) ?? { name, custom: false }
}

/** The name and namespace a call item carries. */
export const callName = (tool: ClientTool): { name: string; namespace?: string } =>
  tool.namespace === undefined ? { name: tool.name } : { namespace: tool.namespace, name: tool.name }

/** The one argument other dialects' models give a custom tool's text in. */
export const freeformArgument = 'input'

/**
 * The JSON Schema of a custom tool offered as a function, and its description: the client's,
 * with the grammar its text must follow (OpenAI's models are held to it; others are told).
 */
export function customToolAsFunction(tool: JsonObject): { description: string; inputSchema: JsonObject } {
  const format = tool.format
  const grammar =
    isObject(format) && format.type === 'grammar' && typeof format.definition === 'string' ? format : undefined
  const syntax = grammar && typeof grammar.syntax === 'string' ? `${grammar.syntax} ` : ''
  const own = typeof tool.description === 'string' && tool.description !== '' ? tool.description : undefined
  const rule = grammar ? `The input must match this ${syntax}grammar:\n${grammar.definition}` : undefined
  // The client's description may say "freeform, not JSON" to a model that is here given a function.
  const how = `Give the text whole as the one argument, \`${freeformArgument}\`.`
  const description = [own, rule, how].filter((part) => part !== undefined).join('\n\n')
  const inputSchema = {
    type: 'object',
    properties: {
      [freeformArgument]: { type: 'string', description: 'The text itself, not wrapped in JSON of its own.' },
    },
    required: [freeformArgument],
    additionalProperties: false,
  }
  return { description, inputSchema }
}

/**
 * A custom tool's text from the arguments another dialect's model called it with: the `input`
 * string it was asked for; arguments of any other shape go back as their JSON, for the client
 * to refuse as it would any malformed input.
 */
export function freeformInput(args: unknown): string {
  if (isObject(args) && typeof args[freeformArgument] === 'string') return args[freeformArgument]
  return typeof args === 'string' ? args : JSON.stringify(args ?? {})
}
