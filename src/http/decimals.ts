import { stepDecimals } from '../engine/steps.js'
import type { SymbolRules } from '../engine/types.js'

/**
 * Every decimal string Perpetua emits is written here: answers, stream messages, webhook payloads and the
 * numeric columns they are read back from (docs/decisions/live.md, "Exact decimals"). The engine and the brokers
 * compute in float64; a sum like 106519.1 + 0.1 is 106519.20000000001 there, so no number leaves as String(x).
 * Prices are written at the symbol's tick, quantities at its step size, money (PnL, fees, funding, equity,
 * balances) and ratios at most MONEY_DECIMALS places; trailing zeros are dropped, never exponent notation.
 */

/** Places of money and ratios: Binance's own USDT balances and incomes carry eight. */
export const MONEY_DECIMALS = 8

/** A float as a decimal string of at most `digits` places, trailing zeros dropped (1e-7 → "0.0000001", -0 → "0"). */
export function decimal(value: number, digits = MONEY_DECIMALS): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`)
  const fixed = value.toFixed(digits)
  const trimmed = fixed.includes('.') ? fixed.replace(/\.?0+$/, '') : fixed
  return trimmed === '-0' ? '0' : trimmed
}

/** PnL, fees, funding, equity, balances: rounded to MONEY_DECIMALS places. */
export function money(value: number): string {
  return decimal(value, MONEY_DECIMALS)
}

/**
 * `value` at the nearest multiple of `step` (a tick or step size), written with the step's places. The
 * multiple is made in integers (steps × the step in units of its last place), so the string is exactly a
 * multiple of the step, whatever float error `value` carries.
 */
export function onStep(value: number, step: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`not a finite number: ${value}`)
  const places = stepDecimals(step)
  const unit = BigInt(Math.round(step * 10 ** places))
  const scaled = BigInt(Math.round(value / step)) * unit
  const negative = scaled < 0n
  const digits = (negative ? -scaled : scaled).toString().padStart(places + 1, '0')
  const whole = digits.slice(0, digits.length - places)
  const fraction = digits.slice(digits.length - places).replace(/0+$/, '')
  const text = fraction ? `${whole}.${fraction}` : whole
  return negative && text !== '0' ? `-${text}` : text
}

/** The tick and step a symbol's prices and quantities are written at. */
export type DecimalRules = Pick<SymbolRules, 'tickSize' | 'stepSize'>

/** A price at the symbol's tick (an average of fills at several prices too: within half a tick). */
export function price(value: number, rules: DecimalRules): string {
  return onStep(value, rules.tickSize)
}

/** A quantity at the symbol's step size. */
export function quantity(value: number, rules: DecimalRules): string {
  return onStep(value, rules.stepSize)
}
