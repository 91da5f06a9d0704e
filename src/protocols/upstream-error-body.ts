// An upstream error body no dialect's envelope explains: proxies in front of the APIs answer with
// HTML or plain text, so the message is the status and a short, readable excerpt of it.

/** "upstream returned HTTP 503: <html>…" (the first 500 characters), or the status alone for an empty body. */
export function describeUpstreamBody(status: number, bodyText: string): string {
  const text = bodyText.trim().slice(0, 500)
  return text === '' ? `upstream returned HTTP ${status}` : `upstream returned HTTP ${status}: ${text}`
}
