// Writes a config object as svc.toml text, the way an operator lays one out: tables as
// [sections], [[models]] as an array of tables, anything nested inside a model as an inline
// table. Values of any type are written as TOML has them, so a mutated object (a string where a
// number belongs, inf, a table where an array belongs) becomes the text an operator could write.

type Value = unknown
type Table = Record<string, Value>

const isTable = (v: Value): v is Table =>
  v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Date)
const isTableArray = (v: Value): v is Table[] => Array.isArray(v) && v.length > 0 && v.every(isTable)

/** TOML basic strings take JSON's escapes, except that DEL must be escaped too. */
const basicString = (s: string) => JSON.stringify(s).replaceAll('\u007f', '\\u007F')

export const tomlKey = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : basicString(k))

function tomlNumber(n: number): string {
  if (Number.isNaN(n)) return 'nan'
  if (!Number.isFinite(n)) return n > 0 ? 'inf' : '-inf'
  return String(n)
}

export function tomlValue(v: Value): string {
  if (typeof v === 'string') return basicString(v)
  if (typeof v === 'number') return tomlNumber(v)
  if (typeof v === 'boolean') return String(v)
  if (Array.isArray(v)) return `[${v.map(tomlValue).join(', ')}]`
  if (isTable(v)) {
    const fields = Object.entries(v).map(([k, x]) => `${tomlKey(k)} = ${tomlValue(x)}`)
    return fields.length === 0 ? '{}' : `{ ${fields.join(', ')} }`
  }
  throw new Error(`no TOML form for ${String(v)}`)
}

/** `[a.b]` sections for tables inside tables; scalars, arrays and inline tables as `key = value`. */
function section(path: string[], table: Table, lines: string[]) {
  const nested: [string, Table][] = []
  const arrays: [string, Table[]][] = []
  const own: string[] = []
  for (const [k, v] of Object.entries(table)) {
    if (isTable(v)) nested.push([k, v])
    else if (isTableArray(v)) arrays.push([k, v])
    else own.push(`${tomlKey(k)} = ${tomlValue(v)}`)
  }
  // An empty table still gets its header when nothing nested under it would define it.
  if (path.length > 0 && (own.length > 0 || nested.length + arrays.length === 0)) {
    lines.push('', `[${path.map(tomlKey).join('.')}]`)
  }
  lines.push(...own)
  for (const [k, v] of nested) section([...path, k], v, lines)
  for (const [k, items] of arrays) {
    for (const item of items) {
      lines.push('', `[[${[...path, k].map(tomlKey).join('.')}]]`)
      for (const [ik, iv] of Object.entries(item)) lines.push(`${tomlKey(ik)} = ${tomlValue(iv)}`)
    }
  }
}

/** The svc.toml text of `doc`, with a comment first as `svc init` writes one. */
export function toToml(doc: Table): string {
  const lines = ['# svc.toml written by test/support/config-toml.ts']
  section([], doc, lines)
  return `${lines.join('\n')}\n`
}
