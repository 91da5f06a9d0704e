// Runs the real gateway (`bun src/main.ts serve`) as a child process for tests that need signals,
// crashes and restarts: a throwaway directory with svc.toml and the database, the URL read from the
// JSON log line `svc is listening`, every stderr line kept for assertions.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Subprocess } from 'bun'

const repoRoot = resolve(import.meta.dir, '../..')

export interface LogLine {
  level: string
  msg: string
  [field: string]: unknown
}

export interface GatewayProcess {
  url: string
  port: number
  pid: number
  /** Parsed JSON log lines so far; anything else on stderr is kept in `stderr`. */
  logs: LogLine[]
  stderr(): string
  /** Resolves with the first log line (already seen or still to come) that matches, or rejects after timeoutMs. */
  waitForLog(match: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>
  /** The exit code (or 128 + signal number), bounded by timeoutMs. */
  waitForExit(timeoutMs?: number): Promise<number>
  signal(signal: 'SIGTERM' | 'SIGINT' | 'SIGHUP' | 'SIGKILL'): void
  /** SIGKILL if still running; safe to call twice. */
  kill(): Promise<void>
}

export interface GatewayDir {
  dir: string
  config: string
  database: string
  /** The first account's key, written by serve on an empty database. */
  firstKey(): string
  remove(): void
}

/** A temp directory holding `svc.toml` (the given text) and, once served, `svc.db`. */
export function gatewayDir(toml: string): GatewayDir {
  const dir = mkdtempSync(join(tmpdir(), 'svc-proc-'))
  const config = join(dir, 'svc.toml')
  writeFileSync(config, toml)
  return {
    dir,
    config,
    database: join(dir, 'svc.db'),
    firstKey: () => readFileSync(join(dir, 'first-api-key'), 'utf8').trim(),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  }
}

const signalNumbers: Record<string, number> = { SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }

/** Starts `svc serve` on a free loopback port and resolves once it listens. */
export async function startGateway(
  where: GatewayDir,
  /** `launcher`: a command svc is started under (`['nohup']`). */
  opts: { env?: Record<string, string>; startTimeoutMs?: number; launcher?: string[] } = {},
): Promise<GatewayProcess> {
  // Only what the gateway needs: no provider keys or SVC_* settings leak in from the test runner.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: where.dir,
    SVC_LOG_LEVEL: 'info',
    ...opts.env,
  }
  const proc: Subprocess<'ignore', 'pipe', 'pipe'> = Bun.spawn(
    [
      ...(opts.launcher ?? []),
      process.execPath,
      'src/main.ts',
      'serve',
      '--config',
      where.config,
      '--db',
      where.database,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
    ],
    { cwd: repoRoot, env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' },
  )
  const logs: LogLine[] = []
  let raw = ''
  const listeners = new Set<() => void>()
  const notify = () => {
    for (const listener of listeners) listener()
  }
  // Drain both pipes so the child never blocks on a full one.
  void new Response(proc.stdout).text()
  void (async () => {
    const decoder = new TextDecoder()
    let pending = ''
    for await (const chunk of proc.stderr) {
      const text = decoder.decode(chunk, { stream: true })
      raw += text
      pending += text
      const lines = pending.split('\n')
      pending = lines.pop() ?? ''
      for (const line of lines) {
        try {
          logs.push(JSON.parse(line) as LogLine)
        } catch {
          // Not a log line (a crash message): kept in raw.
        }
      }
      notify()
    }
    notify()
  })()

  let exitCode: number | undefined
  const exited = proc.exited.then((code) => {
    exitCode = proc.signalCode ? 128 + (signalNumbers[proc.signalCode] ?? 0) : code
    notify()
    return exitCode
  })

  const waitForLog: GatewayProcess['waitForLog'] = (match, timeoutMs = 10_000) =>
    new Promise((resolvePromise, reject) => {
      const check = () => {
        const found = logs.find(match)
        if (found) {
          done()
          resolvePromise(found)
        } else if (exitCode !== undefined) {
          done()
          reject(new Error(`gateway exited (${exitCode}) before the expected log line; stderr:\n${raw}`))
        }
      }
      const timer = setTimeout(() => {
        done()
        reject(new Error(`timed out after ${timeoutMs} ms waiting for a log line; stderr:\n${raw}`))
      }, timeoutMs)
      const done = () => {
        clearTimeout(timer)
        listeners.delete(check)
      }
      listeners.add(check)
      check()
    })

  const waitForExit: GatewayProcess['waitForExit'] = (timeoutMs = 10_000) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`gateway still running after ${timeoutMs} ms; stderr:\n${raw}`)),
        timeoutMs,
      )
    })
    return Promise.race([exited, timeout]).finally(() => clearTimeout(timer))
  }

  const handle: GatewayProcess = {
    url: '',
    port: 0,
    pid: proc.pid,
    logs,
    stderr: () => raw,
    waitForLog,
    waitForExit,
    signal: (signal) => proc.kill(signal),
    kill: async () => {
      if (exitCode === undefined) proc.kill('SIGKILL')
      await exited
    },
  }
  try {
    const listening = await waitForLog((l) => l.msg === 'svc is listening', opts.startTimeoutMs ?? 15_000)
    handle.url = String(listening.url)
    handle.port = Number(new URL(handle.url).port)
  } catch (err) {
    await handle.kill()
    throw err
  }
  return handle
}

/** True when nothing accepts a TCP connection on the port any more (connection refused). */
export async function refusesConnections(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
    socket.end()
    return false
  } catch {
    return true
  }
}
