// The messages surface (Anthropic Messages shape), served at /compat-a and /anthropic:
// messages, count_tokens, the models list, and HEAD on the base URL (Claude Code probes it).
import { Elysia } from 'elysia'
import type { Deps } from '../deps'
import { invalidRequest } from '../lib/errors'
import { isCalendarDate } from '../lib/timestamps'
import { AnthropicCountTokensBody, AnthropicMessagesBody } from '../protocols/anthropic/schema'
import { anthropicSurface } from '../relay/anthropic-surface'
import { countTokens } from '../relay/count-tokens'
import { relay } from '../relay/relay'
import { requirePrincipal } from './auth'
import { pathId, readLimit } from './params'
import { findProfileModel, profileModelsOf, profilesCreatedAt } from './profile-models'

/**
 * Anthropic's model object, with its limits: the profile's largest window and output for the
 * account asking (profile-models.ts).
 */
const anthropicProfileModels = async (deps: Deps, accountId: string) =>
  profileModelsOf(deps.config, await deps.byok.get(accountId), deps.clock()).map((model) => ({
    type: 'model',
    id: model.id,
    display_name: `${model.id} (${model.description})`,
    created_at: profilesCreatedAt,
    max_input_tokens: model.contextWindow,
    max_tokens: model.maxOutputTokens,
  }))

const versionHeaders = ['anthropic-version', 'x-compat-version'] as const

/** Versions seen valid: nearly every request sends the same one, checked once (a bounded set). */
const validVersions = new Set<string>()

/** A real calendar date written YYYY-MM-DD, as Anthropic's versions are (Claude Code and the SDK send 2023-06-01). */
function isDateVersion(value: string): boolean {
  if (validVersions.has(value)) return true
  const valid = isCalendarDate(value)
  if (valid && validVersions.size < 64) validVersions.add(value)
  return valid
}

/** One of the two version headers is required; each one sent must be a date. A loop: this runs per request. */
function requireVersionHeader(headers: Headers) {
  let sent = false
  for (const name of versionHeaders) {
    const value = headers.get(name)
    if (!value) continue
    if (!isDateVersion(value))
      throw invalidRequest(`invalid \`${name}\` header: expected a YYYY-MM-DD date, e.g. 2023-06-01`)
    sent = true
  }
  if (!sent) {
    throw invalidRequest('missing version header: send `anthropic-version` (or `x-compat-version`), e.g. 2023-06-01')
  }
}

function modelsPage<T extends { id: string }>(profileModels: T[], query: Record<string, string | undefined>) {
  const limit = readLimit(query.limit, { min: 1, max: 1000, fallback: 20 })
  let start = 0
  let end = profileModels.length
  // A cursor naming no model of the list (stale, or another API's id) pages nothing, in either
  // direction: starting again from the top would hand a paginating client the same models twice.
  if (query.after_id) {
    const at = profileModels.findIndex((m) => m.id === query.after_id)
    start = at < 0 ? end : at + 1
  }
  if (query.before_id)
    end = Math.max(
      0,
      profileModels.findIndex((m) => m.id === query.before_id),
    )
  const page = query.before_id
    ? profileModels.slice(Math.max(start, end - limit), end)
    : profileModels.slice(start, start + limit)
  const more = query.before_id ? end - limit > start : start + limit < end
  return { data: page, has_more: more, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null }
}

const messagesSurface = (deps: Deps, prefix: string) =>
  new Elysia({ name: `http.messages${prefix}`, prefix })
    .head('/', ({ set }) => {
      set.status = 200
      return ''
    })
    .resolve(async ({ request }) => ({ principal: await requirePrincipal(deps, request, true) }))
    .post(
      '/v1/messages',
      async ({ body, request, principal }) => {
        requireVersionHeader(request.headers)
        return relay(deps, {
          surface: anthropicSurface,
          body,
          headers: request.headers,
          principal,
          signal: request.signal,
          admission: deps.admission.claim(request),
        })
      },
      { body: AnthropicMessagesBody },
    )
    .post(
      '/v1/messages/count_tokens',
      async ({ body, request, principal }) => {
        requireVersionHeader(request.headers)
        return countTokens(deps, { body, headers: request.headers, principal })
      },
      { body: AnthropicCountTokensBody },
    )
    .get('/v1/models', async ({ query, principal }) =>
      modelsPage(await anthropicProfileModels(deps, principal.accountId), query),
    )
    .get('/v1/models/:id', async ({ params, principal, request }) =>
      findProfileModel(await anthropicProfileModels(deps, principal.accountId), pathId(params.id, request, '/models/')),
    )

export const messagesRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.messages' }).use(messagesSurface(deps, '/compat-a')).use(messagesSurface(deps, '/anthropic'))
