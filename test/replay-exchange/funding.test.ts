import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { HOUR, readCsv, SNAPSHOT_TIME, startTestExchange, type TestExchange } from './support.js'

interface FundingRow {
  symbol: string
  fundingTime: number
  fundingRate: string
  markPrice: string
}
interface PremiumRow {
  symbol: string
  markPrice: string
  indexPrice: string
  lastFundingRate: string
  nextFundingTime: number
  time: number
}

describe('replay exchange: funding and premium index', () => {
  let t: TestExchange
  const recorded = readCsv('BTCUSDT-fundingRate-20190910-20260517.csv')
  before(async () => {
    t = await startTestExchange()
  })
  after(() => t.close())

  it('returns the recorded rows between startTime and endTime', async () => {
    const start = Date.UTC(2024, 0, 1)
    const end = Date.UTC(2024, 0, 5)
    const res = await t.get<FundingRow[]>(`/fapi/v1/fundingRate?symbol=BTCUSDT&startTime=${start}&endTime=${end}`)
    assert.equal(res.status, 200)
    const expected = recorded.filter((r) => Number(r.fundingTime) >= start && Number(r.fundingTime) <= end)
    assert.equal(expected.length, 12)
    assert.deepEqual(
      res.body.map((r) => [r.symbol, r.fundingTime, Number(r.fundingRate), Number(r.markPrice)]),
      expected.map((r) => ['BTCUSDT', Number(r.fundingTime), Number(r.fundingRate), Number(r.markPrice)]),
    )
    assert.match(res.body[0]!.fundingRate, /^-?\d\.\d{8}$/)
    // Before 2023-10-31 Binance sent an empty markPrice; the recording keeps it empty.
    const [old] = (await t.get<FundingRow[]>(`/fapi/v1/fundingRate?symbol=BTCUSDT&startTime=${Date.UTC(2020, 0, 1)}&limit=1`)).body
    assert.equal(old!.markPrice, '')
  })

  it('defaults to the latest 100 settled rows, limit up to 1000, never after replay now', async () => {
    const res = await t.get<FundingRow[]>('/fapi/v1/fundingRate?symbol=BTCUSDT')
    assert.equal(res.body.length, 100)
    const last = res.body[99]!
    assert.ok(last.fundingTime <= SNAPSHOT_TIME + 60_000)
    assert.ok(last.fundingTime > SNAPSHOT_TIME - 8 * HOUR)
    assert.equal((await t.get<FundingRow[]>('/fapi/v1/fundingRate?symbol=BTCUSDT&limit=1000')).body.length, 1000)
    assert.equal((await t.get<{ code: number }>('/fapi/v1/fundingRate?symbol=BTCUSDT&limit=1001')).body.code, -1130)
    assert.equal((await t.get<{ code: number }>('/fapi/v1/fundingRate?symbol=NOPE')).body.code, -1121)
  })

  it('lists all symbols without a symbol, ascending by time', async () => {
    const rows = (await t.get<FundingRow[]>('/fapi/v1/fundingRate?limit=1000')).body
    assert.equal(rows.length, 1000)
    assert.ok(new Set(rows.map((r) => r.symbol)).size > 100)
    for (let i = 1; i < rows.length; i++) assert.ok(rows[i]!.fundingTime >= rows[i - 1]!.fundingTime)
  })

  it('premiumIndex carries the recorded funding that settles next, at replay now', async () => {
    const res = await t.get<PremiumRow>('/fapi/v1/premiumIndex?symbol=BTCUSDT')
    assert.equal(res.status, 200)
    const p = res.body
    assert.equal(p.time, SNAPSHOT_TIME)
    assert.equal(p.nextFundingTime, Date.UTC(2025, 5, 17, 16))
    const settling = recorded.find((r) => Math.abs(Number(r.fundingTime) - p.nextFundingTime) < 60_000)!
    assert.equal(Number(p.lastFundingRate), Number(settling.fundingRate))
    // The mark is near the real snapshot's mark at the same instant (106599.9) and the last trade.
    assert.ok(Math.abs(Number(p.markPrice) / 106599.9 - 1) < 0.001, p.markPrice)
    assert.ok(Math.abs(Number(p.indexPrice) / Number(p.markPrice) - 1) < 0.005)

    // Once the clock passes nextFundingTime, history shows that rate.
    t.clock.advance(p.nextFundingTime - SNAPSHOT_TIME + 1000)
    const [settled] = (await t.get<FundingRow[]>('/fapi/v1/fundingRate?symbol=BTCUSDT&limit=1')).body
    assert.equal(Number(settled!.fundingTime), Number(settling.fundingTime))
    assert.equal(Number(settled!.fundingRate), Number(p.lastFundingRate))
    const moved = (await t.get<PremiumRow>('/fapi/v1/premiumIndex?symbol=BTCUSDT')).body
    assert.equal(moved.nextFundingTime, p.nextFundingTime + 8 * HOUR)
    t.clock.advance(-(p.nextFundingTime - SNAPSHOT_TIME + 1000))
  })

  it('premiumIndex without a symbol lists every symbol with market data, weight 10', async () => {
    t.clock.advance(60_000)
    const res = await t.get<PremiumRow[]>('/fapi/v1/premiumIndex')
    assert.equal(res.headers.get('x-mbx-used-weight-1m'), '10')
    assert.ok(res.body.length > 400)
    const symbols = res.body.map((r) => r.symbol)
    for (const s of ['BTCUSDT', 'ETHUSDT', 'XRPUSDT', 'SOLUSDT', 'BTCUSDC']) assert.ok(symbols.includes(s), s)
    assert.ok(!symbols.includes('PENGUUSDC'), 'listed after replay now')
    // Unrecorded symbols are anchored to their real mark price in the June 2025 snapshot.
    const sui = res.body.find((r) => r.symbol === 'SUIUSDT')!
    assert.ok(Math.abs(Number(sui.markPrice) / 2.9691 - 1) < 0.002, sui.markPrice)
  })

  it('derives funding for symbols without a recording: mostly the 0.01% interest rate, reproducibly', async () => {
    const query = `/fapi/v1/fundingRate?symbol=SOLUSDT&startTime=${Date.UTC(2024, 0, 1)}&limit=300`
    const rows = (await t.get<FundingRow[]>(query)).body
    assert.equal(rows.length, 300)
    rows.forEach((r, i) => i > 0 && assert.equal(r.fundingTime - rows[i - 1]!.fundingTime, 8 * HOUR))
    const base = rows.filter((r) => r.fundingRate === '0.00010000').length
    assert.ok(base > 100 && base < 300, `${base} of 300 at 0.0001`)
    const again = await startTestExchange()
    try {
      assert.deepEqual((await again.get<FundingRow[]>(query)).body, rows)
    } finally {
      await again.close()
    }
  })

  it("funds a symbol on its own interval: the snapshot's 4-hour DIAUSDT every 4 h at the 4-hour interest, 1-hour symbols hourly", async () => {
    const premium = (await t.get<PremiumRow[]>('/fapi/v1/premiumIndex')).body
    const dia = premium.find((row) => row.symbol === 'DIAUSDT')!
    // The snapshot (08:38) shows 12:00 next: a 4-hour grid.
    assert.equal(dia.nextFundingTime % (4 * HOUR), 0)
    assert.ok(dia.nextFundingTime - SNAPSHOT_TIME <= 4 * HOUR)
    const rows = (await t.get<FundingRow[]>(`/fapi/v1/fundingRate?symbol=DIAUSDT&startTime=${Date.UTC(2025, 0, 1)}&limit=100`)).body
    assert.equal(rows.length, 100)
    rows.forEach((r, i) => i > 0 && assert.equal(r.fundingTime - rows[i - 1]!.fundingTime, 4 * HOUR))
    const interest = rows.filter((r) => r.fundingRate === '0.00005000').length
    assert.ok(interest > 30, `${interest} of 100 at the 4-hour interest 0.00005`)
    const info = (await t.get<{ symbol: string; fundingIntervalHours: number }[]>('/fapi/v1/fundingInfo')).body
    const hours = new Map(info.map((row) => [row.symbol, row.fundingIntervalHours]))
    assert.equal(hours.get('DIAUSDT'), 4)
    assert.equal(hours.get('BTCUSDT'), 8)
    const hourly = premium.filter((row) => row.nextFundingTime - SNAPSHOT_TIME < HOUR && row.nextFundingTime > SNAPSHOT_TIME).map((row) => row.symbol)
    assert.ok(hourly.length > 0)
    for (const symbol of hourly) assert.equal(hours.get(symbol), 1, symbol)
    const counts = [...hours.values()].reduce((all, h) => all.set(h, (all.get(h) ?? 0) + 1), new Map<number, number>())
    assert.ok((counts.get(4) ?? 0) > 250 && (counts.get(8) ?? 0) > 150, JSON.stringify([...counts]))
  })
})
