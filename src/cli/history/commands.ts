import { Command, InvalidArgumentError } from 'commander'
import { TIMEFRAMES } from '../../strategies/timeframes.js'
import { SYMBOL } from '../../market/symbol-pattern.js'
// A type-only import: erased, so fetch.ts still loads only when the action runs.
import type { HistoryFetchOptions } from './fetch.js'

// `perpetua history …`: operator commands on the history store (configured by the environment, like
// serve and migrate). This file loads only commander; the action loads the store and the upstream.

/** history fetch: fills the store from the klines archive (and REST for the rest) before users ask. */
export function historyCommand(): Command {
  const history = new Command('history').description('the backtest history store (klines from the exchange and its public data archive)')
  history
    .command('fetch')
    .description('store klines and funding for these symbols and intervals now, so the first backtests over them start at once')
    .requiredOption('--symbols <list>', 'comma-separated, e.g. BTCUSDT,ETHUSDT', symbolList)
    .requiredOption('--intervals <list>', `comma-separated, of ${TIMEFRAMES.join(' ')}`, intervalList)
    .requiredOption('--start <date>', 'from this UTC day (2020-01-01) or time (ISO 8601)', isoTime)
    .option('--end <date>', "up to this UTC time (default: the exchange's now)", isoTime)
    .option('--json', 'print one JSON object (per symbol and interval: bars, archive files, REST requests) instead of the summary', false)
    .addHelpText(
      'after',
      `
Configured by the environment (README, "Configuration"): DATA_DIR or DATABASE_URL, UPSTREAM_URL,
UPSTREAM_ARCHIVE_URL (whole months and days come from the archive, the rest over REST). With the
embedded database (DATA_DIR) held by a running \`perpetua serve\`, the fetch runs inside that server
(it prints the summary when done, without a progress bar).`,
    )
    .action(async (options: HistoryFetchOptions) => {
      if (options.end !== undefined && options.end <= options.start) throw new InvalidArgumentError('--end must be after --start.')
      const [{ runHistoryFetch }, { loadConfig }] = await Promise.all([import('./fetch.js'), import('../../config.js')])
      await runHistoryFetch(loadConfig(), options)
    })
  return history
}

function symbolList(value: string): string[] {
  const symbols = value.split(',').map((s) => s.trim().toUpperCase())
  for (const symbol of symbols) if (!SYMBOL.test(symbol)) throw new InvalidArgumentError(`"${symbol}" is not a symbol such as BTCUSDT.`)
  return [...new Set(symbols)]
}

function intervalList(value: string): HistoryFetchOptions['intervals'] {
  const intervals = value.split(',').map((s) => s.trim())
  for (const interval of intervals) {
    if (!(TIMEFRAMES as readonly string[]).includes(interval)) throw new InvalidArgumentError(`"${interval}" is not one of ${TIMEFRAMES.join(', ')}.`)
  }
  return [...new Set(intervals)] as HistoryFetchOptions['intervals']
}

function isoTime(value: string): number {
  const parsed = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value)
  if (Number.isNaN(parsed)) throw new InvalidArgumentError('not a UTC day (2020-01-01) or an ISO 8601 time.')
  return parsed
}
