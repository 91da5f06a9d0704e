// The floor: a bare relay on Bun.serve and fetch, as ../shared/docs/benchmarking.md measured it,
// with nothing of a gateway (no auth, routing, translation or ledger). Run beside svc in the same
// bench, it says what this machine allows today: svc's targets were set where this relay reached
// ~0.65 of the direct upstream at 64 connections and added ~0.17 ms at one.
// Run: `bun bench/lib/floor-relay.ts --port N --upstream http://127.0.0.1:M`.
const arg = (name: string) => {
  const at = process.argv.indexOf(name)
  return at >= 0 ? process.argv[at + 1] : undefined
}
const port = Number(arg('--port') ?? 0)
const upstream = arg('--upstream')
if (!upstream) throw new Error('--upstream is required')

const server = Bun.serve({
  port,
  hostname: '127.0.0.1',
  async fetch(request) {
    const url = new URL(request.url)
    const headers = new Headers(request.headers)
    headers.delete('host')
    const answer = await fetch(upstream + url.pathname + url.search, {
      method: request.method,
      headers,
      body: request.body === null ? undefined : await request.arrayBuffer(),
    })
    return new Response(answer.body, { status: answer.status, headers: answer.headers })
  },
})
console.log(`floor relay on ${server.url} → ${upstream}`)
