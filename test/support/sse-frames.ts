// SSE bodies as the client sees them, for tests that assert frames and their exact bytes.

export interface SseFrame {
  event: string
  // biome-ignore lint/suspicious/noExplicitAny: frames are asserted field by field
  data: any
  /** The frame's bytes through its blank line. */
  raw: string
}

/** Splits an SSE body into frames; a frame whose data is not JSON keeps it as `{ unparseable }`. */
export function parseFrames(text: string): SseFrame[] {
  return text
    .split(/(?<=\n\n)/)
    .filter((raw) => raw.trim() !== '')
    .map((raw) => {
      const data = /^data: (.*)$/m.exec(raw)?.[1]
      let parsed: unknown
      try {
        parsed = data === undefined ? undefined : JSON.parse(data)
      } catch {
        parsed = { unparseable: data }
      }
      return { event: /^event: (.*)$/m.exec(raw)?.[1] ?? '', data: parsed, raw }
    })
}
