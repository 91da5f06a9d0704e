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

/**
 * The client's namespaced tools by the name other dialects offer them under; undefined when the
 * request has none (the usual case, without building anything). A qualified name that a top-level
 * function already has stays that function's.
 */
export function namespacedToolNames(tools: unknown): Map<string, NamespacedName> | undefined {
  if (!Array.isArray(tools) || !tools.some((tool) => isObject(tool) && tool.type === 'namespace')) return undefined
  const topLevel = new Set(tools.flatMap((tool) => (isObject(tool) && tool.type === 'function' ? [tool.name] : [])))
  const names = new Map<string, NamespacedName>()
  for (const tool of tools) {
    if (!isObject(tool) || tool.type !== 'namespace' || typeof tool.name !== 'string' || !Array.isArray(tool.tools)) {
      continue
    }
    for (const member of tool.tools) {
      if (!isObject(member) || member.type !== 'function' || typeof member.name !== 'string') continue
      const qualified = qualifiedToolName(tool.name, member.name)
      if (!topLevel.has(qualified)) names.set(qualified, { namespace: tool.name, name: member.name })
    }
  }
  return names
}

/** A call to `name` as the client knows it: under its namespace, or as it is. */
export const clientToolName = (
  names: Map<string, NamespacedName> | undefined,
  name: string,
): NamespacedName | { name: string } => names?.get(name) ?? { name }
