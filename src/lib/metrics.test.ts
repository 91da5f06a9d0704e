import { describe, expect, test } from 'bun:test'
import { createMetrics } from './metrics'

describe('metrics registry', () => {
  test('histogram buckets are cumulative in the exposition, with +Inf, sum and count', () => {
    const registry = createMetrics()
    const h = registry.histogram('latency_seconds', 'Latency.', [0.1, 1])
    const handle = h.series({ route: 'a' })
    for (const v of [0.05, 0.1, 0.5, 2]) handle.observe(v)
    h.observe({ route: 'a' }, 1)
    expect(registry.render()).toBe(
      [
        '# HELP latency_seconds Latency.',
        '# TYPE latency_seconds histogram',
        'latency_seconds_bucket{route="a",le="0.1"} 2',
        'latency_seconds_bucket{route="a",le="1"} 4',
        'latency_seconds_bucket{route="a",le="+Inf"} 5',
        'latency_seconds_sum{route="a"} 3.65',
        'latency_seconds_count{route="a"} 5',
        '',
      ].join('\n'),
    )
  })

  test('a counter series handle and the labelled inc feed the same series; label values are escaped', () => {
    const registry = createMetrics()
    const c = registry.counter('things_total', 'Things.')
    c.series({ kind: 'a"b' }).inc(2)
    c.inc({ kind: 'a"b' })
    c.inc({ kind: 'other' }, 5)
    expect(registry.render()).toContain('things_total{kind="a\\"b"} 3\nthings_total{kind="other"} 5')
  })
})
