import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { InvalidArgumentError } from 'commander'
import { messageLine } from '../../src/cli/strategies-commands.js'
import { bodyFrom, keyValue, list, unixMs } from '../../src/cli/parse.js'
import { duration, type Output } from '../../src/cli/output.js'
import { printJob } from '../../src/cli/backtest/job-output.js'
import type { BacktestJob } from '../../src/client/index.js'
import type { PriceOf } from '../../src/cli/prices.js'
import { price } from '../../src/format/numbers.js'
import { tempDir } from '../support/database.js'

describe('client command flags', () => {
  const dir = tempDir('flags')
  after(() => fs.rmSync(dir, { recursive: true, force: true }))

  it('builds a body from a JSON file, flags winning field by field and params merging', () => {
    const file = path.join(dir, 'job.json')
    fs.writeFileSync(file, JSON.stringify({ template_id: 'sma_cross', params: { fast: 10, slow: 30 }, capital: '500', timeframe: '1h' }))
    const pairs = keyValue('slow=50', keyValue('label=trend', undefined))
    assert.deepEqual(bodyFrom(file, { capital: '1000', timeframe: undefined }, { json: { fast: 8 }, pairs }), {
      template_id: 'sma_cross',
      params: { fast: 8, slow: 50, label: 'trend' },
      capital: '1000',
      timeframe: '1h',
    })
    assert.deepEqual(bodyFrom(undefined, { name: 'x' }, {}), { name: 'x' })
    fs.writeFileSync(file, '[1]')
    assert.throws(() => bodyFrom(file, {}, {}), /must hold a JSON object/)
  })

  it('reads --param values as JSON when they are JSON, lists from commas and repeats, times as ms or ISO', () => {
    assert.deepEqual(keyValue('allow_short=true', { fast: 5 }), { fast: 5, allow_short: true })
    assert.deepEqual(keyValue('ids=[1,2]', undefined), { ids: [1, 2] })
    assert.throws(() => keyValue('=5', undefined), InvalidArgumentError)
    assert.deepEqual(list('ETHUSDT', list('BTCUSDT, SOLUSDT,', undefined)), ['BTCUSDT', 'SOLUSDT', 'ETHUSDT'])
    assert.equal(unixMs('2024-01-01T00:00:00Z'), 1704067200000)
    assert.equal(unixMs('1704067200000'), 1704067200000)
    assert.throws(() => unixMs('yesterday'), InvalidArgumentError)
  })

  it('prints a stream message as one line', () => {
    const base = { strategy_id: 'strat_1', time: '2024-01-01T00:01:00.000Z' }
    assert.equal(
      messageLine({ ...base, type: 'order', data: { client_order_id: 'pp-1-1-1', symbol: 'BTCUSDT', side: 'buy', qty: '0.01', price: '42000.5', fee: '0.21000001', status: 'filled' } }),
      '2024-01-01T00:01:00Z order BTCUSDT buy 0.01 @ 42000.5 fee 0.2100 USDT filled pp-1-1-1',
    )
    assert.equal(
      messageLine({ ...base, type: 'position_closed', data: { symbol: 'BTCUSDT', side: 'buy', qty: '0.01', entry_price: '42000.5', exit_price: '42100', pnl: '0.79', exit_reason: 'signal' } }),
      '2024-01-01T00:01:00Z position_closed BTCUSDT buy 0.01 42000.5 -> 42100 pnl 0.79 USDT (signal)',
    )
    // With the symbols' ticks known (the watch reads them first), prices are written to the tick.
    const ticks: PriceOf = (symbol, value) => price(value, symbol === 'BTCUSDT' ? 2 : undefined)
    assert.equal(
      messageLine({ ...base, type: 'position_opened', data: { symbol: 'BTCUSDT', side: 'sell', qty: '0.01', entry_price: '42000.5' } }, ticks),
      '2024-01-01T00:01:00Z position_opened BTCUSDT sell 0.01 @ 42,000.50',
    )
    assert.equal(messageLine({ ...base, type: 'error', data: { code: 'MARGIN', message: 'refused' } }), '2024-01-01T00:01:00Z error MARGIN refused')
    assert.equal(duration(90_061), '1d 1h')
    assert.equal(duration(59), '59s')
  })

  it("prints a done job's fees, funding and warnings (result.warnings, when the server gives them)", () => {
    const lines: string[] = []
    const output: Output = { out: (text) => lines.push(text), err: () => undefined, errIsTTY: false }
    const metrics = { sharpe: '1.2', sortino: null, calmar: null, max_drawdown: '-0.1', win_rate: '0.5', profit_factor: null, cagr: null, expected_value: null, total_trades: 2, avg_trade_duration_seconds: 3600 }
    const job = {
      id: 'bt_0000abcd',
      status: 'done',
      progress: 1,
      config: { template_id: 'sma_cross', symbols: ['BTCUSDT'], timeframe: '1h', start: '2024-01-01T00:00:00.000Z', end: '2024-01-31T23:00:00.000Z', capital: '10000', leverage: 1 },
      result: { metrics, final_equity: '10123.456', fees_paid: '12.3456', funding_paid: '-1.5', warnings: ['BTCUSDT 1h: 721 of 744 bars missing between 2024-01-01T00:00:00Z and 2024-01-30T23:00:00Z'] },
    } as unknown as BacktestJob
    printJob(output, job, (id) => id)
    const text = lines.join('\n')
    assert.match(text, /^bt_0000abcd done: .*, capital 10,000\.00 USDT, leverage 1$/m)
    assert.match(text, /│ final equity +│ 10,123\.46 USDT +│/)
    assert.match(text, /│ return +│ 1\.23% +│/)
    assert.match(text, /│ fees paid +│ 12\.35 USDT +│/)
    assert.match(text, /│ funding paid \(negative: received\) +│ -1\.50 USDT +│/)
    assert.equal(lines.at(-1), 'warnings:\n  - BTCUSDT 1h: 721 of 744 bars missing between 2024-01-01T00:00:00Z and 2024-01-30T23:00:00Z')
    lines.length = 0
    printJob(output, { ...job, result: { ...job.result!, warnings: [] } } as BacktestJob, (id) => id)
    assert.ok(!lines.join('\n').includes('warnings'), 'an empty list printed a heading')
    lines.length = 0
    const error = { code: 'NO_DATA', message: 'no BTCUSDT 1h bars between 2015-01-01T00:00Z and 2015-02-01T00:00Z' }
    printJob(output, { ...job, status: 'failed', result: null, error } as unknown as BacktestJob, (id) => id)
    assert.match(lines[1]!, /│ status +│ failed +│/)
    assert.ok(!lines[1]!.includes('NO_DATA'), 'the error is in the table')
    assert.equal(lines[2], 'error: no BTCUSDT 1h bars between 2015-01-01T00:00Z and 2015-02-01T00:00Z (NO_DATA)')
  })
})
