// Dates and times as clients write them, checked for real: Date.parse rolls a day the month lacks
// over into the next month (2026-02-30 is March 2) and takes hour 24, so a typo becomes another
// instant instead of an error.

const calendarDate = /^(\d{4})-(\d{2})-(\d{2})$/
const rfc3339 = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/i

/** A real calendar date written YYYY-MM-DD. */
export function isCalendarDate(value: string): boolean {
  const match = calendarDate.exec(value)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  const date = new Date(Date.UTC(year, month - 1, day))
  // Date.UTC maps years 0–99 to 1900–1999: set the year again.
  date.setUTCFullYear(year)
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day
}

/**
 * An RFC 3339 timestamp with its time zone (2026-11-22T10:00:00.123Z, …+02:00) as epoch
 * milliseconds; undefined for anything else, a day or time that does not exist included.
 */
export function parseRfc3339(value: string): number | undefined {
  const match = rfc3339.exec(value)
  if (!match || !isCalendarDate(match[1]!)) return undefined
  const [hour, minute, second] = [Number(match[2]), Number(match[3]), Number(match[4])]
  if (hour > 23 || minute > 59 || second > 59) return undefined
  if (match[7] !== undefined && (Number(match[7]) > 23 || Number(match[8]) > 59)) return undefined
  const ms = Date.parse(value)
  return Number.isNaN(ms) ? undefined : ms
}
