// A tiny element builder. Text always goes in as text nodes, never as HTML, so nothing a request
// carries (an error message, a session id) can inject markup.
import { columnDecimals, formatUsdExact, usd } from './format.js'

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

/**
 * A table from column specs: { label, cell: (row, i) => node | text, class? }, or a money column
 * { label, nanos: (row) => integer nanos }, whose cells share one precision (columnDecimals).
 */
export function table(specs, rows, { empty = 'Nothing yet.', dataset } = {}) {
  if (rows.length === 0) return h('p', { class: 'muted' }, empty)
  const columns = specs.map((c) => (c.nanos ? moneyColumn(c, rows) : c))
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

function moneyColumn(spec, rows) {
  const decimals = columnDecimals(rows.map(spec.nanos).filter((n) => typeof n === 'number'))
  const cell = (row) => {
    const nanos = spec.nanos(row)
    return typeof nanos === 'number' ? amount(nanos, decimals) : '–'
  }
  return { label: spec.label, class: 'num', cell }
}

export const badge = (text, kind = text) => h('span', { class: `badge badge-${kind}` }, text)

/** A number with its exact value on hover: money shown rounded keeps the ledger's nanos at hand. */
export const money = (text, exact) => h('span', { class: 'money', title: exact }, text)

/** An amount of integer nanos, shown as usd() shows it (or at `decimals`), exact on hover. */
export const amount = (nanos, decimals) => money(usd(nanos, decimals), `${formatUsdExact(nanos)} USD`)

/**
 * Text a client chose (an error message, a session source, an agent id): isolated, so a
 * right-to-left run or override inside it cannot reorder the text around it, and free to wrap
 * anywhere, so one unbroken run of thousands of characters cannot widen the page.
 */
export const userText = (text, cls) => h('span', { class: cls ? `text ${cls}` : 'text', dir: 'auto' }, text)

// Bidi controls (embeddings, overrides, isolates, marks): inside an id they would show it reversed.
const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** An id as it can be read back and compared: isolated, and any bidi control shown as its code point. */
export const idText = (id) =>
  id.replace(BIDI_CONTROLS, (c) => `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}>`)

/** A link to an id (a request, a session), in monospace, shown as idText shows it. */
export const idLink = (href, id) => h('a', { href, class: 'mono text', dir: 'auto', title: id }, idText(id))

/** An id that links nowhere (a grant, a leg, an upstream model). */
export const idSpan = (id) => h('span', { class: 'mono text', dir: 'auto' }, idText(id))

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

/**
 * A failure that leaves nothing worth showing (a view that did not load): replaces `el`'s content
 * with the error and a Retry button, so no stale view passes for the one asked for.
 */
export function mountFailure(el, err, retry, ...more) {
  mount(
    el,
    h(
      'section',
      { class: 'card narrow failure', role: 'alert' },
      h('h2', { tabindex: '-1' }, 'This page did not load'),
      h('p', { class: 'error' }, userText(err?.message ?? String(err))),
      h('button', { type: 'button', class: 'retry', onclick: retry }, 'Retry'),
      more,
    ),
  )
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
