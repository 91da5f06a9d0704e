// A grant's scope as the CLI prints it, for `svc grants list` and `svc whoami` alike.

/** A grant as the API shows it (ledger/views.ts grantView), as far as its scope goes. */
export interface GrantScopeView {
  scope_cost_type: string
  scope_routing_modes?: string[]
  scope_models?: string[]
  scope_providers?: string[]
}

/**
 * A grant's scope in words, each narrowing named: `all mode=pro,max model=gpt-5.1`. Run together as
 * `all,pro,max,gpt-5.1`, a routing mode read as a cost type and a model as a mode.
 */
export function scopeText(g: GrantScopeView): string {
  const narrowed = (name: string, values: string[] | undefined) => (values ? [`${name}=${values.join(',')}`] : [])
  return [
    g.scope_cost_type,
    ...narrowed('mode', g.scope_routing_modes),
    ...narrowed('model', g.scope_models),
    ...narrowed('provider', g.scope_providers),
  ].join(' ')
}
