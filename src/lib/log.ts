// Structured JSON logs on stderr, one object per line. Callers pass fields, never secrets: keys
// and prompts stay out at every level, debug included.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'
const order: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 }

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
  readonly level: LogLevel
  /** Whether a line at this level would be written: lets hot paths skip building its fields. */
  enabled(level: LogLevel): boolean
}

export function createLogger(
  level: LogLevel = 'info',
  write: (line: string) => void = (l) => process.stderr.write(l),
): Logger {
  const emit = (lvl: LogLevel) => (msg: string, fields?: Record<string, unknown>) => {
    if (order[lvl] < order[level]) return
    write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, msg, ...fields })}\n`)
  }
  return {
    debug: emit('debug'),
    info: emit('info'),
    warn: emit('warn'),
    error: emit('error'),
    level,
    enabled: (lvl) => order[lvl] >= order[level],
  }
}
