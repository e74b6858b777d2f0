import { type Command, Option } from 'commander'
import { integer, jsonObject, keyValue, list } from '../parse.js'

const TIMEFRAMES = ['1m', '5m', '15m', '1h', '4h', '1d']
const FEE_MODELS = ['none', 'fixed_bps', 'tiered_maker_taker', 'match_exchange']

/** The flags of a backtest's config, shared by `backtest run` and `sweep run` (whose base is a backtest's config). */
export interface ConfigFlags extends ExitFlags {
  template?: string
  params?: Record<string, unknown>
  param?: Record<string, unknown>
  symbols?: string[]
  timeframe?: string
  start?: string
  end?: string
  capital?: string
  leverage?: number
  feeModel?: string
  feeBps?: string
  strategy?: string
  slippageBps?: string
}

/** The protective exits' flags, shared by backtests, sweeps and strategies. */
export interface ExitFlags {
  stopLoss?: string
  takeProfit?: string
  trailingStop?: string
  trailingActivation?: string
  trigger?: 'last' | 'mark'
}

/** Adds the config flags; `paramsNote` says which params they set (a sweep's are the ones not swept). */
export function withConfigFlags(command: Command, paramsNote = 'template parameters'): Command {
  command
    .option('--template <id>', 'template id, e.g. sma_cross (perpetua templates lists them)')
    .option('--params <json>', `${paramsNote} as a JSON object`, jsonObject)
    .option('--param <name=value>', `one of the ${paramsNote} (repeatable; the value is JSON when it parses, else a string)`, keyValue)
    .option('--symbols <list>', 'symbols, comma-separated or repeated, e.g. BTCUSDT', list)
    .addOption(new Option('--timeframe <tf>', 'bar interval').choices(TIMEFRAMES))
    .option('--start <iso>', 'first bar, ISO 8601 UTC (inclusive), e.g. 2024-01-01T00:00:00Z')
    .option('--end <iso>', 'last bar, ISO 8601 UTC (inclusive)')
    .option('--capital <decimal>', 'starting equity in the quote currency, e.g. 10000')
    .option('--leverage <n>', 'leverage (default 1)', integer)
    .addOption(new Option('--fee-model <model>', 'fee model (default fixed_bps)').choices(FEE_MODELS))
    .option('--fee-bps <decimal>', 'fee per fill in basis points with fixed_bps (default 5)')
    .option('--strategy <id>', 'start from a stored strategy (strat_…); given fields override it')
    .option('--slippage-bps <decimal>', 'basis points every market fill is worsened by, 0 to 1000 (default 0)')
  return withExitFlags(command)
}

/**
 * Adds the protective exits' flags: decimal fractions of the entry price, sent as strings so the API, not
 * a float here, reads them (its 400 names the field, e.g. exits.stop_loss).
 */
export function withExitFlags(command: Command): Command {
  return command
    .option('--stop-loss <fraction>', 'exit when the price moves this fraction against the position, e.g. 0.02 (2 %)')
    .option('--take-profit <fraction>', 'exit when the price moves this fraction in favour, e.g. 0.04')
    .option('--trailing-stop <fraction>', 'trailing stop: callback fraction from the best price since entry, 0.001 to 0.2')
    .option('--trailing-activation <fraction>', 'the trailing stop starts once the price is this fraction in favour (needs --trailing-stop)')
    .addOption(new Option('--trigger <prices>', 'prices the exits are judged on (default last)').choices(['last', 'mark']))
}

/** The `exits` object the exit flags give, or undefined when none is given. */
export function exitsField(options: ExitFlags): Record<string, string> | undefined {
  const exits = Object.fromEntries(
    Object.entries({
      stop_loss: options.stopLoss,
      take_profit: options.takeProfit,
      trailing_stop: options.trailingStop,
      trailing_activation: options.trailingActivation,
      trigger: options.trigger,
    }).filter(([, value]) => value !== undefined),
  ) as Record<string, string>
  return Object.keys(exits).length > 0 ? exits : undefined
}

/** The request fields the config flags give (undefined where a flag is absent). */
export function configFields(options: ConfigFlags): Record<string, unknown> {
  return {
    template_id: options.template,
    symbols: options.symbols,
    timeframe: options.timeframe,
    start: options.start,
    end: options.end,
    capital: options.capital,
    leverage: options.leverage,
    fee_model: options.feeModel,
    fee_bps: options.feeBps,
    strategy_id: options.strategy,
    exits: exitsField(options),
    slippage_bps: options.slippageBps,
  }
}
