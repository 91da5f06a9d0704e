// The dashboard: static files imported as text, so `bun build --compile` carries them inside the
// binary (no CDN, nothing beside it, works offline). The page is public; the data behind it needs
// a key, which the page sends as `Authorization: Bearer` from sessionStorage (no cookie, no CSRF).
import { Elysia } from 'elysia'
import uplotCss from 'uplot/dist/uPlot.min.css' with { type: 'text' }
import uplotJs from 'uplot/dist/uPlot.iife.min.js' with { type: 'text' }
import apiJs from '../dashboard/api.js' with { type: 'text' }
import appJs from '../dashboard/app.js' with { type: 'text' }
import chartJs from '../dashboard/chart.js' with { type: 'text' }
import domJs from '../dashboard/dom.js' with { type: 'text' }
import formatJs from '../dashboard/format.js' with { type: 'text' }
import indexHtml from '../dashboard/index.html' with { type: 'text' }
import overviewJs from '../dashboard/overview.js' with { type: 'text' }
import requestsJs from '../dashboard/requests.js' with { type: 'text' }
import sessionsJs from '../dashboard/sessions.js' with { type: 'text' }
import styleCss from '../dashboard/style.css' with { type: 'text' }
import type { Deps } from '../deps'
import { GatewayError } from '../lib/errors'
import { ownEntry } from '../lib/own-entry'
import { pathId } from './params'

const js = 'text/javascript; charset=utf-8'
const css = 'text/css; charset=utf-8'

/** Served under /dashboard/<name>. */
const files: Record<string, { body: string; type: string }> = {
  'app.js': { body: appJs, type: js },
  'api.js': { body: apiJs, type: js },
  'chart.js': { body: chartJs, type: js },
  'dom.js': { body: domJs, type: js },
  'format.js': { body: formatJs, type: js },
  'overview.js': { body: overviewJs, type: js },
  'requests.js': { body: requestsJs, type: js },
  'sessions.js': { body: sessionsJs, type: js },
  'style.css': { body: styleCss, type: css },
  'uplot.js': { body: uplotJs, type: js },
  'uplot.css': { body: uplotCss, type: css },
}

/**
 * Scripts and styles only from this origin, none inline; the API only on this origin; never
 * framed. uPlot styles through the CSSOM (element.style), which style-src does not govern.
 */
export const dashboardCsp =
  "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

const securityHeaders = {
  'content-security-policy': dashboardCsp,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

/** An ETag per file, so a reload asks "changed?" and gets a 304 until the binary is replaced. */
const etagOf = (body: string) => `"${Bun.hash(body).toString(36)}"`
// Bun's types call an .html import an HTMLBundle (what Bun.serve's HTML routes take); imported
// `with { type: 'text' }` it is the file's text, and that is what the compiled binary holds.
const indexText = indexHtml as unknown as string
const tagged = Object.fromEntries(
  Object.entries({ ...files, 'index.html': { body: indexText, type: 'text/html; charset=utf-8' } }).map(([name, f]) => [
    name,
    { ...f, etag: etagOf(f.body) },
  ]),
)

function serve(name: string, request: Request): Response {
  const file = ownEntry(tagged, name)
  if (!file) throw new GatewayError('not_found', `no dashboard file ${name}`)
  const headers = { ...securityHeaders, etag: file.etag, 'cache-control': 'no-cache' }
  if (request.headers.get('if-none-match') === file.etag) return new Response(null, { status: 304, headers })
  return new Response(file.body, { headers: { ...headers, 'content-type': file.type } })
}

export const dashboardRoutes = (_deps: Deps) =>
  new Elysia({ name: 'http.dashboard' })
    .get('/dashboard', ({ request }) => serve('index.html', request))
    .get('/dashboard/', ({ request }) => serve('index.html', request))
    .get('/dashboard/:file', ({ params, request }) => serve(pathId(params.file, request, '/dashboard/'), request))
