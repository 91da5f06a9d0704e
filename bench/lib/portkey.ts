// The peer gateway: Portkey (@portkey-ai/gateway) installed from npm into bench/.peers, with
// @hono/node-server pinned to 1.13.5 — the version its repository builds against; newer ones
// answer 500 on every stream.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

export const portkeyVersion = '1.15.2'
export const nodeServerVersion = '1.13.5'

export type Peer =
  | { available: true; version: string; entry: string; node: string }
  | { available: false; reason: string }

const manifest = {
  name: 'svc-bench-peers',
  private: true,
  description: 'Peer gateways for `make bench`; installed by bench/run.ts, never committed.',
  dependencies: { '@portkey-ai/gateway': portkeyVersion, '@hono/node-server': nodeServerVersion },
  overrides: { '@hono/node-server': nodeServerVersion },
}

const installedVersion = (dir: string, name: string): string | undefined => {
  try {
    return JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')).version
  } catch {
    return undefined
  }
}

/** Installs Portkey when missing; says plainly why when it cannot be had. */
export function installPortkey(peersDir: string, log: (line: string) => void): Peer {
  const node = Bun.spawnSync(['sh', '-c', 'command -v node']).stdout.toString().trim()
  if (!node) return { available: false, reason: 'node is not installed, and Portkey runs on Node' }
  mkdirSync(peersDir, { recursive: true })
  const wanted = `${JSON.stringify(manifest, null, 2)}\n`
  const manifestPath = join(peersDir, 'package.json')
  const current = existsSync(manifestPath) ? readFileSync(manifestPath, 'utf8') : ''
  const ready =
    current === wanted &&
    installedVersion(peersDir, '@portkey-ai/gateway') === portkeyVersion &&
    installedVersion(peersDir, '@hono/node-server') === nodeServerVersion
  if (!ready) {
    writeFileSync(manifestPath, wanted)
    log(`installing Portkey ${portkeyVersion} with @hono/node-server ${nodeServerVersion} into ${peersDir}`)
    const res = Bun.spawnSync(
      ['timeout', '300', 'npm', 'install', '--prefix', peersDir, '--no-audit', '--no-fund', '--loglevel=error'],
      { stdout: 'pipe', stderr: 'pipe' },
    )
    if (res.exitCode !== 0) {
      return { available: false, reason: `npm install failed: ${res.stderr.toString().trim().slice(-400)}` }
    }
  }
  const nodeServer = installedVersion(peersDir, '@hono/node-server')
  if (nodeServer !== nodeServerVersion) {
    return { available: false, reason: `@hono/node-server is ${nodeServer ?? 'missing'}, not ${nodeServerVersion}` }
  }
  const entry = join(peersDir, 'node_modules', '@portkey-ai', 'gateway', 'build', 'start-server.js')
  if (!existsSync(entry)) return { available: false, reason: `${entry} is missing after npm install` }
  return { available: true, version: installedVersion(peersDir, '@portkey-ai/gateway') ?? portkeyVersion, entry, node }
}

/** Portkey's command line: headless (no web console), one port. */
export const portkeyCommand = (peer: { entry: string; node: string }, port: number): string[] => [
  peer.node,
  peer.entry,
  '--headless',
  `--port=${port}`,
]
