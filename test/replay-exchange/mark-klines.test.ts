import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import zlib from 'node:zlib'
import fs from 'node:fs'
import path from 'node:path'
import { readZipEntry } from '../../src/binance-formats/zip.js'
import { FUTURES_DIR, HOUR, startTestExchange, type TestExchange } from './support.js'

type Kline = [number, string, string, string, string, string, number, string, number, string, string, string]

/** The recorded mark-price file's rows by open time (data/binance-um-futures/BTCUSDT-markPrice-1h-…). */
function recordedMarks(): Map<number, number[]> {
  const name = fs.readdirSync(FUTURES_DIR).find((file) => file.startsWith('BTCUSDT-markPrice-1h-'))!
  const lines = zlib.gunzipSync(fs.readFileSync(path.join(FUTURES_DIR, name))).toString('latin1').trim().split('\n').slice(1)
  return new Map(lines.map((line) => line.split(',').map(Number)).map(([t, ...ohlc]) => [t!, ohlc]))
}

describe('replay exchange: recorded mark-price klines', () => {
  let t: TestExchange
  const marks = recordedMarks()
  before(async () => (t = await startTestExchange()))
  after(() => t.close())

  it('serves the recorded marks for closed hours, aggregated to 4h, and derives them where none are recorded', async () => {
    const start = Date.UTC(2024, 0, 1)
    const hourly = (await t.get<Kline[]>(`/fapi/v1/markPriceKlines?symbol=BTCUSDT&interval=1h&startTime=${start}&limit=24`)).body
    assert.equal(hourly.length, 24)
    for (const row of hourly) {
      const recorded = marks.get(row[0])!
      assert.deepEqual(row.slice(1, 5).map(Number), recorded, `hour ${new Date(row[0]).toISOString()}`)
      assert.equal(row[6], row[0] + HOUR - 1)
      assert.equal(row[8], 3600)
    }
    const four = (await t.get<Kline[]>(`/fapi/v1/markPriceKlines?symbol=BTCUSDT&interval=4h&startTime=${start}&limit=1`)).body[0]!
    const parts = [0, 1, 2, 3].map((k) => marks.get(start + k * HOUR)!)
    assert.deepEqual(four.slice(1, 5).map(Number), [parts[0]![0], Math.max(...parts.map((p) => p[1]!)), Math.min(...parts.map((p) => p[2]!)), parts[3]![3]])
    // Trade klines are untouched: the recorded mark differs from the last price.
    const trade = (await t.get<Kline[]>(`/fapi/v1/klines?symbol=BTCUSDT&interval=1h&startTime=${start}&limit=1`)).body[0]!
    assert.notEqual(trade[1], hourly[0]![1])
    // ETHUSDT has no recorded marks: still derived around its trade path.
    const eth = (await t.get<Kline[]>(`/fapi/v1/markPriceKlines?symbol=ETHUSDT&interval=1h&startTime=${start}&limit=2`)).body
    const ethTrade = (await t.get<Kline[]>(`/fapi/v1/klines?symbol=ETHUSDT&interval=1h&startTime=${start}&limit=2`)).body
    assert.equal(eth.length, 2)
    for (let i = 0; i < 2; i++) assert.ok(Math.abs(Number(eth[i]![4]) / Number(ethTrade[i]![4]) - 1) < 0.001)
  })

  it('serves mark-price klines in the archive layout, equal to REST, with their checksum', async () => {
    const file = '/data/futures/um/monthly/markPriceKlines/BTCUSDT/1h/BTCUSDT-1h-2024-01.zip'
    const response = await fetch(`${t.exchange.url}${file}`)
    assert.equal(response.status, 200)
    const zip = Buffer.from(await response.arrayBuffer())
    const entry = await readZipEntry(zip)
    assert.equal(entry.name, 'BTCUSDT-1h-2024-01.csv')
    const lines = entry.data.toString('latin1').trim().split('\n')
    assert.match(lines[0]!, /^open_time,open,high,low,close/)
    assert.equal(lines.length - 1, 31 * 24)
    const start = Date.UTC(2024, 0, 1)
    const rest = (await t.get<Kline[]>(`/fapi/v1/markPriceKlines?symbol=BTCUSDT&interval=1h&startTime=${start}&limit=1000`)).body.filter((row) => row[0] < Date.UTC(2024, 1, 1))
    assert.deepEqual(lines.slice(1), rest.map((row) => row.join(',')))
    const checksum = await (await fetch(`${t.exchange.url}${file}.CHECKSUM`)).text()
    assert.match(checksum, /^[0-9a-f]{64} {2}BTCUSDT-1h-2024-01\.zip\n$/)
    // Kinds the archive does not have, and months still open, are 404s.
    assert.equal((await fetch(`${t.exchange.url}/data/futures/um/monthly/nonsense/BTCUSDT/1h/BTCUSDT-1h-2024-01.zip`)).status, 404)
    assert.equal((await fetch(`${t.exchange.url}/data/futures/um/monthly/markPriceKlines/BTCUSDT/1h/BTCUSDT-1h-2026-01.zip`)).status, 404)
  })
})

describe('replay exchange: the recorded 5m klines of data/', () => {
  let t: TestExchange
  before(async () => (t = await startTestExchange()))
  after(() => t.close())

  it('serves BTCUSDT 5m bars over 2023..2026 (the exits of 1h backtests resolve on them), 12 to the hour', async () => {
    const start = Date.UTC(2024, 6, 1)
    const five = (await t.get<Kline[]>(`/fapi/v1/klines?symbol=BTCUSDT&interval=5m&startTime=${start}&limit=12`)).body
    const hour = (await t.get<Kline[]>(`/fapi/v1/klines?symbol=BTCUSDT&interval=1h&startTime=${start}&limit=1`)).body[0]!
    assert.deepEqual(five.map((row) => row[0]), Array.from({ length: 12 }, (_, k) => start + k * 300_000))
    assert.equal(five[0]![1], hour[1])
    assert.equal(five[11]![4], hour[4])
    assert.equal(Math.max(...five.map((row) => Number(row[2]))), Number(hour[2]))
    assert.equal(Math.min(...five.map((row) => Number(row[3]))), Number(hour[3]))
    assert.equal((await t.get<Kline[]>(`/fapi/v1/klines?symbol=BTCUSDT&interval=5m&startTime=${Date.UTC(2022, 6, 1)}&endTime=${Date.UTC(2022, 6, 2)}`)).body.length, 0)
  })
})
