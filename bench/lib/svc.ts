// One `svc serve` for a bench: a fresh database in its own directory, configured for a phase
// against the simulator, pinned like the gateways it is compared with. make bench and make bench-ab
// both start svc this way.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { pinned } from './proc'
import { freePort, type Service, startService } from './processes'
import { type Phase, simKeyEnv, svcConfigToml } from './scenarios'

export interface RunningSvc {
  service: Service
  /** The first account's API key, as `svc serve` wrote it on the empty database. */
  key: string
  db: string
}

export async function startSvc(opts: {
  name: string
  binary: string
  dir: string
  phase: Phase
  simUrl: string
  core: number | undefined
  /** Settings on top of the bench's own (a JSC option to compare, say). */
  env?: Record<string, string>
}): Promise<RunningSvc> {
  mkdirSync(opts.dir, { recursive: true })
  const config = join(opts.dir, 'svc.toml')
  const db = join(opts.dir, 'svc.db')
  writeFileSync(config, svcConfigToml(opts.phase, opts.simUrl))
  const port = await freePort()
  const service = await startService({
    name: opts.name,
    cmd: pinned(opts.core, [
      opts.binary,
      'serve',
      '--config',
      config,
      '--db',
      db,
      '--port',
      String(port),
      '--log-level',
      'warn',
    ]),
    port,
    logFile: join(opts.dir, 'svc.log'),
    // As make run and the systemd unit set it: Bun's fetch keeps at most 256 upstream requests
    // open otherwise, and every open stream holds one.
    env: { ...simKeyEnv, BUN_CONFIG_MAX_HTTP_REQUESTS: '4096', ...opts.env },
    cwd: opts.dir,
  })
  return { service, key: readFileSync(join(opts.dir, 'first-api-key'), 'utf8').trim(), db }
}
