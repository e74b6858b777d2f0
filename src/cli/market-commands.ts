import { Command, Option } from 'commander'
import type { Operation, QueryParams } from '../client/operations.js'
import type { CliContext } from './context.js'
import { compact, decimal, fieldTable, percent, printJson, table, time } from './output.js'
import { pricesOf } from './prices.js'
import { integer, number, unixMs } from './parse.js'

type KlineInterval = QueryParams<Operation<'/v1/market/klines', 'get'>>['interval']
const KLINE_INTERVALS: KlineInterval[] = ['1m', '3m', '5m', '15m', '30m', '1h', '2h', '4h', '6h', '8h', '12h', '1d', '3d', '1w', '1M']

/**
 * `perpetua market …`: the reads a trader looks at, from the public gateway (no key needed) and the
 * /v1 market endpoints (klines need a key whose user has a Standard or Pro plan).
 */
export function marketCommand(context: CliContext): Command {
  const market = new Command('market').description('market data: funding, tickers, the whale board, symbol rules, klines, trades')
  const json = () => new Option('--json', "print the API's answer exactly")
  const top = () => new Option('--top <n>', 'show only the first n rows of the table (--json stays the whole answer)').argParser(integer)

  market
    .command('funding')
    .description('current funding rates of every symbol, or of one')
    .argument('[symbol]', 'one symbol, e.g. BTCUSDT')
    .addOption(top())
    .addOption(json())
    .action(async (symbol: string | undefined, options: { top?: number; json?: boolean }, command: Command) => {
      const client = context.client(command, 'public')
      const rows = symbol === undefined ? await client.market.fundingRates() : [await client.market.fundingRate(symbol.toUpperCase())]
      if (options.json) return printJson(context.output, symbol === undefined ? rows : rows[0])
      const priceOf = await pricesOf(context, command, symbol === undefined ? undefined : [symbol.toUpperCase()])
      context.output.out(
        table(
          ['symbol', 'funding rate', 'mark price', 'index price', 'next funding'],
          firstRows(rows, options.top).map((r) => [r.symbol, percent(r.fundingRate, 4), priceOf(r.symbol, r.markPrice), priceOf(r.symbol, r.indexPrice), time(r.nextFundingTime)]),
        ),
      )
    })

  market
    .command('funding-history')
    .description('past funding rates of a symbol, oldest first')
    .argument('<symbol>', 'e.g. BTCUSDT')
    .option('--limit <n>', 'rows (default 100)', integer)
    .option('--start <time>', 'from this time (Unix ms or ISO 8601)', unixMs)
    .option('--end <time>', 'up to this time (Unix ms or ISO 8601)', unixMs)
    .addOption(json())
    .action(async (symbol: string, options: { limit?: number; start?: number; end?: number; json?: boolean }, command: Command) => {
      const rows = await context.client(command, 'public').market.fundingHistory(symbol.toUpperCase(), { limit: options.limit, start_time: options.start, end_time: options.end })
      if (options.json) return printJson(context.output, rows)
      const priceOf = await pricesOf(context, command, [symbol.toUpperCase()])
      context.output.out(table(['funding time', 'symbol', 'funding rate', 'mark price'], rows.map((r) => [time(r.fundingTime), r.symbol, percent(r.fundingRate, 4), priceOf(r.symbol, r.markPrice)])))
    })

  market
    .command('tickers')
    .description('24 h tickers of the active symbols (quote volume at least --min-quote-volume), largest first')
    .option('--min-quote-volume <usdt>', 'the 24 h quote volume filter (default 100000000)', number)
    .addOption(top())
    .addOption(json())
    .action(async (options: { minQuoteVolume?: number; top?: number; json?: boolean }, command: Command) => {
      const rows = await context.client(command, 'public').market.activeTickers(options.minQuoteVolume)
      if (options.json) return printJson(context.output, rows)
      const shown = firstRows(rows, options.top)
      const priceOf = await pricesOf(context, command, shown.length === 1 ? [shown[0]!.symbol] : undefined)
      context.output.out(
        table(
          ['symbol', 'last', 'change', 'high', 'low', 'quote volume (USDT)', 'trades'],
          shown.map((r) => [r.symbol, priceOf(r.symbol, r.lastPrice), `${decimal(r.priceChangePercent, 2)}%`, priceOf(r.symbol, r.highPrice), priceOf(r.symbol, r.lowPrice), compact(r.quoteVolume), r.count]),
        ),
      )
    })

  market
    .command('whales')
    .description('the whale board: where the large holders lean, per active symbol, by score')
    .option('--min-quote-volume <usdt>', 'the 24 h quote volume filter (default 50000000)', number)
    .addOption(top())
    .addOption(json())
    .action(async (options: { minQuoteVolume?: number; top?: number; json?: boolean }, command: Command) => {
      const board = await context.client(command, 'public').market.whaleBoard(options.minQuoteVolume)
      if (options.json) return printJson(context.output, board)
      context.output.out(
        table(
          ['#', 'symbol', 'score', 'whale long/short', 'quote volume (USDT)'],
          firstRows(board.rows, options.top).map((r, i) => [i + 1, r.symbol, decimal(r.score, 3), decimal(r.whaleLongShort, 3), compact(r.quoteVolume)]),
        ),
      )
      context.output.err(`generated at ${time(board.generatedAt)}`)
    })

  market
    .command('info')
    .description("a symbol's trading rules: status, precisions, tick and lot sizes, minimum notional")
    .argument('<symbol>', 'e.g. BTCUSDT')
    .addOption(json())
    .action(async (symbol: string, options: { json?: boolean }, command: Command) => {
      const info = await context.client(command, 'public').market.exchangeInfo(symbol.toUpperCase())
      if (options.json) return printJson(context.output, info)
      for (const s of info.symbols) {
        const rows: [string, string | number][] = [
          ['symbol', s.symbol],
          ['status', s.status],
          ['base / quote', `${s.baseAsset} / ${s.quoteAsset}`],
          ['price precision', s.pricePrecision],
          ['quantity precision', s.quantityPrecision],
        ]
        for (const f of s.filters) {
          const { filterType, ...fields } = f
          rows.push([filterType, Object.entries(fields).map(([k, v]) => `${k} ${v}`).join(', ')])
        }
        context.output.out(fieldTable(rows))
      }
    })

  market
    .command('klines')
    .description('candles of a symbol (needs a key whose user has a Standard or Pro plan)')
    .argument('<symbol>', 'e.g. BTCUSDT')
    .addOption(new Option('--interval <interval>', 'candle interval').choices(KLINE_INTERVALS).default('1h'))
    .option('--limit <n>', 'candles (default 500)', integer)
    .option('--start <time>', 'from this time (Unix ms or ISO 8601)', unixMs)
    .option('--end <time>', 'up to this time (Unix ms or ISO 8601)', unixMs)
    .addOption(json())
    .action(async (symbol: string, options: { interval: string; limit?: number; start?: number; end?: number; json?: boolean }, command: Command) => {
      const rows = await context
        .client(command, 'signed')
        .market.klines({ symbol: symbol.toUpperCase(), interval: options.interval as KlineInterval, limit: options.limit, startTime: options.start, endTime: options.end })
      if (options.json) return printJson(context.output, rows)
      const priceOf = await pricesOf(context, command, [symbol.toUpperCase()])
      const tick = (value: unknown) => priceOf(symbol.toUpperCase(), String(value))
      context.output.out(table(['open time', 'open', 'high', 'low', 'close', 'volume'], rows.map((k) => [time(Number(k[0])), tick(k[1]), tick(k[2]), tick(k[3]), tick(k[4]), String(k[5])])))
    })

  market
    .command('trades')
    .description('recent public trades of a symbol, most recent first')
    .argument('<symbol>', 'e.g. BTCUSDT')
    .option('--limit <n>', 'trades, 1 to 1000 (default 500)', integer)
    .addOption(json())
    .action(async (symbol: string, options: { limit?: number; json?: boolean }, command: Command) => {
      const rows = await context.client(command, 'public').market.trades(symbol.toUpperCase(), options.limit)
      if (options.json) return printJson(context.output, rows)
      const priceOf = await pricesOf(context, command, [symbol.toUpperCase()])
      context.output.out(
        table(['time', 'id', 'side', 'price', 'qty', 'quote qty (USDT)'], rows.map((t) => [time(t.time), t.id, t.isBuyerMaker ? 'sell' : 'buy', priceOf(symbol.toUpperCase(), t.price), t.qty, t.quoteQty])),
      )
    })

  return market
}

function firstRows<T>(rows: T[], top: number | undefined): T[] {
  return top === undefined ? rows : rows.slice(0, Math.max(0, top))
}
