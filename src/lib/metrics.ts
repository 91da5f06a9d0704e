// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the
// text exposition format. Enough for one process; no dependency, no global state.

type Labels = Record<string, string>

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"')
const labelText = (labels: Labels) => {
  const entries = Object.entries(labels)
  return entries.length === 0 ? '' : `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(',')}}`
}
// Callers build a metric's labels in one fixed key order, so the values alone identify a series.
const keyOf = (labels: Labels) => Object.values(labels).join('\u0000')

interface Series<T> {
  labels: Labels
  value: T
}

export function createMetrics() {
  const renderers: (() => string)[] = []

  function counter(name: string, help: string) {
    const series = new Map<string, Series<number>>()
    renderers.push(() =>
      [
        `# HELP ${name} ${help}`,
        `# TYPE ${name} counter`,
        ...[...series.values()].map((s) => `${name}${labelText(s.labels)} ${s.value}`),
      ].join('\n'),
    )
    return {
      inc(labels: Labels = {}, by = 1) {
        const key = keyOf(labels)
        const s = series.get(key)
        if (s) s.value += by
        else series.set(key, { labels, value: by })
      },
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
    const series = new Map<string, Series<{ counts: number[]; sum: number; count: number }>>()
    renderers.push(() => {
      const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} histogram`]
      for (const s of series.values()) {
        for (const [i, le] of buckets.entries()) {
          lines.push(`${name}_bucket${labelText({ ...s.labels, le: String(le) })} ${s.value.counts[i]}`)
        }
        lines.push(`${name}_bucket${labelText({ ...s.labels, le: '+Inf' })} ${s.value.count}`)
        lines.push(`${name}_sum${labelText(s.labels)} ${s.value.sum}`)
        lines.push(`${name}_count${labelText(s.labels)} ${s.value.count}`)
      }
      return lines.join('\n')
    })
    return {
      observe(labels: Labels, value: number) {
        const key = keyOf(labels)
        let s = series.get(key)
        if (!s) {
          s = { labels, value: { counts: buckets.map(() => 0), sum: 0, count: 0 } }
          series.set(key, s)
        }
        // Buckets are cumulative: a value counts in every bucket whose bound it does not exceed.
        buckets.forEach((le, i) => {
          if (value <= le) s.value.counts[i]!++
        })
        s.value.sum += value
        s.value.count++
      },
    }
  }

  return { counter, gauge, histogram, render: () => `${renderers.map((r) => r()).join('\n')}\n` }
}

export type MetricsRegistry = ReturnType<typeof createMetrics>
