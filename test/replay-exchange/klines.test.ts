import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { aggregate, type Bar, DAY, HOUR, type Kline, MINUTE, readBars, SNAPSHOT_TIME, startTestExchange, type TestExchange } from './support.js'

describe('replay exchange: /fapi/v1/klines', () => {
  let t: TestExchange
  let btcHours: Bar[]
  let btcMinutes: Bar[]
  before(async () => {
    t = await startTestExchange()
    btcHours = readBars('BTCUSDT-1h-20190908-20260517.csv.gz')
    btcMinutes = readBars('BTCUSDT-1m-20250504-20250624.csv.gz')
  })
  after(() => t.close())

  const klines = async (query: string) => {
    const res = await t.get<Kline[]>(`/fapi/v1/klines?${query}`)
    assert.equal(res.status, 200, JSON.stringify(res.body))
    return res.body
  }

  it('serves a recorded BTCUSDT 1h bar exactly, in Binance row format', async () => {
    const time = Date.UTC(2024, 2, 14, 0) // the week of the 73,881.4 high
    const bar = btcHours.find((b) => b.time === time)!
    const [row] = await klines(`symbol=BTCUSDT&interval=1h&startTime=${time}&limit=1`)
    assert.ok(row)
    assert.equal(row.length, 12)
    assert.equal(row[0], time)
    assert.deepEqual(row.slice(1, 6).map(Number), [bar.open, bar.high, bar.low, bar.close, bar.volume])
    assert.match(row[1], /^\d+\.\d{2}$/) // BTCUSDT pricePrecision 2
    assert.match(row[5], /^\d+\.\d{3}$/) // quantityPrecision 3
    assert.equal(row[6], time + HOUR - 1)
    assert.equal(typeof row[8], 'number')
    assert.ok(row[8] > 0)
    assert.ok(Number(row[9]) > 0 && Number(row[9]) < bar.volume) // taker buy volume
    assert.equal(row[11], '0')
  })

  it('aggregates 4h from the recorded 1h bars', async () => {
    const start = Date.UTC(2022, 10, 9, 0) // FTX crash day
    const rows = await klines(`symbol=BTCUSDT&interval=4h&startTime=${start}&limit=6`)
    assert.equal(rows.length, 6)
    rows.forEach((row, k) => {
      const open = start + k * 4 * HOUR
      const hours = btcHours.filter((b) => b.time >= open && b.time < open + 4 * HOUR)
      assert.equal(hours.length, 4)
      const expected = aggregate(hours)
      assert.equal(row[0], open)
      assert.deepEqual(
        row.slice(1, 5).map(Number),
        [expected.open, expected.high, expected.low, expected.close],
      )
      assert.ok(Math.abs(Number(row[5]) - expected.volume) < 0.0015)
    })
    assert.equal(Math.min(...rows.map((r) => Number(r[3]))), 15462.6) // the known low of 2022-11-09
  })

  it('aggregates 15m from recorded minutes and 1w on Mondays', async () => {
    const start = Date.UTC(2025, 5, 10, 12, 0)
    const [quarter] = await klines(`symbol=BTCUSDT&interval=15m&startTime=${start}&limit=1`)
    const minutes = btcMinutes.filter((b) => b.time >= start && b.time < start + 15 * MINUTE)
    const expected = aggregate(minutes)
    assert.deepEqual(quarter!.slice(1, 5).map(Number), [expected.open, expected.high, expected.low, expected.close])

    const weeks = await klines('symbol=BTCUSDT&interval=1w&limit=3')
    for (const week of weeks) assert.equal(new Date(week[0]).getUTCDay(), 1)
    const full = weeks[0]!
    const hours = btcHours.filter((b) => b.time >= full[0] && b.time < full[0] + 7 * DAY)
    assert.equal(hours.length, 168)
    assert.equal(Number(full[2]), aggregate(hours).high)
  })

  it('never returns a bar after replay now; the last is the open bar closing at the latest trade', async () => {
    const rows = await klines('symbol=BTCUSDT&interval=1m&limit=5')
    assert.equal(rows.length, 5)
    const now = (await t.get<{ serverTime: number }>('/fapi/v1/time')).body.serverTime
    const last = rows[4]!
    assert.ok(last[0] <= now && now < last[6] + 1, 'the last row is the open minute')
    for (let i = 1; i < rows.length; i++) assert.equal(rows[i]![0] - rows[i - 1]![0], MINUTE)
    const [trade] = (await t.get<{ price: string }[]>('/fapi/v1/trades?symbol=BTCUSDT&limit=1')).body
    assert.equal(last[4], trade!.price)
    // The recorded minute that is still open is not served in full: its close would be the future.
    const recorded = btcMinutes.find((b) => b.time === last[0])!
    assert.ok(Number(last[5]) < recorded.volume)
    const future = await klines(`symbol=BTCUSDT&interval=1h&startTime=${now + HOUR}`)
    assert.deepEqual(future, [])
  })

  it('keeps Binance semantics for limit, startTime and endTime', async () => {
    assert.equal((await klines('symbol=BTCUSDT&interval=1h')).length, 500)
    assert.equal((await klines('symbol=BTCUSDT&interval=1h&limit=1500')).length, 1500)
    const end = Date.UTC(2021, 0, 1)
    const before = await klines(`symbol=BTCUSDT&interval=1d&endTime=${end}&limit=3`)
    assert.deepEqual(
      before.map((r) => r[0]),
      [end - 2 * DAY, end - DAY, end],
    )
    const both = await klines(`symbol=BTCUSDT&interval=1h&startTime=${end}&endTime=${end + 5 * HOUR}&limit=100`)
    assert.equal(both.length, 6)
    // A startTime inside a bar starts at the next bar, as on Binance.
    const [next] = await klines(`symbol=BTCUSDT&interval=1h&startTime=${end + 1}&limit=1`)
    assert.equal(next![0], end + HOUR)
  })

  it('serves unrecorded symbols and intervals only where data exists', async () => {
    // XRPUSDT has 1h recordings only: 15m cannot be aggregated exactly, so there are none.
    assert.deepEqual(await klines('symbol=XRPUSDT&interval=15m'), [])
    assert.equal((await klines('symbol=XRPUSDT&interval=2h&limit=3')).length, 3)
    // SOLUSDT is recorded daily.
    const sol = await klines(`symbol=SOLUSDT&interval=3d&limit=2&endTime=${SNAPSHOT_TIME - 10 * DAY}`)
    assert.equal(sol.length, 2)
    // A listed symbol with no data at replay time (onboarded later) answers an empty list.
    assert.deepEqual(await klines('symbol=PENGUUSDC&interval=1h'), [])
  })

  it('answers parameter errors with Binance codes', async () => {
    const cases: [string, number][] = [
      ['interval=1h', -1102],
      ['symbol=BTCUSDT', -1102],
      ['symbol=NOPEUSDT&interval=1h', -1121],
      ['symbol=BTCUSDT&interval=7m', -1120],
      ['symbol=BTCUSDT&interval=1h&limit=1501', -1130],
      ['symbol=BTCUSDT&interval=1h&limit=0', -1130],
      ['symbol=BTCUSDT&interval=1h&limit=abc', -1100],
      ['symbol=BTCUSDT&interval=1h&startTime=2&endTime=1', -1023],
    ]
    for (const [query, code] of cases) {
      const res = await t.get<{ code: number; msg: string }>(`/fapi/v1/klines?${query}`)
      assert.equal(res.status, 400, query)
      assert.equal(res.body.code, code, query)
      assert.equal(typeof res.body.msg, 'string')
    }
  })

  it('charges Binance weights by limit in X-MBX-USED-WEIGHT-1M', async () => {
    t.clock.advance(60_000) // a fresh weight window
    const used = async (query: string) => Number((await t.get(`/fapi/v1/klines?symbol=BTCUSDT&interval=1d&${query}`)).headers.get('x-mbx-used-weight-1m'))
    const a = await used('limit=99')
    assert.equal(await used('limit=100'), a + 2)
    assert.equal(await used('limit=500'), a + 7)
    assert.equal(await used('limit=1000'), a + 12)
    assert.equal(await used('limit=1001'), a + 22)
    assert.equal(await used(''), a + 27) // default limit 500
  })
})
