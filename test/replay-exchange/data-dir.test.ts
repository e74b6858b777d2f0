import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { after, describe, it } from 'node:test'
import { startReplayExchange } from '../../src/replay-exchange/index.js'
import { tempDir } from '../support/database.js'
import { FUTURES_DIR, ManualClock } from './support.js'

const HOUR = 3_600_000
const T0 = Date.UTC(2024, 0, 1)

/** A data folder in the shared layout with plain (not gzipped) files: one symbol, 48 hours. */
function fixture(corrupt = false): string {
  const dir = tempDir('replay-data')
  const futures = path.join(dir, 'binance-um-futures')
  fs.mkdirSync(path.join(futures, 'snapshots'), { recursive: true })
  const info = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(FUTURES_DIR, 'snapshots/exchangeInfo-20251224.json.gz'))).toString()) as {
    symbols: { symbol: string }[]
  }
  info.symbols = info.symbols.filter((s) => ['BTCUSDT', 'ETHUSDT'].includes(s.symbol))
  fs.writeFileSync(path.join(futures, 'snapshots/exchangeInfo-20251224.json'), JSON.stringify(info))
  const lines = ['open_time,open,high,low,close,volume']
  for (let h = 0; h < 48; h++) lines.push(`${T0 + h * HOUR},${100 + h},${102 + h},${99 + h},${101 + h},${10 + h}`)
  if (corrupt) lines[5] = `${T0 + 4 * HOUR},104,oops,103,105,14`
  fs.writeFileSync(path.join(futures, 'BTCUSDT-1h-20240101-20240102.csv'), `${lines.join('\n')}\n`)
  return dir
}

describe('replay exchange: data folders', () => {
  const dirs: string[] = []
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('loads any folder in the shared layout, plain or gzipped, and derives the rest', async () => {
    const dir = fixture()
    dirs.push(dir)
    const clock = new ManualClock()
    const exchange = await startReplayExchange({ dataDir: dir, now: clock.now })
    try {
      const get = async (p: string) => (await fetch(`${exchange.url}${p}`)).json() as Promise<unknown>
      // Without a premium snapshot the default start lies inside the recording, before its end.
      const { serverTime } = (await get('/fapi/v1/time')) as { serverTime: number }
      assert.ok(serverTime > T0 && serverTime < T0 + 48 * HOUR, String(serverTime))
      const rows = (await get(`/fapi/v1/klines?symbol=BTCUSDT&interval=4h&startTime=${T0}&limit=2`)) as unknown[][]
      assert.deepEqual(rows.map((r) => r.slice(0, 6)), [
        [T0, '100.00', '105.00', '99.00', '104.00', '46.000'],
        [T0 + 4 * HOUR, '104.00', '109.00', '103.00', '108.00', '62.000'],
      ])
      // ETHUSDT has no recording: it follows BTCUSDT's moves.
      const eth = (await get('/fapi/v1/ticker/24hr?symbol=ETHUSDT')) as { lastPrice: string }
      assert.ok(Number(eth.lastPrice) > 0)
    } finally {
      await exchange.close()
    }
  })

  it('fails fast on a corrupt recording, naming the file and line', async () => {
    const dir = fixture(true)
    dirs.push(dir)
    const exchange = await startReplayExchange({ dataDir: dir })
    try {
      const res = await fetch(`${exchange.url}/fapi/v1/klines?symbol=BTCUSDT&interval=1h`)
      assert.equal(res.status, 500)
    } finally {
      await exchange.close()
    }
    const { loadKlines } = await import('../../src/replay-exchange/market-data/recorded/recorded.js')
    assert.throws(() => loadKlines(path.join(dir, 'binance-um-futures/BTCUSDT-1h-20240101-20240102.csv'), '1h'), /BTCUSDT-1h-20240101-20240102\.csv:6: high is not a number/)
  })

  it('refuses a folder without the layout', async () => {
    const dir = tempDir('replay-empty')
    dirs.push(dir)
    await assert.rejects(startReplayExchange({ dataDir: dir }), /no binance-um-futures/)
  })
})
