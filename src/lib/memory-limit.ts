// The memory svc may use: its cgroup's limit where it runs under one (a container's, a systemd
// unit's MemoryMax=), else the machine's RAM. Read once at start by what sizes itself to it: the
// JS heap (cli/jsc-heap.ts) and the requests svc takes on at once (relay/admission.ts).
import { readFileSync } from 'node:fs'
import { totalmem } from 'node:os'

/** The least of the cgroup's memory limit and the machine's RAM, in bytes. */
export const memoryLimit = (): number =>
  Math.min(totalmem(), cgroupMemoryLimit(readProcFile) ?? Number.POSITIVE_INFINITY)

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
