// The responses surface (OpenAI Responses shape), served at /compat-b and /openai: responses, the
// models list (the OpenAI SDK's models.list() and Codex call it), and HEAD on the base URL.
// Bearer auth only, as OpenAI's SDKs send it; errors in OpenAI's shape.
import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { GatewayError } from '../lib/errors'
import { ResponsesBody } from '../protocols/openai-responses/schema'
import { relay } from '../relay/relay'
import { responsesSurface } from '../relay/responses-surface'
import { requirePrincipal } from './auth'
import { pathId } from './params'
import { findProfileModel, profileModelsOf, profilesCreatedAt } from './profile-models'

/**
 * OpenAI's model object: `created` in Unix seconds, `owned_by` whoever serves the model (the
 * gateway). OpenAI's has no limits; the profile's for the account asking go along under svc's
 * config names for them.
 */
const openAIProfileModels = async (deps: Deps, accountId: string) =>
  profileModelsOf(deps.config, await deps.byok.get(accountId), deps.clock()).map((model) => ({
    id: model.id,
    object: 'model',
    created: Date.parse(profilesCreatedAt) / 1000,
    owned_by: 'svc',
    context_window: model.contextWindow,
    max_output_tokens: model.maxOutputTokens,
  }))

/**
 * What the OpenAI SDK asks of a stored response (retrieve, delete, cancel, its input items): svc
 * stores none, whatever `store` says (OpenAI's default is true, and a pass-through answer echoes
 * it). Said plainly, rather than "no route", so that the caller knows to keep the conversation.
 */
const noStoredResponse = ({ params, request }: { params: { id: string }; request: Request }): never => {
  throw new GatewayError(
    'not_found',
    `response ${pathId(params.id, request, '/responses/')} is not kept: this gateway stores no responses (it is stateless), so none can be read, cancelled or deleted; keep the output you received and send the whole conversation in input`,
  )
}

/** OpenAI's endpoints beside `POST /v1/responses` that svc does not serve, said plainly. */
const notServed = (what: string) => (): never => {
  throw new GatewayError(
    'not_found',
    `${what} is not served by this gateway: only POST /v1/responses and the models list are`,
  )
}

const responsesSurfaceAt = (deps: Deps, prefix: string) =>
  new Elysia({ name: `http.responses${prefix}`, prefix })
    .head('/', () => '')
    .resolve(async ({ request }) => ({ principal: await requirePrincipal(deps, request, false) }))
    .post(
      '/v1/responses',
      ({ body, request, principal }) =>
        relay(deps, {
          surface: responsesSurface,
          body: body as Record<string, unknown>,
          headers: request.headers,
          principal,
          signal: request.signal,
          admission: deps.admission.claim(request),
        }),
      { body: ResponsesBody },
    )
    .post('/v1/responses/input_tokens', notServed('counting input tokens (POST /v1/responses/input_tokens)'))
    .post('/v1/responses/compact', notServed('compaction (POST /v1/responses/compact)'))
    .get('/v1/responses/:id', noStoredResponse)
    .delete('/v1/responses/:id', noStoredResponse)
    .post('/v1/responses/:id/cancel', noStoredResponse)
    .get('/v1/responses/:id/input_items', noStoredResponse)
    // OpenAI's list is one unpaginated page.
    .get('/v1/models', async ({ principal }) => ({
      object: 'list',
      data: await openAIProfileModels(deps, principal.accountId),
    }))
    .get('/v1/models/:id', async ({ params, principal, request }) =>
      findProfileModel(await openAIProfileModels(deps, principal.accountId), pathId(params.id, request, '/models/')),
    )

export const responsesRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.responses' })
    .use(responsesSurfaceAt(deps, '/compat-b'))
    .use(responsesSurfaceAt(deps, '/openai'))
