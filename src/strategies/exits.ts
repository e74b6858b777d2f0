import { type Static, Type } from 'typebox'
import type { ExitRules } from '../engine/index.js'
import type { ParamProblem } from '../templates/types.js'

/**
 * Protective exits as a trader writes them on a strategy, a backtest or a sweep's base (issue 30): decimal
 * strings, each optional, fractions of the position's average entry price. One definition for every
 * route, so a strategy, its backtest and its dry run read the same bounds.
 */
export const EXIT_BOUNDS = {
  // Above 0 and below 1: a stop at 100 % against a long is a price of 0.
  stop_loss: { min: 0.0001, max: 0.99 },
  take_profit: { min: 0.0001, max: 100 },
  // Binance's callbackRate: 0.1 % to 20 % (research/protective-orders.md §1.2, raised from 10 on 2026-10-23).
  trailing_stop: { min: 0.001, max: 0.2 },
  trailing_activation: { min: 0.0001, max: 100 },
} as const

export type ExitField = keyof typeof EXIT_BOUNDS
export const EXIT_FIELDS = Object.keys(EXIT_BOUNDS) as ExitField[]
export const EXIT_TRIGGERS = ['last', 'mark'] as const

const Fraction = (field: ExitField, description: string) =>
  Type.Optional(Type.String({ maxLength: 40, description: `${description}; a decimal string from ${EXIT_BOUNDS[field].min} to ${EXIT_BOUNDS[field].max}`, examples: ['0.02'] }))

export const ExitsSchema = Type.Object(
  {
    stop_loss: Fraction('stop_loss', 'Exit when the price moves this fraction of the entry price against the position ("0.02" = 2 %)'),
    take_profit: Fraction('take_profit', 'Exit when the price moves this fraction of the entry price in favour'),
    trailing_stop: Fraction('trailing_stop', "Callback fraction from the best price since entry (or since activation), Binance's 0.1–20 %"),
    trailing_activation: Fraction('trailing_activation', 'Trailing starts once the price is this fraction in favour; needs trailing_stop'),
    trigger: Type.Optional(Type.Enum(EXIT_TRIGGERS, { description: 'last (default): trade prices; mark: mark prices, as Binance\'s workingType MARK_PRICE' })),
  },
  {
    additionalProperties: false,
    description:
      'Protective exits, filled inside the bar on the finest bars there are (see the engine semantics): stop_loss, take_profit and trailing_stop are fractions of the entry price; a position exited by one stays flat until the strategy states a different target.',
  },
)
export type Exits = Static<typeof ExitsSchema>

/** slippage_bps: a decimal string of basis points from 0 to 1000. */
export const SlippageSchema = Type.String({
  maxLength: 40,
  description: 'Worsens every market fill (entries, target changes, protective exits) by this many basis points; liquidations still fill at their price. Default 0.',
  examples: ['2'],
})
export const MAX_SLIPPAGE_BPS = 1000

const DECIMAL = /^(0|[1-9]\d{0,17})(\.\d{1,18})?$/

/**
 * The first problem with an exits object (the field named `exits.stop_loss`, …), or undefined. An empty
 * object is a problem: it states nothing, and a stored `{}` would read as "exits on" everywhere.
 */
export function exitsProblem(exits: Exits, prefix = 'exits'): ParamProblem | undefined {
  const stated = EXIT_FIELDS.filter((field) => exits[field] !== undefined)
  if (stated.length === 0) return { field: prefix, message: `${prefix} states no exit: give stop_loss, take_profit or trailing_stop (or leave ${prefix} out)` }
  for (const field of stated) {
    const text = exits[field]!
    const { min, max } = EXIT_BOUNDS[field]
    if (!DECIMAL.test(text) || Number(text) < min || Number(text) > max) {
      return { field: `${prefix}.${field}`, message: `${prefix}.${field} must be a decimal string from ${min} to ${max} (a fraction: "0.02" = 2 %), got ${JSON.stringify(text)}` }
    }
  }
  if (exits.trailing_activation !== undefined && exits.trailing_stop === undefined) {
    return { field: `${prefix}.trailing_activation`, message: `${prefix}.trailing_activation needs ${prefix}.trailing_stop` }
  }
  return undefined
}

/** The first problem with slippage_bps, or undefined. */
export function slippageProblem(text: string): ParamProblem | undefined {
  if (DECIMAL.test(text) && Number(text) <= MAX_SLIPPAGE_BPS) return undefined
  return { field: 'slippage_bps', message: `slippage_bps must be a decimal string from 0 to ${MAX_SLIPPAGE_BPS}, got ${JSON.stringify(text)}` }
}

/** The resolved exits as a job or record keeps them: the fields given, and trigger spelled out. */
export function resolvedExits(exits: Exits): Exits {
  return { ...exits, trigger: exits.trigger ?? 'last' }
}

/** The engine's ExitRules for checked exits. */
export function exitRulesOf(exits: Exits): ExitRules {
  const number = (text: string | undefined) => (text === undefined ? undefined : Number(text))
  return {
    ...(exits.stop_loss !== undefined ? { stopLoss: number(exits.stop_loss) } : {}),
    ...(exits.take_profit !== undefined ? { takeProfit: number(exits.take_profit) } : {}),
    ...(exits.trailing_stop !== undefined ? { trailingStop: number(exits.trailing_stop) } : {}),
    ...(exits.trailing_activation !== undefined ? { trailingActivation: number(exits.trailing_activation) } : {}),
    trigger: exits.trigger ?? 'last',
  }
}
