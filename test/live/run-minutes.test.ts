import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { UpstreamHistory } from '../../src/backtests/upstream-history.js'
import { loadConfig } from '../../src/config.js'
import { RunMinutes } from '../../src/live/runner/run-minutes.js'
import { SharedHistory } from '../../src/live/runner/shared-history.js'
import { KlineStreams } from '../../src/live/stream/kline-streams.js'
import { markPriceKlines } from '../../src/market/mark-price-klines.js'
import { createMarketData, type MarketData } from '../../src/market/market-data.js'
import { type ReplayExchange, startReplay } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { poll } from '../support/poll.js'

// 15 replay minutes a wall second, inside the recorded BTCUSDT minutes.
const SPEED = 900
const MINUTE = 60_000
const QUARTER = 15 * MINUTE

describe("a dry run's minutes for its protective exits", () => {
  let replay: ReplayExchange
  let market: MarketData
  let streams: KlineStreams
  let history: SharedHistory
  const replayNow = async () => Number((JSON.parse((await market.client.get({ host: 'api', path: '/fapi/v1/time', query: '', weight: 1 }, performance.now() + 5_000)).body) as { serverTime: number }).serverTime)
  const deps = () => ({ streams, history, markKlines: (...query: Parameters<SharedHistory['markKlines']>) => history.markKlines(...query) })

  before(async () => {
    replay = await startReplay({ speed: SPEED, replayStart: Date.UTC(2025, 5, 17, 6) })
    market = createMarketData(loadConfig({ UPSTREAM_URL: replay.url, LOG_LEVEL: 'silent', DATA_DIR: tempDir('minutes') }), Date.now)
    streams = new KlineStreams(replay.wsUrl)
    history = new SharedHistory(new UpstreamHistory(market), undefined, undefined, (...query) => markPriceKlines(market, ...query))
  })
  after(async () => {
    streams.close()
    await market.close()
    await replay.close()
  })

  it('last price: the 1m klines of each closed bar, from the stream or (for a bar it missed) REST, exactly the klines REST serves', async () => {
    const minutes = new RunMinutes(deps(), 'BTCUSDT', QUARTER, 'last')
    try {
      // A bar that closed before the subscription: nothing of it came by the stream.
      const earlier = Math.floor((await replayNow()) / QUARTER) * QUARTER - 2 * QUARTER
      const rest = await new UpstreamHistory(market).klines('BTCUSDT', '1m', earlier, earlier + QUARTER - 1, 15)
      assert.equal(rest.length, 15)
      assert.deepEqual(await minutes.of(earlier), rest)
      // A bar closing after the subscription: its minutes by the stream.
      const next = Math.floor((await replayNow()) / QUARTER) * QUARTER + QUARTER
      await poll('the bar after next to close', 30_000, async () => ((await replayNow()) >= next + QUARTER + 2 * MINUTE ? true : undefined))
      const streamed = await minutes.of(next)
      assert.deepEqual(streamed, await new UpstreamHistory(market).klines('BTCUSDT', '1m', next, next + QUARTER - 1, 15))
      assert.deepEqual(streamed.map((b) => b.openTime), Array.from({ length: 15 }, (_, k) => next + k * MINUTE))
    } finally {
      minutes.close()
    }
  })

  it('mark price: the mark-price 1m klines of the closed bar (not the trade prices), over REST', async () => {
    const minutes = new RunMinutes(deps(), 'BTCUSDT', QUARTER, 'mark')
    const bar = Math.floor((await replayNow()) / QUARTER) * QUARTER - QUARTER
    const marks = await minutes.of(bar)
    assert.equal(marks.length, 15)
    assert.deepEqual(marks, await markPriceKlines(market, 'BTCUSDT', '1m', bar, bar + QUARTER - 1, 15))
    assert.ok(marks.every((m) => m.volume === 0))
    const trades = await new UpstreamHistory(market).klines('BTCUSDT', '1m', bar, bar + QUARTER - 1, 15)
    assert.notDeepEqual(marks.map((m) => m.open), trades.map((k) => k.open), 'marks are not the trade prices')
  })
})
