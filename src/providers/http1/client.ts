// The upstream HTTP client: HTTP/1.1 over keep-alive Bun.connect sockets (TLS for https), with
// fetch's signature so nothing above it changes. Why not fetch: Bun runs fetch's I/O on its own
// thread, and every request then crosses threads twice; with the gateway on one core the
// hand-offs cost ~10–15 µs of a ~88 µs request (perf: 9% of samples switching tasks, 22% on
// fetch's thread; bench/README.md). These sockets live on the event loop that serves the client.
//
// Scope, on purpose: what an LLM API call needs. Requests carry a string body (or none). Answers
// may be length-delimited, chunked or close-delimited; a response is returned as soon as its head
// arrives, and its body streams with backpressure. Redirects are not followed (an upstream 3xx
// is an upstream error, as it should be for an API); identity encoding is asked for, gzip, deflate,
// br and zstd are still undone if sent. With a proxy configured in the environment every call goes
// to Bun's fetch instead, which honours it, as does a URL with credentials (fetch sends them as
// Basic authorization).
import { StaleConnection } from './connection'
import { ConnectionPool } from './pool'
import { createTargetCache, encodeRequest } from './wire'

export interface Http1ClientOptions {
  /**
   * An idle connection is reused for at most this long (less if the server announces less). Coding
   * agents pause between turns for seconds to a minute, and a new connection to a hosted API costs
   * a TCP and a TLS handshake (tens of ms). 50 s stays under the idle limits in front of most
   * servers (AWS load balancers 60 s, nginx 75 s, Cloudflare 400 s); a server that closes sooner
   * sends its FIN, which takes the connection out of the pool, and a close that crosses a request
   * is retried once (StaleConnection).
   */
  idleTimeoutMs?: number
  /** Used for what this client does not do (a proxy from the environment, credentials in the URL). */
  fallback?: typeof fetch
  /** Where proxy variables are looked up; the process's environment unless given. */
  env?: Record<string, string | undefined>
}

const proxyVariables = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy']
/** The variables that send an `http:` request to a proxy, which forwards it in absolute form. */
const httpProxyVariables = ['HTTP_PROXY', 'http_proxy', 'ALL_PROXY', 'all_proxy']

/**
 * Whether an answer to `url` may be a proxy's own, from the environment's (an `http:` URL with an
 * HTTP proxy set). An `https:` request goes through a CONNECT tunnel, whose refusal is an error of
 * its own, so what answers it is the origin. NO_PROXY is not read: an `http:` upstream exempted
 * from the proxy that answered 407 itself would be taken for the proxy (no LLM API does).
 */
export const forwardedByProxy = (url: string, env: Record<string, string | undefined> = process.env) =>
  url.startsWith('http:') && httpProxyVariables.some((name) => env[name])

export function createHttp1Client(opts: Http1ClientOptions = {}): typeof fetch {
  const fallback = opts.fallback ?? fetch
  const env = opts.env ?? process.env
  if (proxyVariables.some((name) => env[name])) return fallback
  const pool = new ConnectionPool(opts.idleTimeoutMs ?? 50_000)
  const targets = createTargetCache()

  const client = async (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    if (input instanceof Request || (init.body != null && typeof init.body !== 'string')) return fallback(input, init)
    const target = targets.get(input)
    if (!target) return fallback(input, init)
    const signal = init.signal ?? undefined
    signal?.throwIfAborted()
    const request = encodeRequest(target, init)
    // A kept-alive connection the server has just closed fails before any answer byte: the
    // request never reached it, so it goes once more on a fresh connection.
    for (let attempt = 0; ; attempt++) {
      const connection = attempt === 0 ? pool.take(target) : undefined
      try {
        return await (connection ?? (await pool.open(target, signal))).send(request, signal)
      } catch (err) {
        if (!(err instanceof StaleConnection) || attempt > 0) throw err
      }
    }
  }
  return client as typeof fetch
}
