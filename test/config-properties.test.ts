// svc.toml texts and environments generated from the README's grammar ("Configuration", "The
// built-in catalog", "Routing", "Model routes"), loaded as `svc serve` loads them and served
// in-process: a valid config serves what it says; a broken one is refused at start with one
// message that names the fault, or, where the README gives it a meaning, loads and answers.
import { afterAll, describe, expect, test } from 'bun:test'
import { exampleConfig } from '../src/cli/init'
import { builtinCatalog } from '../src/config/catalog'
import { ConfigError } from '../src/config/load'
import { answersProblems, loadAsServe, servesProblems, simUsage, startGateway } from './support/config-gateway'
import { type Mutant, mutants } from './support/config-mutations'
import * as readme from './support/config-readme'
import { type ConfigPlan, configPlans, implied } from './support/config-plans'
import { toToml } from './support/config-toml'
import { assertNoProblems, propertyRuns } from './support/property-runs'
import { startSimulator } from './support/simulator'

const { options } = propertyRuns(20261127)

const builtinIds = new Set(builtinCatalog.map((r) => r.id))

const sim = startSimulator()
sim.setScenario('*', { text: 'Hi there', usage: simUsage })
afterAll(() => sim.stop())

/** Loads and serves a plan; every way it departs from what its config implies is a problem. */
async function playValid(plan: ConfigPlan): Promise<string[]> {
  const text = toToml(plan.doc)
  let config: ReturnType<typeof loadAsServe>
  try {
    config = loadAsServe(text, plan.env)
  } catch (err) {
    return [`a valid config was refused: ${(err as Error).message}\n${text}`]
  }
  const gateway = await startGateway(config, plan.now)
  const problems = await servesProblems(gateway, sim, plan, implied(plan))
  return problems.length === 0 ? [] : [...problems, `svc.toml:\n${text}env: ${JSON.stringify(plan.env)}`]
}

/**
 * KNOWN BUG: a new [[models]] entry takes every field it leaves out from an earlier entry of the
 * same id under another provider, where the README ("Configuration") says an entry "adds a model,
 * or overrides a built-in one with the same id and provider":
 *   [[models]]
 *   id = "m"
 *   provider = "elsewhere"
 *   profiles = []
 *   quality = 0
 *
 *   [[models]]
 *   id = "m"
 *   provider = "sim"            # keyed, at the simulator
 *   profiles = ["pro"]
 *   quality = 50
 *   input_usd_per_mtok = 1
 *   output_usd_per_mtok = 1
 * svc-pro answers 503 "no model can serve this request under svc-pro: m via sim: no known price
 * (no price, no route)": the second takes the first's unknown cache-write price. Were the first
 * priced with `context_window = 1024` and `cache_read_usd_per_mtok = 0`, svc-pro would show a
 * 1,024-token window and charge nothing for cache reads.
 * src/config/load.ts, resolveModels: `base` falls back to any row with the id, file rows included.
 * Plans with two entries of one id (not removed) under different providers are left out.
 */
function inheritsAcrossProviders(plan: ConfigPlan): boolean {
  const entries = ((plan.doc.models ?? []) as Record<string, unknown>[]).filter((m) => m.enabled !== false)
  return entries.some((m, i) => entries.slice(0, i).some((e) => e.id === m.id && e.provider !== m.provider))
}

const validPlans = configPlans(sim.url).filter((plan) => !inheritsAcrossProviders(plan))

describe('valid configs serve what they say', () => {
  test('windows on both models routes, the model that serves each profile on each surface, and its price', async () => {
    await assertNoProblems(validPlans, playValid, options(20))
  })
})

/** What the README says of a mutant, as a check: what a refusal names, whether it may load. */
interface Expectation {
  expect: Mutant['expect']
  names: string
  /** The message names the file. */
  namesFile: boolean
  /** Loaded, calls past 127.0.0.1 are part of a known bug. */
  offLoopback: boolean
}

/**
 * The README's expectation of a mutant, weakened exactly where a known bug breaks it (listed in the
 * report; each left out until fixed). null: the case is left out altogether.
 */
function expectationOf(mutant: Mutant): Expectation | null {
  const readme: Expectation = { expect: mutant.expect, names: mutant.names, namesFile: true, offLoopback: false }
  const entry = mutant.model
  if (mutant.kind === 'fine-price' && entry && !builtinIds.has(String(entry.id))) {
    // KNOWN BUG: a price finer than 0.001 USD/Mtok on a model with no other half of a price (input
    // or output) loads, where the README ("Money and credit") says it is refused at start:
    //   [[models]]
    //   id = "m"
    //   provider = "p"
    //   profiles = []
    //   quality = 0
    //   output_usd_per_mtok = 0.0001
    // src/config/load.ts, toCatalogModel: prices are converted, and so checked, only when all are known.
    if (entry.input_usd_per_mtok === undefined || entry.output_usd_per_mtok === undefined) return null
  }
  if (mutant.kind === 'fine-price' && entry) {
    // KNOWN BUG: a price finer than 0.001 USD/Mtok is refused with a message that names the model
    // but neither the file nor the key (which of its four or more prices?):
    //   [[models]]
    //   id = "claude-opus-5-5"
    //   provider = "anthropic"
    //   cache_write_usd_per_mtok = 0.0001
    // → "model claude-opus-5-5 (anthropic): price 0.0001 USD/Mtok is not a whole number of nanos
    // per token (step 0.001)". src/config/load.ts, toCatalogModel: checked after the merge, on the
    // catalog row, where the entry's index (`models.0`) and key are no longer known.
    return { ...readme, namesFile: false, names: `model ${entry.id} (${entry.provider}): price` }
  }
  if (mutant.kind === 'huge-number' && mutant.names === 'billing.starter_grant.usd' && /^usd = \d/m.test(mutant.text)) {
    // KNOWN BUG: a starter grant past 2^53 nanos (about 9,007,199 USD) escapes the loader as a
    // RangeError, which `svc serve` prints as "unexpected error" with its stack:
    //   [billing.starter_grant]
    //   usd = 10000000
    // → "RangeError: amount 10000000 USD is out of range", naming neither the file nor the key.
    // src/config/load.ts, resolveConfig: usdToNanos (src/ledger/pricing.ts) is called unguarded.
    return null
  }
  if (mutant.kind === 'bad-url' && readme.expect === 'refused' && !mutant.text.includes('base_url = ""')) {
    // KNOWN BUG: a base URL that is no http(s) URL loads, and every request to its models then
    // fails upstream (502 "upstream unreachable: Invalid URL"; "http://" sends them to a host
    // named `v1` or `responses`):
    //   [providers.p]
    //   kind = "anthropic"
    //   base_url = "not a url"
    //   api_key_env = "K"
    // src/config/schema.ts, ProviderSection.base_url: any non-empty string.
    return { ...readme, expect: 'either', offLoopback: true }
  }
  return readme
}

/**
 * One message that names the fault: a ConfigError (svc serve prints it as one line, exit 1),
 * naming the file and the key path or line at fault, with nothing of a stack, a TypeBox schema or
 * a value JavaScript made up.
 */
function refusalProblems(expected: Expectation, err: unknown): string[] {
  if (!(err instanceof ConfigError)) return [`refused with ${(err as Error)?.name}, not a ConfigError: ${String(err)}`]
  const problems: string[] = []
  const message = err.message
  if (expected.namesFile && !message.includes('svc.toml'))
    problems.push(`the message does not name the file: ${message}`)
  // smol-toml's code frame pads a line's number to the widest one shown ("9 :" beside "10:").
  if (!message.replace(/(\d) +:/g, '$1:').includes(expected.names)) {
    problems.push(`the message does not name ${expected.names}: ${message}`)
  }
  const noise = /undefined|\[object Object\]|TypeError|RangeError|\n\s+at |"anyOf"|"\$id"|Symbol\(/.exec(message)
  if (noise) problems.push(`the message carries ${JSON.stringify(noise[0])}: ${message}`)
  return problems
}

/** Refused with a message that names the fault, or loaded and answering, as the README says of it. */
async function playMutant(mutant: Mutant): Promise<string[]> {
  const expected = expectationOf(mutant)!
  const problems = await mutantProblems(mutant, expected)
  return problems.length === 0
    ? []
    : [...problems, `svc.toml (${mutant.kind}):\n${mutant.text}env: ${JSON.stringify(mutant.env)}`]
}

async function mutantProblems(mutant: Mutant, expected: Expectation): Promise<string[]> {
  let config: ReturnType<typeof loadAsServe>
  try {
    config = loadAsServe(mutant.text, mutant.env)
  } catch (err) {
    const problems = refusalProblems(expected, err)
    if (expected.expect === 'accepted') problems.unshift(`refused, but the README gives it a meaning: ${String(err)}`)
    return problems
  }
  if (expected.expect === 'refused') return [`${mutant.kind} loaded; start-up should stop, naming ${expected.names}`]
  const gateway = await startGateway(config, mutant.plan?.now ?? Date.parse('2026-11-22T12:00:00Z'))
  return mutant.plan
    ? servesProblems(gateway, sim, mutant.plan, implied(mutant.plan))
    : answersProblems(gateway, { offLoopback: expected.offLoopback })
}

describe('invalid configs are refused with one message that names the fault', () => {
  test('wrong types, bounds, unknown keys and profiles, duplicates, bad URLs, TOML syntax, huge numbers, unicode names', async () => {
    await assertNoProblems(
      mutants(validPlans).filter((m) => expectationOf(m) !== null),
      playMutant,
      options(90),
    )
  })
})

/** `svc init`'s example with its commented tables taken in, as an operator edits it. */
const uncommented = (example: string) => example.replace(/^# (?=\[|[a-z_]+ = )/gm, '')

describe("svc init's example and the README's fragments load as written", () => {
  test('the example svc init writes loads, and its values are the defaults it documents', () => {
    const written = loadAsServe(exampleConfig, {})
    const empty = loadAsServe('', {})
    expect([written.server, written.billing, written.routing, written.models]).toEqual([
      empty.server,
      empty.billing,
      empty.routing,
      empty.models,
    ])
  })

  test('the example with its commented providers and model taken in', () => {
    const config = loadAsServe(uncommented(exampleConfig), { OLLAMA_API_KEY: 'k', ANTHROPIC_API_KEY: 'a' })
    expect(config.providers.local).toMatchObject({
      kind: 'openai-chat',
      baseUrl: 'http://127.0.0.1:11434/v1',
      apiKey: 'k',
    })
    expect(config.models.find((m) => m.id === 'qwen3-coder')).toMatchObject({
      provider: 'local',
      upstreamModel: 'qwen3-coder:30b',
      profiles: ['ultra_saver'],
      contextWindow: 262_144,
    })
  })

  test("README's quick start against the simulator serves each profile with sim-model", async () => {
    const text = readme.quickStart.replace('http://127.0.0.1:8787', sim.url)
    const gateway = await startGateway(loadAsServe(text, { SIM_KEY: 'anything' }), Date.parse('2026-11-22T12:00:00Z'))
    for (const model of ['svc-pro', 'svc-max', 'svc-ultra-saver']) {
      const res = await gateway.call(
        '/compat-a/v1/messages',
        { model, max_tokens: 16, messages: [{ role: 'user', content: 'Hello' }] },
        { 'anthropic-version': '2023-06-01' },
      )
      expect([res.status, res.body.model]).toEqual([200, 'sim-model'])
    }
  })

  // KNOWN BUG: "a file that sets `[providers.openai] kind = "openai-chat"` keeps Chat" (README, "The
  // built-in catalog"), but that table alone is refused: "svc.toml: providers.openai.base_url:
  // expected required property". src/config/schema.ts, ProviderSection: base_url is required even
  // for a well-known id, whose URL svc knows (src/config/load.ts, wellKnownProviders).
  const loadable = Object.entries(readme.fragments).filter(([name]) => name !== 'OpenAI kept on Chat')
  test.each(loadable)('README: %s', (_, text) => {
    expect(() => loadAsServe(text, {})).not.toThrow()
  })
})
