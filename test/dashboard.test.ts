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
import { seedRequest } from './support/ledger-fixtures'

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
    await page.click('[data-toggle=bucket] >> text=Hourly')
    await page.locator('[data-toggle=bucket] .toggle.on', { hasText: 'Hourly' }).waitFor()
    await page.locator('#spend-chart[data-drawn]').waitFor()
    await shot('03-overview-hourly-by-provider')

    // Sessions, newest activity first: the target session leads the list.
    await page.click('#nav >> text=Sessions')
    const sessions = page.locator('table[data-table=sessions] tbody tr')
    await sessions.first().waitFor()
    expect(await sessions.count()).toBe(25)
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
