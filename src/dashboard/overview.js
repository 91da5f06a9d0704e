// The first screen: credit (limit, used, remaining, grants) and spend over time with the token
// mix. Every figure comes from /v1/usage and /v1/usage/spend; the page adds nothing up itself
// beyond filling empty chart buckets.
import { api, withQuery } from './api.js'
import { drawSpendChart } from './chart.js'
import { amount, facts, h, mount, table, userText } from './dom.js'
import { compact, percent, time, tokens } from './format.js'

const RANGES = {
  hour: [
    ['24h', 'Last 24 hours', 86_400_000],
    ['3d', 'Last 3 days', 3 * 86_400_000],
    ['7d', 'Last 7 days', 7 * 86_400_000],
  ],
  day: [
    ['7d', 'Last 7 days', 7 * 86_400_000],
    ['30d', 'Last 30 days', 30 * 86_400_000],
    ['90d', 'Last 90 days', 90 * 86_400_000],
  ],
}
const GROUPS = [
  ['model', 'Model'],
  ['provider', 'Provider'],
  ['routing_mode', 'Routing profile'],
]
const METRICS = [
  ['cost_nanos', 'Cost'],
  ['requests', 'Requests'],
  ['output_tokens', 'Output tokens'],
]

/** Reads the chart's settings from the hash query, so a reload or a shared link shows the same chart. */
function readSettings(query) {
  const bucket = query.get('bucket') === 'hour' ? 'hour' : 'day'
  const range = RANGES[bucket].find(([id]) => id === query.get('range')) ?? RANGES[bucket][0]
  const group = GROUPS.find(([id]) => id === query.get('group_by'))?.[0] ?? 'model'
  const metric = METRICS.find(([id]) => id === query.get('metric'))?.[0] ?? 'cost_nanos'
  return { bucket, range, group, metric }
}

const settingsHash = (s) =>
  `#/?${new URLSearchParams({ bucket: s.bucket, range: s.range[0], group_by: s.group, metric: s.metric })}`

/** A row of toggle buttons; choosing one navigates, and the router redraws. */
function toggles(name, options, current, toHash) {
  return h(
    'div',
    { class: 'toggles', role: 'group', 'aria-label': name, dataset: { toggle: name } },
    options.map(([id, label]) =>
      h(
        'a',
        {
          class: id === current ? 'toggle on' : 'toggle',
          href: toHash(id),
          'aria-current': id === current ? 'true' : undefined,
        },
        label,
      ),
    ),
  )
}

function creditCard(usage) {
  const usedShare = usage.limit_nanos > 0 ? Math.min(1, usage.used_nanos / usage.limit_nanos) : 0
  const meter = h('div', { class: 'meter' }, h('div', { class: 'meter-fill' }))
  meter.firstChild.style.width = `${(usedShare * 100).toFixed(1)}%`
  const scope = (g) =>
    [
      g.scope_cost_type === 'all' ? 'any cost' : g.scope_cost_type,
      g.scope_routing_modes && `profiles: ${g.scope_routing_modes.join(', ')}`,
      g.scope_models && `models: ${g.scope_models.join(', ')}`,
      g.scope_providers && `providers: ${g.scope_providers.join(', ')}`,
    ]
      .filter(Boolean)
      .join(' · ')
  return h(
    'section',
    { class: 'card', id: 'credit' },
    h('h2', {}, 'Credit'),
    h(
      'div',
      { class: 'stats' },
      h(
        'div',
        { class: 'stat' },
        h('span', {}, 'Limit'),
        h('strong', { dataset: { field: 'limit' } }, amount(usage.limit_nanos)),
      ),
      h(
        'div',
        { class: 'stat' },
        h('span', {}, 'Used'),
        h('strong', { dataset: { field: 'used' } }, amount(usage.used_nanos)),
      ),
      h(
        'div',
        { class: 'stat' },
        h('span', {}, 'Remaining'),
        h('strong', { dataset: { field: 'remaining' } }, amount(usage.remaining_nanos)),
      ),
    ),
    meter,
    table(
      [
        { label: 'Grant', cell: (g) => h('span', { title: g.id }, userText(g.source)) },
        { label: 'Scope', cell: (g) => userText(scope(g)) },
        { label: 'Amount', nanos: (g) => g.amount_nanos },
        { label: 'Remaining', nanos: (g) => g.remaining_nanos },
        { label: 'Expires (UTC)', class: 'when', cell: (g) => (g.expires_at ? time(g.expires_at) : 'never') },
      ],
      usage.grants,
      { empty: 'No active grants: requests are refused with 402 until credit is added.', dataset: { table: 'grants' } },
    ),
  )
}

/** Where input tokens went: uncached, read from cache, written to cache; and output. */
function tokenShares(spend) {
  const t = spend.totals
  const parts = [
    ['uncached', 'Uncached input', t.input_tokens],
    ['cached', 'Cached input (reads)', t.cached_input_tokens],
    ['creation', 'Cache writes', t.cache_creation_input_tokens],
    ['output', 'Output', t.output_tokens],
  ]
  const all = parts.reduce((n, [, , v]) => n + v, 0)
  const bar = h('div', { class: 'share-bar', role: 'img', 'aria-label': 'token shares' })
  for (const [id, label, value] of parts) {
    const seg = h('div', { class: `share share-${id}`, title: `${label}: ${tokens(value)}` })
    seg.style.width = all > 0 ? `${((100 * value) / all).toFixed(2)}%` : '0'
    bar.append(seg)
  }
  const promptTokens = t.input_tokens + t.cached_input_tokens + t.cache_creation_input_tokens
  const net = spend.cache_savings_nanos - spend.cache_write_premium_nanos
  return h(
    'section',
    { class: 'card', id: 'tokens' },
    h('h2', {}, 'Tokens and prompt caching'),
    bar,
    h(
      'ul',
      { class: 'legend' },
      parts.map(([id, label, value]) =>
        h('li', {}, h('span', { class: `swatch share-${id}` }), `${label}: ${tokens(value)} (${percent(value, all)})`),
      ),
    ),
    facts([
      ['Cache hit rate', `${percent(t.cached_input_tokens, promptTokens)} of prompt tokens read from cache`],
      ['Saved by cache reads', amount(spend.cache_savings_nanos)],
      ['Paid for cache writes', amount(spend.cache_write_premium_nanos)],
      ['Net saving', h('strong', { dataset: { field: 'net-saving' } }, amount(net))],
    ]),
    h(
      'p',
      { class: 'muted' },
      'Savings are priced at the catalog prices configured today',
      spend.cache_unpriced_tokens > 0
        ? ` (${tokens(spend.cache_unpriced_tokens)} tokens of unpriced models left out)`
        : '',
      '.',
    ),
  )
}

function spendCard(spend, settings, signal) {
  const chart = h('div', { class: 'chart', id: 'spend-chart' })
  const t = spend.totals
  const card = h(
    'section',
    { class: 'card wide', id: 'spend' },
    h('h2', {}, 'Spend over time'),
    h(
      'div',
      { class: 'controls' },
      toggles(
        'bucket',
        [
          ['hour', 'Hourly'],
          ['day', 'Daily'],
        ],
        settings.bucket,
        (id) => settingsHash({ ...settings, bucket: id, range: RANGES[id][0] }),
      ),
      toggles(
        'range',
        RANGES[settings.bucket].map(([id, label]) => [id, label]),
        settings.range[0],
        (id) => settingsHash({ ...settings, range: RANGES[settings.bucket].find(([r]) => r === id) }),
      ),
      toggles('group_by', GROUPS, settings.group, (id) => settingsHash({ ...settings, group: id })),
      toggles('metric', METRICS, settings.metric, (id) => settingsHash({ ...settings, metric: id })),
    ),
    h(
      'p',
      { class: 'summary' },
      h('strong', {}, amount(t.cost_nanos)),
      ` over ${tokens(t.requests)} requests · ${compact(t.input_tokens + t.cached_input_tokens + t.cache_creation_input_tokens)} prompt tokens, ${compact(t.output_tokens)} output · ${time(spend.since)} to ${time(spend.until)} UTC`,
    ),
    spend.series.length === 0 ? h('p', { class: 'muted' }, 'No requests in this window.') : chart,
  )
  if (spend.series.length > 0) {
    // Drawn once the card is in the document, so uPlot can measure the width it has.
    queueMicrotask(() => {
      if (signal.aborted) return
      const remove = drawSpendChart(chart, spend, settings.metric)
      signal.addEventListener('abort', remove, { once: true })
    })
  }
  return card
}

export async function renderOverview(main, { query, signal }) {
  const settings = readSettings(query)
  // Whole buckets: the window ends where the current bucket ends (UTC), like the API's default.
  const width = settings.bucket === 'hour' ? 3_600_000 : 86_400_000
  const now = Date.now()
  const until = now - (now % width) + width
  const spendPath = withQuery('/v1/usage/spend', {
    bucket: settings.bucket,
    group_by: settings.group,
    since: new Date(until - settings.range[2]).toISOString(),
    until: new Date(until).toISOString(),
  })
  const [usage, spend] = await Promise.all([api('/v1/usage?limit=1', { signal }), api(spendPath, { signal })])
  mount(main, h('div', { class: 'grid' }, creditCard(usage), tokenShares(spend)), spendCard(spend, settings, signal))
}
