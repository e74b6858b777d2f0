import assert from 'node:assert/strict'
import { symbolRules, UpstreamHistory } from '../../src/backtests/upstream-history.js'
import { runBacktest } from '../../src/engine/index.js'
import type { BarSeries, DetailBars, ExitRules } from '../../src/engine/types.js'
import { markPriceKlines } from '../../src/market/mark-price-klines.js'
import { TIMEFRAME_MS } from '../../src/strategies/timeframes.js'
import { money, price, quantity } from '../../src/http/decimals.js'
import { PAPER_FEES } from '../../src/live/brokers/paper-setup.js'
import type { MarketData } from '../../src/market/market-data.js'
import type { Template } from '../../src/templates/types.js'
import type { TestApp } from '../support/app.js'
import type { Db } from '../../src/db/connect.js'
import type { KeyPair } from '../support/signing.js'
import { loadFunding, loadKlines } from '../engine/helpers.js'

const MINUTE = 60_000
/** The recorded minutes and funding the replay exchange serves. */
const MINUTE_FILES: Record<string, string> = { BTCUSDT: 'BTCUSDT-1m-20250504-20250624.csv.gz', ETHUSDT: 'ETHUSDT-1m-20250504-20250624.csv.gz' }
const FUNDING_FILES: Record<string, string> = { BTCUSDT: 'BTCUSDT-fundingRate-20190910-20260517.csv', ETHUSDT: 'ETHUSDT-fundingRate-20191127-20260517.csv' }

export interface RunState {
  warmupFrom: number
  firstActive: number
  broker: { lastOpenTime: number | null; ledger: { cash: number; feesPaid: number; fundingPaid: number; arrays: { qty: number[] } & Partial<Record<string, (number | null)[]>> } }
}

/** What the parity checks read: the runs' database and the market a backtest takes its rules from (a TestApp, or Perpetua nodes' database and the replay). */
export interface ParitySource {
  database: { handle: { db: Db } }
  services: { market: MarketData }
}

/** The saved state of a strategy's (latest) run. */
export async function runState(t: Pick<ParitySource, 'database'>, id: string): Promise<RunState | null> {
  const row = await t.database.handle.db.selectFrom('strategy_runs').select('state').where('strategy_id', '=', id).orderBy('run', 'desc').executeTakeFirst()
  return (row?.state ?? null) as RunState | null
}

/** What a run with protective exits is compared with: its timeframe's bars and the minutes inside them, as the replay exchange serves them over REST. */
export interface ReplayBars {
  timeframe: string
  exits: ExitRules
}

/**
 * A backtest of a run's params, fees and the exchange's rules (BTCUSDT unless `symbols`): what a run is compared with.
 * On the recorded minutes (1m runs), or with `replay` on the replay's own klines of the run's timeframe, and the 1m
 * klines (mark-price klines for trigger mark) its exits are examined on, read over REST as the run reads them.
 */
export async function minuteBacktest(
  market: MarketData,
  run: { params: Record<string, unknown>; capital: number; leverage: number; start: number; end: number; template?: Template; templateId?: string; symbols?: readonly string[]; replay?: ReplayBars },
) {
  const symbols = run.symbols ?? ['BTCUSDT']
  const rules = await Promise.all(symbols.map((symbol) => symbolRules(market, symbol)))
  const replay = run.replay
  let bars: BarSeries[]
  let detail: DetailBars[] | undefined
  if (replay) {
    const interval = TIMEFRAME_MS[replay.timeframe as keyof typeof TIMEFRAME_MS]
    const history = new UpstreamHistory(market)
    const last = run.end + interval - 1
    bars = await Promise.all(symbols.map((symbol) => replayKlines((from, to, limit) => history.klines(symbol, replay.timeframe, from, to, limit), symbol, interval, run.start, run.end)))
    // A 1m run's exits are judged on its own bars: there is nothing finer to examine.
    detail = interval === MINUTE ? undefined : await Promise.all(
      symbols.map(async (symbol): Promise<DetailBars> => {
        if (replay.exits.trigger === 'mark') return { mark: [await replayKlines((from, to, limit) => markPriceKlines(market, symbol, '1m', from, to, limit), symbol, MINUTE, run.start, last)] }
        return { bars: [await replayKlines((from, to, limit) => history.klines(symbol, '1m', from, to, limit), symbol, MINUTE, run.start, last)] }
      }),
    )
  } else bars = symbols.map((symbol) => loadKlines(symbol, MINUTE_FILES[symbol]!, MINUTE))
  const result = runBacktest({
    templateId: run.template?.id ?? run.templateId ?? 'sma_cross',
    template: run.template,
    params: run.params,
    bars,
    funding: symbols.map((symbol) => loadFunding(FUNDING_FILES[symbol]!)),
    rules,
    capital: run.capital,
    leverage: run.leverage,
    fees: PAPER_FEES,
    start: run.start,
    end: run.end,
    ...(replay ? { exits: replay.exits, ...(detail ? { detail } : {}) } : {}),
  })
  return { result, rules }
}

/** Klines with open times in [start, end] over REST, page by page (1,500 a page), as a series. */
async function replayKlines(
  page: (from: number, to: number, limit: number) => Promise<readonly { openTime: number; open: number; high: number; low: number; close: number; volume: number }[]>,
  symbol: string,
  intervalMs: number,
  start: number,
  end: number,
): Promise<BarSeries> {
  const rows: { openTime: number; open: number; high: number; low: number; close: number; volume: number }[] = []
  for (let cursor = start; cursor <= end; ) {
    const got = await page(cursor, end, 1500)
    rows.push(...got.filter((r) => r.openTime >= cursor && r.openTime <= end))
    if (got.length < 1500) break
    cursor = got[got.length - 1]!.openTime + intervalMs
  }
  const column = (key: 'openTime' | 'open' | 'high' | 'low' | 'close' | 'volume') => Float64Array.from(rows, (r) => r[key])
  return { symbol, intervalMs, openTime: column('openTime'), open: column('open'), high: column('high'), low: column('low'), close: column('close'), volume: column('volume') }
}

/**
 * Asserts that a dry run's stored trades (exit reasons included), fees, funding and positions are exactly those
 * of a backtest of the same params over the recorded minutes (a 1m run; BTCUSDT unless `symbols`), or with
 * `replay` over the replay's bars of its timeframe with its exits, from its warm-up boundary to its last bar.
 */
export async function assertBacktestParity(
  t: ParitySource,
  id: string,
  run: { params: Record<string, unknown>; capital: number; leverage: number; template?: Template; templateId?: string; symbols?: string[]; closedAtPause?: boolean; replay?: ReplayBars },
): Promise<RunState> {
  const final = (await runState(t, id))!
  const symbols = run.symbols ?? ['BTCUSDT']
  const { result: expected, rules } = await minuteBacktest(t.services.market, { ...run, start: final.warmupFrom, end: final.broker.lastOpenTime! })
  const all = await t.database.handle.db.selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
  const last = final.broker.lastOpenTime!
  // A pause with close_positions closes what the run held at the last close it saw: the backtest's open positions, marked there.
  const stored = run.closedAtPause ? all.filter((r) => r.exit_time.getTime() <= last) : all
  if (run.closedAtPause) {
    const closes = all.filter((r) => r.exit_time.getTime() > last)
    assert.deepEqual(
      closes.map((r) => ({ symbol: r.symbol, side: r.side, qty: r.qty, entryPrice: r.entry_price, exitPrice: r.exit_price, reason: r.exit_reason })).sort((a, b) => a.symbol.localeCompare(b.symbol)),
      expected.openPositions
        .map((p) => {
          const r = rules[symbols.indexOf(p.symbol)]!
          return { symbol: p.symbol, side: p.side, qty: quantity(p.qty, r), entryPrice: price(p.entryPrice, r), exitPrice: price(p.markPrice, r), reason: 'signal' }
        })
        .sort((a, b) => a.symbol.localeCompare(b.symbol)),
    )
    assert.ok(final.broker.ledger.arrays.qty.every((q) => q === 0), 'flat on every symbol after the pause')
  }
  // A step of a many-symbol run books its symbols' trades in symbol order; the engine's list is in fill order.
  const order = <T extends { exitTime: number; symbol: string }>(trades: T[]) => trades.sort((a, b) => a.exitTime - b.exitTime || symbols.indexOf(a.symbol) - symbols.indexOf(b.symbol))
  assert.deepEqual(
    order(stored.map((r) => ({
      symbol: r.symbol,
      entryTime: r.entry_time.getTime(),
      exitTime: r.exit_time.getTime(),
      side: r.side,
      entryPrice: r.entry_price,
      exitPrice: r.exit_price,
      qty: r.qty,
      fee: r.fee,
      funding: r.funding,
      pnl: r.pnl,
      exitReason: r.exit_reason,
    }))),
    // The backtest's trades written as the run writes its own (prices at the tick, quantities at the step, money at 8 places).
    order(
      expected.trades.map((tr) => {
        const r = rules[symbols.indexOf(tr.symbol)]!
        return {
          symbol: tr.symbol,
          entryTime: tr.entryTime,
          exitTime: tr.exitTime,
          side: tr.side,
          entryPrice: price(tr.entryPrice, r),
          exitPrice: price(tr.exitPrice, r),
          qty: quantity(tr.qty, r),
          fee: money(tr.fee),
          funding: money(tr.funding),
          pnl: money(tr.pnl),
          exitReason: tr.exitReason as string,
        }
      }),
    ),
  )
  if (run.closedAtPause) return final
  assert.equal(final.broker.ledger.feesPaid, expected.feesPaid)
  assert.equal(final.broker.ledger.fundingPaid, expected.fundingPaid)
  symbols.forEach((symbol, s) => {
    const open = expected.openPositions.find((p) => p.symbol === symbol)
    assert.equal(final.broker.ledger.arrays.qty[s], (open?.qty ?? 0) * (open?.side === 'sell' ? -1 : 1), `${symbol}'s position`)
  })
  return final
}

/** sma_cross 3/8 with shorts on BTCUSDT 1m: at replay speed 300 it trades within seconds. */
export const FAST_PARAMS = { fast: 3, slow: 8, allow_short: true }

/** Creates the fast strategy for `key` and deploys it as a dry run; returns its id. */
export async function deployFastDryRun(t: TestApp, key: KeyPair, leverage = 1): Promise<string> {
  const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'fast', template_id: 'sma_cross', params: FAST_PARAMS, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', leverage })
  assert.equal(created.statusCode, 200, created.body)
  const id = created.json().id as string
  const deployed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
  assert.equal(deployed.statusCode, 200, deployed.body)
  return id
}
