// An amount of USD (a grant: the CLI's text, the API's JSON number, svc.toml's starter grant) →
// integer nanos, exactly or not at all: no float in between, nothing rounded.
import { formatUsd } from './pricing'

/** Nanos are integers within 2^53: about 9 million USD in one amount. */
export const mostNanos = Number.MAX_SAFE_INTEGER

/** Why an amount was refused: callers that speak for a field name it (`not_positive` is the amount's, not its form's). */
export type UsdRefusal = 'not_decimal' | 'not_positive' | 'finer_than_nanos' | 'too_large' | 'too_many_digits'

export class UsdAmountError extends RangeError {
  override name = 'UsdAmountError'
  constructor(
    readonly refusal: UsdRefusal,
    message: string,
  ) {
    super(message)
  }
}

/**
 * USD as plain decimal text (digits, an optional point, at most 9 decimals) → nanos, more than
 * zero. `Number()` read "0x10" as 16 and "1e-10" as a float that rounded to zero, and rounded
 * 0.0000000005 up to a nano without a word.
 */
export function usdTextToNanos(text: string): number {
  const match = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text)
  if (!match) {
    throw new UsdAmountError(
      'not_decimal',
      `the amount must be a plain decimal number of USD, such as 20 or 0.25 (got ${text})`,
    )
  }
  const [, sign, whole = '', given = ''] = match
  const fraction = given.replace(/0+$/, '')
  if (sign === '-' && /[1-9]/.test(whole + fraction)) throw notPositive()
  if (fraction.length > 9) {
    throw new UsdAmountError(
      'finer_than_nanos',
      `the amount ${text} USD is finer than the ledger counts: it keeps whole nanos (0.000000001 USD), at most 9 decimals`,
    )
  }
  const nanos = BigInt(whole) * 1_000_000_000n + BigInt(fraction.padEnd(9, '0'))
  if (nanos > BigInt(mostNanos)) {
    throw new UsdAmountError(
      'too_large',
      `the amount ${text} USD is too large: a grant holds at most ${formatUsd(mostNanos)} USD`,
    )
  }
  if (nanos === 0n) throw notPositive()
  return Number(nanos)
}

/** The significant digits a parsed number keeps whatever it was written as (a double holds 15). */
const exactDigits = 15

/**
 * USD as a parsed number (JSON, TOML), read as its shortest decimal text written out without an
 * exponent (String gives 1e-7 below a millionth and 1e+21 from there). A number of more
 * significant digits than a double keeps may already have been rounded when it was parsed
 * (8500000.000000003 USD came out a nano more): refused.
 */
export function usdNumberToNanos(usd: number): number {
  const [mantissa = '', exponent = '0'] = String(Math.abs(usd)).split('e')
  const [whole = '', fraction = ''] = mantissa.split('.')
  const digits = whole + fraction
  if (digits.replace(/^0+|0+$/g, '').length > exactDigits) {
    throw new UsdAmountError(
      'too_many_digits',
      `the amount ${usd} USD has more significant digits than a parsed number keeps exactly (${exactDigits})`,
    )
  }
  const point = whole.length + Number(exponent)
  const plain =
    point <= 0
      ? `0.${'0'.repeat(-point)}${digits}`
      : point >= digits.length
        ? digits + '0'.repeat(point - digits.length)
        : `${digits.slice(0, point)}.${digits.slice(point)}`
  return usdTextToNanos(`${usd < 0 ? '-' : ''}${plain}`)
}

const notPositive = () => new UsdAmountError('not_positive', 'the amount must be more than zero')
