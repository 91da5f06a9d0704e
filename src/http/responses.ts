// The responses surface (OpenAI Responses shape), served at /compat-b and /openai.
// Bearer auth only, as OpenAI's SDKs send it; errors in OpenAI's shape.
import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { ResponsesBody } from '../protocols/openai-responses/schema'
import { relay } from '../relay/relay'
import { responsesSurface } from '../relay/responses-surface'
import { requirePrincipal } from './auth'

const responsesSurfaceAt = (deps: Deps, prefix: string) =>
  new Elysia({ name: `http.responses${prefix}`, prefix })
    .head('/', () => '')
    .resolve(async ({ request }) => ({ principal: await requirePrincipal(deps, request.headers, false) }))
    .post(
      '/v1/responses',
      ({ body, request, principal }) =>
        relay(deps, {
          surface: responsesSurface,
          body: body as Record<string, unknown>,
          headers: request.headers,
          principal,
          signal: request.signal,
        }),
      { body: ResponsesBody },
    )

export const responsesRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.responses' })
    .use(responsesSurfaceAt(deps, '/compat-b'))
    .use(responsesSurfaceAt(deps, '/openai'))
