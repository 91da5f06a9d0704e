// What the kernel says about a process under test: resident memory (/proc/PID/status) and CPU
// time (/proc/PID/stat utime+stime, all threads), plus core pinning with taskset.
import { readFileSync } from 'node:fs'
import { availableParallelism } from 'node:os'

let ticksPerSecond: number | undefined

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    const out = Bun.spawnSync(['getconf', 'CLK_TCK']).stdout.toString().trim()
    ticksPerSecond = Number(out) > 0 ? Number(out) : 100
  }
  return ticksPerSecond
}

/** VmRSS in bytes, or undefined once the process is gone. */
export function readRssBytes(pid: number): number | undefined {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) * 1024 : undefined
  } catch {
    return undefined
  }
}

/** utime + stime of every thread of the process, in milliseconds. */
export function readCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  // After the name, field 3 (state) is index 0, so utime (14) is 11 and stime (15) is 12.
  const ticks = Number(fields[11]) + Number(fields[12])
  return (ticks * 1000) / clockTicks()
}

/** Samples a process's VmRSS on an interval; `stop()` returns the peak seen. */
export function sampleRss(pid: number, everyMs = 50): { stop: () => number; peak: () => number } {
  let peak = readRssBytes(pid) ?? 0
  const timer = setInterval(() => {
    const rss = readRssBytes(pid)
    if (rss !== undefined && rss > peak) peak = rss
  }, everyMs)
  return {
    peak: () => peak,
    stop: () => {
      clearInterval(timer)
      const rss = readRssBytes(pid)
      if (rss !== undefined && rss > peak) peak = rss
      return peak
    },
  }
}

/** Whether the gateway can have a core of its own: two cores or more and taskset present. */
export function canPin(): boolean {
  return availableParallelism() >= 2 && Bun.spawnSync(['sh', '-c', 'command -v taskset']).exitCode === 0
}

/** The command prefixed with `taskset -c CORE` when pinning is possible. */
export function pinned(core: number | undefined, cmd: string[]): string[] {
  return core === undefined ? cmd : ['taskset', '-c', String(core), ...cmd]
}

/** Moves every thread of this process (and so its future children) to one core. */
export function pinSelf(core: number): void {
  const res = Bun.spawnSync(['taskset', '-a', '-cp', String(core), String(process.pid)])
  if (res.exitCode !== 0) throw new Error(`taskset could not pin the bench to core ${core}: ${res.stderr.toString()}`)
}
