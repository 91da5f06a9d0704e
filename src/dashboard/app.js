// The dashboard's entry: sign-in with an API key, the header, and a hash router (#/sessions/…)
// so the server serves one page and every view is a bookmarkable link.
import { ApiError, api, credentials } from './api.js'
import { clearError, showError } from './dom.js'
import { renderOverview } from './overview.js'
import { renderRequest, renderRequests } from './requests.js'
import { renderSession, renderSessions } from './sessions.js'

const routes = [
  [/^\/?$/, renderOverview, 'overview'],
  [/^\/sessions$/, renderSessions, 'sessions'],
  [/^\/sessions\/(.+)$/, renderSession, 'sessions'],
  [/^\/requests$/, renderRequests, 'requests'],
  [/^\/requests\/(.+)$/, renderRequest, 'requests'],
]

const $ = (id) => document.getElementById(id)
let current = new AbortController()

function showSignIn(message) {
  current.abort()
  $('app').hidden = true
  $('nav').hidden = true
  $('sign-in').hidden = false
  $('sign-in-error').textContent = message ?? ''
  $('sign-in-error').hidden = !message
  $('api-key').focus()
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

async function route() {
  current.abort()
  current = new AbortController()
  const { signal } = current
  // Ids in the path are URI-encoded by the links that make them; split off the query first.
  const raw = location.hash.slice(1)
  const cut = raw.indexOf('?')
  const path = cut < 0 ? raw : raw.slice(0, cut)
  const query = new URLSearchParams(cut < 0 ? '' : raw.slice(cut + 1))
  const match = routes.map(([re, view, tab]) => [re.exec(path), view, tab]).find(([m]) => m)
  const main = $('app')
  clearError()
  if (!match) {
    location.hash = '#/'
    return
  }
  const [m, view, tab] = match
  for (const a of document.querySelectorAll('#nav a[data-tab]')) {
    a.setAttribute('aria-current', a.dataset.tab === tab ? 'page' : 'false')
  }
  main.setAttribute('aria-busy', 'true')
  try {
    await view(main, { params: m.slice(1).map(decodeURIComponent), query, signal })
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      credentials.clear()
      showSignIn('Your key is no longer accepted (revoked or unknown). Sign in again.')
    } else showError(err)
  } finally {
    if (!signal.aborted) main.removeAttribute('aria-busy')
  }
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

$('sign-out').addEventListener('click', () => {
  credentials.clear()
  $('app').replaceChildren()
  showSignIn()
})

window.addEventListener('hashchange', () => {
  if (credentials.get()) route()
})

const saved = credentials.get()
if (saved) {
  signIn(saved)
    .then(route)
    .catch((err) => {
      credentials.clear()
      showSignIn(err.message)
    })
} else showSignIn()
