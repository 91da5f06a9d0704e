// Reading an answer the way a client would, per wire shape: SSE frames with the time each one
// became complete (for first-token and gap timing), text deltas, the final event, and whether a
// whole answer arrived (the smoke check before timing).

export type Dialect = 'anthropic' | 'chat' | 'responses'

export interface SseFrame {
  event?: string
  data: string
  /** performance.now() when the read that completed this frame returned. */
  at: number
}

/** Splits a byte stream into SSE frames; a frame's time is that of the read that completed it. */
export async function* readSseFrames(body: ReadableStream<Uint8Array>): AsyncGenerator<SseFrame> {
  const decoder = new TextDecoder()
  let buffer = ''
  for await (const chunk of body) {
    const at = performance.now()
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n')
    let end = buffer.indexOf('\n\n')
    while (end >= 0) {
      const raw = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      end = buffer.indexOf('\n\n')
      let event: string | undefined
      const data: string[] = []
      for (const line of raw.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim()
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''))
      }
      if (data.length > 0) yield { event, data: data.join('\n'), at }
    }
  }
}

const parse = (data: string): Record<string, unknown> | undefined => {
  try {
    const v = JSON.parse(data)
    return v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

export type FrameKind =
  | { kind: 'delta'; text: string }
  | { kind: 'final' }
  | { kind: 'error'; message: string }
  | { kind: 'other' }

/** What one frame means for a client of that shape. */
export function classifyFrame(dialect: Dialect, frame: SseFrame): FrameKind {
  if (dialect === 'chat' && frame.data === '[DONE]') return { kind: 'final' }
  const j = parse(frame.data)
  if (!j) return { kind: 'error', message: `unparseable frame: ${frame.data.slice(0, 120)}` }
  const type = j['type']
  if (dialect === 'anthropic') {
    if (type === 'content_block_delta') {
      const delta = j['delta'] as Record<string, unknown> | undefined
      if (delta?.['type'] === 'text_delta') return { kind: 'delta', text: String(delta['text'] ?? '') }
    }
    if (type === 'message_stop') return { kind: 'final' }
    if (type === 'error') return { kind: 'error', message: JSON.stringify(j['error']) }
    return { kind: 'other' }
  }
  if (dialect === 'responses') {
    if (type === 'response.output_text.delta') return { kind: 'delta', text: String(j['delta'] ?? '') }
    if (type === 'response.completed') return { kind: 'final' }
    if (type === 'error' || type === 'response.failed') return { kind: 'error', message: frame.data.slice(0, 300) }
    return { kind: 'other' }
  }
  if (j['error']) return { kind: 'error', message: JSON.stringify(j['error']) }
  const choice = (j['choices'] as Record<string, unknown>[] | undefined)?.[0]
  const content = (choice?.['delta'] as Record<string, unknown> | undefined)?.['content']
  if (typeof content === 'string' && content !== '') return { kind: 'delta', text: content }
  return { kind: 'other' }
}

/** The text and completeness of a non-streaming answer. */
export function readJsonAnswer(dialect: Dialect, body: unknown): { text: string; complete: boolean } {
  const j = (body ?? {}) as Record<string, unknown>
  if (dialect === 'anthropic') {
    const blocks = (j['content'] as Record<string, unknown>[] | undefined) ?? []
    const text = blocks.map((b) => (b['type'] === 'text' ? String(b['text'] ?? '') : '')).join('')
    return { text, complete: j['stop_reason'] === 'end_turn' }
  }
  if (dialect === 'responses') {
    const items = (j['output'] as Record<string, unknown>[] | undefined) ?? []
    const text = items
      .flatMap((i) => (i['content'] as Record<string, unknown>[] | undefined) ?? [])
      .map((c) => (c['type'] === 'output_text' ? String(c['text'] ?? '') : ''))
      .join('')
    return { text, complete: j['status'] === 'completed' }
  }
  const choice = (j['choices'] as Record<string, unknown>[] | undefined)?.[0]
  const message = choice?.['message'] as Record<string, unknown> | undefined
  return { text: String(message?.['content'] ?? ''), complete: choice?.['finish_reason'] === 'stop' }
}

export interface HttpRequest {
  url: string
  headers: Record<string, string>
  body: string
}

export interface StreamTiming {
  ok: boolean
  status: number
  error?: string
  /** Milliseconds from sending the request. */
  headersMs: number
  firstDeltaMs: number
  totalMs: number
  /** When each text delta arrived, ms from sending. */
  deltaMs: number[]
  text: string
  final: boolean
}

/** Sends one streaming request and times every text delta of the answer. */
export async function timeStream(req: HttpRequest, dialect: Dialect, timeoutMs: number): Promise<StreamTiming> {
  const t0 = performance.now()
  const out: StreamTiming = {
    ok: false,
    status: 0,
    headersMs: Number.NaN,
    firstDeltaMs: Number.NaN,
    totalMs: Number.NaN,
    deltaMs: [],
    text: '',
    final: false,
  }
  try {
    const res = await fetch(req.url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      signal: AbortSignal.timeout(timeoutMs),
    })
    out.status = res.status
    out.headersMs = performance.now() - t0
    if (res.status !== 200 || !res.body) {
      out.error = `HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`
      return out
    }
    for await (const frame of readSseFrames(res.body)) {
      const k = classifyFrame(dialect, frame)
      if (k.kind === 'delta') {
        out.deltaMs.push(frame.at - t0)
        out.text += k.text
      } else if (k.kind === 'final') out.final = true
      else if (k.kind === 'error') out.error = k.message
    }
    out.totalMs = performance.now() - t0
    out.firstDeltaMs = out.deltaMs[0] ?? Number.NaN
    out.ok = out.final && out.error === undefined
  } catch (err) {
    out.error = String(err)
    out.totalMs = performance.now() - t0
  }
  return out
}

/** Sends one request and says whether a complete, correct answer came back. */
export async function checkAnswer(
  req: HttpRequest,
  opts: { dialect: Dialect; stream: boolean; expectText: string; expectDeltas?: number },
): Promise<{ ok: boolean; detail: string }> {
  if (opts.stream) {
    const t = await timeStream(req, opts.dialect, 30_000)
    if (!t.ok) return { ok: false, detail: t.error ?? `stream ended without its final event (HTTP ${t.status})` }
    if (!t.text.startsWith(opts.expectText)) return { ok: false, detail: `text ${JSON.stringify(t.text.slice(0, 80))}` }
    if (opts.expectDeltas !== undefined && t.deltaMs.length !== opts.expectDeltas) {
      return { ok: false, detail: `${t.deltaMs.length} text deltas, expected ${opts.expectDeltas}` }
    }
    return { ok: true, detail: `${t.deltaMs.length} deltas, ${t.text.length} chars, final event seen` }
  }
  try {
    const res = await fetch(req.url, {
      method: 'POST',
      headers: req.headers,
      body: req.body,
      signal: AbortSignal.timeout(30_000),
    })
    const raw = await res.text()
    if (res.status !== 200) return { ok: false, detail: `HTTP ${res.status}: ${raw.slice(0, 300)}` }
    const answer = readJsonAnswer(opts.dialect, JSON.parse(raw))
    if (!answer.complete) return { ok: false, detail: `incomplete answer: ${raw.slice(0, 300)}` }
    if (!answer.text.startsWith(opts.expectText))
      return { ok: false, detail: `text ${JSON.stringify(answer.text.slice(0, 80))}` }
    return { ok: true, detail: `HTTP 200, ${JSON.stringify(answer.text.slice(0, 40))}` }
  } catch (err) {
    return { ok: false, detail: String(err) }
  }
}
