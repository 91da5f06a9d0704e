import { afterEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { brotliCompressSync, gzipSync } from 'node:zlib'
import type { Socket, TCPSocketListener } from 'bun'
import { createHttp1Client } from './client'

/**
 * A raw HTTP/1.1 server on loopback: each request (head and content-length body) is handed to
 * `answer` with the socket, so a test writes exactly the bytes it means, framing faults included.
 */
interface RawServer {
  url: string
  connections: number
  requests: string[]
  /** Bytes received before any full request head (what a refused TLS client leaked). */
  bytes: number
  stop(): void
}

type Answer = (socket: Socket<{ buffered: string }>, request: string, index: number) => void

const servers: RawServer[] = []
afterEach(() => {
  for (const server of servers.splice(0)) server.stop()
})

function rawServer(answer: Answer, tls?: { key: string; cert: string }): RawServer {
  const state: RawServer = { url: '', connections: 0, requests: [], bytes: 0, stop: () => {} }
  const listener: TCPSocketListener<{ buffered: string }> = Bun.listen<{ buffered: string }>({
    hostname: '127.0.0.1',
    port: 0,
    tls,
    data: { buffered: '' },
    socket: {
      open(socket) {
        state.connections++
        socket.data = { buffered: '' }
      },
      data(socket, chunk) {
        state.bytes += chunk.length
        socket.data.buffered += chunk.toString('latin1')
        for (;;) {
          const end = socket.data.buffered.indexOf('\r\n\r\n')
          if (end < 0) return
          const length = Number(/content-length: (\d+)/i.exec(socket.data.buffered.slice(0, end))?.[1] ?? 0)
          if (socket.data.buffered.length < end + 4 + length) return
          const request = socket.data.buffered.slice(0, end + 4 + length)
          socket.data.buffered = socket.data.buffered.slice(end + 4 + length)
          state.requests.push(request)
          answer(socket, request, state.requests.length - 1)
        }
      },
    },
  })
  state.url = `${tls ? 'https' : 'http'}://127.0.0.1:${listener.port}`
  state.stop = () => listener.stop(true)
  servers.push(state)
  return state
}

const ok = (body: string, extra = '') =>
  `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`

const post = (client: typeof fetch, url: string, init: RequestInit = {}) =>
  client(`${url}/v1/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"a":1}',
    ...init,
  })

describe('http1 client', () => {
  test('sends the request as given and reuses the connection for the next one', async () => {
    const server = rawServer((socket, _req, i) => socket.write(ok(`{"n":${i}}`)))
    const client = createHttp1Client({ env: {} })
    const first = await post(client, server.url, { headers: { 'x-api-key': 'k1', 'anthropic-beta': 'b' } })
    expect(first.status).toBe(200)
    expect(first.headers.get('content-type')).toBe('application/json')
    expect(await first.json()).toEqual({ n: 0 })
    const second = await post(client, server.url)
    expect(await second.json()).toEqual({ n: 1 })
    expect(server.connections).toBe(1)
    const [head, body] = server.requests[0]!.split('\r\n\r\n')
    const lines = head!.split('\r\n')
    expect(lines[0]).toBe('POST /v1/messages HTTP/1.1')
    expect(lines).toContain(`host: ${new URL(server.url).host}`)
    expect(lines).toContain('x-api-key: k1')
    expect(lines).toContain('anthropic-beta: b')
    expect(lines).toContain('content-length: 7')
    expect(lines).toContain('accept-encoding: identity')
    expect(body).toBe('{"a":1}')
  })

  test('decodes a chunked body split anywhere, with extensions and trailers, then reuses the connection', async () => {
    const server = rawServer(async (socket, _req, i) => {
      if (i === 1) return socket.write(ok('{}'))
      const wire =
        'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n' +
        '5;ext=1\r\nhello\r\n1 \t\r\n \r\nA ; e=2\r\nworld, and\r\n0\r\nx-trailer: t\r\n\r\n'
      for (let at = 0; at < wire.length; at += 7) {
        socket.write(wire.slice(at, at + 7))
        await Bun.sleep(1)
      }
    })
    const client = createHttp1Client({ env: {} })
    expect(await (await post(client, server.url)).text()).toBe('hello world, and')
    expect(await (await post(client, server.url)).text()).toBe('{}')
    expect(server.connections).toBe(1)
  })

  test('chunk sizes are read as hex, whatever the case, with leading zeros', async () => {
    const thirtyOne = 'x'.repeat(31)
    const server = rawServer((socket) =>
      socket.write(
        `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1f\r\n${thirtyOne}\r\n00A\r\n0123456789\r\n000\r\n\r\n`,
      ),
    )
    const client = createHttp1Client({ env: {} })
    expect(await (await post(client, server.url)).text()).toBe(`${thirtyOne}0123456789`)
  })

  test('a body without length or chunking runs to the close, and the connection is not reused', async () => {
    const server = rawServer((socket, _req, i) => {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\n\r\nuntil close ${i}`)
      socket.end()
    })
    const client = createHttp1Client({ env: {} })
    expect(await (await post(client, server.url)).text()).toBe('until close 0')
    expect(await (await post(client, server.url)).text()).toBe('until close 1')
    expect(server.connections).toBe(2)
  })

  test('skips interim 1xx answers', async () => {
    const server = rawServer((socket) => socket.write(`HTTP/1.1 100 Continue\r\n\r\n${ok('{"final":true}')}`))
    const response = await post(createHttp1Client({ env: {} }), server.url)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ final: true })
  })

  test('resolves at the head and streams the body as it comes', async () => {
    let release = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const server = rawServer(async (socket) => {
      socket.write('HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n')
      socket.write('6\r\nfirst\n\r\n')
      await held
      socket.write('7\r\nsecond\n\r\n0\r\n\r\n')
    })
    const response = await post(createHttp1Client({ env: {} }), server.url)
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    expect(decoder.decode((await reader.read()).value)).toBe('first\n')
    release()
    let rest = ''
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += decoder.decode(r.value)
    expect(rest).toBe('second\n')
  })

  test('a large body read slowly arrives intact (the socket pauses instead of buffering it all)', async () => {
    const payload = Buffer.alloc(4 * 1024 * 1024, 'abcdefghij').toString()
    const server = rawServer((socket) => {
      const wire = Buffer.from(ok(payload))
      let at = 0
      const pump = () => {
        while (at < wire.length) {
          const n = socket.write(wire.subarray(at, at + 65536))
          if (n <= 0) return setTimeout(pump, 1)
          at += n
        }
      }
      pump()
    })
    const response = await post(createHttp1Client({ env: {} }), server.url)
    const reader = response.body!.getReader()
    let total = 0
    let text = ''
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      total += r.value.length
      if (text.length < 20) text += Buffer.from(r.value).toString()
      if (total % 8 === 0) await Bun.sleep(0)
    }
    expect(total).toBe(payload.length)
    expect(text.startsWith('abcdefghij')).toBe(true)
  })

  test('a request body larger than the socket takes at once goes out whole', async () => {
    const big = JSON.stringify({ text: 'é'.repeat(3 * 1024 * 1024) })
    const server = rawServer((socket) => socket.write(ok('{}')))
    const response = await post(createHttp1Client({ env: {} }), server.url, { body: big })
    expect(response.status).toBe(200)
    const received = Buffer.from(server.requests[0]!, 'latin1').toString('utf8')
    expect(received.endsWith(big)).toBe(true)
    expect(received).toContain(`content-length: ${Buffer.byteLength(big)}\r\n`)
  })

  test('a kept-alive connection the server closed is replaced once, transparently', async () => {
    const server = rawServer((socket, _req, i) => {
      // The second request meets the race of a server closing an idle connection: it is dropped
      // unanswered at once, and the client sends it again on a fresh connection.
      if (i === 1) socket.end()
      else socket.write(ok(`{"n":${i}}`))
    })
    const client = createHttp1Client({ env: {} })
    expect(await (await post(client, server.url)).json()).toEqual({ n: 0 })
    expect(await (await post(client, server.url)).json()).toEqual({ n: 2 })
    expect(server.connections).toBe(2)
  })

  test('an idle connection the server closed leaves the pool', async () => {
    const server = rawServer((socket) => {
      socket.write(ok('{}'))
      setTimeout(() => socket.end(), 5)
    })
    const client = createHttp1Client({ env: {} })
    await (await post(client, server.url)).text()
    await Bun.sleep(30)
    expect((await post(client, server.url)).status).toBe(200)
    expect(server.requests.length).toBe(2)
    expect(server.connections).toBe(2)
  })

  test('an idle connection is reused within the pool limit, and a new one opened past it', async () => {
    const server = rawServer((socket) => socket.write(ok('{}')))
    const client = createHttp1Client({ env: {}, idleTimeoutMs: 300 })
    await (await post(client, server.url)).text()
    await Bun.sleep(150)
    await (await post(client, server.url)).text()
    expect(server.connections).toBe(1)
    // Past the limit the pool does not hand it out, though Bun's own socket timeout (whole
    // seconds, checked every few) has not closed it yet.
    await Bun.sleep(400)
    await (await post(client, server.url)).text()
    expect(server.connections).toBe(2)
  })

  test("the server's Keep-Alive timeout, less a second, bounds how long its connection is reused", async () => {
    // timeout=1: kept 0 s, so never reused; timeout=2 (with other parameters around it): 1 s.
    const once = rawServer((socket) => socket.write(ok('{}', 'Keep-Alive: timeout=1\r\n')))
    const client = createHttp1Client({ env: {} })
    await (await post(client, once.url)).text()
    await (await post(client, once.url)).text()
    expect(once.connections).toBe(2)

    const second = rawServer((socket) => socket.write(ok('{}', 'keep-alive: max=100, timeout=2, x=y\r\n')))
    await (await post(client, second.url)).text()
    await Bun.sleep(300)
    await (await post(client, second.url)).text()
    expect(second.connections).toBe(1)
    await Bun.sleep(1000)
    await (await post(client, second.url)).text()
    expect(second.connections).toBe(2)
  })

  test('a reused connection that dies while the upstream works on the request is not sent again', async () => {
    const server = rawServer((socket, _req, i) => {
      if (i === 0) socket.write(ok('{}'))
      else setTimeout(() => socket.terminate(), 120)
    })
    const client = createHttp1Client({ env: {} })
    await (await post(client, server.url)).text()
    await expect(post(client, server.url)).rejects.toThrow(/closed the connection before answering/)
    expect(server.requests.length).toBe(2)
  })

  test('a request the server drops on a fresh connection fails, and is not sent twice', async () => {
    const server = rawServer((socket) => socket.end())
    await expect(post(createHttp1Client({ env: {} }), server.url)).rejects.toThrow(/closed the connection/)
    expect(server.requests.length).toBe(1)
  })

  test('connection refused names the cause', async () => {
    const server = rawServer(() => {})
    const url = server.url
    server.stop()
    await expect(post(createHttp1Client({ env: {} }), url)).rejects.toThrow(/ECONNREFUSED/)
  })

  test('a reset mid-body errors the body, and the next request gets a new connection', async () => {
    const server = rawServer((socket, _req, i) => {
      if (i === 0) {
        socket.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\npartial')
        setTimeout(() => socket.terminate(), 5)
      } else socket.write(ok('{}'))
    })
    const client = createHttp1Client({ env: {} })
    const response = await post(client, server.url)
    await expect(response.text()).rejects.toThrow(/before the body ended/)
    expect((await post(client, server.url)).status).toBe(200)
    expect(server.connections).toBe(2)
  })

  test('an abort before the answer rejects with the reason and closes the connection', async () => {
    let closed = false
    const listener = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data() {},
        close() {
          closed = true
        },
      },
    })
    const controller = new AbortController()
    const pending = post(createHttp1Client({ env: {} }), `http://127.0.0.1:${listener.port}`, {
      signal: controller.signal,
    })
    await Bun.sleep(10)
    controller.abort()
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' })
    await Bun.sleep(10)
    expect(closed).toBe(true)
    listener.stop(true)
  })

  test('an abort mid-body errors the body', async () => {
    const server = rawServer((socket) =>
      socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n'),
    )
    const controller = new AbortController()
    const response = await post(createHttp1Client({ env: {} }), server.url, { signal: controller.signal })
    const reader = response.body!.getReader()
    expect((await reader.read()).value?.length).toBe(3)
    controller.abort()
    await expect(reader.read()).rejects.toMatchObject({ name: 'AbortError' })
  })

  test('a body the caller cancels closes its connection, and the next request opens another', async () => {
    const server = rawServer((socket, _req, i) => {
      if (i === 0) socket.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n')
      else socket.write(ok('{}'))
    })
    const client = createHttp1Client({ env: {} })
    const first = await post(client, server.url)
    await first.body!.cancel()
    const second = await post(client, server.url)
    expect(second.status).toBe(200)
    expect(server.connections).toBe(2)
    expect(server.requests.length).toBe(2)
  })

  test('malformed answers are errors, not guesses', async () => {
    const answers = [
      'HTP/1.1 200 OK\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-length: 5, 6\r\n\r\nhello',
      'HTTP/1.1 200 OK\r\nno colon here\r\ncontent-length: 0\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0000000000001\r\nx\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1 x\r\nx\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nxy\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-encoding: zstd\r\ncontent-length: 1\r\n\r\nx',
      'HTTP/1.1 200 OK\r\ncontent-encoding: compress\r\ncontent-length: 1\r\n\r\nx',
    ]
    const server = rawServer((socket, _req, i) => socket.write(answers[i]!))
    const client = createHttp1Client({ env: {} })
    for (const _ of answers) {
      const outcome = await post(client, server.url)
        .then((r) => r.text())
        .catch((err: Error) => err)
      expect(outcome).toBeInstanceOf(Error)
    }
  })

  test('undoes gzip when an upstream compresses anyway', async () => {
    const gz = gzipSync('{"zipped":true}')
    const server = rawServer((socket) => {
      socket.write(`HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: ${gz.length}\r\n\r\n`)
      socket.write(gz)
    })
    const response = await post(createHttp1Client({ env: {} }), server.url)
    expect(response.headers.get('content-encoding')).toBeNull()
    expect(await response.json()).toEqual({ zipped: true })
  })

  test('a header value with a line break is refused before anything is sent', async () => {
    const server = rawServer((socket) => socket.write(ok('{}')))
    await expect(
      post(createHttp1Client({ env: {} }), server.url, { headers: { 'x-api-key': 'k\r\nx-evil: 1' } }),
    ).rejects.toThrow(/invalid request header/)
    expect(server.bytes).toBe(0)
  })

  test('with a proxy in the environment, calls go to fetch, which honours it', () => {
    const fallback = (() => {}) as unknown as typeof fetch
    expect(createHttp1Client({ env: { HTTPS_PROXY: 'http://proxy:3128' }, fallback })).toBe(fallback)
    expect(createHttp1Client({ env: {}, fallback })).not.toBe(fallback)
  })

  test('TLS: an untrusted certificate is refused before the request (and its key) is written', async () => {
    const tls = selfSignedCertificate()
    if (!tls) return
    const server = rawServer((socket) => socket.write(ok('{}')), tls)
    await expect(
      post(createHttp1Client({ env: {} }), server.url.replace('127.0.0.1', 'localhost'), {
        headers: { 'x-api-key': 'secret' },
      }),
    ).rejects.toThrow(/^TLS with the upstream failed: self.signed certificate/)
    expect(server.bytes).toBe(0)
  })

  test('TLS: a trusted upstream answers, streamed and not, over one kept-alive connection', async () => {
    const tls = selfSignedCertificate()
    if (!tls) return
    // Trust comes from the environment at start-up, as for a real deployment: a child process.
    const script = `
      import { createHttp1Client } from ${JSON.stringify(join(import.meta.dir, 'client.ts'))}
      const tls = { key: ${JSON.stringify(tls.key)}, cert: ${JSON.stringify(tls.cert)} }
      let connections = 0
      const server = Bun.listen({ hostname: '127.0.0.1', port: 0, tls, socket: {
        open() { connections++ },
        data(socket, chunk) {
          if (chunk.toString().startsWith('POST /json'))
            socket.write('HTTP/1.1 200 OK\\r\\ncontent-length: 11\\r\\n\\r\\n{"ok":true}')
          else socket.write('HTTP/1.1 200 OK\\r\\ntransfer-encoding: chunked\\r\\n\\r\\n4\\r\\ndata\\r\\n0\\r\\n\\r\\n')
        },
      } })
      const client = createHttp1Client({ env: {} })
      const base = 'https://localhost:' + server.port
      const json = await (await client(base + '/json', { method: 'POST', body: '{}' })).json()
      const streamed = await (await client(base + '/stream', { method: 'POST', body: '{}' })).text()
      console.log(JSON.stringify({ json, streamed, connections }))
      server.stop(true)
    `
    const child = Bun.spawnSync([process.execPath, '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.certPath },
      stderr: 'pipe',
    })
    expect(child.stderr.toString()).toBe('')
    expect(JSON.parse(child.stdout.toString())).toEqual({ json: { ok: true }, streamed: 'data', connections: 1 })
  })
})

/** What a promise came to within `ms`: its value, its error's message, or 'hung'. */
const within = <T>(promise: Promise<T>, ms = 2000): Promise<{ ok: T } | { error: string } | 'hung'> =>
  Promise.race([
    promise.then(
      (ok) => ({ ok }),
      (err: Error) => ({ error: err.message }),
    ),
    Bun.sleep(ms).then(() => 'hung' as const),
  ])

/** A response's status and text, or how it failed. */
const answerOf = (response: Promise<Response>) => within(response.then(async (r) => `${r.status} ${await r.text()}`))

describe('http1 client: answers as real servers send them', () => {
  test('a head whose lines end in a bare LF is read (RFC 9112 §2.2), whatever follows it', async () => {
    const answers = [
      'HTTP/1.1 200 OK\ncontent-length: 2\n\nok',
      'HTTP/1.1 100 Continue\n\nHTTP/1.1 200 OK\ncontent-length: 2\r\n\r\nok',
      'HTTP/1.1 200 OK\r\ncontent-length: 5\n\r\nmixed',
      'HTTP/1.1 200 OK\ncontent-length: 11\n\ndata: 1\r\n\r\n',
    ]
    const server = rawServer((socket, _req, i) => socket.write(answers[i]!))
    const client = createHttp1Client({ env: {} })
    const got = []
    for (const _ of answers) got.push(await answerOf(post(client, server.url)))
    expect(got).toEqual([{ ok: '200 ok' }, { ok: '200 ok' }, { ok: '200 mixed' }, { ok: '200 data: 1\r\n\r\n' }])
  })

  test('an answer with both Content-Length and chunked is read as chunked, and its connection is not reused', async () => {
    const server = rawServer((socket) =>
      socket.write('HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n'),
    )
    const client = createHttp1Client({ env: {} })
    expect(await answerOf(post(client, server.url))).toEqual({ ok: '200 hello' })
    expect(await answerOf(post(client, server.url))).toEqual({ ok: '200 hello' })
    // RFC 9112 §6.3: such framing may be an attack on a proxy between; the connection is closed.
    expect(server.connections).toBe(2)
  })

  test('compressed answers: an empty or x-gzip encoding, br and zstd are decoded, an empty body is not inflated', async () => {
    const json = Buffer.from('{"hello":"world"}')
    const compressed: [string, Buffer][] = [
      ['', json],
      ['x-gzip', gzipSync(json)],
      ['br', brotliCompressSync(json)],
      ['zstd', Bun.zstdCompressSync(json)],
    ]
    const answers = [
      ...compressed.map(([coding, body]) =>
        Buffer.concat([
          Buffer.from(`HTTP/1.1 200 OK\r\ncontent-encoding: ${coding}\r\ncontent-length: ${body.length}\r\n\r\n`),
          body,
        ]),
      ),
      'HTTP/1.1 429 Too Many Requests\r\ncontent-encoding: gzip\r\ncontent-length: 0\r\nretry-after: 3\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n',
      'HTTP/1.1 200 OK\r\ncontent-encoding: compress\r\ncontent-length: 1\r\n\r\nx',
    ]
    const server = rawServer((socket, _req, i) => socket.write(answers[i]!))
    const client = createHttp1Client({ env: {} })
    const got = []
    for (const _ of answers) got.push(await answerOf(post(client, server.url)))
    expect(got).toEqual([
      { ok: '200 {"hello":"world"}' },
      { ok: '200 {"hello":"world"}' },
      { ok: '200 {"hello":"world"}' },
      { ok: '200 {"hello":"world"}' },
      { ok: '429 ' },
      { ok: '200 ' },
      { error: 'upstream answered in an encoding this gateway does not decode (it asks for identity): compress' },
    ])
  })

  test('credentials in the URL (basic auth in front of a self-hosted server) go through fetch, which sends them', async () => {
    const server = rawServer((socket) => socket.write(ok('{}')))
    const response = await post(createHttp1Client({ env: {} }), server.url.replace('//', '//user:p%40ss@'))
    expect(response.status).toBe(200)
    const head = server.requests[0]!.split('\r\n\r\n')[0]!
    expect(head.split('\r\n').find((line) => /^authorization:/i.test(line))).toBe(
      `Authorization: Basic ${btoa('user:p@ss')}`,
    )
  })

  test('TLS: SNI names a host name, never an IP literal (RFC 6066 §3)', async () => {
    const offered = async (host: string) => {
      let hello: Buffer | undefined
      const listener = Bun.listen({
        hostname: '127.0.0.1',
        port: 0,
        socket: {
          data(socket, chunk) {
            hello = Buffer.from(chunk)
            socket.end()
          },
        },
      })
      await within(post(createHttp1Client({ env: {} }), `https://${host}:${listener.port}`), 1000)
      listener.stop(true)
      return hello ? serverNameOf(hello) : 'no ClientHello'
    }
    expect(await offered('localhost')).toBe('localhost')
    expect(await offered('127.0.0.1')).toBeUndefined()
  })

  test('TLS: a certificate for another name is refused in plain words and its code, naming no host', async () => {
    const tls = selfSignedCertificate()
    if (!tls) return
    // The certificate is trusted (a child process, NODE_EXTRA_CA_CERTS) but for localhost, and the
    // URL names 127.0.0.1: with no SNI for an IP literal, the address is still what is verified.
    const script = `
      import { createHttp1Client } from ${JSON.stringify(join(import.meta.dir, 'client.ts'))}
      let bytes = 0
      const server = Bun.listen({ hostname: '127.0.0.1', port: 0,
        tls: { key: ${JSON.stringify(tls.key)}, cert: ${JSON.stringify(tls.cert)} },
        socket: { data(socket, chunk) { bytes += chunk.length; socket.write('HTTP/1.1 200 OK\\r\\ncontent-length: 0\\r\\n\\r\\n') } } })
      const client = createHttp1Client({ env: {} })
      const outcome = await client('https://127.0.0.1:' + server.port + '/v1/messages', { method: 'POST', body: '{}' })
        .then((r) => 'answered ' + r.status, (err) => ({ message: err.message, cause: err.cause?.message }))
      console.log(JSON.stringify({ outcome, bytes }))
      server.stop(true)
    `
    const child = Bun.spawnSync([process.execPath, '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.certPath },
      stderr: 'pipe',
    })
    expect(child.stderr.toString()).toBe('')
    const { outcome, bytes } = JSON.parse(child.stdout.toString())
    expect(outcome.message).toBe(
      'TLS with the upstream failed: the certificate does not name the host in base_url (ERR_TLS_CERT_ALTNAME_INVALID)',
    )
    // Bun's own words, host names and all, stay behind for the log.
    expect(outcome.cause).toContain('127.0.0.1')
    expect(bytes).toBe(0)
  })

  test('over a slow link (80 ms each way), a kept-alive connection the server closed while idle, crossing the next request, is replaced', async () => {
    const tls = selfSignedCertificate()
    if (!tls) return
    // A WAN in miniature: a relay on loopback delays every byte, each way, by 80 ms, so the TLS
    // handshake (what the client measures of the link) takes the round trips it would. The server
    // closes a connection idle for 1 s (uvicorn's 5 s, vLLM's, shortened); the second request is
    // sent so that it reaches the server just after that close, whose FIN then reaches the client
    // ~110 ms after the request left: more than the 50 ms once taken for a stale connection.
    const script = `
      import { createHttp1Client } from ${JSON.stringify(join(import.meta.dir, 'client.ts'))}
      const delay = 80, idleCloseMs = 1000
      let requests = 0, connections = 0
      // A closed socket takes nothing more (the kernel resets what comes), where Bun's ended one would.
      const server = Bun.listen({ hostname: '127.0.0.1', port: 0, data: { closed: false },
        tls: { key: ${JSON.stringify(tls.key)}, cert: ${JSON.stringify(tls.cert)} },
        socket: {
          open(socket) { connections++; socket.data = { closed: false } },
          data(socket) {
            if (socket.data.closed) return
            const n = requests++
            socket.write('HTTP/1.1 200 OK\\r\\ncontent-length: 2\\r\\n\\r\\nr' + n)
            setTimeout(() => { if (requests === n + 1) { socket.data.closed = true; socket.end() } }, idleCloseMs)
          },
        } })
      const relay = Bun.listen({ hostname: '127.0.0.1', port: 0, data: {}, socket: {
        async open(client) {
          client.data = { pending: [] }
          const upstream = await Bun.connect({ hostname: '127.0.0.1', port: server.port, socket: {
            data(_, c) { const b = Buffer.from(c); setTimeout(() => client.write(b), delay) },
            end() { setTimeout(() => client.end(), delay) },
            close() { setTimeout(() => client.end(), delay) },
          } })
          client.data.peer = upstream
          for (const b of client.data.pending) upstream.write(b)
        },
        data(client, c) {
          const b = Buffer.from(c)
          setTimeout(() => (client.data.peer ? client.data.peer.write(b) : client.data.pending.push(b)), delay)
        },
        end(client) { setTimeout(() => client.data.peer?.end(), delay) },
      } })
      const client = createHttp1Client({ env: {} })
      const call = () => client('https://localhost:' + relay.port + '/v1/messages', { method: 'POST', body: '{}' })
        .then((r) => r.text(), (err) => 'failed: ' + err.message)
      const first = await call()
      await Bun.sleep(idleCloseMs - 2 * delay + 50)
      const second = await call()
      console.log(JSON.stringify({ first, second, requests, connections }))
      relay.stop(true)
      server.stop(true)
    `
    const child = Bun.spawnSync([process.execPath, '-e', script], {
      env: { ...process.env, NODE_EXTRA_CA_CERTS: tls.certPath },
      stderr: 'pipe',
    })
    expect(child.stderr.toString()).toBe('')
    // The second request went once more on a new connection: the server took it there only.
    expect(JSON.parse(child.stdout.toString())).toEqual({ first: 'r0', second: 'r1', requests: 2, connections: 2 })
  }, 10_000)
})

/** The server name a TLS ClientHello offers (its SNI extension), or undefined without one. */
function serverNameOf(hello: Buffer): string | undefined {
  let at = 5 + 4 + 2 + 32 // record header, handshake header, version, random
  at += 1 + hello[at]! // session id
  at += 2 + hello.readUInt16BE(at) // cipher suites
  at += 1 + hello[at]! // compression methods
  const end = at + 2 + hello.readUInt16BE(at)
  for (at += 2; at < end; at += 4 + hello.readUInt16BE(at + 2)) {
    if (hello.readUInt16BE(at) !== 0) continue
    const data = hello.subarray(at + 4)
    return data.subarray(5, 5 + data.readUInt16BE(3)).toString()
  }
  return undefined
}

/** A throwaway certificate for localhost, or undefined (with a warning) where openssl is missing. */
function selfSignedCertificate(): { key: string; cert: string; certPath: string } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'svc-tls-'))
  const [keyPath, certPath] = [join(dir, 'key.pem'), join(dir, 'cert.pem')]
  const made = (() => {
    try {
      const args = ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost']
      args.push('-addext', 'subjectAltName=DNS:localhost', '-keyout', keyPath, '-out', certPath)
      return Bun.spawnSync(['openssl', ...args], { stderr: 'ignore' }).exitCode === 0
    } catch {
      return false // not installed: Bun throws rather than returning an exit code
    }
  })()
  if (!made) {
    console.warn('openssl is not available: a TLS test of the upstream client did not run')
    return undefined
  }
  return { key: readFileSync(keyPath, 'utf8'), cert: readFileSync(certPath, 'utf8'), certPath }
}
