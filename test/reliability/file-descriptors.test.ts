// svc out of file descriptors (each client connection and each upstream one holds one): Bun's
// connect then says ECONNREFUSED, which read as the provider's outage ("upstream unreachable",
// counted against a healthy provider's health: an audit under `ulimit -n 256`). Said as svc's own
// shortage instead: an overloaded answer the SDKs retry, marked the gateway's, so no provider is
// blamed. Driven in a child process that takes every descriptor its limit allows, then calls an
// upstream listening here: which of svc's own descriptors runs out first under real load (an
// accepted client, an upstream socket) is the machine's timing, this is not.
import { afterAll, expect, test } from 'bun:test'
import { resolve } from 'node:path'

const upstream = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('{}') })
afterAll(() => upstream.stop(true))

test.skipIf(process.platform !== 'linux')(
  'a connect that finds no descriptor left is svc’s own 529, naming its limit, and no provider’s fault',
  async () => {
    const child = Bun.spawn(
      ['bash', '-c', `ulimit -n 64 && exec "${process.execPath}" test/support/exhausted-descriptors.ts`],
      {
        cwd: resolve(import.meta.dir, '../..'),
        stdout: 'pipe',
        stderr: 'pipe',
        env: { PATH: process.env.PATH ?? '', UPSTREAM_URL: `${upstream.url.href}v1/messages` },
      },
    )
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000)
    const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()])
    clearTimeout(timer)
    expect({ out: JSON.parse(out.trim().split('\n').at(-1) ?? '{}'), err }).toEqual({
      out: {
        kind: 'overloaded',
        status: 529,
        retryable: true,
        gatewayFault: true,
        message:
          'svc is out of file descriptors (its open-files limit, 64, is taken by open connections): raise the limit, or send fewer requests at once',
      },
      err: '',
    })
  },
  30_000,
)
