// A tiny element builder. Text always goes in as text nodes, never as HTML, so nothing a request
// carries (an error message, a session id) can inject markup.

/**
 * h('a', { href: '#/x', class: 'link', onclick: fn, dataset: { id: 1 } }, 'text', child, [more])
 * Props named on* become listeners; `false`, null and undefined children are skipped.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue
    if (name.startsWith('on')) el.addEventListener(name.slice(2), value)
    else if (name === 'dataset') Object.assign(el.dataset, value)
    else if (name === 'class') el.className = value
    else if (name in el && typeof value !== 'string') el[name] = value
    else el.setAttribute(name, value === true ? '' : value)
  }
  append(el, children)
  return el
}

/** Replaces el's children, with h()'s rules (no "null" text for a skipped part). */
export function mount(el, ...children) {
  el.replaceChildren()
  append(el, children)
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue
    if (Array.isArray(child)) append(el, child)
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)))
  }
}

/** A table from column specs: { label, cell: (row, i) => node | text, class? }. */
export function table(columns, rows, { empty = 'Nothing yet.', dataset } = {}) {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty)
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { dataset },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { class: c.class }, c.label)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((row, i) =>
          h(
            'tr',
            {},
            columns.map((c) => h('td', { class: c.class }, c.cell(row, i))),
          ),
        ),
      ),
    ),
  )
}

/** label/value pairs as a definition list. */
export const facts = (pairs) =>
  h(
    'dl',
    { class: 'facts' },
    pairs.filter(Boolean).map(([label, value]) => [h('dt', {}, label), h('dd', {}, value)]),
  )

export const badge = (text, kind = text) => h('span', { class: `badge badge-${kind}` }, text)

/** A number with its exact value on hover: money shown rounded keeps the ledger's nanos at hand. */
export const money = (text, exact) => h('span', { class: 'money', title: exact }, text)

/** Shows a failure in the page's notice bar (an aborted fetch is a navigation, not a failure). */
export function showError(err) {
  if (err?.name === 'AbortError') return
  const notice = document.getElementById('notice')
  if (!notice) return
  notice.textContent = err?.message ?? String(err)
  notice.hidden = false
}

export function clearError() {
  const notice = document.getElementById('notice')
  if (notice) notice.hidden = true
}

/** "Newest" and "Older" links for keyset pages (a keyset cannot step forward, so no "Newer"). */
export function pager(paged, olderHref, newestHref) {
  return h(
    'nav',
    { class: 'pager' },
    paged ? h('a', { href: newestHref }, '« Newest') : null,
    olderHref ? h('a', { href: olderHref, rel: 'next' }, 'Older ›') : null,
  )
}
