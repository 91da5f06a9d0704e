import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Io } from './context'
import { UsageError } from './context'
import { defaultBinary, type Runtime, runSystemdUnit } from './systemd'

const underBun: Runtime = { execPath: '/usr/bin/bun', main: '/src/svc/src/main.ts' }

async function unit(args: string[] = [], runtime: Runtime = underBun) {
  const out: string[] = []
  const err: string[] = []
  const io: Io = { env: {}, cwd: '/', out: (t) => out.push(t), err: (t) => err.push(t) }
  const code = await runSystemdUnit(args, io, runtime)
  return { code, text: out.join(''), err: err.join('') }
}

/** `Key=value` lines of the unit, comments left out. */
const directives = (text: string) =>
  text
    .split('\n')
    .filter((l) => /^[A-Za-z]+=/.test(l))
    .map((l) => l.trim())

describe('svc systemd-unit', () => {
  test('restarts always: a SIGHUP drain exits 0, which on-failure would leave down', async () => {
    const lines = directives((await unit()).text)
    expect(lines.filter((l) => l.startsWith('Restart='))).toEqual(['Restart=always'])
  })

  test.each(['/home/ops/bin/svc', '/root/svc', '/tmp/build/svc'])(
    'warns of a binary at %s, which the hardening hides (203/EXEC), in the unit and on stderr',
    async (binary) => {
      const hidden = binary.split('/').slice(0, 2).join('/')
      const why = `${binary} is under ${hidden}, which ProtectHome=yes/PrivateTmp=yes hide from the service (it would fail with 203/EXEC)`
      // Given with --binary, the fix is another path there; the running binary taken by default,
      // installing it or passing --binary.
      for (const [args, runtime, fix] of [
        [
          ['--binary', binary],
          underBun,
          `install it outside ${hidden} (as /usr/local/bin/svc, say) and give that path to --binary`,
        ],
        [[], { execPath: binary, main: '/$bunfs/root/svc' }, 'install it as /usr/local/bin/svc, or pass --binary'],
      ] as const) {
        const { code, text, err } = await unit([...args], runtime)
        expect({ code, err, comment: text.split('\n').filter((l) => l.startsWith('# WARNING')) }).toEqual({
          code: 0,
          err: `svc: warning: ${why}: ${fix}`,
          comment: [`# WARNING: ${why}: ${fix}`],
        })
      }
    },
  )

  test('prints a hardened unit for svc serve', async () => {
    const { code, text, err } = await unit()
    expect({ code, err }).toEqual({ code: 0, err: '' })
    const lines = directives(text)
    expect(lines).toContain('ExecStart=/usr/local/bin/svc serve --config /etc/svc/svc.toml --db /var/lib/svc/svc.db')
    for (const line of [
      'After=network-online.target',
      'Wants=network-online.target',
      'DynamicUser=yes',
      'StateDirectory=svc',
      'EnvironmentFile=-/etc/svc/env',
      'Restart=always',
      'KillSignal=SIGTERM',
      'NoNewPrivileges=yes',
      'ProtectSystem=strict',
      'ProtectHome=yes',
      'PrivateTmp=yes',
      'PrivateDevices=yes',
      'ProtectKernelTunables=yes',
      'ProtectKernelModules=yes',
      'ProtectControlGroups=yes',
      'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX',
      'RestrictNamespaces=yes',
      'LockPersonality=yes',
      'SystemCallArchitectures=native',
      'CapabilityBoundingSet=',
      'AmbientCapabilities=',
      'WantedBy=multi-user.target',
    ]) {
      expect(lines).toContain(line)
    }
    expect(lines.some((l) => /^RestartSec=\d+$/.test(l))).toBe(true)
    // Above the default 30 s shutdown grace, so SIGTERM's drain finishes before SIGKILL.
    const stop = Number(/^TimeoutStopSec=(\d+)$/m.exec(text)?.[1])
    expect(stop).toBeGreaterThan(30)
    expect(stop).toBeLessThanOrEqual(60)
    // JavaScriptCore's JIT needs W+X pages: the directive would kill Bun at start.
    expect(lines.some((l) => l.startsWith('MemoryDenyWriteExecute='))).toBe(false)
    expect(text).toMatch(/^# MemoryDenyWriteExecute=yes is left out on purpose: .*JIT/m)
  })

  test('flags: --binary, --user, --port, --db', async () => {
    const { text } = await unit(['--binary', '/opt/svc/bin/svc', '--user', 'svc', '--port', '9000'])
    const lines = directives(text)
    expect(lines).toContain(
      'ExecStart=/opt/svc/bin/svc serve --config /etc/svc/svc.toml --db /var/lib/svc/svc.db --port 9000',
    )
    expect(lines).toContain('User=svc')
    expect(lines).not.toContain('DynamicUser=yes')
    expect(lines).toContain('CapabilityBoundingSet=')

    // A privileged port needs exactly one capability.
    const low = directives((await unit(['--port', '443'])).text)
    expect(low).toContain('CapabilityBoundingSet=CAP_NET_BIND_SERVICE')
    expect(low).toContain('AmbientCapabilities=CAP_NET_BIND_SERVICE')

    const elsewhere = directives((await unit(['--user', 'svc', '--db', '/srv/svc data/svc.db'])).text)
    expect(elsewhere).toContain(
      'ExecStart=/usr/local/bin/svc serve --config /etc/svc/svc.toml --db "/srv/svc data/svc.db"',
    )
    expect(elsewhere).toContain('ReadWritePaths="/srv/svc data"')
  })

  // A dynamic user cannot write a directory made before it was allocated: the unit failed at start
  // ("owned by uid 0 with mode 0755") and restarted for ever.
  test('a database outside /var/lib needs a named user; one under /var/lib is a state directory of its own', async () => {
    await expect(unit(['--db', '/srv/svc/svc.db'])).rejects.toThrow(
      "--db /srv/svc/svc.db: the service's throwaway user (DynamicUser) can write only a directory systemd makes for it under /var/lib",
    )
    await expect(unit(['--db', '/var/lib/../srv/svc.db'])).rejects.toBeInstanceOf(UsageError)
    const other = directives((await unit(['--db', '/var/lib/gateway/ledger/svc.db'])).text)
    expect(other).toContain('DynamicUser=yes')
    expect(other).toContain('StateDirectory=gateway/ledger')
    expect(other).toContain('WorkingDirectory=/var/lib/gateway/ledger')
    expect(other.filter((l) => l.startsWith('ReadWritePaths='))).toEqual([])
  })

  // ReadWritePaths= cannot open /home again under ProtectHome=yes; PrivateTmp=yes gives the service a
  // /tmp of its own: the unit failed at start (226/NAMESPACE), or kept its ledger in a throwaway /tmp.
  test('refuses a database or config the sandbox hides from the service, even with a named user', async () => {
    const database = 'put it under /var/lib (--db /var/lib/svc/svc.db), or under /srv with --user NAME'
    const config = 'put it under /etc (--config /etc/svc/svc.toml)'
    for (const [flag, path, hidden, wayOut] of [
      ['--db', '/home/alice/svc/svc.db', '/home', database],
      ['--db', '/root/svc.db', '/root', database],
      ['--db', '/tmp/svc/svc.db', '/tmp', database],
      ['--config', '/home/alice/svc.toml', '/home', config],
      ['--config', '/var/tmp/svc.toml', '/var/tmp', config],
    ] as const) {
      await expect(unit([flag, path, '--user', 'alice'])).rejects.toThrow(
        `${flag} ${path} is under ${hidden}, which the unit's sandbox (ProtectHome=yes, PrivateTmp=yes) hides from the service: ${wayOut}`,
      )
    }
    // Each way out named is taken: no --db under /etc, which a service without --user cannot write.
    expect((await unit(['--db', '/var/lib/svc/svc.db', '--config', '/etc/svc/svc.toml'])).code).toBe(0)
    expect((await unit(['--db', '/srv/svc/svc.db', '--config', '/etc/svc/svc.toml', '--user', 'alice'])).code).toBe(0)
  })

  test('--binary defaults to the running executable only when it is the compiled svc', () => {
    expect(defaultBinary(underBun)).toBe('/usr/local/bin/svc')
    expect(defaultBinary({ execPath: '/opt/svc/svc', main: '/$bunfs/root/svc' })).toBe('/opt/svc/svc')
  })

  test('refuses what would make a broken or injected unit', async () => {
    for (const args of [
      ['--port', '0'],
      ['--port', '8080x'],
      ['--user', 'svc\nExecStartPre=/bin/sh'],
      ['--binary', 'svc'],
      ['extra'],
    ]) {
      await expect(unit(args)).rejects.toBeInstanceOf(UsageError)
    }
  })

  const analyze = Bun.which('systemd-analyze')
  const dir = mkdtempSync(join(tmpdir(), 'svc-unit-'))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test.skipIf(!analyze)('systemd-analyze verify accepts it', async () => {
    // verify checks that ExecStart's binary exists, so point it at one that does.
    for (const [name, args] of [
      ['svc.service', ['--binary', process.execPath]],
      [
        'svc-low.service',
        ['--binary', process.execPath, '--user', 'svc', '--port', '443', '--db', '/srv/svc data/svc.db'],
      ],
    ] as const) {
      const path = join(dir, name)
      writeFileSync(path, (await unit([...args])).text)
      const run = Bun.spawnSync([analyze!, 'verify', path], { stderr: 'pipe', stdout: 'pipe' })
      const stderr = run.stderr.toString()
      // verify exits 0 on an unknown key or a bad value too; it only warns, naming the file.
      expect({ exitCode: run.exitCode, warnings: stderr.split('\n').filter((l) => l.includes(name)) }).toEqual({
        exitCode: 0,
        warnings: [],
      })
    }
  })
})
