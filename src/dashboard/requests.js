// Requests: the history (keyset pages) and one request in full — its legs, tokens, cost, latency,
// the ranking that chose the model (provider_ranks) and a feedback form that rates it.
import { api, withQuery } from './api.js'
import { badge, facts, h, money, mount, pager, showError, table } from './dom.js'
import { duration, formatUsdExact, time, tokens, usd } from './format.js'

const PAGE = 50

/** The gateway's reasons (src/http/usage.ts feedbackReasons; a test keeps the two lists equal). */
export const FEEDBACK_REASONS = [
  ['too_expensive', 'Too expensive'],
  ['too_slow', 'Too slow'],
  ['great_value', 'Great value'],
  ['stronger_model_needed', 'Needed a stronger model'],
  ['wrong_model', 'Wrong model for the task'],
]

const amount = (nanos) => money(usd(nanos), `${formatUsdExact(nanos)} USD`)
const requestLink = (id) => h('a', { href: `#/requests/${encodeURIComponent(id)}`, class: 'mono' }, id)
const model = (r) => (r.selected_model_id ? `${r.selected_model_id} (${r.selected_provider_id})` : '–')

/** Columns shared by the history and a session's requests. */
export const requestColumns = [
  { label: 'Time (UTC)', cell: (r) => time(r.created_at) },
  { label: 'Request', cell: (r) => requestLink(r.request_id) },
  { label: 'Profile', cell: (r) => r.routing_mode },
  { label: 'Model', cell: model },
  { label: 'Status', cell: (r) => badge(r.status) },
  {
    label: 'Tokens in / out',
    class: 'num',
    cell: (r) =>
      `${tokens(r.total_input_tokens + r.total_cached_input_tokens + r.total_cache_creation_input_tokens)} / ${tokens(r.total_output_tokens)}`,
  },
  { label: 'Cost', class: 'num', cell: (r) => amount(r.total_cost_nanos) },
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
  { label: 'Model', cell: (l) => l.model_id },
  { label: 'Provider', cell: (l) => `${l.provider_id}${l.byok ? ' (own key)' : ''}` },
  { label: 'Upstream model', cell: (l) => h('span', { class: 'mono' }, l.upstream_model) },
  { label: 'Outcome', cell: (l) => [badge(l.outcome), l.estimated ? ' estimated' : ''] },
  { label: 'Input', class: 'num', cell: (l) => tokens(l.input_tokens) },
  { label: 'Cached', class: 'num', cell: (l) => tokens(l.cached_input_tokens) },
  { label: 'Cache write', class: 'num', cell: (l) => tokens(l.cache_creation_input_tokens) },
  { label: 'Output', class: 'num', cell: (l) => tokens(l.output_tokens) },
  { label: 'Cost', class: 'num', cell: (l) => amount(l.cost_nanos) },
  { label: 'Charged', class: 'num', cell: (l) => amount(l.charged_nanos) },
  {
    label: 'Duration',
    class: 'num',
    cell: (l) => (l.ended_at ? duration(Date.parse(l.ended_at) - Date.parse(l.created_at)) : '–'),
  },
  { label: 'Error', cell: (l) => l.error ?? '' },
]

/** What became of each candidate: chosen, failed (and why), skipped (and why), not tried. */
const rankColumns = [
  { label: '#', class: 'num', cell: (_r, i) => String(i + 1) },
  { label: 'Model', cell: (r) => r.model_id },
  { label: 'Provider', cell: (r) => `${r.provider_id}${r.byok ? ' (own key)' : ''}` },
  { label: 'Status', cell: (r) => badge(r.status.replace('_', ' '), r.status) },
  { label: 'Score', class: 'num', cell: (r) => (typeof r.score === 'number' ? r.score.toFixed(2) : '–') },
  { label: 'Quality', class: 'num', cell: (r) => String(r.quality ?? '–') },
  { label: 'Nudge', class: 'num', cell: (r) => (r.nudge ? (r.nudge > 0 ? `+${r.nudge}` : String(r.nudge)) : '0') },
  {
    label: 'Est. cost',
    class: 'num',
    cell: (r) => (typeof r.estimated_cost_nanos === 'number' ? amount(r.estimated_cost_nanos) : '–'),
  },
  { label: 'Health', cell: (r) => r.health?.state ?? '–' },
  { label: 'Reason', class: 'reason', cell: (r) => r.reason ?? '' },
]

const feedbackColumns = [
  { label: 'When (UTC)', cell: (f) => time(f.created_at) },
  { label: 'Rating', cell: (f) => (f.rating === 'up' ? '👍 up' : f.rating === 'down' ? '👎 down' : '–') },
  { label: 'Reason', cell: (f) => FEEDBACK_REASONS.find(([id]) => id === f.reason)?.[1] ?? f.reason ?? '–' },
  { label: 'Comment', cell: (f) => f.comment ?? '' },
]

function feedbackSection(request, signal) {
  const list = h('div')
  const drawList = () =>
    mount(list, table(feedbackColumns, request.feedback, { empty: 'No feedback yet.', dataset: { table: 'feedback' } }))
  drawList()

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
    h('option', { value: '' }, 'Reason (optional)'),
    FEEDBACK_REASONS.map(([id, label]) => h('option', { value: id }, label)),
  )
  const comment = h('textarea', { name: 'comment', rows: 3, maxLength: 4000, placeholder: 'Comment (optional)' })
  const status = h('p', { class: 'muted', role: 'status' })
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
        if (Object.keys(body).length === 0) {
          status.textContent = 'Choose a thumb, a reason or write a comment first.'
          return
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
          status.textContent = 'Thanks: feedback saved. It nudges how this account is routed.'
        } catch (err) {
          showError(err)
        } finally {
          send.disabled = false
        }
      },
    },
    h('div', { class: 'thumbs' }, thumb('up', '👍 Thumbs up'), thumb('down', '👎 Thumbs down'), reason),
    comment,
    send,
    status,
  )
  return h('section', { class: 'card wide', id: 'feedback' }, h('h3', {}, 'Feedback'), list, form)
}

export async function renderRequest(main, { params, signal }) {
  const r = await api(`/v1/usage/requests/${encodeURIComponent(params[0])}`, { signal })
  const promptTokens = r.total_input_tokens + r.total_cached_input_tokens + r.total_cache_creation_input_tokens
  mount(
    main,
    h(
      'section',
      { class: 'card wide', id: 'request' },
      h('h2', {}, 'Request ', h('span', { class: 'mono' }, r.request_id), ' ', badge(r.status)),
      r.error ? h('p', { class: 'error' }, `${r.error.type}: ${r.error.message}`) : null,
      facts([
        ['Time (UTC)', time(r.created_at)],
        ['Profile', r.routing_mode],
        ['Surface', `${r.surface}${r.stream ? ', streamed' : ''}`],
        ['Model', model(r)],
        ['Attempts', String(r.attempts)],
        r.session_id && [
          'Session',
          h('a', { href: `#/sessions/${encodeURIComponent(r.session_id)}`, class: 'mono' }, r.session_id),
        ],
        r.agent_id && ['Agent', r.agent_id],
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
              { label: 'Grant', cell: (c) => h('span', { class: 'mono' }, c.grant_id) },
              { label: 'Leg', cell: (c) => h('span', { class: 'mono' }, c.usage_event_id) },
              { label: 'For', cell: (c) => c.cost_type },
              { label: 'Amount', class: 'num', cell: (c) => amount(c.amount_nanos) },
            ],
            r.grant_charges,
          ),
        )
      : null,
    feedbackSection(r, signal),
  )
}
