import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeResult, encodeResult } from '../../src/backtests/result-codec.js'

describe('stored backtest results', () => {
  const result = {
    metrics: { sharpe: '1.25', total_trades: 2 },
    equity_curve: [['2023-01-01T00:00:00.000Z', '10000']],
    trades: Array.from({ length: 200 }, (_, i) => ({ id: i + 1, side: 'buy', entry_price: '16543.2', pnl: '-3.5', exit_reason: 'signal' })),
    note: 'ünïcödé and "quotes"',
  }

  it('round-trips a result through its compressed form, much smaller than the JSON', () => {
    const stored = encodeResult(result)
    assert.deepEqual(decodeResult(stored), result)
    assert.ok(stored.length * 5 < Buffer.byteLength(JSON.stringify(result)), `${stored.length} bytes stored`)
  })

  it('reads a result stored before compression (the JSON text migration 0010 kept)', () => {
    assert.deepEqual(decodeResult(Buffer.from(JSON.stringify(result), 'utf8')), result)
  })
})
