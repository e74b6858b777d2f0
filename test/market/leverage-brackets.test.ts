import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { describe, it } from 'node:test'
import { BINANCE_BTCUSDT_BRACKETS, cumProblem, parseLeverageBrackets } from '../../src/binance-formats/leverage-brackets.js'
import { liquidationPrice } from '../../src/binance-formats/margin.js'
import { bracketsFor, marginTableOf, maxLeverageAt, SNAPSHOT_AS_OF, SNAPSHOT_FILE } from '../../src/market/leverage-brackets.js'

const DATA = path.resolve(import.meta.dirname, '../../data')

describe('leverage brackets: the dated snapshot in data/', () => {
  const raw = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(DATA, SNAPSHOT_FILE))).toString('utf8')) as {
    symbol: string
    brackets: { bracket: number; notionalFloor: number; notionalCap: number; maintMarginRatio: number; cum: number; initialLeverage: number }[]
  }[]

  it('is the shared snapshot, byte for byte once unzipped, and SOURCES.md records where it came from', () => {
    const shared = path.resolve(import.meta.dirname, '../../../shared/data/binance-um-futures/snapshots/leverageBracket-20241024.json')
    if (fs.existsSync(shared)) assert.equal(zlib.gunzipSync(fs.readFileSync(path.join(DATA, SNAPSHOT_FILE))).toString('utf8'), fs.readFileSync(shared, 'utf8'))
    const sources = fs.readFileSync(path.join(DATA, 'SOURCES.md'), 'utf8')
    assert.match(sources, /### snapshots\/leverageBracket-20241024\.json/)
    assert.match(sources, /3d9514d2660c42dfdbde517f7b421d1a5cf4f196/)
  })

  it('every tier of every symbol keeps the margin continuous: cum_i = cum_(i-1) + floor_i × (mmr_i − mmr_(i-1))', () => {
    let tiers = 0
    for (const row of raw) {
      const b = [...row.brackets].sort((x, y) => x.bracket - y.bracket)
      assert.equal(b[0]!.notionalFloor, 0, `${row.symbol} starts at 0`)
      assert.equal(b[0]!.cum, 0, `${row.symbol} tier 1 has cum 0`)
      for (let i = 1; i < b.length; i++) {
        const expected = b[i - 1]!.cum + b[i]!.notionalFloor * (b[i]!.maintMarginRatio - b[i - 1]!.maintMarginRatio)
        assert.ok(Math.abs(b[i]!.cum - expected) < 1e-6, `${row.symbol} tier ${b[i]!.bracket}: cum ${b[i]!.cum} ≠ ${expected}`)
        assert.equal(b[i]!.notionalFloor, b[i - 1]!.notionalCap, `${row.symbol} tier ${b[i]!.bracket} starts where the previous ends`)
        assert.ok(b[i]!.maintMarginRatio > b[i - 1]!.maintMarginRatio && b[i]!.initialLeverage <= b[i - 1]!.initialLeverage)
        tiers++
      }
    }
    assert.equal(raw.length, 345)
    assert.equal(tiers + raw.length, 2773)
    // The engine's fallback sample obeys the same rule.
    assert.equal(cumProblem('BTCUSDT sample', BINANCE_BTCUSDT_BRACKETS), undefined)
  })

  it('bracketsFor answers each symbol its own tiers, and the BTCUSDT sample only for a symbol the snapshot lacks', () => {
    const btc = bracketsFor('BTCUSDT')
    assert.equal(btc.source, 'snapshot')
    assert.equal(btc.asOf, SNAPSHOT_AS_OF)
    assert.equal(btc.brackets.length, 12)
    assert.deepEqual(btc.brackets[1], { notionalFloor: 50_000, notionalCap: 600_000, maintMarginRatio: 0.005, cum: 50, initialLeverage: 100 })
    const xrp = bracketsFor('XRPUSDT')
    assert.deepEqual(xrp.brackets[0], { notionalFloor: 0, notionalCap: 10_000, maintMarginRatio: 0.005, cum: 0, initialLeverage: 75 })
    assert.equal(maxLeverageAt(xrp.brackets, 5_000), 75)
    assert.equal(maxLeverageAt(xrp.brackets, 100_000), 40)
    const unknown = bracketsFor('NOSUCHUSDT')
    assert.equal(unknown.source, 'fallback')
    assert.equal(unknown.brackets, BINANCE_BTCUSDT_BRACKETS)
    assert.deepEqual(marginTableOf(['BTCUSDT', 'ETHUSDT']), { source: 'snapshot', as_of: '2024-10-24', fallback_symbols: [] })
    assert.deepEqual(marginTableOf(['BTCUSDT', 'NOSUCHUSDT']), { source: 'snapshot', as_of: '2024-10-24', fallback_symbols: ['NOSUCHUSDT'] })
    assert.deepEqual(marginTableOf(['NOSUCHUSDT']), { source: 'fallback', as_of: 'BTCUSDT sample', fallback_symbols: ['NOSUCHUSDT'] })
  })

  it("a symbol's real tiers move a liquidation price: BTCUSDT at 400,000 notional is in the snapshot's 0.5 % tier, the sample's 1 %", () => {
    // 4 BTC long at 100,000 with 20,000 of isolated margin (20x).
    const sample = liquidationPrice(1, 4, 100_000, 20_000, BINANCE_BTCUSDT_BRACKETS)
    const real = liquidationPrice(1, 4, 100_000, 20_000, bracketsFor('BTCUSDT').brackets)
    // LP = (WB + cum − Q·EP) / (Q·MMR − Q): sample tier 3 (1 %, cum 1,300), snapshot tier 2 (0.5 %, cum 50).
    assert.ok(Math.abs(sample - (20_000 + 1_300 - 400_000) / (4 * 0.01 - 4)) < 1e-6)
    assert.ok(Math.abs(real - (20_000 + 50 - 400_000) / (4 * 0.005 - 4)) < 1e-6)
    assert.ok(real < sample, `the real tier liquidates later: ${real} < ${sample}`)
  })

  it('parses the exchange answer and refuses a malformed or inconsistent one, naming the row', () => {
    const answer = [{ symbol: 'ABCUSDT', notionalCoef: 1, brackets: [
      { bracket: 2, initialLeverage: 20, notionalCap: 100_000, notionalFloor: 10_000, maintMarginRatio: 0.02, cum: 100 },
      { bracket: 1, initialLeverage: 50, notionalCap: 10_000, notionalFloor: 0, maintMarginRatio: 0.01, cum: 0 },
    ] }]
    const tables = parseLeverageBrackets(answer, 'test')
    assert.deepEqual(tables.get('ABCUSDT')!.map((b) => b.notionalFloor), [0, 10_000])
    // One object (the docs' form for one symbol) parses the same.
    assert.deepEqual(parseLeverageBrackets(answer[0], 'test').get('ABCUSDT'), tables.get('ABCUSDT'))
    const wrongCum = structuredClone(answer)
    wrongCum[0]!.brackets[0]!.cum = 99
    assert.throws(() => parseLeverageBrackets(wrongCum, 'test'), /ABCUSDT tier 2: cum 99, expected 100/)
    assert.throws(() => parseLeverageBrackets([{ symbol: 'X', brackets: [{ notionalCap: 'lots' }] }], 'test'), /X has a malformed tier/)
    assert.throws(() => parseLeverageBrackets([{ brackets: [] }], 'test'), /without symbol/)
  })
})
