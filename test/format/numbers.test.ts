import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compact, money, num, price } from '../../src/format/numbers.js'
import { tickDecimals } from '../../src/format/tick-decimals.js'

// The one number formatter of the dashboard and the CLI (src/format/numbers.ts).
describe('number formats shared by the dashboard and the CLI', () => {
  it('writes large volumes in words with one decimal', () => {
    assert.equal(compact(165_912_345), '165.9M')
    assert.equal(compact('165912345.67'), '165.9M')
    assert.equal(compact(2_345_678_901), '2.3B')
    assert.equal(compact(1234), '1.2K')
    assert.equal(compact(999), '999')
    assert.equal(compact('n/a'), 'n/a')
  })

  it('writes money with its unit and prices to the tick', () => {
    assert.equal(money('1234.5'), '1,234.50 USDT')
    assert.equal(money('-0.2100001', 4), '-0.2100 USDT')
    assert.equal(money(null), '—')
    assert.equal(price('42150.1', 2), '42,150.10')
    assert.equal(price('0.00123456', 6), '0.001235')
    assert.equal(price('42150.1', undefined), '42150.1', 'unknown tick: as the API wrote it')
    assert.equal(num('7', 0), '7')
  })

  it("reads a symbol's tick decimals from exchange info", () => {
    const info = {
      symbols: [
        { symbol: 'BTCUSDT', filters: [{ filterType: 'LOT_SIZE' }, { filterType: 'PRICE_FILTER', tickSize: '0.10' }] },
        { symbol: 'PEPEUSDT', filters: [{ filterType: 'PRICE_FILTER', tickSize: '0.0000001' }] },
        { symbol: 'BIGUSDT', filters: [{ filterType: 'PRICE_FILTER', tickSize: '1' }] },
        { symbol: 'ODDUSDT', filters: [{ filterType: 'PRICE_FILTER', tickSize: '0' }] },
      ],
    }
    assert.equal(tickDecimals(info, 'BTCUSDT'), 1)
    assert.equal(tickDecimals(info, 'PEPEUSDT'), 7)
    assert.equal(tickDecimals(info, 'BIGUSDT'), 0)
    assert.equal(tickDecimals(info, 'ODDUSDT'), undefined)
    assert.equal(tickDecimals(info, 'NOSUCH'), undefined)
  })
})
