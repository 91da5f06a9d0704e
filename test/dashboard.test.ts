// The dashboard in a real browser: Debian's Chromium driven by playwright-core against the app on
// a loopback port, over a ledger seeded with a few thousand requests. Screenshots of every view
// land in test/artifacts/dashboard/ (kept by CI, ignored by git).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type BrowserContext, chromium, type Page } from 'playwright-core'
import { feedbackReasons } from '../src/http/usage'
import { createHarness, type Harness } from './support/harness'
import { finishedRequest, type SeedRequest, seedRequest } from './support/ledger-fixtures'

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
const ARTIFACTS = join(import.meta.dir, 'artifacts', 'dashboard')
const haveChromium = existsSync(CHROMIUM)
const inCi = process.env.CI === 'true'

if (!haveChromium) {
  // CI installs it (.ci/run); elsewhere the browser test is skipped, loudly.
  if (inCi) throw new Error(`${CHROMIUM} is missing in CI: .ci/run should have installed Debian's chromium`)
  console.warn(
    `dashboard browser test skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`,
  )
}

const H = 3_600_000

// What the callbacks run in the page touch, typed here: the DOM library stays out of the program.
interface Canvas {
  width: number
  height: number
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } }
}
/** The page's own globals that callbacks below read (they run in the browser). */
interface PageElement {
  textContent: string | null
  closest(selector: string): PageElement | null
}
declare const document: {
  activeElement: PageElement | null
  documentElement: { scrollWidth: number; clientWidth: number }
}
declare const scrollY: number
interface Styled {
  computedStyleMap(): { get(property: string): { toString(): string } | undefined }
}

/** The dashboard's own modules, loaded by URL: they are browser scripts, outside the TypeScript program. */
const loadModule = (name: string) => import(new URL(`../src/dashboard/${name}`, import.meta.url).href)
/** Model, provider, and a price factor so the lines on the chart differ. */
const MODELS = [
  ['claude-sonnet-4-5', 'anthropic', 6],
  ['gpt-5.1', 'openai', 4],
  ['claude-haiku-4-5', 'anthropic', 2],
  ['gpt-5-mini', 'openrouter', 1],
] as const
const MODES = ['pro', 'max', 'ultra_saver'] as const

/** What a ranking looks like after a fallback: one failed, one chosen, one skipped, one not tried. */
const targetRanks = [
  rank('claude-sonnet-4-5', 'anthropic', 'failed', 'overloaded: upstream answered 529 before the first byte'),
  rank('gpt-5.1', 'openai', 'chosen', 'served the request'),
  rank('claude-haiku-4-5', 'anthropic', 'not_tried', 'a better candidate answered'),
  rank('claude-opus-4-5', 'anthropic', 'skipped', 'no grant covers this model (scope)'),
]

function rank(model: string, provider: string, status: string, reason: string) {
  return {
    model_id: model,
    provider_id: provider,
    upstream_model: model,
    score: status === 'skipped' ? null : 80.5,
    estimated_cost_nanos: status === 'skipped' ? null : 123_000,
    byok: false,
    quality: 90,
    nudge: 0,
    health: { state: 'closed', ttfb_ms: 420, error_rate: 0 },
    status,
    reason,
  }
}

/** ~3,000 requests over six days, four models on three providers, three modes, 40 sessions of 75. */
async function seedHistory(h: Harness, now: number) {
  const count = 3000
  // Queued together, as the gateway's own answers are: they commit in shared transactions.
  const seeded: Promise<unknown>[] = []
  for (let i = 0; i < count; i++) {
    const [modelId, providerId, factor] = MODELS[i % MODELS.length]!
    // Busier towards today, as a growing account would be.
    const age = Math.floor((1 - Math.sqrt(i / count)) * 6 * 24 * H)
    seeded.push(
      seedRequest(h.deps.ledger, {
        accountId: h.accountId,
        at: now - 2 * 60_000 - age,
        routingMode: MODES[i % MODES.length],
        sessionId: `sess-${String(i % 40).padStart(3, '0')}`,
        sessionSource: 'claude-code',
        legs: [
          {
            modelId,
            providerId,
            input: 200 + (i % 50),
            cached: i % 3 === 0 ? 4000 : 0,
            cacheCreation: i % 10 === 0 ? 1500 : 0,
            output: 150 + (i % 40),
            costNanos: factor * (50_000 + (i % 97) * 1_000),
          },
        ],
      }),
    )
  }
  await Promise.all(seeded)
  // The newest request: a fallback with a ranking worth reading, in its own session.
  await seedRequest(h.deps.ledger, {
    accountId: h.accountId,
    at: now - 60_000,
    id: 'req_target',
    routingMode: 'pro',
    sessionId: 'sess-target',
    sessionSource: 'codex',
    agentId: 'reviewer',
    providerRanks: targetRanks,
    legs: [
      { modelId: 'claude-sonnet-4-5', providerId: 'anthropic', outcome: 'failed', costNanos: 0, input: 0, output: 0 },
      { modelId: 'gpt-5.1', providerId: 'openai', input: 900, cached: 3000, output: 420, costNanos: 2_345_678 },
    ],
  })
}

describe.skipIf(!haveChromium)('dashboard in Chromium', () => {
  let h: Harness
  let server: ReturnType<typeof Bun.serve>
  let context: BrowserContext
  let page: Page
  let profile: string
  const problems: string[] = []
  const shot = (name: string) => page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true })

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true })
    const now = Date.now()
    h = await createHarness({ grantUsd: 50, now })
    await seedHistory(h, now)
    server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request) => h.app.handle(request) })
    profile = mkdtempSync(join(tmpdir(), 'svc-chromium-'))
    // A persistent context is how Playwright takes a user-data-dir: a fresh one per run.
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      viewport: { width: 1400, height: 1000 },
    })
    page = context.pages()[0] ?? (await context.newPage())
    // Any script error or CSP violation fails the run at the end.
    page.on('pageerror', (err) => problems.push(`pageerror: ${err.message}`))
    page.on('console', (msg) => {
      // The wrong-key attempt below logs its 401 fetch; anything else is a problem.
      if (msg.type() === 'error' && !/status of 401/.test(msg.text())) problems.push(`console: ${msg.text()}`)
    })
    // Loopback only: anything else the page asks for is a bug (the dashboard has no CDN).
    await context.route('**/*', (route) => {
      const url = new URL(route.request().url())
      if (url.hostname === '127.0.0.1') return route.continue()
      problems.push(`off-origin request: ${url.href}`)
      return route.abort()
    })
  }, 60_000)

  afterAll(async () => {
    await context?.close()
    await server?.stop(true)
    if (profile) rmSync(profile, { recursive: true, force: true })
  })

  test('sign in, chart from the ledger, a session, a request, feedback into the ledger', async () => {
    const base = `http://127.0.0.1:${server.port}`
    const res = await page.goto(`${base}/dashboard`)
    expect(res?.headers()['content-security-policy']).toContain("default-src 'self'")
    await page.locator('#sign-in').waitFor()
    await shot('01-sign-in')

    // A wrong key is refused on the sign-in form, and nothing else opens.
    await page.fill('#api-key', 'svc-not-a-key')
    await page.click('#sign-in-form button[type=submit]')
    await page.locator('#sign-in-error', { hasText: 'not valid' }).waitFor()
    expect(await page.locator('#app').isHidden()).toBe(true)

    await page.fill('#api-key', h.key)
    await page.click('#sign-in-form button[type=submit]')

    // The chart: uPlot drew one line per model, and the canvas holds pixels.
    const chart = page.locator('#spend-chart[data-drawn]')
    await chart.waitFor()
    expect(await chart.getAttribute('data-drawn')).toBe(String(MODELS.length))
    const inked = await page
      .locator('#spend-chart canvas')
      .first()
      .evaluate((el) => {
        const canvas = el as unknown as Canvas
        const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height)
        let n = 0
        for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) n++
        return n
      })
    expect(inked).toBeGreaterThan(1000)
    // Signed in: focus lands on the view's heading (not <body>), the title names the view, and the
    // chart has a text alternative with each line's total.
    expect(await page.evaluate(() => document.activeElement?.closest('main h2')?.textContent)).toBe('Credit')
    expect(await page.title()).toBe('Overview · svc dashboard')
    const chartText = await page.getAttribute('#spend-chart', 'aria-label')
    expect(chartText).toStartWith('Spend per day, ')
    for (const [model] of MODELS) expect(chartText).toContain(`${model} $`)
    const usage = await (await h.call('/v1/usage')).json()
    expect(usage.used_nanos).toBeGreaterThan(0)
    const { usd } = await loadModule('format.js')
    expect(await page.textContent('[data-field=used]')).toBe(usd(usage.used_nanos))
    expect(await page.locator('table[data-table=grants] tbody tr').count()).toBe(1)
    expect(await page.textContent('[data-field=net-saving]')).toMatch(/^\$\d/)
    await shot('02-overview')

    // Group by provider, hourly: the toggles redraw from the aggregation endpoint.
    await page.click('[data-toggle=group_by] >> text=Provider')
    await page.locator('#spend-chart[data-drawn="3"]').waitFor()
    // The toggles were redrawn: focus stays on the one just chosen, for the keyboard's sake.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Provider')
    await page.click('[data-toggle=bucket] >> text=Hourly')
    await page.locator('[data-toggle=bucket] .toggle.on', { hasText: 'Hourly' }).waitFor()
    await page.locator('#spend-chart[data-drawn]').waitFor()
    await shot('03-overview-hourly-by-provider')

    // Sessions, newest activity first: the target session leads the list.
    await page.click('#nav >> text=Sessions')
    const sessions = page.locator('table[data-table=sessions] tbody tr')
    await sessions.first().waitFor()
    expect(await sessions.count()).toBe(25)
    expect(await page.title()).toBe('Sessions · svc dashboard')
    await shot('04-sessions')

    // A long session: the latest 50 requests in order, then the earlier ones above them.
    await page.click('table[data-table=sessions] >> text=sess-039')
    const inSession = page.locator('table[data-table=session-requests] tbody tr')
    await inSession.first().waitFor()
    expect(await inSession.count()).toBe(50)
    await page.click('text=Earlier requests')
    await inSession.nth(74).waitFor()
    const numbered = await inSession.evaluateAll((rows) =>
      rows.map((r) => [r.children[0]?.textContent, r.children[1]?.textContent ?? '']),
    )
    expect(numbered.map(([n]) => Number(n))).toEqual(Array.from({ length: 75 }, (_, i) => i + 1))
    const times = numbered.map(([, t]) => t)
    expect(times).toEqual([...times].sort())
    await page.goBack()
    await sessions.first().waitFor()
    await page.click('table[data-table=sessions] >> text=sess-target')
    await page.locator('table[data-table=session-requests]').waitFor()
    await shot('05-session')

    await page.click('table[data-table=session-requests] >> text=req_target')
    const ranks = page.locator('table[data-table=provider-ranks] tbody tr')
    await ranks.first().waitFor()
    expect(await ranks.count()).toBe(targetRanks.length)
    const rankRows = await ranks.evaluateAll((rows) =>
      rows.map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent?.trim())),
    )
    expect(rankRows.map((r) => [r[1], r[3], r[9]])).toEqual(
      targetRanks.map((r) => [r.model_id, r.status.replace('_', ' '), r.reason]),
    )
    expect(await page.locator('table[data-table=legs] tbody tr').count()).toBe(2)

    // The form's fields have labels; the comment box does not cut at 4,000 UTF-16 units (the
    // server counts 4,000 characters: a family emoji is one of them, and eight units).
    expect(await page.getByLabel('Reason').evaluate((el) => el.tagName)).toBe('SELECT')
    expect(await page.getByLabel('Comment').evaluate((el) => el.tagName)).toBe('TEXTAREA')
    expect(await page.getAttribute('#feedback-form textarea', 'maxlength')).toBeNull()
    // Thumbs down, a reason and a comment → POST feedback → shown, and in the ledger.
    await page.click('button[name=rating-down]')
    await page.selectOption('#feedback-form select[name=reason]', 'too_expensive')
    await page.fill('#feedback-form textarea[name=comment]', 'Fell back to a pricier model for a one-line answer.')
    await page.click('#feedback-form button[type=submit]')
    await page.locator('table[data-table=feedback] >> text=Fell back to a pricier model').waitFor()
    await shot('06-request-with-feedback')
    const detail = await h.deps.ledger.getRequest(h.accountId, 'req_target')
    expect(detail?.feedback.map(({ rating, reason, comment }) => ({ rating, reason, comment }))).toEqual([
      { rating: 'down', reason: 'too_expensive', comment: 'Fell back to a pricier model for a one-line answer.' },
    ])

    // The history pages with a keyset cursor.
    await page.click('#nav >> text=Requests')
    const rows = page.locator('table[data-table=requests] tbody tr')
    await rows.first().waitFor()
    expect(await rows.count()).toBe(50)
    const firstPageTop = await rows.first().locator('td').nth(1).textContent()
    await page.click('.pager >> text=Older')
    await rows.first().filter({ hasNotText: firstPageTop! }).waitFor()
    expect(await rows.count()).toBe(50)
    // The older page is read from its top, and focus starts there too.
    expect(await page.evaluate(() => [scrollY, document.activeElement?.textContent])).toEqual([0, 'Requests'])
    await shot('07-requests-page-2')

    // The device sign-in page shares the stylesheet.
    await page.goto(`${base}/login`)
    expect(
      await page
        .locator('main')
        .evaluate((el) => (el as unknown as Styled).computedStyleMap().get('max-width')?.toString()),
    ).toBe('544px')
    await shot('08-login')

    expect(problems).toEqual([])
  }, 60_000)

  test('what an audit found: lookalike ids, hiccups, long strings, failed views, feedback errors', async () => {
    const base = `http://127.0.0.1:${server.port}`
    const at = Date.now() - 7 * 24 * H
    const ledger = h.deps.ledger
    const seed = (opts: Omit<SeedRequest, 'accountId'>) => seedRequest(ledger, { accountId: h.accountId, ...opts })
    // "a,b" is looked up whole and split on its comma, so the answer holds "a" too (newer, first).
    await seed({ at, sessionId: 'a,b' })
    for (const i of [1, 2]) await seed({ at: at + i, sessionId: 'a' })
    // Thousands of characters without a break, in the places a client or an upstream fills (a
    // session id as long as svc records one: 200 characters).
    const long = finishedRequest({ accountId: h.accountId, at, id: 'req_long', sessionId: `long-${'x'.repeat(195)}` })
    Object.assign(long.request, {
      agentId: 'y'.repeat(200),
      status: 'failed',
      errorType: 'api_error',
      errorMessage: `upstream said: ${'A'.repeat(3000)}`,
    })
    await ledger.recordRequest(long)
    const aborted = finishedRequest({ accountId: h.accountId, at, id: 'req_aborted', status: 'aborted' })
    Object.assign(aborted.request, { errorType: 'api_error', errorMessage: 'client disconnected mid-stream' })
    await ledger.recordRequest(aborted)
    await seed({ at, id: 'req_running' })
    // An override character: unisolated, "<RLO>gnp.exe" reads "exe.png" and drags its neighbours along.
    await seed({ at, sessionId: '\u202egnp.exe' })
    for (const [i, costNanos] of [1_234, 15_200_000, 2_000_000_000].entries()) {
      await seed({ at: at + i, sessionId: 'money', legs: [{ costNanos }] })
    }
    const before = problems.length
    const fetched: string[] = []
    const noteFetch = (r: { url(): string }) => fetched.push(new URL(r.url()).pathname)
    page.on('request', noteFetch)
    await page.goto(`${base}/dashboard`)
    await page.evaluate((key) => sessionStorage.setItem('svc.apiKey', key), h.key)
    // Opened again with the key this tab keeps, as a signed-in user's reload: the hash navigations
    // below change the view only (the test relied on an earlier test's sign-in before).
    await page.reload()
    await page.locator('#app:not([hidden])').waitFor()
    const facts = async () =>
      Object.fromEntries(
        await page
          .locator('.facts dt')
          .evaluateAll((dts) => dts.map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])),
      )
    const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth)

    // 1. The session asked for, not the first one the lookup answered.
    await page.goto(`${base}/dashboard#/sessions/${encodeURIComponent('a,b')}`)
    await page.locator('table[data-table=session-requests]').waitFor()
    expect((await facts()).Requests).toBe('1')

    // 2. A hiccup while the page loads keeps the key and offers a retry; only a 401 signs out.
    await page.route('**/v1/auth/whoami', (r) =>
      r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"message":"busy, try later"}}' }),
    )
    await page.reload()
    await page.locator('#sign-in:visible, .failure').first().waitFor()
    expect(await page.locator('.failure', { hasText: 'busy, try later' }).isVisible()).toBe(true)
    expect(await page.evaluate(() => sessionStorage.getItem('svc.apiKey'))).toBe(h.key)
    await page.unroute('**/v1/auth/whoami')
    await page.click('.failure button.retry')
    await page.locator('table[data-table=session-requests]').waitFor()

    // 3. Long ids and messages wrap: nothing pushes the page sideways.
    await page.goto(`${base}/dashboard#/requests/req_long`)
    await page.locator('#request').waitFor()
    expect(await fits()).toBe(true)
    await page.goto(`${base}/dashboard#/sessions/${encodeURIComponent(`long-${'x'.repeat(195)}`)}`)
    await page.locator('table[data-table=session-requests]').waitFor()
    expect(await fits()).toBe(true)

    // 14. A client that hung up is told plainly, not as a failure in red.
    await page.goto(`${base}/dashboard#/requests/req_aborted`)
    await page.locator('#request').waitFor()
    expect(await page.locator('#request .error').count()).toBe(0)
    expect(await page.locator('#request', { hasText: 'client disconnected mid-stream' }).count()).toBe(1)

    // 9. A failed send says why beside the button, not in a banner off-screen; a later success
    // leaves no stale error anywhere.
    await page.route('**/feedback', (r) =>
      r.fulfill({ status: 503, contentType: 'application/json', body: '{"error":{"message":"ledger busy"}}' }),
    )
    await page.click('button[name=rating-up]')
    await page.click('#feedback-form button[type=submit]')
    await page.locator('#notice:visible, #feedback-form .error').first().waitFor()
    expect(await page.locator('#feedback-form .error', { hasText: 'ledger busy' }).isVisible()).toBe(true)
    expect(await page.locator('#notice').isVisible()).toBe(false)
    await page.unroute('**/feedback')
    await page.click('#feedback-form button[type=submit]')
    await page.locator('#feedback-form', { hasText: 'feedback saved' }).waitFor()
    expect(await page.locator('#feedback-form .error, #notice:visible').count()).toBe(0)
    // A running request is not offered the form: the gateway would refuse it (409).
    await page.route('**/v1/usage/requests/req_running', async (r) => {
      const json = await (await r.fetch()).json()
      await r.fulfill({ json: { ...json, status: 'in_progress', ended_at: null } })
    })
    await page.goto(`${base}/dashboard#/requests/req_running`)
    await page.locator('#request', { hasText: 'req_running' }).waitFor()
    expect(await page.locator('#feedback-form').count()).toBe(0)
    await page.unroute('**/v1/usage/requests/req_running')

    // 10. One money column, one precision: the points line up.
    await page.goto(`${base}/dashboard#/sessions/money`)
    await page.locator('main h2', { hasText: 'money' }).waitFor()
    const costs = await page
      .locator('table[data-table=session-requests] tbody td:nth-child(8)')
      .evaluateAll((tds) => tds.map((td) => td.textContent ?? ''))
    expect(costs).toEqual(['$0.0000012', '$0.0152000', '$2.0000000'])

    // 12. An id's override characters are shown, and the id is isolated from the text around it.
    await page.goto(`${base}/dashboard#/sessions/${encodeURIComponent('\u202egnp.exe')}`)
    const heading = page.locator('main h2 .mono', { hasText: 'gnp.exe' })
    await heading.waitFor()
    expect(await heading.evaluate((el) => [el.getAttribute('dir'), el.textContent])).toEqual([
      'auto',
      '<U+202E>gnp.exe',
    ])

    // 13. A dot segment is not an id: "/v1/usage/requests/.." resolves to "/v1/usage/", another
    // route with another shape. Nothing is fetched for it.
    fetched.length = 0
    for (const dots of ['..', '%2e%2e']) {
      await page.goto(`${base}/dashboard#/requests/${dots}`)
      await page.locator('main h2', { hasText: 'No such page' }).waitFor()
    }
    expect(fetched.filter((path) => path.startsWith('/v1/'))).toEqual([])

    // 4. A view that fails replaces the old one with its error and a retry; choosing the tab
    // again retries too.
    await page.goto(`${base}/dashboard#/`)
    await page.locator('#credit').waitFor()
    await page.route('**/v1/usage/requests?*', (r) => r.abort())
    await page.click('#nav a[data-tab=requests]')
    await page.locator('#notice:visible, .failure').first().waitFor()
    expect([await page.locator('#credit').count(), await page.locator('.failure button.retry').count()]).toEqual([0, 1])
    await page.unroute('**/v1/usage/requests?*')
    await page.click('#nav a[data-tab=requests]')
    await page.locator('table[data-table=requests]').waitFor()

    // 8. A phone's width: the header wraps, the cards shrink, nothing scrolls sideways.
    await page.setViewportSize({ width: 375, height: 800 })
    await page.goto(`${base}/dashboard#/?bucket=day&range=30d`)
    await page.locator('#spend-chart[data-drawn]').waitFor()
    expect(await fits()).toBe(true)
    await shot('09-phone-overview')
    await page.setViewportSize({ width: 1400, height: 1000 })

    page.off('request', noteFetch)
    // The 503s and aborted fetches above were on purpose; nothing else may complain.
    const unexpected = problems.slice(before).filter((p) => !/status of 503|net::ERR_FAILED/.test(p))
    expect(unexpected).toEqual([])
  }, 60_000)
})

describe('dashboard modules', () => {
  const load = loadModule

  test('money from integer nanos, rounded half-up without float drift', async () => {
    const { formatUsd, formatUsdExact, usd } = await load('format.js')
    expect(formatUsd(1_234_567_891, 2)).toBe('1.23')
    expect(formatUsd(1_235_000_000, 2)).toBe('1.24')
    expect(formatUsd(100_000_000 + 200_000_000, 2)).toBe('0.30')
    expect(formatUsd(9_007_199_254_740_991, 9)).toBe('9,007,199.254740991')
    expect(formatUsd(-5_000_000, 2)).toBe('-0.01')
    expect(formatUsdExact(1234)).toBe('0.000001234')
    expect(formatUsdExact(5_000_000_000)).toBe('5')
    expect([usd(0), usd(1234), usd(12_345_678), usd(1_999_999_999), usd(12_345_000_000_000)]).toEqual([
      '$0.00',
      '$0.000001234',
      '$0.0123',
      '$2.00',
      '$12,345.00',
    ])
  })

  test('amounts: the sign before the dollar, places chosen after rounding, one precision per column', async () => {
    const { columnDecimals, formatUsd, usd } = await load('format.js')
    expect([usd(-2_500_000_000), usd(-5_000_000), formatUsd(-1, 2)]).toEqual(['-$2.50', '-$0.005', '0.00'])
    // 0.99995 USD rounds to a dollar: it reads as dollars do, not "$1.0000".
    expect([usd(999_950_000), usd(999_949_999), usd(10_000_000)]).toEqual(['$1.00', '$0.9999', '$0.0100'])
    // A column takes what its smallest amount needs (two significant digits below a cent).
    expect([
      columnDecimals([2_000_000_000, 15_200_000]),
      columnDecimals([2_000_000_000, 1_234]),
      columnDecimals([2_000_000_000, 999_950_000, 0]),
      columnDecimals([]),
    ]).toEqual([4, 7, 2, 2])
  })

  test('counts and durations in units a reader takes in', async () => {
    const { compact, duration } = await load('format.js')
    expect([compact(999), compact(999_950), compact(1_500), compact(-1_500), compact(0.30000000000000004)]).toEqual([
      '999',
      '1.0M',
      '1.5k',
      '-1.5k',
      '0.3',
    ])
    expect([duration(420), duration(999.6), duration(59_994), duration(95_000), duration(59_999_000)]).toEqual([
      '420 ms',
      '1.00 s',
      '59.99 s',
      '1 min 35 s',
      '16 h 40 min',
    ])
  })

  test('money ticks carry the places their step needs', async () => {
    const { moneyTicks } = await load('chart.js')
    expect(moneyTicks([0, 0.00005, 0.0001], 0.00005)).toEqual(['$0.00000', '$0.00005', '$0.00010'])
    expect(moneyTicks([0, 0.025, 0.05], 0.025)).toEqual(['$0.000', '$0.025', '$0.050'])
    expect(moneyTicks([0, 5000, 10000], 5000)).toEqual(['$0.00', '$5,000.00', '$10,000.00'])
  })

  test('the feedback form offers exactly the reasons the API accepts', async () => {
    const { FEEDBACK_REASONS } = await load('requests.js')
    expect(FEEDBACK_REASONS.map(([id]: [string, string]) => id)).toEqual([...feedbackReasons])
  })

  test('/dashboard is served embedded, with a strict CSP and no inline script', async () => {
    const h = await createHarness()
    const res = await h.call('/dashboard', { key: null })
    expect(res.status).toBe(200)
    expect(res.headers.get('x-frame-options')).toBe('DENY')
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    )
    const html = await res.text()
    expect(html).not.toMatch(/<script>|<script(?![^>]*\bsrc=)[^>]*>|\bstyle=|\bon[a-z]+=/i)
    const uplot = await h.call('/dashboard/uplot.js', { key: null })
    expect(uplot.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(await uplot.text()).toBe(
      readFileSync(join(import.meta.dir, '../node_modules/uplot/dist/uPlot.iife.min.js'), 'utf8'),
    )
    const etag = uplot.headers.get('etag')!
    expect((await h.call('/dashboard/uplot.js', { key: null, headers: { 'if-none-match': etag } })).status).toBe(304)
    expect((await h.call('/dashboard/nope.js', { key: null })).status).toBe(404)
    const login = await h.call('/login', { key: null })
    expect(login.headers.get('content-security-policy')).toBe(
      "default-src 'none'; style-src 'self'; form-action 'self'; frame-ancestors 'none'",
    )
    expect(await login.text()).toContain('<link rel="stylesheet" href="/dashboard/style.css">')
  })
})
