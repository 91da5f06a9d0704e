// One fault put into a valid svc.toml (test/support/config-plans.ts), with what the README says
// of it ("Configuration": every table is closed, a misspelt key or a wrong type stops start-up
// with a message that names it; "Money and credit": a price finer than 0.001 USD/Mtok is refused
// at start): refused, naming a key path or a line; accepted with a meaning the README gives it
// (checked as a valid plan); or, where the README is silent, either, so long as a config that
// loads answers every request.
import fc from 'fast-check'
import { type ConfigPlan, wellKnown } from './config-plans'
import { toToml } from './config-toml'

type Doc = Record<string, unknown>
type Path = (string | number)[]

export interface Mutant {
  kind: MutationKind
  text: string
  env: Record<string, string>
  expect: 'refused' | 'accepted' | 'either'
  /** What a refusal must name: a dotted key path (`models.1.quality`) or a line (`3:`). */
  names: string
  /** Accepted, the config still means what the README says: served as a valid plan. */
  plan?: ConfigPlan
}

const mutationKinds = [
  'wrong-type',
  'negative',
  'non-integer',
  'fine-price',
  'unknown-key',
  'unknown-profile',
  'missing-provider',
  'duplicate-key',
  'duplicate-model',
  'empty-profiles',
  'bad-url',
  'toml-syntax',
  'huge-number',
  'unicode-provider',
  'unicode-header',
] as const
export type MutationKind = (typeof mutationKinds)[number]

const reachableNowhere = 'http://127.0.0.1:1'
const badUrls = ['', 'not a url', '127.0.0.1:9', 'ftp://127.0.0.1:9', 'http://', 'http://[::1', reachableNowhere]

const isTable = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v)

/** Every value under `doc` with its path: scalars, arrays of scalars, and tables (not the root). */
function nodes(doc: unknown, path: Path = []): { path: Path; value: unknown }[] {
  const here = path.length > 0 ? [{ path, value: doc }] : []
  if (isTable(doc)) return [...here, ...Object.entries(doc).flatMap(([k, v]) => nodes(v, [...path, k]))]
  if (Array.isArray(doc) && doc.every(isTable)) return [...here, ...doc.flatMap((v, i) => nodes(v, [...path, i]))]
  return here
}

const dotted = (path: Path) => path.join('.')
const pick = <T>(items: T[], n: number): T | undefined => items[n % Math.max(1, items.length)]

function setAt(doc: Doc, path: Path, value: unknown): Doc {
  const copy = structuredClone(doc)
  let at: Record<string | number, unknown> = copy
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>
  at[path.at(-1)!] = value
  return copy
}

/** A value of another TOML type than `v`'s. */
function wrongTypeFor(v: unknown, n: number): unknown {
  const others: unknown[] = [
    typeof v === 'string' ? 42 : '42',
    typeof v === 'boolean' ? 'true' : true,
    Array.isArray(v) ? { a: 1 } : ['x'],
  ]
  if (!isTable(v) && !Array.isArray(v)) others.push({ value: 1 })
  return pick(others, n)
}

const integerKeys = new Set([
  'port',
  'max_body_bytes',
  'request_memory_mb',
  'device_poll_interval_seconds',
  'expires_in_days',
  'connect_timeout_ms',
  'first_byte_timeout_ms',
  'idle_timeout_ms',
  'ping_interval_ms',
  'max_attempts',
  'stream_upstream_above_max_tokens',
  'context_window',
  'max_output_tokens',
])
/** Numbers the schema bounds above: a huge one there is refused (prices too, isPriceKey); elsewhere the README sets no bound. */
const boundedKeys = new Set([
  'request_wait_seconds',
  'port',
  'quality',
  'price_weight',
  'quality_floor',
  'byok_fee_percent',
  'device_poll_interval_seconds',
  'ping_interval_ms',
  'max_attempts',
])
const isPriceKey = (k: unknown) => typeof k === 'string' && k.endsWith('_usd_per_mtok')
/** A header table takes any name: a key added there is a header, not a misspelling. */
const inHeaders = (path: Path) => path.includes('headers')

interface Applied {
  doc?: Doc
  text?: string
  env?: Record<string, string>
  expect: Mutant['expect']
  names: string
  /** The mutated doc still means what the README says (a valid plan). */
  meaningful?: boolean
}

type Mutation = (plan: ConfigPlan, n: number, m: number) => Applied | null

const numeric = (doc: Doc) =>
  nodes(doc).filter((x) => typeof x.value === 'number' && !inHeaders(x.path)) as { path: Path; value: number }[]

const mutations: Record<MutationKind, Mutation> = {
  'wrong-type': ({ doc }, n, m) => {
    const node = pick(nodes(doc), n)
    if (!node) return null
    return { doc: setAt(doc, node.path, wrongTypeFor(node.value, m)), expect: 'refused', names: dotted(node.path) }
  },
  negative: ({ doc }, n) => {
    const node = pick(numeric(doc), n)
    if (!node) return null
    return { doc: setAt(doc, node.path, -1 - node.value), expect: 'refused', names: dotted(node.path) }
  },
  'non-integer': ({ doc }, n) => {
    const node = pick(
      numeric(doc).filter((x) => integerKeys.has(String(x.path.at(-1)))),
      n,
    )
    if (!node) return null
    return { doc: setAt(doc, node.path, node.value + 0.5), expect: 'refused', names: dotted(node.path) }
  },
  'fine-price': ({ doc }, n, m) => {
    const node = pick(
      numeric(doc).filter((x) => isPriceKey(x.path.at(-1))),
      n,
    )
    if (!node) return null
    // Finer than a nano per token: 0.0001 to 0.0009 USD/Mtok over the price.
    return {
      doc: setAt(doc, node.path, node.value + ((m % 9) + 1) / 10_000),
      expect: 'refused',
      names: dotted(node.path),
    }
  },
  'unknown-key': ({ doc }, n, m) => {
    const tables = [
      { path: [] as Path, value: doc },
      ...nodes(doc).filter((x) => isTable(x.value) && !inHeaders(x.path) && x.path.at(-1) !== 'providers'),
    ]
    const table = pick(tables, n)!
    const keys = Object.keys(table.value as Doc)
    // A misspelling of a key that is there (the last letter doubled), or a word svc does not know.
    const key = pick([...keys.map((k) => `${k}${k.at(-1)}`), 'colour', 'timeout'], m)!
    return { doc: setAt(doc, [...table.path, key], 1), expect: 'refused', names: dotted([...table.path, key]) }
  },
  'unknown-profile': ({ doc }, n, m) => {
    const models = (doc.models ?? []) as Doc[]
    if (models.length === 0) {
      const name = pick(['cheap', 'svc-pro', 'ultra-saver'], m)!
      return { doc: { ...doc, profiles: { [name]: {} } }, expect: 'refused', names: `profiles.${name}` }
    }
    const i = n % models.length
    const profiles = [...((models[i]!.profiles as string[] | undefined) ?? []), pick(['svc-pro', 'cheap', 'Pro'], m)!]
    return {
      doc: setAt(doc, ['models', i, 'profiles'], profiles),
      expect: 'refused',
      names: `models.${i}.profiles.${profiles.length - 1}`,
    }
  },
  // README, Routing: a model is considered only when its provider is configured.
  'missing-provider': ({ doc }, n) => {
    const models = (doc.models ?? []) as Doc[]
    if (models.length === 0) return null
    const i = n % models.length
    return {
      doc: setAt(doc, ['models', i, 'provider'], 'not-configured'),
      expect: 'accepted',
      names: '',
      meaningful: true,
    }
  },
  'duplicate-key': ({ doc }, n) => {
    const lines = toToml(doc).split('\n')
    const candidates = lines.flatMap((l, i) => (/^(\[[^[]|[A-Za-z0-9_"-]+ = )/.test(l) ? [i] : []))
    const i = pick(candidates, n)
    if (i === undefined) return null
    lines.splice(i + 1, 0, lines[i]!)
    // The second of the two is where the document stops making sense.
    return { text: lines.join('\n'), expect: 'refused', names: `${i + 2}:` }
  },
  // README is silent on a second [[models]] entry of the same id and provider.
  'duplicate-model': ({ doc }, n) => {
    const models = (doc.models ?? []) as Doc[]
    if (models.length === 0) return null
    const copy = { ...models[n % models.length]!, quality: 1 }
    return { doc: { ...doc, models: [...models, copy] }, expect: 'either', names: `models.${models.length}` }
  },
  'empty-profiles': ({ doc }) => ({
    doc: {
      ...doc,
      profiles: { pro: {} },
      models: ((doc.models ?? []) as Doc[]).map((x) => ({ ...x, profiles: [] })),
    },
    expect: 'accepted',
    names: '',
    meaningful: true,
  }),
  // README: requests go to `{base_url}/v1/messages` and the like, so a base URL is an http(s) URL.
  'bad-url': ({ doc }, n, m) => {
    const ids = Object.keys((doc.providers ?? {}) as Doc)
    const id = pick(ids, n)
    if (id === undefined) return null
    const url = pick(badUrls, m)!
    const names = `providers.${id}.base_url`
    // One that is a URL, of a port where nothing listens: served as any unreachable upstream.
    return {
      doc: setAt(doc, ['providers', id, 'base_url'], url),
      expect: url === reachableNowhere ? 'accepted' : 'refused',
      names,
    }
  },
  'toml-syntax': ({ doc }, n, m) => {
    const lines = toToml(doc).split('\n')
    const candidates = lines.flatMap((l, i) => (/^[[A-Za-z"]/.test(l) ? [i] : []))
    const i = pick(candidates, n)
    if (i === undefined) return null
    const line = lines[i]!
    const broken = pick(
      [
        line.replace(/"(?=[^"]*$)/, ''), // a string left open
        line.replace(' = ', ' '), // no `=`
        line.replace(/\]$/, ''), // a header left open
        line.replace(/ = .*$/, ' = '), // no value
        `${line} @@`, // garbage after the value
      ],
      m,
    )!
    if (broken === line) return null
    lines[i] = broken
    return { text: lines.join('\n'), expect: 'refused', names: `${i + 1}:` }
  },
  'huge-number': ({ doc }, n, m) => {
    const node = pick(numeric(doc), n)
    if (!node) return null
    const key = String(node.path.at(-1))
    const huge = pick([Number.POSITIVE_INFINITY, Number.NaN, 1e300, Number.MAX_VALUE, 2 ** 60], m)!
    // An integer past 2^53 is no TOML a parser can read exactly: its line is the fault.
    if (huge === 2 ** 60) return { doc: setAt(doc, node.path, huge), expect: 'refused', names: `${key} = ${huge}` }
    return {
      doc: setAt(doc, node.path, huge),
      expect: Number.isFinite(huge) && !boundedKeys.has(key) && !isPriceKey(key) ? 'either' : 'refused',
      names: dotted(node.path),
    }
  },
  // README names no grammar for a provider's id; the schema means one (schema.ts).
  'unicode-provider': ({ doc, env }, n, m) => {
    // A well-known id renamed would leave its usual variable configuring the real API.
    const ids = Object.keys((doc.providers ?? {}) as Doc).filter((id) => !(id in wellKnown))
    const from = pick(ids, n)
    if (from === undefined) return null
    const to = pick(['Ölbaum', 'мой-провайдер', 'a.b', 'rocket 🚀', 'UPPER'], m)!
    const providers = Object.fromEntries(Object.entries(doc.providers as Doc).map(([k, v]) => [k === from ? to : k, v]))
    const models = ((doc.models ?? []) as Doc[]).map((x) => (x.provider === from ? { ...x, provider: to } : x))
    return {
      doc: { ...doc, providers, models },
      env,
      expect: 'either',
      names: `providers.${to}`,
      meaningful: true,
    }
  },
  // Header values go upstream as HTTP headers, which carry Latin-1 only.
  'unicode-header': ({ doc }, n, m) => {
    const ids = Object.keys((doc.providers ?? {}) as Doc)
    const id = pick(ids, n)
    if (id === undefined) return null
    const value = pick(['naïve', '日本語', 'line\nbreak', 'emoji 🚀'], m)!
    return {
      doc: setAt(doc, ['providers', id, 'headers'], { 'X-Title': value }),
      expect: 'either',
      names: `providers.${id}.headers`,
    }
  },
}

/** A valid plan with one fault of `kind` put in. */
export function mutants(plans: fc.Arbitrary<ConfigPlan>): fc.Arbitrary<Mutant> {
  return fc
    .tuple(plans, fc.constantFrom(...mutationKinds), fc.nat(), fc.nat())
    .map(([plan, kind, n, m]) => {
      const applied = mutations[kind](plan, n, m)
      if (!applied) return null
      const doc = applied.doc ?? plan.doc
      const env = applied.env ?? plan.env
      const mutant: Mutant = {
        kind,
        text: applied.text ?? toToml(doc),
        env,
        expect: applied.expect,
        names: applied.names,
      }
      if (applied.meaningful) mutant.plan = { doc, env, now: plan.now }
      return mutant
    })
    .filter((m): m is Mutant => m !== null)
}
