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
import { totalmem } from 'node:os'
import { memoryLimit } from '../lib/memory-limit'

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

/** The RAM `svc serve` sizes its heap for: at most 4 GiB, and no more than its memory limit. */
export const servingHeapRam = () => Math.min(heapSizedForRam, memoryLimit())
