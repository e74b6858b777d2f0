/** A number as a decimal string with `digits` decimals ("-0.00" written "0.00"); null when not finite. */
export function fixed(value: number | undefined, digits: number): string | null {
  if (value === undefined || !Number.isFinite(value)) return null
  const text = value.toFixed(digits)
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text
}

/** `numerator / denominator`, undefined when the denominator is 0. */
export function ratio(numerator: number, denominator: number): number | undefined {
  return denominator === 0 ? undefined : numerator / denominator
}

export function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0)
}

/** The last `count` items (all when fewer). */
export function lastN<T>(items: T[], count: number): T[] {
  return items.slice(Math.max(0, items.length - count))
}
