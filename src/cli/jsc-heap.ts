// JavaScriptCore sizes the JS heap's collection thresholds from the machine's RAM. On a large
// machine it lets a busy gateway's heap run further ahead of its live data before collecting:
// on a 24 GB machine svc peaked at 109–116 MB RSS under 64 connections, against 91–98 MB when
// JSC was told the machine had 8 GB or less, with the same throughput (bench/README.md). A server
// that shares its host wants the smaller footprint, so `svc serve` sizes the heap for at most
// 4 GiB of RAM, and for its cgroup's memory limit where that is lower (a container's, a unit's
// MemoryMax=): JSC reads the host's RAM only, and in a 256 MiB limit sized itself for 4 GiB (an
// audit; svc was killed by the kernel under a burst). JSC reads the option only when it starts,
// so the process re-executes itself once with it set: same pid, same stdio, same arguments. An
// operator's own BUN_JSC_forceRAMSize is left as it is.
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'

const option = 'BUN_JSC_forceRAMSize'
const heapSizedForRam = 4 * 1024 ** 3

/** Returns only if no re-execution is needed (or possible); otherwise the process image is replaced. */
export function reexecWithServingHeap(): void {
  if (process.env[option] !== undefined) return
  const ram = servingHeapRam()
  if (ram >= totalmem()) return
  // A compiled binary sees its entry as argv[1] (/$bunfs/...) and must not be handed it again;
  // `bun src/main.ts` needs the script path and the runtime's own flags.
  const compiled = process.argv[1]?.startsWith('/$bunfs/') ?? false
  const args = compiled
    ? [process.execPath, ...process.argv.slice(2)]
    : [process.execPath, ...process.execArgv, ...process.argv.slice(1)]
  try {
    process.execve?.(process.execPath, args, { ...process.env, [option]: String(ram) })
  } catch {
    // Not fatal: the gateway serves the same, with JSC's own heap sizing.
  }
}

/** The RAM `svc serve` sizes its heap for: at most 4 GiB, and no more than its cgroup's memory limit. */
export const servingHeapRam = () =>
  Math.min(heapSizedForRam, cgroupMemoryLimit(readProcFile) ?? Number.POSITIVE_INFINITY)

const readProcFile = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/**
 * The memory limit of the cgroup this process runs in, in bytes, if any: the least of cgroup v2's
 * `memory.max` or v1's `memory.limit_in_bytes` on its own group and every group above it (a
 * slice's `MemoryMax=` binds the units in it), at the path `/proc/self/cgroup` names (a unit on
 * the host) and at the root of the hierarchy (a container, which sees its own cgroup there).
 * None for "max" or v1's "no limit" (a number near 2^63).
 */
export function cgroupMemoryLimit(read: (path: string) => string | undefined): number | undefined {
  const own = read('/proc/self/cgroup') ?? ''
  const v2 = /^0::(\/.*)$/m.exec(own)?.[1]
  const v1 = /^\d+:(?:[^:]*,)?memory(?:,[^:]*)?:(\/.*)$/m.exec(own)?.[1]
  const candidates = [
    ...groupsUp('/sys/fs/cgroup', v2).map((dir) => `${dir}/memory.max`),
    ...groupsUp('/sys/fs/cgroup/memory', v1).map((dir) => `${dir}/memory.limit_in_bytes`),
  ]
  const limits = candidates
    .map((path) => Number(read(path)?.trim()))
    .filter((bytes) => Number.isFinite(bytes) && bytes > 0 && bytes < 2 ** 60)
  return limits.length > 0 ? Math.min(...limits) : undefined
}

/** The directories of a cgroup and of every group above it, up to the mount's root (always included). */
function groupsUp(mount: string, path: string | undefined): string[] {
  const parts = (path ?? '/').split('/').filter(Boolean)
  return Array.from({ length: parts.length + 1 }, (_, n) => [mount, ...parts.slice(0, parts.length - n)].join('/'))
}
