// The dashboard's entry: sign-in with an API key, the header, and a hash router (#/sessions/…)
// so the server serves one page and every view is a bookmarkable link.
import { ApiError, api, credentials } from './api.js'
import { clearError, h, idSpan, idText, mount, mountFailure } from './dom.js'
import { renderOverview } from './overview.js'
import { renderRequest, renderRequests } from './requests.js'
import { renderSession, renderSessions } from './sessions.js'

// Pattern, view, the tab it belongs to, and its title (from the decoded ids).
const routes = [
  [/^\/?$/, renderOverview, 'overview', () => 'Overview'],
  [/^\/sessions$/, renderSessions, 'sessions', () => 'Sessions'],
  [/^\/sessions\/(.+)$/, renderSession, 'sessions', ([id]) => `Session ${idText(id)}`],
  [/^\/requests$/, renderRequests, 'requests', () => 'Requests'],
  [/^\/requests\/(.+)$/, renderRequest, 'requests', ([id]) => `Request ${idText(id)}`],
]

const $ = (id) => document.getElementById(id)
const setTitle = (title) => {
  document.title = `${title} · svc dashboard`
}
let current = new AbortController()

function showSignIn(message) {
  current.abort()
  $('app').hidden = true
  $('nav').hidden = true
  $('sign-in').hidden = false
  $('sign-in-error').textContent = message ?? ''
  $('sign-in-error').hidden = !message
  setTitle('Sign in')
  $('api-key').focus()
}

function signOut() {
  credentials.clear()
  $('app').replaceChildren()
  showSignIn()
}

async function signIn(key) {
  // whoami proves the key and names the account for the header.
  const me = await api('/v1/auth/whoami', { key })
  credentials.set(key)
  $('account').textContent = `${me.account.name} · ${me.key.prefix}…`
  $('sign-in').hidden = true
  $('app').hidden = false
  $('nav').hidden = false
}

/**
 * The ids a path names, decoded; null for a malformed escape, a blank id, or a dot segment: a
 * URL resolves "/v1/usage/requests/.." to "/v1/usage", another route with another shape.
 */
function readParams(match) {
  try {
    const params = match.slice(1).map(decodeURIComponent)
    return params.every((p) => p.trim() !== '' && p !== '.' && p !== '..') ? params : null
  } catch {
    return null
  }
}

/** The toggle group (bucket, range, …) that has focus: redrawing the chart replaces its links. */
const focusedToggle = () => document.activeElement?.closest?.('#app [data-toggle]')?.dataset.toggle

/**
 * Where focus goes once a view is drawn, if drawing it removed or hid what had focus (a chart
 * toggle, "Older", the sign-in button) and the browser dropped it on <body>: a toggle hands it to
 * its group's new choice; anything else to the view's heading, with the page back at its top.
 */
function settleFocus(main, toggle) {
  const active = document.activeElement
  if (active && active !== document.body && active.isConnected && !active.closest('[hidden]')) return
  const chosen = toggle && main.querySelector(`[data-toggle="${toggle}"] .toggle.on`)
  if (chosen) return chosen.focus({ preventScroll: true })
  const heading = main.querySelector('h1, h2')
  if (!heading) return
  heading.tabIndex = -1
  heading.focus({ preventScroll: true })
  window.scrollTo(0, 0)
}

function notFound(main, path) {
  setTitle('Not found')
  mount(
    main,
    h(
      'section',
      { class: 'card narrow' },
      h('h2', {}, 'No such page'),
      h('p', {}, 'This link names no request or session: ', idSpan(path)),
      h('a', { href: '#/' }, 'Overview'),
    ),
  )
}

async function route() {
  current.abort()
  current = new AbortController()
  const { signal } = current
  // Ids in the path are URI-encoded by the links that make them; split off the query first.
  const raw = location.hash.slice(1)
  const cut = raw.indexOf('?')
  const path = cut < 0 ? raw : raw.slice(0, cut)
  const query = new URLSearchParams(cut < 0 ? '' : raw.slice(cut + 1))
  const match = routes.map(([re, ...rest]) => [re.exec(path), ...rest]).find(([m]) => m)
  const main = $('app')
  const toggle = focusedToggle()
  clearError()
  if (!match) {
    location.hash = '#/'
    return
  }
  const [m, view, tab, title] = match
  for (const a of document.querySelectorAll('#nav a[data-tab]')) {
    a.setAttribute('aria-current', a.dataset.tab === tab ? 'page' : 'false')
  }
  const params = readParams(m)
  if (!params) {
    notFound(main, path)
    return settleFocus(main)
  }
  setTitle(title(params))
  main.setAttribute('aria-busy', 'true')
  try {
    await view(main, { params, query, signal })
  } catch (err) {
    // A newer navigation owns the page now.
    if (signal.aborted) return
    if (err instanceof ApiError && err.status === 401) {
      credentials.clear()
      return showSignIn('Your key is no longer accepted (revoked or unknown). Sign in again.')
    }
    // The view asked for did not load: its error replaces the old view, which would pass for it.
    mountFailure(main, err, route)
  } finally {
    if (!signal.aborted) main.removeAttribute('aria-busy')
  }
  if (!signal.aborted) settleFocus(main, toggle)
}

/** Opens the dashboard with a key this tab kept; only the gateway refusing it (401) forgets it. */
async function resume(key) {
  try {
    await signIn(key)
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      credentials.clear()
      return showSignIn('Your key is no longer accepted (revoked or unknown). Sign in again.')
    }
    // A restart, a proxy's 502, a dropped connection: nothing about the key. Keep it; offer a retry.
    $('sign-in').hidden = true
    $('app').hidden = false
    setTitle('Not loaded')
    mountFailure(
      $('app'),
      err,
      () => resume(key),
      h('button', { type: 'button', class: 'secondary', onclick: signOut }, 'Sign in with another key'),
    )
    return settleFocus($('app'))
  }
  await route()
}

$('sign-in-form').addEventListener('submit', async (e) => {
  e.preventDefault()
  const key = $('api-key').value.trim()
  if (!key) return
  try {
    await signIn(key)
    $('api-key').value = ''
    await route()
  } catch (err) {
    showSignIn(err instanceof ApiError && err.status === 401 ? 'That key is not valid here.' : err.message)
  }
})

$('sign-out').addEventListener('click', signOut)

window.addEventListener('hashchange', () => {
  if (credentials.get()) route()
})

// Choosing the view already shown fires no hashchange, yet means "show it again" (after a failure).
document.querySelector('header.top').addEventListener('click', (e) => {
  const link = e.target.closest('a[href^="#"]')
  if (link && link.hash === location.hash && credentials.get() && !$('app').hidden) route()
})

const saved = credentials.get()
if (saved) resume(saved)
else showSignIn()
