import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { mapStatus } from '../../src/market/exchange-info.js'
import { fixed } from '../../src/market/numbers.js'
import { parseTimeRange } from '../../src/market/smart-money-list.js'
import { canonicalQuery } from '../../src/market/upstream-client.js'
import { ratioTtlMs } from '../../src/market/upstream-requests.js'
import { boardSeriesTtlMs, whaleScore } from '../../src/market/whale-board.js'

describe('market formulas', () => {
  it('maps the exchange’s contract statuses onto trading, halt, post_only and break', () => {
    assert.equal(mapStatus('TRADING'), 'trading')
    for (const status of ['PENDING_TRADING', 'BREAK']) assert.equal(mapStatus(status), 'break', status)
    for (const status of ['HALT', 'SETTLING', 'DELIVERING', 'PRE_SETTLE', 'CLOSE']) assert.equal(mapStatus(status), 'halt', status)
    assert.equal(mapStatus('AUCTION_MATCH'), 'post_only')
    assert.equal(mapStatus('SOMETHING_NEW'), 'halt', 'an unknown status is not tradable')
  })

  it('stretches the whale board’s series TTL with its universe so refreshing it stays within 450 data requests per 5 min', () => {
    assert.equal(boardSeriesTtlMs(10), 30_000)
    assert.equal(boardSeriesTtlMs(45), 30_000)
    assert.equal(boardSeriesTtlMs(75), 50_000)
    assert.equal(boardSeriesTtlMs(150), 100_000)
    assert.equal(boardSeriesTtlMs(5000), 300_000)
    for (const symbols of [45, 100, 200, 450]) assert.ok((symbols * 300_000) / boardSeriesTtlMs(symbols) <= 450, `${symbols} symbols`)
  })

  it('scores whales symmetrically in the ratio and by the log of the volume', () => {
    assert.equal(whaleScore(1, 1e9), 0)
    assert.equal(whaleScore(2, 1e9), whaleScore(0.5, 1e9))
    assert.equal(whaleScore(2, 1e9), Math.round(Math.log(2) * 9 * 10_000) / 10_000)
    assert.ok(whaleScore(1.5, 1e10) > whaleScore(1.5, 1e8))
  })

  it('writes decimals with fixed places, never as -0, and null when not finite', () => {
    assert.equal(fixed(0.12345, 4), '0.1235')
    assert.equal(fixed(-0.00001, 4), '0.0000')
    assert.equal(fixed(-1.5, 2), '-1.50')
    assert.equal(fixed(Number.POSITIVE_INFINITY, 2), null)
    assert.equal(fixed(undefined, 2), null)
  })

  it('keeps ratio series fresh for a tenth of their period, between 30 s and 5 min', () => {
    assert.equal(ratioTtlMs('5m'), 30_000)
    assert.equal(ratioTtlMs('30m'), 180_000)
    assert.equal(ratioTtlMs('1h'), 300_000)
    assert.equal(ratioTtlMs('1d'), 300_000)
  })

  it('reads timeRange with 24h as default and refuses anything outside the set', () => {
    assert.equal(parseTimeRange(undefined), '24h')
    assert.equal(parseTimeRange('7d'), '7d')
    assert.throws(() => parseTimeRange('2h'), { code: 'INVALID_PARAMETER', status: 400 })
  })

  it('builds query strings in the given order, without undefined values', () => {
    assert.equal(canonicalQuery({ symbol: 'BTCUSDT', startTime: undefined, limit: 5 }), 'symbol=BTCUSDT&limit=5')
    assert.equal(canonicalQuery({}), '')
  })
})
