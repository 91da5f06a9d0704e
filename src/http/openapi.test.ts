import { describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { createHarness } from '../../test/support/harness'
import { type OpenApiDocument, openApiDocument, openApiRoutes, type PathItem } from './openapi'

const methods = ['get', 'put', 'post', 'delete', 'patch', 'head'] as const

/** The document as a client receives it: JSON, TypeBox's symbol keys gone. */
const doc = JSON.parse(JSON.stringify(openApiDocument)) as OpenApiDocument

/** Elysia's `/v1/x/:id` and `/compat-a/` → OpenAPI's `/v1/x/{id}` and `/compat-a`. */
const toOpenApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}').replace(/(.)\/$/, '$1')

const documented = new Set(
  Object.entries(doc.paths).flatMap(([path, item]) =>
    methods.filter((m) => item[m] !== undefined).map((m) => `${m.toUpperCase()} ${path}`),
  ),
)

const operations = () =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    methods.flatMap((m) => (item[m] ? [{ path, method: m, op: item[m]! }] : [])),
  )

/** Resolves a local JSON pointer such as `#/components/schemas/Grant`. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined
  let node: unknown = root
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~')
    if (node === null || typeof node !== 'object' || !(key in node)) return undefined
    node = (node as Record<string, unknown>)[key]
  }
  return node
}

function collectRefs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) collectRefs(item, out)
  else if (node !== null && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === '$ref' && typeof value === 'string') out.push(value)
      else collectRefs(value, out)
    }
  }
  return out
}

const deref = <T>(node: T | { $ref: string }): T =>
  typeof node === 'object' && node !== null && '$ref' in node ? (resolvePointer(doc, node.$ref) as T) : (node as T)

/**
 * Routes declared in the route files, read as text, so a route written but not yet mounted in
 * createApp is held to the same rule. A file's prefix is its literal `prefix: '/…'`, or, for a
 * surface mounted under several prefixes, each `(deps, '/…')` it is called with.
 */
function routesDeclaredInSource(): { file: string; route: string }[] {
  const dir = import.meta.dir
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
  return files.flatMap((file) => {
    const source = readFileSync(join(dir, file), 'utf8')
    const calls = [...source.matchAll(/\.(get|post|put|patch|delete|head)\(\s*'(\/[^']*)'/g)]
    if (calls.length === 0) return []
    const literal = /\bprefix: '(\/[^']*)'/.exec(source)?.[1]
    const prefixes =
      literal !== undefined
        ? [literal]
        : /new Elysia\(\{[^}]*\bprefix\b/.test(source)
          ? [...source.matchAll(/\(deps, '(\/[^']*)'\)/g)].map((m) => m[1]!)
          : ['']
    expect({ file, prefixes: prefixes.length > 0 }).toEqual({ file, prefixes: true })
    return prefixes.flatMap((prefix) =>
      calls.map(([, method, path]) => ({ file, route: `${method!.toUpperCase()} ${toOpenApiPath(prefix + path)}` })),
    )
  })
}

/** Documented for a route another change is adding; leave once it is mounted. */
const documentedAhead = new Set(['GET /metrics'])

describe('the OpenAPI document', () => {
  test('has the shape of OpenAPI 3.1', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/)
    // The interface's version from the spec (routing-gateway-api.md, Versioning), not package.json's.
    expect(doc.info).toMatchObject({ title: expect.any(String), version: '1.0.0' })
    expect(Object.keys(doc.paths).length).toBeGreaterThan(0)
    expect(Object.keys(doc.components.schemas ?? {}).length).toBeGreaterThan(0)
    expect(Object.keys(doc.components.securitySchemes ?? {}).sort()).toEqual([
      'adminBearer',
      'apiKeyBearer',
      'apiKeyHeader',
      'metricsBearer',
    ])

    const tags = new Set(doc.tags.map((t) => t.name))
    const schemes = new Set(Object.keys(doc.components.securitySchemes ?? {}))
    const ids = new Set<string>()
    for (const { path, method, op } of operations()) {
      const where = `${method.toUpperCase()} ${path}`
      expect(path).toMatch(/^\/[^?#]*$/)
      expect(ids.has(op.operationId)).toBe(false)
      ids.add(op.operationId)
      for (const tag of op.tags) expect({ where, tag, declared: tags.has(tag) }).toEqual({ where, tag, declared: true })
      for (const requirement of op.security) {
        for (const name of Object.keys(requirement))
          expect({ where, name, known: schemes.has(name) }).toEqual({ where, name, known: true })
      }
      // Every response has a status code (or default) and a description.
      expect(Object.keys(op.responses).length).toBeGreaterThan(0)
      for (const [status, response] of Object.entries(op.responses)) {
        expect(status).toMatch(/^([1-5]\d\d|default)$/)
        expect(deref(response as { description?: string }).description).toEqual(expect.any(String))
      }
      // Path templates and path parameters agree one to one, and path parameters are required.
      const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!).sort()
      const params = (op.parameters ?? []).map((p) => deref(p as { name: string; in: string; required?: boolean }))
      const inPath = params.filter((p) => p.in === 'path')
      expect({ where, params: inPath.map((p) => p.name).sort() }).toEqual({ where, params: templated })
      for (const p of inPath) expect(p.required).toBe(true)
      for (const p of params) expect(['query', 'header', 'path', 'cookie']).toContain(p.in)
    }
  })

  test('every $ref resolves inside the document', () => {
    const refs = collectRefs(doc)
    expect(refs.length).toBeGreaterThan(20)
    const dangling = [...new Set(refs)].filter((ref) => resolvePointer(doc, ref) === undefined)
    expect(dangling).toEqual([])
  })

  test('money is integer USD nanos wherever a field is named *_nanos', () => {
    const offenders: string[] = []
    const visit = (node: unknown, at: string) => {
      if (Array.isArray(node)) {
        for (const [i, n] of node.entries()) visit(n, `${at}/${i}`)
      } else if (node !== null && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key.endsWith('_nanos') && at.endsWith('/properties')) {
            const schema = deref(value as Record<string, unknown>)
            const types = ([] as unknown[]).concat(schema.type)
            if (!types.includes('integer')) offenders.push(`${at}/${key}`)
          }
          visit(value, `${at}/${key}`)
        }
      }
    }
    visit(doc, '#')
    expect(offenders).toEqual([])
  })

  test('embeds the route validators as JSON Schema', () => {
    const messages = doc.components.schemas!.MessagesRequest!
    expect(messages).toMatchObject({
      type: 'object',
      required: ['model', 'max_tokens', 'messages'],
      properties: { max_tokens: { type: 'integer', minimum: 1 }, messages: { type: 'array', minItems: 1 } },
    })
    expect(doc.components.schemas!.ResponsesRequest).toMatchObject({ type: 'object', required: ['model', 'input'] })
  })

  test('is served at GET /openapi.json', async () => {
    const res = await openApiRoutes().handle(new Request('http://localhost/openapi.json'))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    expect(await res.json()).toEqual(doc)
  })

  test('documents every route the app serves, and serves every route it documents', async () => {
    const h = await createHarness()
    const served = new Set(
      [...h.app.routes, ...openApiRoutes().routes].map((r) => `${r.method.toUpperCase()} ${toOpenApiPath(r.path)}`),
    )
    expect(served.size).toBeGreaterThan(20)
    expect([...served].filter((r) => !documented.has(r))).toEqual([])
    expect([...documented].filter((r) => !served.has(r) && !documentedAhead.has(r))).toEqual([])
  })

  test('documents every route declared in src/http, mounted or not', () => {
    const declared = routesDeclaredInSource()
    // The scan must see the surfaces it is meant to guard, or it proves nothing.
    for (const route of [
      'POST /compat-a/v1/messages',
      'POST /openai/v1/responses',
      'POST /v1/admin/grants',
      'GET /healthz',
    ]) {
      expect(declared.map((d) => d.route)).toContain(route)
    }
    expect(declared.filter((d) => !documented.has(d.route))).toEqual([])
  })

  test('path items hold only operations it knows', () => {
    for (const item of Object.values(doc.paths) as PathItem[]) {
      for (const key of Object.keys(item)) expect(methods as readonly string[]).toContain(key)
    }
  })
})

describe('the error responses the document declares', () => {
  type ResponseObject = { description: string; headers?: Record<string, unknown> }
  const post = (path: string) => doc.paths[path]!.post!
  const response = (path: string, status: string) => deref(post(path).responses[status] as ResponseObject)
  const headersOf = (path: string, status: string) => Object.keys(response(path, status).headers ?? {}).sort()
  const messagesRoutes = ['/compat-a/v1/messages', '/anthropic/v1/messages']
  const responsesRoutes = ['/compat-b/v1/responses', '/openai/v1/responses']

  test('the responses route: no credit is a 429 insufficient_quota, never a 402', () => {
    for (const path of responsesRoutes) {
      expect(Object.keys(post(path).responses)).not.toContain('402')
      expect(response(path, '429').description).toContain('insufficient_quota')
      expect(response(path, '429').description).toContain('rate_limit_exceeded')
      // What no resend can fix is a 400 there: "no model can serve", the provider refusing the platform's key.
      expect(response(path, '400').description).toContain('server_error')
      expect(response(path, '400').description).toContain('no model can serve')
      expect(response(path, '503').description).not.toContain('no model can serve')
    }
  })

  test('both model routes document the upstream refusals and the 409 and 425 they pass on', () => {
    for (const path of [...messagesRoutes, ...responsesRoutes]) {
      expect({ path, statuses: Object.keys(post(path).responses) }).toEqual({
        path,
        statuses: expect.arrayContaining(['403', '404', '409', '425']),
      })
    }
  })

  test('the messages route: "no model can serve" is a 503 api_error, an overload a 529', () => {
    for (const path of messagesRoutes) {
      expect(response(path, '503').description).toMatch(/^api_error: no model can serve/)
      expect(response(path, '503').description).not.toMatch(/^overloaded_error/)
      expect(response(path, '529').description).toMatch(/^overloaded_error/)
      expect(response(path, '402').description).toMatch(/^billing_error/)
      // An upstream's 502 or 503 is a 529 there, its 408 a 504, its 422 a 400 (README, HTTP API).
      expect(response(path, '529').description).toContain('502, 503 or 529')
      expect(response(path, '504').description).toMatch(/^timeout_error: .*408/)
      expect(response(path, '400').description).toContain('422')
    }
  })

  test('error responses declare the headers svc sends on them, each defined once', () => {
    const defined = Object.keys(doc.components.headers ?? {})
    for (const name of ['X-Request-Id', 'request-id', 'x-should-retry', 'Retry-After', 'Allow'])
      expect(defined).toContain(name)
    // Routed errors carry the request id; the Anthropic SDK reads it as request-id.
    expect(headersOf('/compat-a/v1/messages', '402')).toEqual(['X-Request-Id', 'request-id', 'x-should-retry'])
    expect(headersOf('/compat-a/v1/messages', '529')).toEqual(['Retry-After', 'X-Request-Id', 'request-id'])
    expect(headersOf('/compat-a/v1/messages', '503')).toEqual([
      'Retry-After',
      'X-Request-Id',
      'request-id',
      'x-should-retry',
    ])
    expect(headersOf('/compat-b/v1/responses', '429')).toEqual(['Retry-After', 'X-Request-Id', 'x-should-retry'])
    expect(headersOf('/compat-b/v1/responses', '400')).toEqual(['X-Request-Id', 'x-should-retry'])
    expect(headersOf('/compat-a/v1/messages', '200')).toEqual(['X-Request-Id', 'request-id'])
    expect(headersOf('/compat-b/v1/responses', '200')).toEqual(['X-Request-Id'])
    // A refusal before routing carries no id.
    expect(headersOf('/compat-a/v1/messages', '401')).toEqual([])
    // Every header of a response is a reference to the one definition.
    for (const { op } of operations()) {
      for (const r of Object.values(op.responses)) {
        for (const h of Object.values(deref(r as ResponseObject).headers ?? {}))
          expect(h).toEqual({ $ref: expect.stringMatching(/^#\/components\/headers\//) })
      }
    }
  })

  test('a body over 64 KB is a 413 on the admin POST routes, feedback and sign-in', () => {
    const appSource = readFileSync(join(import.meta.dir, '..', 'app.ts'), 'utf8')
    expect(appSource).toContain('const smallBodyBytes = 64 * 1024')
    const bodyRoutes = [
      ...Object.entries(doc.paths)
        .filter(([path, item]) => path.startsWith('/v1/admin/') && item.post)
        .map(([path]) => path),
      '/v1/usage/requests/{id}/feedback',
      '/v1/auth/device/code',
      '/v1/auth/device/token',
      '/login',
    ]
    expect(bodyRoutes.length).toBeGreaterThan(8)
    for (const path of bodyRoutes) {
      expect({ path, statuses: Object.keys(post(path).responses) }).toEqual({
        path,
        statuses: expect.arrayContaining(['413']),
      })
    }
    expect(response('/v1/admin/grants', '413').description).toContain('64 KB')
  })

  test('feedback: a request still running is a 409; the comment is bounded in characters, not code points', () => {
    const feedback = post('/v1/usage/requests/{id}/feedback').responses
    expect(Object.keys(feedback)).toEqual(expect.arrayContaining(['409', '413']))
    const schema = doc.components.schemas!.FeedbackRequest! as {
      properties: { comment: { maxLength?: number; description: string } }
      anyOf: unknown[]
    }
    expect(schema.properties.comment.maxLength).toBeUndefined()
    expect(schema.properties.comment.description).toContain('4,000')
    expect(schema.properties.comment.description).toContain('grapheme')
    expect(schema.properties.comment.description).toContain('blank')
    // At least one of the three, a blank comment not counting.
    expect(schema.anyOf).toContainEqual({ required: ['comment'], properties: { comment: { pattern: '\\S' } } })
  })

  test('ProviderKey: `opens` is listed but not required (storing a key answers without it)', () => {
    const providerKey = doc.components.schemas!.ProviderKey! as { required: string[]; properties: object }
    expect(Object.keys(providerKey.properties)).toContain('opens')
    expect(providerKey.required).not.toContain('opens')
    expect(providerKey.required).toEqual(['id', 'account_id', 'provider_id', 'hint', 'created_at'])
  })
})
