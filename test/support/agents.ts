// Real coding-agent CLIs for end-to-end tests: installed from npm into a cache directory (never
// into package.json) and run with a bounded timeout in an environment that holds only what the
// test passes — no proxies, no user config, no credentials from the machine running the tests.
import { existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'

/** Where agent CLIs are installed: inside node_modules, so a clean checkout ignores it. */
export const agentsDir = resolve(import.meta.dir, '../../node_modules/.cache/agents')

export interface RunResult {
  exitCode: number | null
  stdout: string
  stderr: string
  timedOut: boolean
}

/** Runs a command to completion, killing it when it outlives `timeoutMs`. */
export async function runBounded(
  cmd: string[],
  opts: {
    timeoutMs: number
    cwd?: string
    env?: Record<string, string> /** Piped to the command; none by default. */
    stdin?: string
  },
): Promise<RunResult> {
  let proc: ReturnType<typeof Bun.spawn>
  try {
    const stdin = opts.stdin === undefined ? 'ignore' : new Blob([opts.stdin])
    proc = Bun.spawn(cmd, { cwd: opts.cwd, env: opts.env, stdin, stdout: 'pipe', stderr: 'pipe' })
  } catch (err) {
    return { exitCode: null, stdout: '', stderr: String(err), timedOut: false }
  }
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    proc.kill('SIGKILL')
  }, opts.timeoutMs)
  try {
    const [stdout, stderr, exitCode] = await Promise.all([
      new Response(proc.stdout as ReadableStream).text(),
      new Response(proc.stderr as ReadableStream).text(),
      proc.exited,
    ])
    return { exitCode, stdout, stderr, timedOut }
  } finally {
    clearTimeout(timer)
  }
}

export type Installed = { ok: true; bin: string } | { ok: false; skip: string }

/**
 * Makes `pkg@version` available under agentsDir and returns its binary. Installs when missing
 * (bounded by `timeoutMs`). Skips only when npm itself is unreachable; any other install failure
 * throws, so a broken package or a wrong version fails the test run instead of hiding.
 */
export async function ensureNpmAgent(opts: {
  pkg: string
  version: string
  bin: string
  timeoutMs?: number
}): Promise<Installed> {
  const bin = join(agentsDir, 'node_modules', '.bin', opts.bin)
  const hasVersion = async () => {
    if (!existsSync(bin)) return false
    const probe = await runBounded([bin, '--version'], { timeoutMs: 15_000, env: { PATH: process.env.PATH ?? '' } })
    return probe.exitCode === 0 && probe.stdout.includes(opts.version)
  }
  if (await hasVersion()) return { ok: true, bin }

  // npm keeps its own configuration (registry, cache) from the inherited environment. Ask it first
  // whether the registry answers at all: that is the one case that skips rather than fails.
  const env = { ...process.env } as Record<string, string>
  const ping = await runBounded(['npm', 'ping', '--fetch-retries=0'], { timeoutMs: 10_000, env })
  if (ping.exitCode !== 0) {
    const lines = (ping.stderr || ping.stdout).split('\n').filter((line) => line.startsWith('npm error'))
    const why = ping.timedOut
      ? 'timed out'
      : (lines.find((l) => l.includes('FetchError')) ?? lines[0] ?? `exit ${ping.exitCode}`)
    return {
      ok: false,
      skip: `npm registry unreachable, cannot install ${opts.pkg}@${opts.version} (npm ping: ${why})`,
    }
  }
  mkdirSync(agentsDir, { recursive: true })
  const install = await runBounded(
    [
      'npm',
      'install',
      '--prefix',
      agentsDir,
      '--no-audit',
      '--no-fund',
      '--loglevel=error',
      `${opts.pkg}@${opts.version}`,
    ],
    { timeoutMs: opts.timeoutMs ?? 90_000, env },
  )
  if (install.exitCode === 0 && (await hasVersion())) return { ok: true, bin }
  throw new Error(
    `installing ${opts.pkg}@${opts.version} into ${agentsDir} failed${install.timedOut ? ' (timed out)' : ''} although npm is reachable:\n${install.stderr}${install.stdout}`,
  )
}

/**
 * Codex settings that keep it on loopback: no analytics, feedback or telemetry, and none of the
 * start-up plugin sync and app discovery that reach chatgpt.com and api.github.com. Appended to
 * the tests' config.toml (TOML tables, so it goes last).
 */
export const codexLoopbackOnly = `[analytics]
enabled = false

[feedback]
enabled = false

[otel]
exporter = "none"

# Plugin sync and app discovery reach chatgpt.com and api.github.com at start-up.
[features]
plugins = false
remote_plugin = false
apps = false
tool_suggest = false
`

/** A request as it arrived at svc's edge, with what svc answered. */
export interface Inbound {
  method: string
  path: string
  search: string
  headers: Record<string, string>
  body: Record<string, unknown>
  status: number
  requestId: string | null
}

/**
 * Serves an app on a real loopback port (what `svc serve` does), recording every request an
 * agent sends. The idle timeout is off: an agent holds its stream open while it runs tools, and
 * Bun's default closes a connection quiet for 10 s.
 */
export function serveRecording(app: { handle(request: Request): Promise<Response> }) {
  const inbound: Inbound[] = []
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    idleTimeout: 0,
    fetch: async (req) => {
      const text = await req.clone().text()
      const url = new URL(req.url)
      const entry: Inbound = {
        method: req.method,
        path: url.pathname,
        search: url.search,
        headers: Object.fromEntries(req.headers.entries()),
        body: text ? JSON.parse(text) : {},
        status: 0,
        requestId: null,
      }
      inbound.push(entry)
      const res = await app.handle(req)
      entry.status = res.status
      entry.requestId = res.headers.get('x-request-id')
      return res
    },
  })
  return { server, inbound }
}
