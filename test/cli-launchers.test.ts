// What `svc claude` and `svc codex` hand the agent, with a fake agent (a shell script) in its place:
// Claude Code's routing in --settings (a user's own merged in), a `--` that is the agent's kept,
// and the exit code of an agent killed by a signal, as a shell reports it.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Io } from '../src/cli/context'
import { main } from '../src/main'
import { createHarness, type Harness } from './support/harness'

let h: Harness
let server: ReturnType<typeof Bun.serve>
let gateway: string
const dirs: string[] = []

beforeAll(async () => {
  h = await createHarness({ grantUsd: 3 })
  server = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: (r) => h.app.handle(r) })
  gateway = `http://127.0.0.1:${server.port}`
})
afterAll(() => {
  server.stop(true)
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** The CLI in-process, signed in through the environment, with `body` as both agents. */
function launcher(body = `printf '%s\\n' "$@" > "$HOME/agent-args.txt"`) {
  const home = mkdtempSync(join(tmpdir(), 'svc-cli-launchers-'))
  dirs.push(home)
  const bin = join(home, 'agent.sh')
  writeFileSync(bin, `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  const err: string[] = []
  const io: Io = {
    env: {
      HOME: home,
      PATH: process.env.PATH,
      SVC_URL: gateway,
      SVC_API_KEY: h.key,
      SVC_CLAUDE_BIN: bin,
      SVC_CODEX_BIN: bin,
    },
    cwd: home,
    out: () => {},
    err: (t) => err.push(t),
  }
  const run = async (...argv: string[]) => {
    err.length = 0
    return main(argv, io)
  }
  const args = () => readFileSync(join(home, 'agent-args.txt'), 'utf8').trimEnd().split('\n')
  return { home, io, run, args, err: () => err.join('') }
}

/** What svc pins for Claude Code under the profile: everything it sets but the key and the window. */
const routing = (profile = 'svc-pro') => ({
  ANTHROPIC_BASE_URL: `${gateway}/compat-a`,
  ANTHROPIC_API_KEY: '',
  ANTHROPIC_MODEL: profile,
  ANTHROPIC_SMALL_FAST_MODEL: 'svc-ultra-saver',
  ANTHROPIC_DEFAULT_HAIKU_MODEL: 'svc-ultra-saver',
  ANTHROPIC_DEFAULT_SONNET_MODEL: profile,
  ANTHROPIC_DEFAULT_OPUS_MODEL: profile,
  ANTHROPIC_CUSTOM_HEADERS: `x-session-source: claude-code\nx-agent-id: claude-code@${hostname()}`,
})

describe("svc claude: the gateway in Claude Code's --settings", () => {
  test('first, before the arguments, holding the routing but not the key (an argument is readable by all: ps)', async () => {
    const c = launcher()
    expect(await c.run('claude', '--profile', 'max', '-p', 'do it')).toBe(0)
    const [flag, settings, ...rest] = c.args()
    expect(flag).toBe('--settings')
    expect(JSON.parse(settings!)).toEqual({ env: routing('svc-max') })
    expect(rest).toEqual(['-p', 'do it'])
    expect(c.args().join('\n')).not.toContain(h.key)
  })

  test("a --settings of the user's own (JSON, a file, --settings=FILE) is merged under svc's and given in one; one after -- is not a flag", async () => {
    const c = launcher()
    const theirs = {
      model: 'opus',
      permissions: { allow: ['Bash'] },
      env: { FOO: '1', ANTHROPIC_BASE_URL: 'http://elsewhere' },
    }
    const merged = { ...theirs, env: { FOO: '1', ...routing() } }
    mkdirSync(join(c.home, 'conf'))
    writeFileSync(join(c.home, 'conf', 'mine.json'), JSON.stringify(theirs))
    writeFileSync(join(c.home, 'conf', 'list.json'), '[1]')
    for (const given of [
      ['--settings', JSON.stringify(theirs)],
      ['--settings', 'conf/mine.json'],
      ['--settings=conf/mine.json'],
      // Claude Code reads only the last: so does svc.
      ['--settings', '{"model":"haiku"}', '--settings', join(c.home, 'conf', 'mine.json')],
    ]) {
      expect(await c.run('claude', '-p', ...given, 'hi')).toBe(0)
      const [flag, settings, ...rest] = c.args()
      expect({ given, flag, settings: JSON.parse(settings!), rest }).toEqual({
        given,
        flag: '--settings',
        settings: merged,
        rest: ['-p', 'hi'],
      })
    }
    expect(await c.run('claude', '-p', '--', '--settings', 'x')).toBe(0)
    expect(c.args().slice(2)).toEqual(['-p', '--', '--settings', 'x'])
    // One svc cannot read: said, and no agent starts without the gateway's settings.
    for (const [bad, why] of [
      ['conf/none.json', '--settings conf/none.json: ENOENT'],
      ['{"env": }', '--settings JSON: not valid JSON'],
      ['conf/list.json', '--settings conf/list.json: not a JSON object'],
    ]) {
      rmSync(join(c.home, 'agent-args.txt'), { force: true })
      expect(await c.run('claude', '--settings', bad!, '-p', 'hi')).toBe(2)
      expect(c.err()).toStartWith(`svc: ${why}`)
    }
  })
})

describe('arguments: a -- is dropped only where it ends svc’s own flags', () => {
  test.each([
    [['-p', '--', '--version'], ['-p', '--', '--version'], 'svc-pro'],
    [['--', '--version'], ['--version'], 'svc-pro'],
    [['--profile', 'max', '--', '-p', 'hi'], ['-p', 'hi'], 'svc-max'],
    [['-p', 'do it', '--', '--verbose'], ['-p', 'do it', '--', '--verbose'], 'svc-pro'],
    [['-p', '--', '--profile', 'max'], ['-p', '--', '--profile', 'max'], 'svc-pro'],
  ])('svc claude %j gives Claude Code %j (%s)', async (argv, expected, model) => {
    const c = launcher()
    expect(await c.run('claude', ...argv)).toBe(0)
    expect(c.args().slice(2)).toEqual(expected)
    expect(JSON.parse(c.args()[1]!).env.ANTHROPIC_MODEL).toBe(model)
  })

  test('svc codex exec -- "-n lines?": the -- reaches Codex, after svc\'s -c overrides', async () => {
    const c = launcher()
    expect(await c.run('codex', 'exec', '--', '-n lines?')).toBe(0)
    expect(c.args().slice(-3)).toEqual(['exec', '--', '-n lines?'])
    expect(await c.run('codex', '--', 'exec', 'hi')).toBe(0)
    expect(c.args().slice(-2)).toEqual(['exec', 'hi'])
  })
})

describe('an agent killed by a signal', () => {
  test.each([
    ['SEGV', 139],
    ['ABRT', 134],
    ['KILL', 137],
    ['TERM', 143],
    ['INT', 130],
  ])('SIG%s: svc exits %d, as a shell reports it', async (signal, code) => {
    const c = launcher(`kill -${signal} $$`)
    expect(await c.run('claude', '-p', 'x')).toBe(code)
    expect(await c.run('codex', 'exec', 'x')).toBe(code)
  })
})
