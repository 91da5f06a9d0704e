// Sign-in for the CLI: the device flow's two endpoints, the /login page where a user approves a
// code with a key they already hold (or the admin token and an account name), and whoami/logout
// for a key to see and revoke itself.
import { Elysia, t } from 'elysia'
import type { Deps } from '../deps'
import { creditPosition, isExpired, isScoped } from '../ledger/credit'
import { grantView } from '../ledger/views'
import { GatewayError } from '../lib/errors'
import { tokenMatches } from './admin'
import { requirePrincipal } from './auth'

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** The page must not be framed (clickjacking) and runs no script at all; its one stylesheet is the dashboard's. */
const pageHeaders = {
  'content-type': 'text/html; charset=utf-8',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'",
  'cache-control': 'no-store',
}

function page(title: string, body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>${escapeHtml(title)} · svc</title>
<link rel="stylesheet" href="/dashboard/style.css"></head>
<body><header class="top"><a class="brand" href="/dashboard">svc</a></header>
<main class="card narrow login"><h1>${escapeHtml(title)}</h1>${body}</main></body></html>`,
    { status, headers: { ...pageHeaders, ...headers } },
  )
}

/** The form again with what went wrong; a rate limit says when to come back, as the API's 429s do. */
function failedPage(code: string, err: unknown): Response {
  const status = err instanceof GatewayError ? err.status : 400
  const retryAfter = err instanceof GatewayError ? err.retryAfterSeconds : undefined
  const headers: Record<string, string> = retryAfter === undefined ? {} : { 'retry-after': String(retryAfter) }
  return page('Sign in a device', loginForm(code, (err as Error).message), status, headers)
}

// The form has no action: it posts back to the page's own URL, so sign-in also works behind a proxy
// that serves svc under a path prefix (https://example.com/svc/login), where "/login" would miss.
function loginForm(code: string, message = ''): string {
  return `${message ? `<p><strong>${escapeHtml(message)}</strong></p>` : ''}
<p>A command-line client asks to sign in to this gateway. Check that the code matches the one in your terminal.</p>
<form method="post">
<label>Code<input name="user_code" value="${escapeHtml(code)}" autocomplete="off" required></label>
<label>Your API key (proves which account the new key belongs to)<input name="api_key" type="password" autocomplete="off"></label>
<p class="muted">Operators: leave the key empty, give the admin token and the account name instead.</p>
<label>Admin token<input name="admin_token" type="password" autocomplete="off"></label>
<label>Account<input name="account" autocomplete="off"></label>
<button name="decision" value="approve">Approve</button><button name="decision" value="deny">Deny</button>
</form>`
}

const plausibleHost =
  /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i

/**
 * The origin a client reached: behind a TLS reverse proxy, request.url is the proxy's internal
 * address (http://127.0.0.1:8080), so X-Forwarded-Proto and X-Forwarded-Host win when they look
 * sane (the first of a comma list). Trusting them is safe here: the link is only returned to the
 * client that sent the headers and is stored nowhere, so a spoofed header only changes what the
 * requester sees, who could open any URL anyway. Our CLI ignores the host and uses its own base.
 */
function publicOrigin(request: Request): string {
  const url = new URL(request.url)
  const first = (name: string) => request.headers.get(name)?.split(',')[0]?.trim() ?? ''
  const forwardedProto = first('x-forwarded-proto').toLowerCase()
  const forwardedHost = first('x-forwarded-host')
  const proto = forwardedProto === 'http' || forwardedProto === 'https' ? forwardedProto : url.protocol.slice(0, -1)
  const host = plausibleHost.test(forwardedHost) ? forwardedHost : url.host
  try {
    return new URL(`${proto}://${host}`).origin
  } catch {
    return url.origin // e.g. a port above 65535
  }
}

/**
 * The page's form fields, as text. The page posts a form, but any body Elysia parses arrives here:
 * JSON with a number for the code made the error page escape a number (a 500, found by the fuzzer).
 */
function formFields(body: unknown): Record<string, string | undefined> {
  const fields: Record<string, string> = {}
  if (typeof body !== 'object' || body === null) return fields
  for (const [name, value] of Object.entries(body)) if (typeof value === 'string') fields[name] = value
  return fields
}

/** Who approves: the holder of an API key, or the operator naming an account. */
async function approvingAccount(deps: Deps, form: Record<string, string | undefined>): Promise<string> {
  if (form.api_key) {
    deps.syncCaches()
    const principal = await deps.auth.authenticate(form.api_key.trim())
    if (!principal) throw new GatewayError('authentication', 'that API key is not valid')
    return principal.accountId
  }
  if (form.admin_token) {
    // Compared, and refused in the same words, whether or not this gateway has an admin token: a
    // guess does not learn whether there is one to find.
    const adminToken = deps.config.server.adminToken
    if (!tokenMatches(form.admin_token, adminToken ?? '') || !adminToken)
      throw new GatewayError('authentication', 'that admin token is not valid')
    if (!form.account) throw new GatewayError('invalid_request', 'name the account the new key is for')
    return (await deps.admin.findAccount(form.account.trim())).id
  }
  throw new GatewayError('authentication', 'give an API key of your account (or the admin token and an account name)')
}

export const signInRoutes = (deps: Deps) =>
  new Elysia({ name: 'http.sign-in' })
    .post(
      '/v1/auth/device/code',
      async ({ body, request, set }) => {
        const started = await deps.deviceLogin.start(body?.device_name ?? 'device')
        const origin = publicOrigin(request)
        // Carries the device code, a secret; and a cache must never hand one requester's link to another.
        set.headers['cache-control'] = 'no-store'
        return {
          device_code: started.deviceCode,
          user_code: started.userCode,
          verification_uri: `${origin}/login`,
          verification_uri_complete: `${origin}/login?code=${started.userCode}`,
          expires_in: started.expiresIn,
          interval: started.interval,
        }
      },
      { body: t.Optional(t.Object({ device_name: t.Optional(t.String({ maxLength: 100 })) })) },
    )
    .post(
      '/v1/auth/device/token',
      async ({ body, set }) => {
        const result = await deps.deviceLogin.poll(body.device_code)
        if (!result.ok) {
          set.status = 400
          return { error: result.error, error_description: result.description }
        }
        return { access_token: result.key, token_type: 'bearer', key_id: result.keyId, account: result.account }
      },
      { body: t.Object({ device_code: t.String({ minLength: 1 }) }) },
    )
    .get('/login', async ({ query }) => {
      const code = typeof query.code === 'string' ? query.code : ''
      if (code) {
        try {
          const { deviceName } = await deps.deviceLogin.describe(code)
          return page('Sign in a device', `<p>Device: <strong>${escapeHtml(deviceName)}</strong></p>${loginForm(code)}`)
        } catch (err) {
          return failedPage('', err)
        }
      }
      return page('Sign in a device', loginForm(''))
    })
    .post('/login', async ({ body }) => {
      const form = formFields(body)
      const code = form.user_code ?? ''
      try {
        if (form.decision === 'deny') {
          await deps.deviceLogin.decide(code, { approve: false })
          return page('Sign-in denied', '<p>The device was not signed in. You can close this page.</p>')
        }
        const accountId = await approvingAccount(deps, form)
        const { deviceName } = await deps.deviceLogin.decide(code, { approve: true, accountId })
        return page(
          'Device signed in',
          `<p><strong>${escapeHtml(deviceName)}</strong> will receive its own API key. Return to your terminal.</p>`,
        )
      } catch (err) {
        return failedPage(code, err)
      }
    })
    .get('/v1/auth/whoami', async ({ request }) => {
      const principal = await requirePrincipal(deps, request, true)
      const [account, key, grants] = await Promise.all([
        deps.ledger.getAccount(principal.accountId),
        deps.ledger.getApiKey(principal.keyId),
        deps.ledger.listGrants(principal.accountId),
      ])
      const now = deps.clock()
      const credit = creditPosition(grants, now)
      return {
        account: { id: account?.id, name: account?.name },
        key: { id: key?.id, name: key?.name, prefix: key?.prefix },
        credit: {
          limit_nanos: credit.limitNanos,
          used_nanos: credit.usedNanos,
          remaining_nanos: credit.remainingNanos,
          // Of what is left, what pays only some requests: a signed-in agent on another profile or
          // model cannot spend it, and the sum alone hid why such requests got a 402.
          scoped: grants.filter((g) => !isExpired(g, now) && g.remainingNanos > 0 && isScoped(g)).map(grantView),
        },
      }
    })
    .post('/v1/auth/logout', async ({ request }) => {
      const principal = await requirePrincipal(deps, request, true)
      await deps.ledger.revokeApiKey(principal.keyId)
      deps.auth.forgetKey(principal.keyId)
      return { revoked: true, key_id: principal.keyId }
    })
