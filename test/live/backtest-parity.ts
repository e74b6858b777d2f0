import assert from 'node:assert/strict'
import { symbolRules } from '../../src/backtests/upstream-history.js'
import { BINANCE_BTCUSDT_BRACKETS, runBacktest } from '../../src/engine/index.js'
import { money, price, quantity } from '../../src/http/decimals.js'
import { PAPER_FEES } from '../../src/live/deploy.js'
import type { Template } from '../../src/templates/types.js'
import type { TestApp } from '../support/app.js'
import type { KeyPair } from '../support/signing.js'
import { loadFunding, loadKlines } from '../engine/helpers.js'

const MINUTE = 60_000

export interface RunState {
  warmupFrom: number
  firstActive: number
  broker: { lastOpenTime: number | null; ledger: { cash: number; feesPaid: number; fundingPaid: number; arrays: { qty: number[] } } }
}

/** The saved state of a strategy's (latest) run. */
export async function runState(t: TestApp, id: string): Promise<RunState | null> {
  const row = await t.database.handle.db.selectFrom('strategy_runs').select('state').where('strategy_id', '=', id).orderBy('run', 'desc').executeTakeFirst()
  return (row?.state ?? null) as RunState | null
}

/**
 * Asserts that a BTCUSDT 1m dry run's stored trades, fees, funding and position are exactly those of a
 * backtest of the same params over the recorded bars from its warm-up boundary to its last bar.
 */
export async function assertBacktestParity(
  t: TestApp,
  id: string,
  run: { params: Record<string, unknown>; capital: number; leverage: number; template?: Template },
): Promise<RunState> {
  const final = (await runState(t, id))!
  const rules = await symbolRules(t.services.market, 'BTCUSDT')
  const expected = runBacktest({
    templateId: run.template?.id ?? 'sma_cross',
    template: run.template,
    params: run.params,
    bars: [loadKlines('BTCUSDT', 'BTCUSDT-1m-20250504-20250624.csv.gz', MINUTE)],
    funding: [loadFunding('BTCUSDT-fundingRate-20190910-20260517.csv')],
    rules: [{ ...rules, brackets: BINANCE_BTCUSDT_BRACKETS }],
    capital: run.capital,
    leverage: run.leverage,
    fees: PAPER_FEES,
    start: final.warmupFrom,
    end: final.broker.lastOpenTime!,
  })
  const stored = await t.database.handle.db.selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
  assert.deepEqual(
    stored.map((r) => ({
      entryTime: r.entry_time.getTime(),
      exitTime: r.exit_time.getTime(),
      side: r.side,
      entryPrice: r.entry_price,
      exitPrice: r.exit_price,
      qty: r.qty,
      fee: r.fee,
      funding: r.funding,
      pnl: r.pnl,
    })),
    // The backtest's trades written as the run writes its own (prices at the tick, quantities at the step, money at 8 places).
    expected.trades.map((tr) => ({
      entryTime: tr.entryTime,
      exitTime: tr.exitTime,
      side: tr.side,
      entryPrice: price(tr.entryPrice, rules),
      exitPrice: price(tr.exitPrice, rules),
      qty: quantity(tr.qty, rules),
      fee: money(tr.fee),
      funding: money(tr.funding),
      pnl: money(tr.pnl),
    })),
  )
  assert.equal(final.broker.ledger.feesPaid, expected.feesPaid)
  assert.equal(final.broker.ledger.fundingPaid, expected.fundingPaid)
  assert.equal(final.broker.ledger.arrays.qty[0], (expected.openPositions[0]?.qty ?? 0) * (expected.openPositions[0]?.side === 'sell' ? -1 : 1))
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
