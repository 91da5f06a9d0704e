// Lookups in tables keyed by names that come from outside: a client's `model`, an upstream's error
// type, a URL segment, a CLI argument. A plain object also answers for the names every object
// inherits ("constructor", "toString", "__proto__"…), so such a lookup must take own keys only: a
// request whose model was "constructor" passed for a routing profile, and the function it found
// went into the metrics as a label, after which /metrics answered 500 to every scrape.

/** `table[key]` when the table itself holds `key`; undefined for anything it only inherits. */
export function ownEntry<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined
}
