// createApp(deps) → the Elysia app. It never listens: `svc serve` does, tests call app.handle().
import { Elysia, type ValidationError } from 'elysia'
import type { Deps } from './deps'
import { adminRoutes, requireAdmin } from './http/admin'
import { requirePrincipal, requirePrincipalBeforeBody } from './http/auth'
import { dashboardRoutes } from './http/dashboard'
import { errorResponse, type Surface, toGatewayError } from './http/errors'
import { healthRoutes } from './http/health'
import { messagesRoutes } from './http/messages'
import { openApiRoutes } from './http/openapi'
import { responsesRoutes } from './http/responses'
import { signInRoutes } from './http/sign-in'
import { spendRoutes } from './http/spend'
import { usageRoutes } from './http/usage'
import { databaseRefusesWrites } from './ledger/write-refusals'
import { GatewayError, invalidRequest } from './lib/errors'
import { newUlid } from './lib/ids'
import { describeValueError, paramOf, specificError } from './lib/schema-errors'

/** Which error shape a path answers in: OpenAI's for the responses surface, Anthropic's elsewhere. */
export const surfaceOf = (path: string): Surface =>
  path.startsWith('/compat-b/') || path.startsWith('/openai/') ? 'openai' : 'anthropic'

/** Routes and their methods, so a wrong method is a 405 rather than a 404. */
const knownRoutes: { pattern: RegExp; methods: string }[] = [
  { pattern: /^\/v1\/usage(\/requests(\/[^/]+)?|\/sessions(\/list)?|\/spend)?$/, methods: 'GET' },
  { pattern: /^\/dashboard(\/[^/]*)?$/, methods: 'GET' },
  { pattern: /^\/v1\/usage\/requests\/[^/]+\/feedback$/, methods: 'POST' },
  { pattern: /^\/(healthz|readyz|metrics|openapi\.json)$/, methods: 'GET' },
  { pattern: /^\/(compat-a|anthropic)\/v1\/messages(\/count_tokens)?$/, methods: 'POST' },
  { pattern: /^\/(compat-a|anthropic)\/v1\/models(\/[^/]+)?$/, methods: 'GET' },
  { pattern: /^\/(compat-b|openai)\/v1\/responses$/, methods: 'POST' },
  { pattern: /^\/(compat-b|openai)\/v1\/models(\/[^/]+)?$/, methods: 'GET' },
  { pattern: /^\/v1\/admin\/(accounts|keys|grants)$/, methods: 'GET,POST' },
  { pattern: /^\/v1\/admin\/provider-keys$/, methods: 'GET,POST,DELETE' },
  { pattern: /^\/v1\/admin\/keys\/[^/]+\/revoke$/, methods: 'POST' },
  { pattern: /^\/v1\/admin\/usage$/, methods: 'GET' },
  { pattern: /^\/v1\/auth\/(device\/code|device\/token|logout)$/, methods: 'POST' },
  { pattern: /^\/v1\/auth\/whoami$/, methods: 'GET' },
  { pattern: /^\/login$/, methods: 'GET,POST' },
]

/** A body the route's schema refused, naming the field (OpenAI's `param`) where one is at fault. */
function validationRefusal(error: ValidationError): GatewayError {
  const wrong = error.valueError
  if (!wrong) return invalidRequest('request body does not match the expected shape')
  const specific = specificError(wrong)
  return invalidRequest(describeValueError(specific, paramOf), paramOf(specific) || undefined)
}

/** Whether some object in a parsed body throws when printed (its own toString or valueOf is no function). */
function holdsUnprintable(value: unknown): boolean {
  const nodes: unknown[] = [value]
  while (nodes.length > 0) {
    const node = nodes.pop()
    if (node === null || typeof node !== 'object') continue
    try {
      String(node)
    } catch {
      return true
    }
    for (const key in node) nodes.push((node as Record<string, unknown>)[key])
  }
  return false
}

/**
 * Far deeper than any real request (tool schemas, content blocks) nests. Deeper JSON is refused
 * before validation: at ~100k levels (a 500 KB body, far inside the size limit) recursive code
 * overflowed the stack — a 500, or a 502 blamed on the upstream that counted against its health
 * (found by the reliability suite's fuzzer).
 */
const maxJsonDepth = 1000

/**
 * Iterative, so the check itself cannot overflow the stack; parallel arrays and for…in instead of
 * tuples and Object.values keep it allocation-light: ~4 µs for a 48 KB agent request.
 */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (value === null || typeof value !== 'object') return false
  const nodes: object[] = [value]
  const depths: number[] = [1]
  while (nodes.length > 0) {
    const node = nodes.pop() as Record<string, unknown>
    const depth = depths.pop()!
    if (depth > limit) return true
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i]
        if (child !== null && typeof child === 'object') {
          nodes.push(child)
          depths.push(depth + 1)
        }
      }
    } else {
      for (const key in node) {
        const child = node[key]
        if (child !== null && typeof child === 'object') {
          nodes.push(child)
          depths.push(depth + 1)
        }
      }
    }
  }
  return false
}

/** Past this, a body is read only for a model route, and only once its key is known. */
const smallBodyBytes = 64 * 1024
const modelRoute = /^\/+(compat-a|anthropic|compat-b|openai)\//
/**
 * The routes that call a model, whose requests take a place in the memory budget
 * (relay/admission.ts); Elysia routes a trailing slash and doubled leading slashes to them too.
 */
const modelCall = /^\/+(compat-a|anthropic|compat-b|openai)\/v1\/(messages|responses)\/?$/
/** What an onRequest hook returns to let the request go on. */
const noAnswer = (): undefined => undefined

/**
 * modelCall on a full URL without parsing it: its path starts at the slash after the host and ends
 * at a query (the Anthropic SDK's beta calls add `?beta=true`).
 */
function isModelCall(url: string): boolean {
  const query = url.indexOf('?')
  return modelCall.test(url.slice(url.indexOf('/', url.indexOf('//') + 2), query === -1 ? undefined : query))
}

/**
 * A body too large to be read for free: the model routes take it from a known account only (its
 * key checked from the headers before the body is read: auth.ts), the other routes (usage, admin,
 * sign-in: a few hundred bytes each) not at all. Without this, anyone could make svc parse 32 MB
 * without a key.
 */
async function screenLargeBody(
  deps: Deps,
  request: Request,
  length: number,
  handle: (request: Request) => Promise<Response>,
): Promise<Response | undefined> {
  const path = new URL(request.url).pathname
  const surface = surfaceOf(path)
  if (!modelRoute.test(path)) {
    const size = length > 0 ? `${length} bytes` : 'of unknown size (no Content-Length)'
    return refusal(
      deps,
      new GatewayError('request_too_large', `request body is ${size}; this route takes at most ${smallBodyBytes}`),
      surface,
    )
  }
  try {
    await requirePrincipalBeforeBody(deps, request, surface === 'anthropic')
    if (length > 0 && modelCall.test(path)) await deps.admission.admitBeforeBody(request, length)
  } catch (err) {
    return thrownOnTheWayIn(deps, err, path, surface)
  }
  if (length > 0 || request.body === null) return undefined
  // Sent without a Content-Length (chunked): read here, up to the limit, and handled as the body
  // of that size it turned out to be. Bun's server would refuse one past its own limit with an
  // empty 413, which the SDKs show as "413 status code (no body)".
  const maxBody = deps.config.server.maxBodyBytes
  const body = await readAtMost(request.body, maxBody)
  if (body === undefined) {
    return refusal(
      deps,
      new GatewayError('request_too_large', `request body is over ${maxBody} bytes; the limit is ${maxBody}`),
      surface,
    )
  }
  const headers = new Headers(request.headers)
  headers.delete('transfer-encoding')
  headers.set('content-length', String(body.byteLength))
  // The client's signal goes with it: the relay learns from it that the client left.
  return handle(new Request(request.url, { method: request.method, headers, body, signal: request.signal }))
}

/** The stream's bytes, or undefined once they pass `max` (the rest left unread). */
async function readAtMost(stream: ReadableStream<Uint8Array>, max: number): Promise<Uint8Array | undefined> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of stream) {
    size += chunk.byteLength
    if (size > max) return undefined
    chunks.push(chunk)
  }
  return Buffer.concat(chunks, size)
}

/**
 * Media types are case-insensitive (RFC 9110 §8.3.1), but Elysia picks its body parser by the
 * lower-case name: a body sent as `Application/JSON` was read as none and refused as "expected
 * object". The type is lowered in place (its parameters, a boundary say, keep their case).
 */
function lowerCaseMediaType(headers: Headers): void {
  const type = headers.get('content-type')
  if (type === null || !/^[^;A-Z]*[A-Z]/.test(type)) return
  const end = type.indexOf(';')
  headers.set('content-type', end === -1 ? type.toLowerCase() : type.slice(0, end).toLowerCase() + type.slice(end))
}

/**
 * A compressed body (some proxies and SDKs gzip theirs) was read as JSON and refused as "not valid
 * JSON", or, labelled but plain, served. svc reads bodies as sent: a 415 that names the encoding
 * (RFC 9110 §15.5.16), in the route's own error shape.
 */
const identity = /^\s*(identity)?\s*$/i
const unsupportedEncoding = (encoding: string) =>
  new GatewayError(
    'invalid_request',
    `request bodies are read as sent: Content-Encoding ${JSON.stringify(encoding.slice(0, 40))} is not supported; send the body uncompressed`,
    { status: 415 },
  )

/** The credentials a route asks for, checked from the headers alone; routes without any are absent. */
function credentialsOf(deps: Deps, request: Request, path: string, surface: Surface): (() => unknown) | undefined {
  if (modelRoute.test(path)) return () => requirePrincipal(deps, request, surface === 'anthropic')
  if (path.startsWith('/v1/usage')) return () => requirePrincipal(deps, request, false)
  if (path.startsWith('/v1/admin/')) return () => requireAdmin(deps, request.headers)
  return undefined
}

/**
 * A request whose body was refused before its credentials were read (Elysia reads and checks the
 * body first): a caller without a valid key (or admin token) hears 401, as from Anthropic's and
 * OpenAI's APIs, not what is wrong with its body, and the refusal counts as one of authentication.
 */
async function bodyRefusal(deps: Deps, request: Request, path: string, err: unknown, surface: Surface) {
  const check = credentialsOf(deps, request, path, surface)
  if (check) {
    try {
      await check()
    } catch (unknownCaller) {
      if (!(unknownCaller instanceof GatewayError)) return gatewayBug(deps, unknownCaller, path, surface)
      return refusal(deps, unknownCaller, surface)
    }
  }
  return refusal(deps, err, surface)
}

/**
 * A bug outside the relay (a usage or admin route): logged under an id of its own, which the answer
 * carries, as its message says ("the request id identifies it in the logs").
 */
function gatewayBug(deps: Deps, error: unknown, path: string, surface: Surface): Response {
  const id = newUlid()
  deps.log.error('unhandled error', { request_id: id, path, error: String(error), stack: (error as Error)?.stack })
  deps.metrics.refused('api_error')
  return errorResponse(error, surface, { 'x-request-id': id })
}

/**
 * The answer to an error thrown on the way in: svc's refusal where it is one (or the database's
 * refusing writes), else a bug, logged under the id its 500 carries.
 */
function thrownOnTheWayIn(deps: Deps, err: unknown, path: string, surface: Surface): Response {
  return err instanceof GatewayError || databaseRefusesWrites(err)
    ? refusal(deps, err, surface)
    : gatewayBug(deps, err, path, surface)
}

/** svc's own error answer before any upstream is asked, counted: a wave of 401s is an operator's to see. */
function refusal(deps: Deps, err: unknown, surface: Surface): Response {
  const error = toGatewayError(err)
  deps.metrics.refused(error.kind)
  return errorResponse(error, surface)
}

export function createApp(deps: Deps) {
  const maxBody = deps.config.server.maxBodyBytes
  // normalize off: Elysia would otherwise rebuild every body from its schema before checking it,
  // which on a closed schema (feedback, say) drops unknown keys silently where the schema says to
  // refuse them, and on the model routes' open schemas only copies the body.
  /** The app itself, for a chunked body read by screenLargeBody and handled again at its size. */
  let handleSized: (request: Request) => Promise<Response> = () => Promise.reject(new Error('app not built'))
  const app = new Elysia({ name: 'svc', normalize: false })
    .onRequest(({ request }) => {
      lowerCaseMediaType(request.headers)
      const length = Number(request.headers.get('content-length') ?? 0)
      const encoding = request.headers.get('content-encoding')
      if (encoding !== null && !identity.test(encoding) && request.body !== null) {
        // After the credentials, as any refusal of a body (bodyRefusal): an unknown caller hears 401.
        const path = new URL(request.url).pathname
        return bodyRefusal(deps, request, path, unsupportedEncoding(encoding), surfaceOf(path))
      }
      if (length > maxBody) {
        const path = new URL(request.url).pathname
        return refusal(
          deps,
          new GatewayError('request_too_large', `request body is ${length} bytes; the limit is ${maxBody}`),
          surfaceOf(path),
        )
      }
      // Small bodies (nearly every request) go on at no cost; large or unsized ones are screened
      // (a chunked one is read there and handled again at its size, admitted then).
      if (length > smallBodyBytes || (length === 0 && request.headers.has('transfer-encoding'))) {
        return screenLargeBody(deps, request, length, handleSized)
      }
      if (request.method === 'POST' && isModelCall(request.url)) {
        const waiting = deps.admission.admitBeforeBody(request, length)
        if (waiting)
          return waiting.then(noAnswer, (err) => {
            const path = new URL(request.url).pathname
            return thrownOnTheWayIn(deps, err, path, surfaceOf(path))
          })
      }
    })
    .onTransform({ as: 'global' }, ({ body }) => {
      if (nestedDeeperThan(body, maxJsonDepth)) {
        throw invalidRequest(`request body is nested more than ${maxJsonDepth} levels deep`)
      }
    })
    .onError(({ code, error, request, path, body }) => {
      // Refused before a relay claimed its place in the memory budget (auth, the body, the route).
      deps.admission.releaseUnclaimed(request)
      const surface = surfaceOf(path)
      switch (code) {
        case 'NOT_FOUND': {
          const route = knownRoutes.find((r) => r.pattern.test(path))
          if (route && !route.methods.split(',').includes(request.method)) {
            return refusal(
              deps,
              new GatewayError(
                'method_not_allowed',
                `${request.method} is not allowed on ${path}; use ${route.methods.split(',').join(' or ')}`,
                {
                  cause: route.methods,
                },
              ),
              surface,
            )
          }
          return refusal(deps, new GatewayError('not_found', `no route ${request.method} ${path}`), surface)
        }
        case 'PARSE':
          return bodyRefusal(deps, request, path, invalidRequest('request body is not valid JSON'), surface)
        case 'VALIDATION':
          return bodyRefusal(deps, request, path, validationRefusal(error as ValidationError), surface)
        default:
          // Elysia's message for a refused value prints the value, which throws for an object JSON
          // gave a `toString` that is no function ({"model": {"toString": 1}}): the body's fault.
          if (error instanceof TypeError && holdsUnprintable(body)) {
            const unreadable = invalidRequest('request body does not match the expected shape')
            return bodyRefusal(deps, request, path, unreadable, surface)
          }
          // A body nested too deep (onTransform), refused before its key too.
          if (error instanceof GatewayError && error.kind === 'invalid_request')
            return bodyRefusal(deps, request, path, error, surface)
          return thrownOnTheWayIn(deps, error, path, surface)
      }
    })
    .use(healthRoutes(deps))
    .use(usageRoutes(deps))
    .use(spendRoutes(deps))
    .use(adminRoutes(deps))
    .use(messagesRoutes(deps))
    .use(responsesRoutes(deps))
    .use(signInRoutes(deps))
    .use(dashboardRoutes(deps))
    .use(openApiRoutes())
  handleSized = (request) => app.handle(request)
  return app
}
