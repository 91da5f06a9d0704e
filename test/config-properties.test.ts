// svc.toml texts and environments generated from the README's grammar ("Configuration", "The
// built-in catalog", "Routing", "Model routes"), loaded as `svc serve` loads them and served
// in-process: a valid config serves what it says; a broken one is refused at start with one
// message that names the fault, or, where the README gives it a meaning, loads and answers.
import { afterAll, describe, expect, test } from 'bun:test'
import { exampleConfig } from '../src/cli/init'
import { ConfigError } from '../src/config/load'
import { answersProblems, loadAsServe, servesProblems, simUsage, startGateway } from './support/config-gateway'
import { type Mutant, mutants } from './support/config-mutations'
import * as readme from './support/config-readme'
import { type ConfigPlan, configPlans, implied } from './support/config-plans'
import { toToml } from './support/config-toml'
import { assertNoProblems, propertyRuns } from './support/property-runs'
import { startSimulator } from './support/simulator'

const { options } = propertyRuns(20261127)

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

const validPlans = configPlans(sim.url)

describe('valid configs serve what they say', () => {
  test('windows on both models routes, the model that serves each profile on each surface, and its price', async () => {
    await assertNoProblems(validPlans, playValid, options(20))
  })
})

/**
 * One message that names the fault: a ConfigError (svc serve prints it as one line, exit 1),
 * naming the file and the key path or line at fault, with nothing of a stack, a TypeBox schema or
 * a value JavaScript made up (JSON's `null` for TOML's inf or nan, say).
 */
function refusalProblems(mutant: Mutant, err: unknown): string[] {
  if (!(err instanceof ConfigError)) return [`refused with ${(err as Error)?.name}, not a ConfigError: ${String(err)}`]
  const problems: string[] = []
  const message = err.message
  if (!message.includes('svc.toml')) problems.push(`the message does not name the file: ${message}`)
  // smol-toml's code frame pads a line's number to the widest one shown ("9 :" beside "10:").
  if (!message.replace(/(\d) +:/g, '$1:').includes(mutant.names)) {
    problems.push(`the message does not name ${mutant.names}: ${message}`)
  }
  const noise = /undefined|\[object Object\]|TypeError|RangeError|\n\s+at |"anyOf"|"\$id"|Symbol\(|\(got null\)/.exec(
    message,
  )
  if (noise) problems.push(`the message carries ${JSON.stringify(noise[0])}: ${message}`)
  return problems
}

/** Refused with a message that names the fault, or loaded and answering, as the README says of it. */
async function playMutant(mutant: Mutant): Promise<string[]> {
  const problems = await mutantProblems(mutant)
  return problems.length === 0
    ? []
    : [...problems, `svc.toml (${mutant.kind}):\n${mutant.text}env: ${JSON.stringify(mutant.env)}`]
}

async function mutantProblems(mutant: Mutant): Promise<string[]> {
  let config: ReturnType<typeof loadAsServe>
  try {
    config = loadAsServe(mutant.text, mutant.env)
  } catch (err) {
    const problems = refusalProblems(mutant, err)
    if (mutant.expect === 'accepted') problems.unshift(`refused, but the README gives it a meaning: ${String(err)}`)
    return problems
  }
  if (mutant.expect === 'refused') return [`${mutant.kind} loaded; start-up should stop, naming ${mutant.names}`]
  const gateway = await startGateway(config, mutant.plan?.now ?? Date.parse('2026-11-22T12:00:00Z'))
  return mutant.plan ? servesProblems(gateway, sim, mutant.plan, implied(mutant.plan)) : answersProblems(gateway)
}

describe('invalid configs are refused with one message that names the fault', () => {
  test('wrong types, bounds, unknown keys and profiles, duplicates, bad URLs, TOML syntax, huge numbers, unicode names', async () => {
    await assertNoProblems(mutants(validPlans), playMutant, options(90))
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

  test.each(Object.entries(readme.fragments))('README: %s', (_, text) => {
    expect(() => loadAsServe(text, {})).not.toThrow()
  })
})
