import type { JobConfig } from '../backtests/schemas.js'
import type { ParamProblem } from '../templates/types.js'
import { type ExitField, type Exits, exitsProblem, resolvedExits } from '../strategies/exits.js'

/**
 * Protective exits a sweep may search (issue 30): a grid or random space key `exits.stop_loss` sets that
 * field of the base's exits in each configuration. A configuration is stored as one flat record, the
 * template's params beside these dotted keys (`{fast: 10, "exits.stop_loss": "0.02"}`), and a run's
 * params show them the same way, so a run reads which stop it had under the very key the grid named.
 */
export const SWEPT_EXIT_FIELDS = ['stop_loss', 'take_profit', 'trailing_stop', 'trailing_activation'] as const satisfies readonly ExitField[]
const PREFIX = 'exits.'

/** True for a swept key of the exits (well formed or not): it is judged here, never as a template param. */
export const isExitKey = (name: string): boolean => name.startsWith(PREFIX)

/** The exits field a swept key names, or undefined for one that cannot be swept (exits.trigger, a typo). */
export function exitFieldOf(name: string): ExitField | undefined {
  const field = name.slice(PREFIX.length)
  return (SWEPT_EXIT_FIELDS as readonly string[]).includes(field) ? (field as ExitField) : undefined
}

/**
 * A swept value as the decimal string exits hold: a string as given, a number at 12 significant digits
 * (a random draw's float tail dropped: 0.0123456789012345678 has more places than a decimal string takes).
 * Undefined for a boolean.
 */
export function exitText(value: unknown): string | undefined {
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(Number(value.toPrecision(12)))
  return undefined
}

/** A configuration split: the template's params, and its swept exits keys (decimal strings), if any. */
export function splitConfiguration(configuration: Record<string, unknown>): { params: Record<string, unknown>; swept: Record<string, string> } {
  const params: Record<string, unknown> = {}
  const swept: Record<string, string> = {}
  for (const [name, value] of Object.entries(configuration)) {
    if (isExitKey(name)) swept[name] = value as string
    else params[name] = value
  }
  return { params, swept }
}

/** The base's exits with the swept fields set (trigger spelled out), or the base's own when nothing is swept. */
export function configurationExits(base: Exits | undefined, swept: Record<string, string>): Exits | undefined {
  const keys = Object.keys(swept)
  if (keys.length === 0) return base
  return resolvedExits({ ...base, ...Object.fromEntries(keys.map((key) => [key.slice(PREFIX.length), swept[key]])) })
}

/**
 * The problem of one configuration's exits, named after the sweep's key when a swept field is at fault
 * (`grid.exits.stop_loss`, `random.space.exits.trailing_activation.min`), else as the base's field.
 */
export function sweptExitsProblem(base: Exits | undefined, swept: Record<string, string>, sweptField: (key: string) => string): ParamProblem | undefined {
  const exits = configurationExits(base, swept)
  const problem = exits && exitsProblem(exits)
  if (!problem) return undefined
  const key = problem.field
  return Object.hasOwn(swept, key) ? { field: sweptField(key), message: problem.message.replaceAll(key, sweptField(key)) } : { field: `base.${key}`, message: problem.message }
}

/**
 * A run as a backtest job's config: the sweep's base with the run's params and exits (a run's params are
 * its stored configuration, swept exits keys included). Posted as a job, it gives the run's metrics.
 */
export function runJobConfig(base: JobConfig, runParams: Record<string, unknown>): JobConfig {
  const { params, swept } = splitConfiguration(runParams)
  const exits = configurationExits(base.exits, swept)
  const config: JobConfig = { ...base, params, exits }
  if (exits === undefined) delete config.exits
  return config
}
