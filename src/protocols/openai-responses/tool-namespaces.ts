// Tool namespaces. A Responses client may group function tools under a namespace — Codex sends its
// sub-agent tools as `{type: "namespace", name: "multi_agent_v1", tools: [...]}` — and a call to one
// carries `namespace` beside its `name`. Anthropic and Chat have no namespaces: their models are
// offered each such tool as one function named `<namespace>__<name>` (the way Claude Code names
// MCP tools), and a call to that name goes back to the client under its namespace and own name.
import { isObject } from '../wire-values'

export const qualifiedToolName = (namespace: string, name: string): string => `${namespace}__${name}`

export interface NamespacedName {
  namespace: string
  name: string
}

/** A function tool inside a namespace: its definition, and where the request has it (for errors). */
export interface NamespacedTool extends NamespacedName {
  tool: Record<string, unknown>
  path: string
}

/**
 * The client's namespaced tools by the name other dialects offer them under; undefined when the
 * request has none (the usual case, without building anything). A qualified name that a top-level
 * function already has stays that function's.
 */
export function namespacedToolNames(tools: unknown): Map<string, NamespacedTool> | undefined {
  if (!Array.isArray(tools) || !tools.some((tool) => isObject(tool) && tool.type === 'namespace')) return undefined
  const topLevel = new Set(tools.flatMap((tool) => (isObject(tool) && tool.type === 'function' ? [tool.name] : [])))
  const names = new Map<string, NamespacedTool>()
  tools.forEach((tool, i) => {
    if (!isObject(tool) || tool.type !== 'namespace' || typeof tool.name !== 'string' || !Array.isArray(tool.tools)) {
      return
    }
    const namespace = tool.name
    tool.tools.forEach((member, j) => {
      if (!isObject(member) || member.type !== 'function' || typeof member.name !== 'string') return
      const qualified = qualifiedToolName(namespace, member.name)
      if (topLevel.has(qualified)) return
      names.set(qualified, { namespace, name: member.name, tool: member, path: `tools[${i}].tools[${j}]` })
    })
  })
  return names
}

/** A call to `name` as the client knows it: under its namespace, or as it is. */
export function clientToolName(names: Map<string, NamespacedName> | undefined, name: string): Partial<NamespacedName> {
  const namespaced = names?.get(name)
  return namespaced ? { namespace: namespaced.namespace, name: namespaced.name } : { name }
}
