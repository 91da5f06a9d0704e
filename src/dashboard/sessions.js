// Sessions: the list by latest activity (keyset pages), and one session's requests in the order
// they were made. Page cursors live in the hash, so the browser's Back button pages back.
import { api, withQuery } from './api.js'
import { amount, facts, h, idLink, idSpan, mount, pager, showError, table, userText } from './dom.js'
import { time } from './format.js'
import { requestColumns } from './requests.js'

const PAGE = 25
const SESSION_PAGE = 50

const optional = (text) => (text ? userText(text) : '–')

const link = (id) => idLink(`#/sessions/${encodeURIComponent(id)}`, id)

export async function renderSessions(main, { query, signal }) {
  // One more than shown: whether an older page exists, without a count query.
  const rows = await api(
    withQuery('/v1/usage/sessions/list', {
      limit: PAGE + 1,
      before: query.get('before'),
      before_id: query.get('before_id'),
    }),
    { signal },
  )
  const page = rows.slice(0, PAGE)
  const last = page.at(-1)
  mount(
    main,
    h(
      'section',
      { class: 'card wide' },
      h('h2', {}, 'Sessions'),
      h(
        'p',
        { class: 'muted' },
        'Requests that named a session (x-session-id, Claude Code or Codex), latest activity first.',
      ),
      table(
        [
          { label: 'Session', cell: (s) => link(s.session_id) },
          { label: 'Source', cell: (s) => optional(s.session_source) },
          { label: 'Agent', cell: (s) => optional(s.agent_id) },
          { label: 'Requests', class: 'num', cell: (s) => s.request_count.toLocaleString('en-US') },
          { label: 'Cost', nanos: (s) => s.total_cost_nanos },
          { label: 'Latest activity (UTC)', class: 'when', cell: (s) => time(s.latest_at) },
          { label: 'Started (UTC)', class: 'when', cell: (s) => time(s.first_at) },
        ],
        page,
        { empty: 'No sessions in this page.', dataset: { table: 'sessions' } },
      ),
      pager(
        query.has('before'),
        rows.length > PAGE && last
          ? withQuery('#/sessions', { before: last.latest_at, before_id: last.session_id })
          : undefined,
        '#/sessions',
      ),
    ),
  )
}

export async function renderSession(main, { params, signal }) {
  const id = params[0]
  const [{ items }, first] = await Promise.all([
    api(withQuery('/v1/usage/sessions', { ids: id }), { signal }),
    api(withQuery('/v1/usage/requests', { session_id: id, limit: SESSION_PAGE }), { signal }),
  ])
  // The server looks an id up whole and split on its commas: "a,b" may also answer for "a".
  const summary = items.find((s) => s.session_id === id)
  if (!summary) {
    mount(main, h('section', { class: 'card wide' }, h('h2', {}, 'Session not found'), h('p', {}, idSpan(id))))
    return
  }
  // Pages come newest first; shown oldest first, numbered from the session's first request.
  const shown = []
  let cursor = first
  const body = h('div')
  const more = h(
    'button',
    { type: 'button', class: 'secondary', onclick: () => loadEarlier().catch(showError) },
    'Earlier requests',
  )
  const draw = () => {
    const columns = [
      { label: '#', class: 'num', cell: (_r, i) => String(summary.request_count - shown.length + i + 1) },
      ...requestColumns,
    ]
    mount(
      body,
      cursor.has_more ? more : null,
      table(columns, shown, { empty: 'No requests.', dataset: { table: 'session-requests' } }),
    )
  }
  const take = (page) => {
    shown.unshift(...[...page.items].reverse())
    cursor = page
    draw()
  }
  async function loadEarlier() {
    const oldest = shown[0]
    more.disabled = true
    try {
      const page = await api(
        withQuery('/v1/usage/requests', {
          session_id: id,
          limit: SESSION_PAGE,
          before: oldest.created_at,
          before_id: oldest.request_id,
        }),
        { signal },
      )
      take(page)
    } finally {
      more.disabled = false
    }
  }
  take(first)
  mount(
    main,
    h(
      'section',
      { class: 'card wide' },
      h('h2', {}, 'Session ', idSpan(id)),
      facts([
        ['Source', optional(summary.session_source)],
        ['Agent', optional(summary.agent_id)],
        ['Requests', summary.request_count.toLocaleString('en-US')],
        ['Cost', amount(summary.total_cost_nanos)],
        ['Started (UTC)', time(summary.first_at)],
        ['Latest activity (UTC)', time(summary.latest_at)],
      ]),
      h('h3', {}, 'Requests, in order'),
      body,
    ),
  )
}
