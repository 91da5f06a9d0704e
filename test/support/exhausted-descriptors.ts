// Run as its own process under a low `ulimit -n` (test/reliability/file-descriptors.test.ts): takes
// every descriptor left, then calls the upstream at UPSTREAM_URL as svc does, and prints what
// svc's error says, as JSON.
import { openSync } from 'node:fs'
import { callUpstream } from '../../src/providers/call-upstream'
import { createHttp1Client } from '../../src/providers/http1/client'

const client = createHttp1Client({ env: {} })
for (;;) {
  try {
    openSync('/dev/null', 'r')
  } catch {
    break
  }
}
const result = await callUpstream(client, {
  url: process.env.UPSTREAM_URL ?? '',
  headers: {},
  body: '{}',
  controller: new AbortController(),
  timeouts: { firstByteMs: 2000 },
  decodeError: (status) => ({ status, type: 'api_error', message: 'unexpected answer' }),
}).then(
  () => ({ answered: true }),
  (err) => ({
    kind: err.kind,
    status: err.status,
    retryable: err.retryable,
    gatewayFault: err.gatewayFault,
    message: err.message,
  }),
)
console.log(JSON.stringify(result))
