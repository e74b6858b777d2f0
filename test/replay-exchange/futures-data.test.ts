import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { HOUR, MINUTE, readCsv, startTestExchange, type TestExchange } from './support.js'

interface RatioRow {
  symbol: string
  longShortRatio: string
  longAccount: string
  shortAccount: string
  timestamp: number
}

/** A replay time after the recorded ratio and open-interest samples (2026-03-05 22:00 to 03-26 17:00). */
const AFTER_SAMPLES = Date.UTC(2026, 2, 27, 0, 0)

describe('replay exchange: /futures/data statistics', () => {
  let t: TestExchange
  before(async () => {
    t = await startTestExchange({ replayStart: AFTER_SAMPLES })
  })
  after(() => t.close())

  it('serves the recorded global long/short account ratio in its window', async () => {
    const recorded = readCsv('BTCUSDT-globalLongShortAccountRatio-1h-20260305-20260326.csv')
    const start = Number(recorded[100]!.timestamp)
    const res = await t.get<RatioRow[]>(`/futures/data/globalLongShortAccountRatio?symbol=BTCUSDT&period=1h&startTime=${start}&limit=5`)
    assert.equal(res.status, 200)
    assert.deepEqual(
      res.body.map((r) => [r.symbol, r.timestamp, Number(r.longShortRatio), Number(r.longAccount), Number(r.shortAccount)]),
      recorded.slice(100, 105).map((r) => ['BTCUSDT', Number(r.timestamp), Number(r.longShortRatio), Number(r.longAccount), Number(r.shortAccount)]),
    )
    assert.match(res.body[0]!.longAccount, /^0\.\d{4}$/)
    // 4h rows are the recorded hourly snapshots at 4-hour timestamps.
    const four = (await t.get<RatioRow[]>(`/futures/data/globalLongShortAccountRatio?symbol=BTCUSDT&period=4h&startTime=${start}&limit=3`)).body
    for (const row of four) {
      assert.equal(row.timestamp % (4 * HOUR), 0)
      const match = recorded.find((r) => Number(r.timestamp) === row.timestamp)!
      assert.equal(Number(row.longShortRatio), Number(match.longShortRatio))
    }
  })

  it('serves the recorded open interest in its window', async () => {
    const recorded = readCsv('BTCUSDT-openInterestHist-1h-20260305-20260326.csv')
    const start = Number(recorded[0]!.timestamp)
    const rows = (await t.get<{ sumOpenInterest: string; sumOpenInterestValue: string; timestamp: number }[]>(`/futures/data/openInterestHist?symbol=BTCUSDT&period=1h&startTime=${start}&limit=3`)).body
    assert.deepEqual(
      rows.map((r) => [r.timestamp, Number(r.sumOpenInterest), Math.round(Number(r.sumOpenInterestValue))]),
      recorded.slice(0, 3).map((r) => [Number(r.timestamp), Number(r.sumOpenInterest), Math.round(Number(r.sumOpenInterestValue))]),
    )
  })

  it('derives the latest rows up to replay now, 30 by default, stamped on the period grid', async () => {
    for (const path of ['topLongShortPositionRatio', 'topLongShortAccountRatio', 'globalLongShortAccountRatio']) {
      const rows = (await t.get<RatioRow[]>(`/futures/data/${path}?symbol=ETHUSDT&period=5m`)).body
      assert.equal(rows.length, 30, path)
      const last = rows[29]!
      assert.equal(last.timestamp, AFTER_SAMPLES)
      for (const row of rows) {
        assert.equal(row.timestamp % (5 * MINUTE), 0)
        const long = Number(row.longAccount)
        assert.ok(long > 0.2 && long < 0.85, `${path} ${row.longAccount}`)
        assert.ok(Math.abs(long + Number(row.shortAccount) - 1) < 1e-9)
        assert.ok(Math.abs(Number(row.longShortRatio) - long / Number(row.shortAccount)) < 0.0001)
      }
    }
    assert.equal((await t.get<unknown[]>('/futures/data/topLongShortAccountRatio?symbol=ETHUSDT&period=1d&limit=500')).body.length, 500)
  })

  it('derives taker volumes from the klines, completed periods only', async () => {
    const rows = (await t.get<{ buySellRatio: string; buyVol: string; sellVol: string; timestamp: number }[]>('/futures/data/takerlongshortRatio?symbol=BTCUSDT&period=1h&limit=24')).body
    assert.equal(rows.length, 24)
    assert.equal(rows[23]!.timestamp, AFTER_SAMPLES - HOUR)
    const klines = (await t.get<[number, string, string, string, string, string][]>(`/fapi/v1/klines?symbol=BTCUSDT&interval=1h&startTime=${rows[0]!.timestamp}&limit=24`)).body
    rows.forEach((row, i) => {
      const volume = Number(row.buyVol) + Number(row.sellVol)
      assert.ok(Math.abs(volume - Number(klines[i]![5])) < 0.01, `${volume} vs ${klines[i]![5]}`)
      assert.ok(Math.abs(Number(row.buySellRatio) - Number(row.buyVol) / Number(row.sellVol)) < 0.0001)
    })
  })

  it('is reproducible across processes', async () => {
    const other = await startTestExchange({ replayStart: AFTER_SAMPLES })
    try {
      const path = '/futures/data/openInterestHist?symbol=SOLUSDT&period=15m&limit=50'
      const rows = (await t.get<unknown[]>(path)).body
      assert.equal(rows.length, 50)
      assert.deepEqual((await other.get(path)).body, rows)
    } finally {
      await other.close()
    }
  })

  it('answers parameter errors with Binance codes', async () => {
    const cases: [string, number][] = [
      ['globalLongShortAccountRatio?period=5m', -1102],
      ['globalLongShortAccountRatio?symbol=BTCUSDT', -1102],
      ['globalLongShortAccountRatio?symbol=BTCUSDT&period=7m', -1130],
      ['topLongShortPositionRatio?symbol=BTCUSDT&period=5m&limit=501', -1130],
      ['openInterestHist?symbol=NOPE&period=5m', -1121],
      ['takerlongshortRatio?symbol=BTCUSDT&period=5m&startTime=x', -1100],
    ]
    for (const [query, code] of cases) {
      const res = await t.get<{ code: number }>(`/futures/data/${query}`)
      assert.equal(res.status, 400, query)
      assert.equal(res.body.code, code, query)
    }
  })
})
