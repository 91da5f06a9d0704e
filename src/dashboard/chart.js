// The spend chart: uPlot (the global from /dashboard/uplot.js) over one /v1/usage/spend answer.
// The server sends only buckets that had legs; the chart wants every bucket of the window, so
// the gaps are filled with zero spend here.
import { compact, formatUsd } from './format.js'

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d']
const MAX_SERIES = PALETTE.length - 1
const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 }
const DAY_TICKS = [1, 2, 7, 14, 28].map((days) => days * 86_400)

/** Bucket starts (epoch ms) covering [since, until), aligned like the server's integer division. */
export function bucketStarts(spend) {
  const width = BUCKET_MS[spend.bucket]
  const since = Date.parse(spend.since)
  const until = Date.parse(spend.until)
  const starts = []
  for (let t = since - (since % width); t < until; t += width) starts.push(t)
  return starts
}

/** The biggest spenders keep their own line; the rest are summed into "other". */
function foldSeries(series, metric) {
  if (series.length <= MAX_SERIES + 1) return series
  const other = new Map()
  for (const s of series.slice(MAX_SERIES)) {
    for (const p of s.points) other.set(p.t, (other.get(p.t) ?? 0) + p[metric])
  }
  const points = [...other].map(([t, value]) => ({ t, [metric]: value }))
  return [...series.slice(0, MAX_SERIES), { key: `other (${series.length - MAX_SERIES})`, points }]
}

/**
 * Draws `spend` into `container`; `metric` is a point field (cost_nanos, requests, …). Returns a
 * function that removes the chart. Money is plotted in USD floats: a chart is a picture, and the
 * tooltip and axis labels go back through formatUsd.
 */
export function drawSpendChart(container, spend, metric = 'cost_nanos') {
  const starts = bucketStarts(spend)
  const index = new Map(starts.map((t, i) => [t, i]))
  const money = metric === 'cost_nanos'
  const series = foldSeries(spend.series, metric)
  const columns = series.map((s) => {
    const values = new Array(starts.length).fill(0)
    for (const p of s.points) {
      const i = index.get(Date.parse(p.t))
      if (i !== undefined) values[i] += money ? p[metric] / 1e9 : p[metric]
    }
    return values
  })
  const label = (v) =>
    v === null || v === undefined ? '–' : money ? `$${formatUsd(Math.round(v * 1e9), 4)}` : compact(v)
  const opts = {
    width: Math.max(container.clientWidth, 320),
    height: 300,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    // Day buckets get day ticks: a 6 am gridline would suggest data the buckets do not hold.
    axes: [spend.bucket === 'day' ? { incrs: DAY_TICKS } : {}, { size: 70, values: (_u, ticks) => ticks.map(label) }],
    series: [
      { label: 'UTC' },
      ...series.map((s, i) => ({
        label: s.key,
        stroke: PALETTE[i % PALETTE.length],
        width: 2,
        value: (_u, v) => label(v),
        points: { show: starts.length <= 60 },
      })),
    ],
    hooks: {
      // The browser test waits for this: the chart exists and drew its series.
      draw: [
        (u) => {
          container.dataset.drawn = String(u.series.length - 1)
        },
      ],
    },
  }
  const plot = new uPlot(opts, [starts.map((t) => t / 1000), ...columns], container)
  const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(container.clientWidth, 320), height: 300 }))
  resize.observe(container)
  return () => {
    resize.disconnect()
    plot.destroy()
    delete container.dataset.drawn
  }
}
