import { InvalidArgumentError } from 'commander'
import { type ParamValue, parseGridValues } from '../../sweeps/grid-values.js'

/**
 * --grid name=values, repeatable: a list (slow=20,30,50,100, true,false) or an inclusive range
 * (fast=5..50:5, step 1 without ":step"), read as the dashboard's sweep form reads them.
 */
export function gridFlag(value: string, previous: Record<string, ParamValue[]> | undefined): Record<string, ParamValue[]> {
  const [name, spec] = nameAndSpec(value)
  try {
    return { ...previous, [name]: parseGridValues(spec) }
  } catch (error) {
    throw new InvalidArgumentError(`${name}: ${(error as Error).message}.`)
  }
}

/** --space name=min..max[:step], repeatable: the range a random search draws the param from. */
export function spaceFlag(value: string, previous: Record<string, { min: number; max: number; step?: number }> | undefined) {
  const [name, spec] = nameAndSpec(value)
  const range = /^(-?[\d.]+)\.\.(-?[\d.]+)(?::([\d.]+))?$/.exec(spec)
  if (!range) throw new InvalidArgumentError('expected name=min..max[:step].')
  return { ...previous, [name]: { min: Number(range[1]), max: Number(range[2]), ...(range[3] !== undefined ? { step: Number(range[3]) } : {}) } }
}

/** --walk-forward IN,OUT[,anchored]: in-sample and out-of-sample days. */
export function walkForwardFlag(value: string): { in_sample_days: number; out_of_sample_days: number; anchored: boolean } {
  const parts = value.split(',').map((part) => part.trim())
  const [inSample, outOfSample] = [Number(parts[0]), Number(parts[1])]
  if (parts.length < 2 || parts.length > 3 || !Number.isInteger(inSample) || !Number.isInteger(outOfSample) || (parts[2] !== undefined && parts[2] !== 'anchored')) {
    throw new InvalidArgumentError('expected IN_SAMPLE_DAYS,OUT_OF_SAMPLE_DAYS[,anchored], e.g. 365,90.')
  }
  return { in_sample_days: inSample, out_of_sample_days: outOfSample, anchored: parts[2] === 'anchored' }
}

function nameAndSpec(value: string): [string, string] {
  const at = value.indexOf('=')
  if (at <= 0 || at === value.length - 1) throw new InvalidArgumentError('expected name=values.')
  return [value.slice(0, at).trim(), value.slice(at + 1).trim()]
}
