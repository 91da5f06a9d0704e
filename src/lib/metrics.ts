// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
// text exposition format. Enough for one process; no dependency, no global state.
//
// A metric hands out one handle per label set (`series(labels)`); the hot path keeps handles
// rather than looking its labels up on every request.

type Labels = Record<string, string>

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
const labelText = (labels: Labels) => {
  const entries = Object.entries(labels)
  return entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
}
// Callers build a metric's labels in one fixed key order, so the values alone identify a series.
const keyOf = (labels: Labels) => Object.values(labels).join('\u0000')

export interface CounterSeries {
  readonly labels: Labels
  value: number
  inc(by?: number): void
}

export interface HistogramSeries {
  readonly labels: Labels
  /** Per bucket, the values that fell in it alone; cumulated when rendered. */
  readonly counts: number[]
  sum: number
  count: number
  observe(value: number): void
}

/** One handle per distinct label set, made on first use. */
function seriesMap<S>(make: (labels: Labels) => S) {
  const byKey = new Map<string, S>()
  return {
    all: () => byKey.values(),
    get(labels: Labels): S {
      const key = keyOf(labels)
      let s = byKey.get(key)
      if (!s) {
        s = make(labels)
        byKey.set(key, s)
      }
      return s
    },
  }
}

export function createMetrics() {
  const renderers: (() => string)[] = []

  function counter(name: string, help: string) {
    const series = seriesMap<CounterSeries>((labels) => ({
      labels,
      value: 0,
      inc(by = 1) {
        this.value += by
      },
    }))
    renderers.push(() =>
      [
        `# HELP ${name} ${help}`,
        `# TYPE ${name} counter`,
        ...[...series.all()].map((s) => `${name}${labelText(s.labels)} ${s.value}`),
      ].join('\n'),
    )
    return {
      series: series.get,
      inc: (labels: Labels = {}, by = 1) => series.get(labels).inc(by),
    }
  }

  function gauge(name: string, help: string, read?: () => number) {
    let value = 0
    renderers.push(() =>
      [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name} ${read ? read() : value}`].join('\n'),
    )
    return {
      add(by: number) {
        value += by
      },
    }
  }

  function histogram(name: string, help: string, buckets: number[]) {
    const series = seriesMap<HistogramSeries>((labels) => ({
      labels,
      counts: buckets.map(() => 0),
      sum: 0,
      count: 0,
      observe(value: number) {
        // The first bucket whose bound the value does not exceed; past the last, only +Inf.
        let i = 0
        while (i < buckets.length && value > buckets[i]!) i++
        if (i < buckets.length) this.counts[i]!++
        this.sum += value
        this.count++
      },
    }))
    renderers.push(() => {
      const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`]
      for (const s of series.all()) {
        let cumulative = 0
        for (const [i, le] of buckets.entries()) {
          cumulative += s.counts[i]!
          lines.push(`${name}_bucket${labelText({ ...s.labels, le: String(le) })} ${cumulative}`)
        }
        lines.push(`${name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.count}`)
        lines.push(`${name}_sum${labelText(s.labels)} ${s.sum}`)
        lines.push(`${name}_count${labelText(s.labels)} ${s.count}`)
      }
      return lines.join('\n')
    })
    return {
      series: series.get,
      observe: (labels: Labels, value: number) => series.get(labels).observe(value),
    }
  }

  return { counter, gauge, histogram, render: () => `${renderers.map((r) => r()).join('\n')}\n` }
}
