// A link-local IPv6 address with its zone (`http://[fe80::1%25eth0]:8080`): the URL standard Bun
// follows leaves zones out (whatwg/url#392), so neither svc nor its clients can reach one. Refused,
// as any unusable URL is, but in words that name the zone rather than call the URL malformed.

/** The words for a URL that names an IPv6 zone, or undefined for any other. */
export const ipv6ZoneProblem = (raw: string): string | undefined =>
  /\[[^\]]*%/.test(raw)
    ? 'an IPv6 address with a zone (%25eth0) cannot be used in a URL: give a global address or a host name'
    : undefined
