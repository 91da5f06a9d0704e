// The spend chart: uPlot (the global from /dashboard/uplot.js) over one /v1/usage/spend answer.
// The server sends only buckets that had legs; the chart wants every bucket of the window, so
// the gaps are filled with zero spend here.
import { compact, time, tokens, usd } from './format.js'

const PALETTE = ['#2563eb', '#dc2626', '#16a34a', '#d97706', '#7c3aed', '#0891b2', '#db2777', '#65a30d']
const MAX_SERIES = PALETTE.length - 1
const BUCKET_MS = { hour: 3_600_000, day: 86_400_000 }
const DAY_TICKS = [1, 2, 7, 14, 28].map((days) => days * 86_400)
// Set on the axes and used to measure their labels, so the measure matches what is drawn.
const AXIS_FONT = '12px system-ui, -apple-system, "Segoe UI", sans-serif'
// uPlot's tick length and gap, plus a little air, beside the widest label of the y axis.
const Y_AXIS_CHROME = 10 + 5 + 8

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
 * Tick labels with as many places as the tick step needs: $0.00005 steps read "$0.00015", $2,000
 * steps "$12,000.00" (cents stay, as everywhere else on the page).
 */
export function moneyTicks(ticks, step) {
  // The fewest places that write the step exactly (a 0.025 step needs three).
  let decimals = 2
  while (decimals < 9 && Math.abs(step * 10 ** decimals - Math.round(step * 10 ** decimals)) > 1e-6) decimals++
  return ticks.map((v) => usd(Math.round(v * 1e9), decimals))
}

/** The page's own colours (they follow prefers-color-scheme), for what uPlot draws on its canvas. */
function pageColours() {
  const css = getComputedStyle(document.documentElement)
  const get = (name) => css.getPropertyValue(name).trim()
  return { text: get('--muted'), line: get('--line') }
}

let measurer
/** The width in CSS pixels the widest label takes in the axis font. */
function widest(labels) {
  measurer ??= document.createElement('canvas').getContext('2d')
  measurer.font = AXIS_FONT
  return Math.max(0, ...labels.map((text) => measurer.measureText(text ?? '').width))
}

/** One sentence for assistive technology: what the picture shows, and each line's total. */
function describe(spend, series, metric, totals) {
  const what = metric === 'cost_nanos' ? 'Spend' : metric === 'requests' ? 'Requests' : 'Output tokens'
  const each = series.map((s, i) => `${s.key} ${metric === 'cost_nanos' ? usd(totals[i]) : tokens(totals[i])}`)
  return `${what} per ${spend.bucket}, ${time(spend.since)} to ${time(spend.until)} UTC, by ${(spend.group_by ?? 'model').replace('_', ' ')}: ${each.join('; ')}.`
}

/**
 * Draws `spend` into `container`; `metric` is a point field (cost_nanos, requests, …). Returns a
 * function that removes the chart. Money is plotted in USD floats: a chart is a picture, and the
 * tooltip and axis labels go back through usd().
 */
export function drawSpendChart(container, spend, metric = 'cost_nanos') {
  const starts = bucketStarts(spend)
  const index = new Map(starts.map((t, i) => [t, i]))
  const money = metric === 'cost_nanos'
  const series = foldSeries(spend.series, metric)
  // Totals from the integer points, for the text alternative (the columns are floats).
  const totals = series.map((s) => s.points.reduce((n, p) => n + p[metric], 0))
  const columns = series.map((s) => {
    const values = new Array(starts.length).fill(0)
    for (const p of s.points) {
      const i = index.get(Date.parse(p.t))
      if (i !== undefined) values[i] += money ? p[metric] / 1e9 : p[metric]
    }
    return values
  })
  // The hover value: every digit a real amount has ($0.00002, not "$0.0000").
  const label = (v) => (v === null || v === undefined ? '–' : money ? usd(Math.round(v * 1e9)) : compact(v))
  const ticks = (_u, splits, _axis, _space, step) => (money ? moneyTicks(splits, step) : splits.map(compact))
  const colours = pageColours()
  const axis = {
    font: AXIS_FONT,
    stroke: colours.text,
    grid: { stroke: colours.line, width: 1 },
    ticks: { stroke: colours.line, width: 1 },
  }
  const opts = {
    width: chartWidth(container),
    height: 300,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
    axes: [
      // Day buckets get day ticks: a 6 am gridline would suggest data the buckets do not hold.
      spend.bucket === 'day' ? { ...axis, incrs: DAY_TICKS } : axis,
      // As wide as its widest label: "$12,345.00" is not clipped, "$0.50" wastes no room.
      { ...axis, values: ticks, size: (_u, values) => Math.ceil(widest(values ?? [])) + Y_AXIS_CHROME },
    ],
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
  container.setAttribute('role', 'img')
  container.setAttribute('aria-label', describe(spend, series, metric, totals))
  const plot = new uPlot(opts, [starts.map((t) => t / 1000), ...columns], container)
  const resize = new ResizeObserver(() => plot.setSize({ width: chartWidth(container), height: 300 }))
  resize.observe(container)
  return () => {
    resize.disconnect()
    plot.destroy()
    delete container.dataset.drawn
  }
}

/** The container's width, with a floor a phone still fits (a 375 px screen leaves about 320). */
const chartWidth = (container) => Math.max(container.clientWidth, 240)
