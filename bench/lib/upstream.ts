// The upstream for the bench: the test simulator, run alone, with its request log emptied ten
// times a second — it records every request for the tests, which over millions of requests would make
// the upstream itself slow down and grow. Run: `bun bench/lib/upstream.ts --port N`.
import { startSimulator } from '../../test/support/simulator'

const portArg = process.argv.indexOf('--port')
const port = portArg >= 0 ? Number(process.argv[portArg + 1]) : 0
const sim = startSimulator({ port, hostname: '127.0.0.1' })
setInterval(() => {
  sim.requests.length = 0
}, 100)
console.log(`upstream simulator listening on ${sim.url}`)
