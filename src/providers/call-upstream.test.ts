import { describe, expect, test } from 'bun:test'
import type { UpstreamErrorInfo } from '../exchange/types'
import { GatewayError } from '../lib/errors'
import { decodeAnthropicError } from '../protocols/anthropic/errors'
import { decodeChatError } from '../protocols/openai-chat/errors'
import { mapResponsesFailure } from '../protocols/openai-responses/decode-responses-stream'
import { decodeResponsesError } from '../protocols/openai-responses/errors'
import { callUpstream, retryAfterSeconds, upstreamFailure } from './call-upstream'
import { createHttp1Client } from './http1/client'

const openaiBody = (message: string, type: string, code: string | null, param: string | null = null) =>
  JSON.stringify({ error: { message, type, param, code } })
const anthropicBody = (type: string, message: string) => JSON.stringify({ type: 'error', error: { type, message } })
const permissionDenied = 'Your API key does not have permission to use the specified resource.'
const creditTooLow =
  'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.'
const projectModel = 'Project `proj_1` does not have access to model `gpt-5`'

/** What routing and the client see of a GatewayError. */
const view = (e: GatewayError) => ({
  kind: e.kind,
  status: e.status,
  message: e.message,
  retryable: e.retryable,
  permanent: e.permanent,
  retryAfterSeconds: e.retryAfterSeconds,
})

/** The gateway's provider account failed: another candidate may serve, a client retry would not. */
const accountFailure = (message: string): ReturnType<typeof view> => ({
  kind: 'api_error',
  status: 502,
  message,
  retryable: true,
  permanent: true,
  retryAfterSeconds: undefined,
})

describe('upstreamFailure: the gateway’s provider account failing is a retryable, permanent 502', () => {
  const quota = 'You exceeded your current quota, please check your plan and billing details.'
  test.each<[string, UpstreamErrorInfo, string]>([
    [
      'Anthropic 402 billing_error',
      decodeAnthropicError(
        402,
        JSON.stringify({ type: 'error', error: { type: 'billing_error', message: 'Low balance' } }),
      ),
      'Low balance',
    ],
    [
      'Chat 429 insufficient_quota',
      decodeChatError(429, openaiBody(quota, 'insufficient_quota', 'insufficient_quota')),
      quota,
    ],
    [
      'Chat 429 with insufficient_quota as the type only',
      decodeChatError(429, openaiBody(quota, 'insufficient_quota', null)),
      quota,
    ],
    [
      'OpenRouter 402 (code in the body)',
      decodeChatError(402, JSON.stringify({ error: { code: 402, message: 'Insufficient credits' } })),
      'Insufficient credits',
    ],
    [
      'Responses 429 insufficient_quota',
      decodeResponsesError(429, openaiBody(quota, 'insufficient_quota', 'insufficient_quota')),
      quota,
    ],
    ['Responses 402', decodeResponsesError(402, openaiBody('pay up', 'invalid_request_error', null)), 'pay up'],
    [
      'Responses stream: insufficient_quota in response.failed',
      mapResponsesFailure('insufficient_quota', quota),
      quota,
    ],
    ['billing_error under another status', { status: 400, type: 'billing_error', message: 'no credit' }, 'no credit'],
    [
      'Anthropic 400 for a key whose account ran out of prepaid credit',
      decodeAnthropicError(400, anthropicBody('invalid_request_error', creditTooLow)),
      creditTooLow,
    ],
    ['401 (the platform key)', decodeAnthropicError(401, ''), 'upstream returned HTTP 401'],
    [
      '403',
      decodeChatError(403, openaiBody('region', 'invalid_request_error', 'unsupported_country_region_territory')),
      'region',
    ],
    [
      '404 (the upstream model)',
      decodeResponsesError(404, openaiBody('no such model', 'x', 'model_not_found')),
      'no such model',
    ],
    [
      'Anthropic 404 naming the model',
      decodeAnthropicError(404, anthropicBody('not_found_error', 'model: claude-nope')),
      'model: claude-nope',
    ],
    [
      'Anthropic 403 permission_error',
      decodeAnthropicError(403, anthropicBody('permission_error', permissionDenied)),
      permissionDenied,
    ],
    [
      'OpenAI 403 for a model the project may not use, even with a param',
      decodeResponsesError(403, openaiBody(projectModel, 'invalid_request_error', null, 'model')),
      projectModel,
    ],
    [
      'a 404 that says neither (a wrong base_url)',
      decodeChatError(404, '<h1>Not Found</h1>'),
      'upstream returned HTTP 404: <h1>Not Found</h1>',
    ],
  ])('%s', (_, info, message) => {
    expect(view(upstreamFailure(info, 30))).toEqual(accountFailure(message))
  })
})

describe('upstreamFailure: a 403 or 404 about what the request referenced is the request’s refusal, not the account’s', () => {
  const itemGone = "Item with id 'rs_1' not found. Items are not persisted when `store` is set to false."
  const previousGone = "Previous response with id 'resp_1' not found."
  test.each<[string, UpstreamErrorInfo, ReturnType<typeof view>]>([
    [
      'Responses 404 for a replayed item (param input)',
      decodeResponsesError(404, openaiBody(itemGone, 'invalid_request_error', null, 'input')),
      { kind: 'not_found', status: 404, message: itemGone, retryable: true, permanent: false, retryAfterSeconds: 30 },
    ],
    [
      'Responses 404 for a previous response (param only)',
      decodeResponsesError(404, openaiBody(previousGone, 'invalid_request_error', null, 'previous_response_id')),
      {
        kind: 'not_found',
        status: 404,
        message: previousGone,
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'Chat 404 naming a file',
      decodeChatError(404, openaiBody('No such File object: file-abc', 'invalid_request_error', null)),
      {
        kind: 'not_found',
        status: 404,
        message: 'No such File object: file-abc',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'Anthropic 404 naming a file_id',
      decodeAnthropicError(404, anthropicBody('not_found_error', 'File not found: file_011abc')),
      {
        kind: 'not_found',
        status: 404,
        message: 'File not found: file_011abc',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'a 403 about a file is a permission refusal with its status',
      decodeAnthropicError(403, anthropicBody('invalid_request_error', 'file_011abc is not downloadable')),
      {
        kind: 'permission',
        status: 403,
        message: 'file_011abc is not downloadable',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
  ])('%s', (_, info, want) => {
    expect(view(upstreamFailure(info, 30))).toEqual(want)
  })
})

const echoedBeta = 'Unexpected value(s) `credit balance is too low` for the `anthropic-beta` header'

describe('upstreamFailure: other upstream errors keep their status and are not permanent', () => {
  test.each<[string, UpstreamErrorInfo, ReturnType<typeof view>]>([
    [
      'a 429 rate limit keeps its retry-after',
      decodeChatError(429, openaiBody('slow down', 'requests', 'rate_limit_exceeded')),
      {
        kind: 'rate_limit',
        status: 429,
        message: 'slow down',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'a 529',
      decodeAnthropicError(
        529,
        JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
      ),
      {
        kind: 'overloaded',
        status: 529,
        message: 'Overloaded',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'a 500',
      decodeAnthropicError(500, ''),
      {
        kind: 'api_error',
        status: 500,
        message: 'upstream returned HTTP 500',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      // Any 5xx is the provider's: a front's own (Cloudflare's 520–524) as much as the origin's.
      'a front’s 524, its body a page',
      decodeChatError(524, '<html><body>A timeout occurred</body></html>'),
      {
        kind: 'api_error',
        status: 500,
        message: 'upstream returned HTTP 524: <html><body>A timeout occurred</body></html>',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'an error type named like what every object inherits is just an unknown type, read from its status',
      decodeAnthropicError(503, JSON.stringify({ type: 'error', error: { type: 'constructor', message: 'odd' } })),
      { kind: 'overloaded', status: 529, message: 'odd', retryable: true, permanent: false, retryAfterSeconds: 30 },
    ],
    // Statuses Anthropic never sends, as the dialects pair them (wire-formats §4.12).
    [
      'a FastAPI server’s 422 is a 400',
      decodeChatError(422, openaiBody('field required', 'BadRequestError', null)),
      {
        kind: 'invalid_request',
        status: 400,
        message: 'field required',
        retryable: false,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'a proxy’s 408 is a 504 timeout',
      decodeChatError(408, ''),
      {
        kind: 'timeout',
        status: 504,
        message: 'upstream returned HTTP 408',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'a 502 is an overload (529)',
      decodeChatError(502, ''),
      {
        kind: 'overloaded',
        status: 529,
        message: 'upstream returned HTTP 502',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      // Anthropic's catch-all type says nothing its status does not: a proxy's 503 naming it is an overload.
      'a 503 naming api_error is an overload (529), as a 503 naming nothing',
      decodeAnthropicError(503, anthropicBody('api_error', 'Service Unavailable')),
      {
        kind: 'overloaded',
        status: 529,
        message: 'Service Unavailable',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'a 409 keeps its status: the SDKs retry it',
      decodeChatError(409, openaiBody('conflict', 'invalid_request_error', null)),
      {
        kind: 'invalid_request',
        status: 409,
        message: 'conflict',
        retryable: true,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'a 400 that speaks of credit without saying the balance is too low is the client’s',
      decodeAnthropicError(
        400,
        anthropicBody('invalid_request_error', 'metadata.credit_balance: Extra inputs are not permitted'),
      ),
      {
        kind: 'invalid_request',
        status: 400,
        message: 'metadata.credit_balance: Extra inputs are not permitted',
        retryable: false,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      // A client's anthropic-beta header saying the phrase tripped the model's circuit for everyone.
      'a 400 quoting the credit phrase from the request (an unknown beta value) is the client’s',
      decodeAnthropicError(400, anthropicBody('invalid_request_error', echoedBeta)),
      {
        kind: 'invalid_request',
        status: 400,
        message: echoedBeta,
        retryable: false,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
    [
      'a 400 is the client’s: no fallback',
      decodeChatError(400, openaiBody('bad tool schema', 'invalid_request_error', null)),
      {
        kind: 'invalid_request',
        status: 400,
        message: 'bad tool schema',
        retryable: false,
        permanent: false,
        retryAfterSeconds: 30,
      },
    ],
  ])('%s', (_, info, want) => {
    expect(view(upstreamFailure(info, 30))).toEqual(want)
  })
})

describe('callUpstream', () => {
  const request = (status: number, body: string, headers: Record<string, string> = {}) => {
    const fetchImpl = (async () => new Response(body, { status, headers })) as unknown as typeof fetch
    return callUpstream(fetchImpl, {
      url: 'http://upstream.invalid/v1/messages',
      headers: {},
      body: '{}',
      controller: new AbortController(),
      timeouts: { firstByteMs: 1000 },
      decodeError: decodeAnthropicError,
    })
  }

  test('an upstream 402 billing_error throws a retryable, permanent 502 api_error with its message', async () => {
    const body = JSON.stringify({ type: 'error', error: { type: 'billing_error', message: 'credit balance too low' } })
    const err = await request(402, body).catch((e: unknown) => e)
    expect(err).toBeInstanceOf(GatewayError)
    expect(view(err as GatewayError)).toEqual(accountFailure('credit balance too low'))
  })

  test('retry-after as seconds or an HTTP date, at most an hour; nothing for junk or the past', () => {
    const now = Date.parse('2026-11-26T08:00:00Z')
    expect(retryAfterSeconds('7', now)).toBe(7)
    expect(retryAfterSeconds('1.5', now)).toBe(1.5)
    expect(retryAfterSeconds('Thu, 26 Nov 2026 08:00:30 GMT', now)).toBe(30)
    expect(retryAfterSeconds('1000000000', now)).toBe(3600)
    expect(retryAfterSeconds('Thu, 26 Nov 2026 07:59:00 GMT', now)).toBeUndefined()
    for (const junk of [null, '', '0', '-5', 'soon', '1e3', 'Infinity'])
      expect(retryAfterSeconds(junk, now)).toBeUndefined()
  })

  test('fetch (with a proxy) meeting a certificate problem names it as svc’s own client does', async () => {
    const untrusted = Object.assign(new Error('unable to verify the first certificate'), {
      code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    })
    const fetchImpl = (async () => {
      throw untrusted
    }) as unknown as typeof fetch
    const err = (await callUpstream(fetchImpl, {
      url: 'https://upstream.invalid/v1/messages',
      headers: {},
      body: '{}',
      controller: new AbortController(),
      timeouts: { firstByteMs: 1000 },
      decodeError: decodeAnthropicError,
    }).catch((e: unknown) => e)) as GatewayError
    expect(view(err)).toMatchObject({
      kind: 'api_error',
      status: 502,
      message:
        'TLS with the upstream failed: the certificate’s issuer is not trusted (UNABLE_TO_VERIFY_LEAF_SIGNATURE)',
      retryable: true,
    })
  })

  test('a 429 passes its retry-after on', async () => {
    const body = JSON.stringify({ type: 'error', error: { type: 'rate_limit_error', message: 'slow down' } })
    const err = (await request(429, body, { 'retry-after': '7' }).catch((e: unknown) => e)) as GatewayError
    expect(view(err)).toMatchObject({ kind: 'rate_limit', status: 429, retryAfterSeconds: 7, permanent: false })
  })
})

describe('callUpstream against servers on loopback', () => {
  const call = (fetchImpl: typeof fetch, url: string, firstByteMs = 1000) =>
    callUpstream(fetchImpl, {
      url,
      headers: { 'x-api-key': 'secret-key' },
      body: '{}',
      controller: new AbortController(),
      timeouts: { firstByteMs },
      decodeError: decodeAnthropicError,
    })
  /** What a call came to within 2 s: the error as routing and the client see it, or 'hung'. */
  const outcome = (p: Promise<Response>) =>
    Promise.race([
      p.then(
        (r) => `answered ${r.status}`,
        (e: GatewayError) => view(e),
      ),
      Bun.sleep(2000).then(() => 'hung'),
    ])

  test('an error head whose body then stalls ends within the first-byte limit, as the head’s status says, and the connection is closed', async () => {
    let closed = 0
    const heads = [
      // A 503 with a length its body never reaches; a 429 whose chunked body never starts.
      'HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"type":"error"',
      'HTTP/1.1 429 Too Many Requests\r\nretry-after: 7\r\ntransfer-encoding: chunked\r\n\r\n',
    ]
    let i = 0
    const listener = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(socket) {
          socket.write(heads[i++]!)
        },
        close() {
          closed++
        },
      },
    })
    const client = createHttp1Client({ env: {} })
    const url = `http://127.0.0.1:${listener.port}/v1/messages`
    const started = performance.now()
    expect(await outcome(call(client, url, 200))).toEqual({
      kind: 'overloaded',
      status: 529,
      message: 'upstream returned HTTP 503 (its body did not come within 200 ms)',
      retryable: true,
      permanent: false,
      retryAfterSeconds: undefined,
    })
    expect(await outcome(call(client, url, 200))).toEqual({
      kind: 'rate_limit',
      status: 429,
      message: 'upstream returned HTTP 429 (its body did not come within 200 ms)',
      retryable: true,
      permanent: false,
      retryAfterSeconds: 7,
    })
    expect(performance.now() - started).toBeLessThan(1000)
    await Bun.sleep(20)
    expect(closed).toBe(2)
    listener.stop(true)
  })

  test('an upstream 3xx is a retryable, permanent 502 naming the status and where it pointed by host alone', async () => {
    const redirecting = (status: number, location?: string) =>
      (async () =>
        new Response('<a>moved</a>', {
          status,
          headers: location ? { location } : {},
        })) as unknown as typeof fetch
    // Seen as an account's failure is: another candidate may serve, a client retry would not.
    const redirect = accountFailure
    const url = 'http://upstream.internal:8000/v1/messages'
    expect(await outcome(call(redirecting(301, 'https://upstream.internal:8000/v1/messages'), url))).toEqual(
      redirect(
        "upstream redirected (HTTP 301 to an https:// URL), and svc does not follow redirects: check the provider's base_url",
      ),
    )
    // A Location's host, path and query (a signed URL's token) and credentials stay out of the message.
    expect(await outcome(call(redirecting(307, 'https://u:pw@cdn.example/x?token=sekrit'), url))).toEqual(
      redirect(
        "upstream redirected (HTTP 307 to an https:// URL), and svc does not follow redirects: check the provider's base_url",
      ),
    )
    expect(await outcome(call(redirecting(308, '/v1/messages/'), url))).toEqual(
      redirect(
        "upstream redirected (HTTP 308 to an http:// URL), and svc does not follow redirects: check the provider's base_url",
      ),
    )
    expect(await outcome(call(redirecting(302), url))).toEqual(
      redirect("upstream redirected (HTTP 302), and svc does not follow redirects: check the provider's base_url"),
    )
  })

  test('fetch (used with a proxy) does not follow a redirect either: the request and its key stay put', async () => {
    let reached = 0
    const elsewhere = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => {
        reached++
        return new Response('{}')
      },
    })
    const redirecting = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => new Response(null, { status: 307, headers: { location: `${elsewhere.url.href}v1/messages` } }),
    })
    const err = await outcome(call(fetch, `${redirecting.url.href}v1/messages`))
    expect(err).toMatchObject({ kind: 'api_error', status: 502, retryable: true, permanent: true })
    expect(reached).toBe(0)
    redirecting.stop(true)
    elsewhere.stop(true)
  })

  test('fetch’s errors reach the client without the URL they name', async () => {
    const listener = Bun.listen({
      hostname: '127.0.0.1',
      port: 0,
      socket: {
        data(socket) {
          socket.write('this is not HTTP\r\n\r\n')
          socket.end()
        },
      },
    })
    const err = await outcome(call(fetch, `http://127.0.0.1:${listener.port}/v1/messages`))
    expect(err).toMatchObject({ kind: 'api_error', status: 502, retryable: true })
    const { message } = err as { message: string }
    expect(message).toStartWith('upstream unreachable: ')
    expect(message).not.toContain('127.0.0.1')
    expect(message).not.toContain('fetching')
    listener.stop(true)
  })
})
