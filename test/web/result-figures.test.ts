import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { Job, KlineRow } from '../../web/src/api/types.js'
import { buyAndHold, resultFigures, tradesCsv } from '../../web/src/pages/backtests/result-figures.js'
import { moveInside } from '../../web/src/pages/backtests/coverage-range.js'

/** The result's extra figures (issue 35), computed in the page from the job and public klines. */
const DAY = 86_400_000
const start = Date.UTC(2024, 0, 1)
const job = (config: Record<string, unknown>, result: Record<string, unknown> = {}) =>
  ({ id: 'bt_00000001', config: { symbols: ['BTCUSDT'], capital: '1000', start: new Date(start).toISOString(), end: new Date(start + 3 * DAY).toISOString(), ...config }, result }) as unknown as Job
const bar = (open: number, close: number) => [open, '0', '0', '0', String(close)] as unknown as KlineRow

describe('result figures', () => {
  it('net profit, total return and fees over the profit before fees; none when there was no such profit', () => {
    assert.deepEqual(resultFigures(job({}, { final_equity: '1150', fees_paid: '50' })), { netProfit: 150, totalReturn: 0.15, feeShare: 0.25 })
    assert.equal(resultFigures(job({}, { final_equity: '900', fees_paid: '40' })).feeShare, undefined)
  })

  it('buy and hold: an even share of the capital per symbol from its first close, a point at each close within the run', () => {
    const btc = [bar(start, 100), bar(start + DAY, 110), bar(start + 2 * DAY, 120), bar(start + 3 * DAY, 999)]
    // ETH's second bar is missing: its last close counts until the next.
    const eth = [bar(start, 10), bar(start + 2 * DAY, 5)]
    const points = buyAndHold(job({ symbols: ['BTCUSDT', 'ETHUSDT'] }), [btc, eth], DAY)
    assert.deepEqual(points, [
      { time: (start + DAY) / 1000, value: 1000 },
      { time: (start + 2 * DAY) / 1000, value: 500 * 1.1 + 500 },
      { time: (start + 3 * DAY) / 1000, value: 500 * 1.2 + 250 },
    ])
    assert.deepEqual(buyAndHold(job({ symbols: ['BTCUSDT', 'ETHUSDT'] }), [btc, []], DAY), [], 'a symbol without bars: no line')
  })

  it('a trades CSV quotes what needs it and leaves an absent exit reason empty', () => {
    const csv = tradesCsv([{ id: 1, symbol: 'BTCUSDT', side: 'buy', entry_time: 't0', entry_price: '1', exit_time: 't1', exit_price: '2', qty: '0.5', fee: '0.1', funding: '0', pnl: '0.4' } as never, { id: 2, symbol: 'A,"B"', side: 'sell', exit_reason: 'stop_loss' } as never])
    assert.equal(csv.split('\r\n')[1], '1,BTCUSDT,buy,t0,1,t1,2,0.5,0.1,0,0.4,')
    assert.equal(csv.split('\r\n')[2], '2,"A,""B""",sell,,,,,,,,,stop_loss')
  })

  it('dates outside the history move inside it, keeping their length', () => {
    const common = { start: '2019-09-08', end: '2025-06-17' }
    assert.deepEqual(moveInside(common, '2015-01-01', '2015-01-31'), { start: '2019-09-08', end: '2019-10-08' })
    assert.deepEqual(moveInside(common, '2026-01-01', '2026-01-11'), { start: '2025-06-07', end: '2025-06-17' })
    assert.deepEqual(moveInside({ start: '2024-01-01', end: '2024-01-05' }, '2015-01-01', '2016-01-01'), { start: '2024-01-01', end: '2024-01-05' }, 'the recorded range at most')
  })
})
