// The usage surface: credit position, request history, sessions, feedback. Authenticated like the
// model routes, but never behind the quota gate: an account with no credit can still see why.
import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { GatewayError, invalidRequest } from '../lib/errors'
import type { RequestStatus } from '../ledger/ledger'
import { feedbackView, requestSummaryView, requestView, sessionView, usageSummaryView } from '../ledger/views'
import { asRecorded } from '../relay/session'
import { requirePrincipal } from './auth'
import { oneOf, pathId, readLimit, readTimestamp } from './params'

/** Documented bounds (README, "Usage API"). */
export const usageLimits = {
  usage: { min: 1, max: 200, fallback: 20 },
  requests: { min: 1, max: 200, fallback: 50 },
  sessionsList: { min: 1, max: 100, fallback: 30 },
  sessionIds: 100,
  feedbackComment: 4000,
} as const

export const feedbackReasons = [
  'too_expensive',
  'too_slow',
  'great_value',
  'stronger_model_needed',
  'wrong_model',
] as const

const FeedbackBody = t.Object(
  {
    rating: t.Optional(t.Union([t.Literal('up'), t.Literal('down')])),
    // Bounded in characters by the handler (commentCharacters): maxLength would count UTF-16 units.
    comment: t.Optional(t.String()),
    reason: t.Optional(t.Union(feedbackReasons.map((r) => t.Literal(r)))),
  },
  { additionalProperties: false },
)

/** What the history's `status` filter takes: how a request ended. */
const requestStatuses: readonly RequestStatus[] = ['completed', 'failed', 'aborted']

const graphemes = new Intl.Segmenter('en', { granularity: 'grapheme' })
/** Past this many UTF-16 units a comment is over the limit whatever its characters: not segmented. */
const longestCharacter = 16

/**
 * A comment's characters as a reader counts them (README: "an emoji is one"): grapheme clusters,
 * so 👨‍👩‍👧 is one, not five code points or eight UTF-16 units. Within the limit in units, it is
 * within it in characters (its units, returned, are at least as many); too long in units to be
 * within it whatever its characters, it is not segmented (undefined: over, uncounted).
 */
function commentCharacters(comment: string): number | undefined {
  if (comment.length <= usageLimits.feedbackComment) return comment.length
  if (comment.length > usageLimits.feedbackComment * longestCharacter) return undefined
  let count = 0
  for (const _ of graphemes.segment(comment)) count++
  return count
}

/** A keyset cursor: `before` (RFC 3339) and `before_id` from the last item of the previous page. */
function readCursor(query: { before?: string; before_id?: string }) {
  if ((query.before === undefined) !== (query.before_id === undefined)) {
    throw invalidRequest(
      'before and before_id go together: take both from the last item of the previous page',
      'before',
    )
  }
  return query.before !== undefined && query.before_id !== undefined
    ? { at: readTimestamp(query.before, 'before'), id: query.before_id }
    : undefined
}

export const usageRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.usage' })
    .resolve(async ({ request }) => ({ principal: await requirePrincipal(deps, request, false) }))
    .get('/v1/usage', async ({ principal, query }) =>
      usageSummaryView(deps.ledger, principal.accountId, {
        limit: readLimit(query.limit, usageLimits.usage),
        now: deps.clock(),
        running: deps.running.legsOf(principal.accountId),
      }),
    )
    .get('/v1/usage/requests', async ({ principal, query }) => {
      const limit = readLimit(query.limit, usageLimits.requests)
      const before = readCursor(query)
      const rows = await deps.ledger.listRequests({
        accountId: principal.accountId,
        before,
        // As svc records the ids (trimmed, clipped): the id a client sent finds its session.
        sessionId: asRecorded(query.session_id) ?? undefined,
        status: oneOf(query.status, requestStatuses, undefined, 'status'),
        modelId: query.model || undefined,
        limit: limit + 1,
      })
      return { items: rows.slice(0, limit).map(requestSummaryView), has_more: rows.length > limit }
    })
    .get('/v1/usage/requests/:id', async ({ principal, params, request }) => {
      const id = pathId(params.id, request, '/requests/')
      // Running first: a request that ends meanwhile is in the ledger's queue, which reads flush.
      const running = deps.running.find(principal.accountId, id)
      if (running) return requestView({ ...running.snapshot(), charges: [], feedback: [] })
      const detail = await deps.ledger.getRequest(principal.accountId, id)
      if (!detail) throw new GatewayError('not_found', `no request ${id} in this account`)
      return requestView(detail)
    })
    .post(
      '/v1/usage/requests/:id/feedback',
      async ({ principal, params, body, set, request }) => {
        const id = pathId(params.id, request, '/requests/')
        // A blank comment says nothing: as if there were none.
        const comment = body.comment?.trim() ? body.comment : undefined
        if (body.rating === undefined && comment === undefined && body.reason === undefined) {
          throw invalidRequest('feedback needs a rating (up or down), a reason or a comment', 'rating')
        }
        const characters = comment === undefined ? 0 : commentCharacters(comment)
        if (characters === undefined || characters > usageLimits.feedbackComment) {
          const got = characters === undefined ? '' : ` (got ${characters.toLocaleString('en')})`
          throw invalidRequest(
            `comment must be at most ${usageLimits.feedbackComment.toLocaleString('en')} characters${got}`,
            'comment',
          )
        }
        if (deps.running.find(principal.accountId, id)) {
          throw new GatewayError('invalid_request', `request ${id} is still running: rate it once it has ended`, {
            status: 409,
          })
        }
        const detail = await deps.ledger.getRequest(principal.accountId, id)
        if (!detail) throw new GatewayError('not_found', `no request ${id} in this account`)
        const saved = await deps.ledger.addFeedback({
          requestId: id,
          accountId: principal.accountId,
          rating: body.rating ?? null,
          reason: body.reason ?? null,
          comment: comment ?? null,
        })
        // The account's ranking nudges change with every rating.
        deps.nudges.invalidate(principal.accountId)
        set.status = 201
        return feedbackView(saved)
      },
      { body: FeedbackBody },
    )
    .get('/v1/usage/sessions', async ({ principal, query }) => {
      const asked = (query.ids ?? '').trim()
      const ids = [
        ...new Set(
          asked
            .split(',')
            .map(asRecorded)
            .filter((id): id is string => id !== null),
        ),
      ]
      if (ids.length === 0) throw invalidRequest('ids is required: a comma-separated list of session ids', 'ids')
      if (ids.length > usageLimits.sessionIds) {
        throw invalidRequest(`ids takes at most ${usageLimits.sessionIds} session ids (got ${ids.length})`, 'ids')
      }
      // A session id may hold a comma (svc takes any client's id): the whole value is looked up too.
      const whole = asRecorded(asked)
      const lookup = whole !== null && asked.includes(',') ? [...ids, whole] : ids
      const sessions = await deps.ledger.sessionsByIds(principal.accountId, lookup)
      return { items: sessions.map(sessionView) }
    })
    .get('/v1/usage/sessions/list', async ({ principal, query }) => {
      const limit = readLimit(query.limit, usageLimits.sessionsList)
      // The cursor is the last item's latest_at and session_id (README, "Usage routes").
      const sessions = await deps.ledger.listSessions(principal.accountId, limit, readCursor(query))
      return sessions.map(sessionView)
    })
