// svc out of file descriptors (each client connection and each upstream one holds one): Bun's
// connect then says ECONNREFUSED, which read as the provider's outage ("upstream unreachable",
// counted against a healthy provider's health: an audit under `ulimit -n 256`). Said as svc's own
// shortage instead, an overloaded answer the SDKs retry, and no provider is blamed.
import { afterAll, expect, test } from 'bun:test'
import { gatewayDir, startGateway } from '../support/processes'
import { startSimulator } from '../support/simulator'

const sim = startSimulator({ apiKey: 'sim-key-fd' })
afterAll(() => sim.stop())

test.skipIf(process.platform !== 'linux')(
  'a request that finds no descriptor left is answered 529 naming svc’s limit, and the provider stays healthy',
  async () => {
    const dir = gatewayDir(`
[catalog]
builtin = false

[billing.starter_grant]
usd = 5

[providers.sim]
kind = "anthropic"
base_url = "${sim.url}"
api_key_env = "SIM_KEY"

[[models]]
id = "sim-model"
provider = "sim"
upstream_model = "slow-up"
profiles = ["pro"]
quality = 80
input_usd_per_mtok = 3
output_usd_per_mtok = 15
`)
    // A hard limit of 64: svc holds ~15 at rest, and each stream two (its client, its upstream).
    const svc = await startGateway(dir, {
      env: { SIM_KEY: 'sim-key-fd' },
      launcher: ['bash', '-c', 'ulimit -n 64 && exec "$0" "$@"'],
    })
    const key = dir.firstKey()
    sim.setScenario('slow-up', { text: 'a b c d e f g h', chunks: 8, chunkDelayMs: 400 })
    const controller = new AbortController()
    const ask = () =>
      fetch(`${svc.url}/compat-a/v1/messages`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'svc-pro',
          max_tokens: 50,
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        }),
        signal: controller.signal,
      }).then(
        async (res) => ({ status: res.status, body: res.status === 200 ? '' : await res.text() }),
        () => ({ status: 0, body: '' }),
      )
    try {
      // Streams opened one after another until svc has no descriptor for the next upstream.
      const answers: { status: number; body: string }[] = []
      for (let i = 0; i < 40 && !answers.some((a) => a.status === 529); i++) answers.push(await ask())
      const refused = answers.find((a) => a.status === 529)
      expect(refused?.body).toContain('svc is out of file descriptors')
      expect(answers.some((a) => a.status === 502)).toBe(false)
      // The streams gone, the descriptors come back: no provider was blamed for svc's shortage.
      controller.abort()
      let metrics = ''
      for (let i = 0; i < 50 && !metrics; i++) {
        metrics = await fetch(`${svc.url}/metrics`).then(
          (r) => r.text(),
          () => Bun.sleep(100).then(() => ''),
        )
      }
      expect(metrics).toContain('svc_open_circuits 0')
      expect(metrics).not.toContain('svc_upstream_errors_total{')
    } finally {
      controller.abort()
      await svc.kill()
      dir.remove()
    }
  },
  60_000,
)
