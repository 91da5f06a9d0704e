// The processes a bench run starts: each pinned, logged to a file, waited for until it accepts
// connections, and ended by its own pid (never by name) when the run stops, however it stops.
import { closeSync, openSync } from 'node:fs'
import { createServer } from 'node:net'
import type { Subprocess } from 'bun'

export interface Service {
  name: string
  pid: number
  url: string
  port: number
  proc: Subprocess
  logFile: string
}

const running = new Set<Subprocess>()

/** A port nobody listens on right now (the kernel picks it; closed before use). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer()
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address()
      const port = typeof addr === 'object' && addr ? addr.port : 0
      srv.close(() => resolve(port))
    })
  })
}

export interface StartOptions {
  name: string
  cmd: string[]
  port: number
  logFile: string
  env?: Record<string, string | undefined>
  cwd?: string
  /** How long it may take to accept a TCP connection. */
  readyTimeoutMs?: number
}

/** Starts a server and resolves once its port accepts connections. */
export async function startService(opts: StartOptions): Promise<Service> {
  const log = openSync(opts.logFile, 'a')
  const proc = Bun.spawn(opts.cmd, {
    cwd: opts.cwd,
    env: { ...process.env, ...opts.env },
    stdout: log,
    stderr: log,
    stdin: 'ignore',
  })
  closeSync(log)
  running.add(proc)
  void proc.exited.then(() => running.delete(proc))
  const deadline = Date.now() + (opts.readyTimeoutMs ?? 20_000)
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) break
    if (await accepts(opts.port)) {
      return {
        name: opts.name,
        pid: proc.pid,
        url: `http://127.0.0.1:${opts.port}`,
        port: opts.port,
        proc,
        logFile: opts.logFile,
      }
    }
    await Bun.sleep(50)
  }
  await stopService(proc)
  const tail = (
    await Bun.file(opts.logFile)
      .text()
      .catch(() => '')
  ).slice(-1500)
  throw new Error(`${opts.name} did not start on port ${opts.port} (${opts.cmd.join(' ')}):\n${tail}`)
}

async function accepts(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
    socket.end()
    return true
  } catch {
    return false
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
export async function stopService(proc: Subprocess, graceMs = 5000): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return
  proc.kill('SIGTERM')
  const killed = await Promise.race([proc.exited.then(() => true), Bun.sleep(graceMs).then(() => false)])
  if (!killed) {
    proc.kill('SIGKILL')
    await proc.exited
  }
}

/** Ends every process this run started that is still alive (for exits and the watchdog). */
export function killAllStarted(): void {
  for (const proc of running) {
    try {
      proc.kill('SIGKILL')
    } catch {
      // already gone
    }
  }
}
