// Requests: the history (keyset pages) and one request in full — its legs, tokens, cost, latency,
// the ranking that chose the model (provider_ranks) and a feedback form that rates it.
import { api, withQuery } from './api.js'
import { amount, badge, clearError, facts, h, idLink, idSpan, mount, pager, table, userText } from './dom.js'
import { duration, time, tokens } from './format.js'

const PAGE = 50

/** The gateway's reasons (src/http/usage.ts feedbackReasons; a test keeps the two lists equal). */
export const FEEDBACK_REASONS = [
  ['too_expensive', 'Too expensive'],
  ['too_slow', 'Too slow'],
  ['great_value', 'Great value'],
  ['stronger_model_needed', 'Needed a stronger model'],
  ['wrong_model', 'Wrong model for the task'],
]

/** The server counts a comment's length in grapheme clusters (what a reader sees as characters). */
const COMMENT_GRAPHEMES = 4000

const requestLink = (id) => idLink(`#/requests/${encodeURIComponent(id)}`, id)
const model = (r) => (r.selected_model_id ? userText(`${r.selected_model_id} (${r.selected_provider_id})`) : '–')

/** Columns shared by the history and a session's requests. */
export const requestColumns = [
  { label: 'Time (UTC)', class: 'when', cell: (r) => time(r.created_at) },
  { label: 'Request', cell: (r) => requestLink(r.request_id) },
  { label: 'Profile', cell: (r) => userText(r.routing_mode) },
  { label: 'Model', cell: model },
  { label: 'Status', cell: (r) => badge(r.status) },
  {
    label: 'Tokens in / out',
    class: 'num',
    cell: (r) =>
      `${tokens(r.total_input_tokens + r.total_cached_input_tokens + r.total_cache_creation_input_tokens)} / ${tokens(r.total_output_tokens)}`,
  },
  { label: 'Cost', nanos: (r) => r.total_cost_nanos },
  { label: 'First byte', class: 'num', cell: (r) => duration(r.time_to_first_byte_ms) },
  { label: 'Duration', class: 'num', cell: (r) => duration(r.duration_ms) },
]

export async function renderRequests(main, { query, signal }) {
  const page = await api(
    withQuery('/v1/usage/requests', { limit: PAGE, before: query.get('before'), before_id: query.get('before_id') }),
    { signal },
  )
  const last = page.items.at(-1)
  mount(
    main,
    h(
      'section',
      { class: 'card wide' },
      h('h2', {}, 'Requests'),
      table(requestColumns, page.items, { empty: 'No requests yet.', dataset: { table: 'requests' } }),
      pager(
        query.has('before'),
        page.has_more && last
          ? withQuery('#/requests', { before: last.created_at, before_id: last.request_id })
          : undefined,
        '#/requests',
      ),
    ),
  )
}

const legColumns = [
  { label: '#', class: 'num', cell: (l) => String(l.attempt) },
  { label: 'Model', cell: (l) => userText(l.model_id) },
  { label: 'Provider', cell: (l) => [userText(l.provider_id), l.byok ? ' (own key)' : ''] },
  { label: 'Upstream model', cell: (l) => idSpan(l.upstream_model) },
  { label: 'Outcome', cell: (l) => [badge(l.outcome), l.estimated ? ' estimated' : ''] },
  { label: 'Input', class: 'num', cell: (l) => tokens(l.input_tokens) },
  { label: 'Cached', class: 'num', cell: (l) => tokens(l.cached_input_tokens) },
  { label: 'Cache write', class: 'num', cell: (l) => tokens(l.cache_creation_input_tokens) },
  { label: 'Output', class: 'num', cell: (l) => tokens(l.output_tokens) },
  { label: 'Cost', nanos: (l) => l.cost_nanos },
  { label: 'Charged', nanos: (l) => l.charged_nanos },
  {
    label: 'Duration',
    class: 'num',
    cell: (l) => (l.ended_at ? duration(Date.parse(l.ended_at) - Date.parse(l.created_at)) : '–'),
  },
  { label: 'Error', cell: (l) => (l.error ? userText(l.error) : '') },
]

/** What became of each candidate: chosen, failed (and why), skipped (and why), not tried. */
const rankColumns = [
  { label: '#', class: 'num', cell: (_r, i) => String(i + 1) },
  { label: 'Model', cell: (r) => userText(r.model_id) },
  { label: 'Provider', cell: (r) => [userText(r.provider_id), r.byok ? ' (own key)' : ''] },
  { label: 'Status', cell: (r) => badge(r.status.replace('_', ' '), r.status) },
  { label: 'Score', class: 'num', cell: (r) => (typeof r.score === 'number' ? r.score.toFixed(2) : '–') },
  { label: 'Quality', class: 'num', cell: (r) => String(r.quality ?? '–') },
  { label: 'Nudge', class: 'num', cell: (r) => (r.nudge ? (r.nudge > 0 ? `+${r.nudge}` : String(r.nudge)) : '0') },
  { label: 'Est. cost', nanos: (r) => r.estimated_cost_nanos },
  { label: 'Health', cell: (r) => r.health?.state ?? '–' },
  { label: 'Reason', cell: (r) => (r.reason ? userText(r.reason) : '') },
]

const feedbackColumns = [
  { label: 'When (UTC)', class: 'when', cell: (f) => time(f.created_at) },
  { label: 'Rating', cell: (f) => (f.rating === 'up' ? '👍 up' : f.rating === 'down' ? '👎 down' : '–') },
  { label: 'Reason', cell: (f) => FEEDBACK_REASONS.find(([id]) => id === f.reason)?.[1] ?? f.reason ?? '–' },
  { label: 'Comment', cell: (f) => (f.comment ? userText(f.comment) : '') },
]

/** Characters as a reader counts them (and the server: a family emoji is one, not eight UTF-16 units). */
const graphemes = (text) => [...new Intl.Segmenter('en', { granularity: 'grapheme' }).segment(text)].length

function feedbackSection(request, signal) {
  const list = h('div')
  const drawList = () =>
    mount(list, table(feedbackColumns, request.feedback, { empty: 'No feedback yet.', dataset: { table: 'feedback' } }))
  drawList()
  const section = h('section', { class: 'card wide', id: 'feedback' }, h('h3', {}, 'Feedback'), list)
  // The gateway refuses feedback on a running request (409): offer the form once it has ended.
  if (request.status === 'in_progress') {
    section.append(
      h('p', { class: 'muted', dataset: { field: 'feedback-later' } }, 'Rate this request once it has ended.'),
    )
    return section
  }
  section.append(feedbackForm(request, signal, drawList))
  return section
}

function feedbackForm(request, signal, drawList) {
  let rating = null
  // Words beside the emoji: a system without an emoji font still reads the buttons.
  const thumb = (value, label) =>
    h(
      'button',
      {
        type: 'button',
        class: 'thumb',
        name: `rating-${value}`,
        'aria-pressed': 'false',
        onclick: (e) => {
          rating = rating === value ? null : value
          for (const b of form.querySelectorAll('.thumb'))
            b.setAttribute('aria-pressed', String(b === e.currentTarget && rating !== null))
        },
      },
      label,
    )
  const reason = h(
    'select',
    { name: 'reason' },
    h('option', { value: '' }, 'None'),
    FEEDBACK_REASONS.map(([id, label]) => h('option', { value: id }, label)),
  )
  // No maxLength: it counts UTF-16 units and would cut a comment the server accepts.
  const comment = h('textarea', { name: 'comment', rows: 3 })
  // Beside the button, where the eye is: a failure here is about this form, not the page.
  const status = h('p', { class: 'muted', role: 'status', dataset: { field: 'feedback-status' } })
  const say = (text, failed = false) => {
    status.className = failed ? 'error' : 'muted'
    mount(status, failed ? userText(text) : text)
  }
  const send = h('button', { type: 'submit' }, 'Send feedback')
  const form = h(
    'form',
    {
      id: 'feedback-form',
      onsubmit: async (e) => {
        e.preventDefault()
        const body = {}
        if (rating) body.rating = rating
        if (reason.value) body.reason = reason.value
        if (comment.value.trim()) body.comment = comment.value.trim()
        if (Object.keys(body).length === 0) return say('Choose a thumb, a reason or write a comment first.')
        const length = body.comment ? graphemes(body.comment) : 0
        if (length > COMMENT_GRAPHEMES) {
          return say(
            `The comment has ${tokens(length)} characters; at most ${tokens(COMMENT_GRAPHEMES)} are kept.`,
            true,
          )
        }
        send.disabled = true
        try {
          const saved = await api(`/v1/usage/requests/${encodeURIComponent(request.request_id)}/feedback`, {
            body,
            signal,
          })
          request.feedback.push(saved)
          drawList()
          form.reset()
          rating = null
          for (const b of form.querySelectorAll('.thumb')) b.setAttribute('aria-pressed', 'false')
          // An older failure in the page's banner no longer holds.
          clearError()
          say('Thanks: feedback saved. It nudges how this account is routed.')
        } catch (err) {
          if (err?.name !== 'AbortError') say(`Not saved: ${err.message}`, true)
        } finally {
          send.disabled = false
        }
      },
    },
    h(
      'div',
      { class: 'thumbs' },
      thumb('up', '👍 Thumbs up'),
      thumb('down', '👎 Thumbs down'),
      h('label', { class: 'inline' }, 'Reason (optional) ', reason),
    ),
    h('label', { class: 'block' }, 'Comment (optional)', comment),
    h('div', { class: 'send' }, send, status),
  )
  return form
}

/** How the request ended, when not well: a failure in red; a client that hung up, plainly. */
function outcomeNote(r) {
  if (!r.error) return null
  if (r.status === 'aborted') {
    return h(
      'p',
      { class: 'muted', dataset: { field: 'outcome' } },
      'Aborted by the client: ',
      userText(r.error.message),
    )
  }
  return h('p', { class: 'error', dataset: { field: 'outcome' } }, userText(`${r.error.type}: ${r.error.message}`))
}

export async function renderRequest(main, { params, signal }) {
  const r = await api(`/v1/usage/requests/${encodeURIComponent(params[0])}`, { signal })
  const promptTokens = r.total_input_tokens + r.total_cached_input_tokens + r.total_cache_creation_input_tokens
  mount(
    main,
    h(
      'section',
      { class: 'card wide', id: 'request' },
      h('h2', {}, 'Request ', idSpan(r.request_id), ' ', badge(r.status.replace('_', ' '), r.status)),
      outcomeNote(r),
      facts([
        ['Time (UTC)', time(r.created_at)],
        ['Profile', userText(r.routing_mode)],
        ['Surface', `${r.surface}${r.stream ? ', streamed' : ''}`],
        ['Model', model(r)],
        ['Attempts', String(r.attempts)],
        r.session_id && ['Session', idLink(`#/sessions/${encodeURIComponent(r.session_id)}`, r.session_id)],
        r.agent_id && ['Agent', userText(r.agent_id)],
        ['Cost', [amount(r.total_cost_nanos), r.byok ? ' (own provider key)' : '']],
        ['Charged to credit', amount(r.charged_nanos)],
        ['First byte', duration(r.time_to_first_byte_ms)],
        ['Duration', duration(r.duration_ms)],
        [
          'Tokens',
          `${tokens(promptTokens)} prompt (${tokens(r.total_input_tokens)} uncached, ${tokens(r.total_cached_input_tokens)} cached, ${tokens(r.total_cache_creation_input_tokens)} cache writes) · ${tokens(r.total_output_tokens)} output`,
        ],
      ]),
    ),
    h(
      'section',
      { class: 'card wide' },
      h('h3', {}, 'Legs'),
      table(legColumns, r.usage_events, { empty: 'No upstream was called.', dataset: { table: 'legs' } }),
    ),
    h(
      'section',
      { class: 'card wide' },
      h('h3', {}, 'Ranking (provider_ranks)'),
      h('p', { class: 'muted' }, 'Every candidate considered, best first, and what became of it.'),
      table(rankColumns, r.provider_ranks, { empty: 'No ranking was recorded.', dataset: { table: 'provider-ranks' } }),
    ),
    r.grant_charges.length > 0
      ? h(
          'section',
          { class: 'card wide' },
          h('h3', {}, 'Charged to grants'),
          table(
            [
              { label: 'Grant', cell: (c) => idSpan(c.grant_id) },
              { label: 'Leg', cell: (c) => idSpan(c.usage_event_id) },
              { label: 'For', cell: (c) => c.cost_type },
              { label: 'Amount', nanos: (c) => c.amount_nanos },
            ],
            r.grant_charges,
          ),
        )
      : null,
    feedbackSection(r, signal),
  )
}
