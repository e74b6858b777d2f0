import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { historyCaches } from '../../src/work/history-cache.js'
import { loadBars } from '../../src/backtests/history-store.js'
import { decodeBars } from '../../src/backtests/kline-codec.js'
import { UpstreamHistory } from '../../src/backtests/upstream-history.js'
import { exchangeServerTime } from '../../src/market/exchange-clock.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'

const HOUR = 3_600_000
const MINUTE = 60_000
// The recorded BTCUSDT 1h bars around the replay exchange's present (data/BTCUSDT-1h-…csv.gz).
const BAR_07 = { openTime: Date.UTC(2025, 5, 17, 7), close: 106711.1 }
const BAR_08 = { openTime: Date.UTC(2025, 5, 17, 8), close: 106518.8 }
// sma_cross with shorts holds a position from its first cross on, so the result marks one at the last close.
const JOB = {
  template_id: 'sma_cross',
  params: { fast: 3, slow: 8, allow_short: true },
  symbols: ['BTCUSDT'],
  timeframe: '1h',
  start: '2025-06-10T00:00:00Z',
  end: '2025-06-17T08:00:00Z',
  capital: '10000',
}
const SCOPES = ['backtests:read', 'backtests:write'] as const

for (const backend of backends()) {
  describe(`the exchange's clock decides which bars are closed (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    // The replay exchange's wall clock, moved by the test: its present starts at 2025-06-17 08:40.
    let wall = Date.now()
    before(async () => {
      t = await startTestApp(backend, {}, { replay: { replayStart: BAR_08.openTime + 40 * MINUTE, now: () => wall }, queue: 'workers' })
      key = await t.createKey([...SCOPES])
    })
    after(() => t.close())

    const finish = async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', JOB)
      assert.equal(created.statusCode, 200, created.body)
      const id = created.json().id as string
      return poll(`backtest ${id} to finish`, 60_000, async () => {
        t.clock.advance(5000)
        const body = (await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)).json()
        return body.status === 'queued' || body.status === 'running' ? undefined : body
      })
    }
    const runJob = async () => {
      const done = await finish()
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      return done.result as { open_positions: { mark_price: string }[]; equity_curve: [string, string][] }
    }
    const storedBars = async () => {
      const chunks = await t.database.handle.db.selectFrom('kline_chunks').select(['bars', 'data']).where('symbol', '=', 'BTCUSDT').where('interval', '=', '1h').execute()
      const byTime = new Map<number, number>()
      for (const chunk of chunks) {
        const bars = decodeBars(chunk.data, chunk.bars)
        for (let i = 0; i < bars.openTime.length; i++) byTime.set(bars.openTime[i]!, bars.close[i]!)
      }
      return byTime
    }

    it('a backtest ending at the bar still forming marks at the last closed bar and stores nothing of the forming one; after it closes, the recorded close', async () => {
      assert.ok((await exchangeServerTime(t.services.market)) < BAR_08.openTime + HOUR, 'the 08:00 bar is forming at the exchange')
      const before = await runJob()
      assert.equal(before.open_positions.length, 1)
      assert.equal(Number(before.open_positions[0]!.mark_price), BAR_07.close, 'marked at the close of 07:00, the last closed bar')
      assert.equal(before.equity_curve.at(-1)![0], new Date(BAR_07.openTime + HOUR).toISOString())
      const stored = await storedBars()
      assert.equal(stored.get(BAR_07.openTime), BAR_07.close)
      assert.equal(stored.has(BAR_08.openTime), false, 'the forming bar is never stored')

      // 25 minutes later at the exchange: 09:05, the 08:00 bar has closed.
      wall += 25 * MINUTE
      assert.ok((await exchangeServerTime(t.services.market)) >= BAR_08.openTime + HOUR)
      const afterClose = await runJob()
      assert.equal(Number(afterClose.open_positions[0]!.mark_price), BAR_08.close, 'marked at the recorded close')
      assert.equal((await storedBars()).get(BAR_08.openTime), BAR_08.close)
    })

    it("fails the job, saying why, when the exchange's time cannot be read (our clock never stands in for it)", async () => {
      const remove = t.replay!.faults.add({ path: '/fapi/v1/time', status: 500 })
      try {
        const failed = await finish()
        assert.equal(failed.status, 'failed')
        assert.equal(failed.error.code, 'UPSTREAM_UNAVAILABLE')
        assert.match(failed.error.message, /did not tell its time/)
      } finally {
        remove()
      }
    })

    it('repairs a bar stored while forming before migration 0016 (a span judged by our wall clock) on the next read', async () => {
      const db = t.database.handle.db
      const history = new UpstreamHistory(t.services.market)
      const symbol = 'ETHUSDT'
      const load = (now: number) => loadBars(db, history, historyCaches(64), { symbol, interval: '1h', intervalMs: HOUR, start: Date.UTC(2025, 5, 16), end: BAR_08.openTime + 2 * HOUR, now })
      // As the code before 0016 did: "now" by our wall clock (2026 and later), so the bar forming at the
      // exchange (the replay's present is 2025-06-17 09:05 now) is stored as final, and the span has no exchange time.
      const exchangeNow = await exchangeServerTime(t.services.market)
      wall += 10 * MINUTE // 09:15: 09:00 is forming
      const forming = Math.floor((exchangeNow + 10 * MINUTE) / HOUR) * HOUR
      const legacy = await load(Date.now())
      const formingClose = legacy.close[legacy.openTime.indexOf(forming)]
      assert.ok(formingClose !== undefined, 'the old judgement stored the forming bar')
      await db.updateTable('market_coverage').set({ exchange_time_ms: null }).where('symbol', '=', symbol).execute()

      // The bar closes at the exchange; the next read, by the exchange's clock, fetches it again.
      wall += 60 * MINUTE // 10:15
      const now = await exchangeServerTime(t.services.market)
      assert.ok(now >= forming + HOUR)
      const repaired = await load(now)
      const i = repaired.openTime.indexOf(forming)
      const recorded = await history.klines(symbol, '1h', forming, forming, 1)
      assert.equal(recorded[0]!.openTime, forming)
      assert.equal(repaired.close[i], recorded[0]!.close, 'the final bar replaced the forming one')
      assert.notEqual(formingClose, recorded[0]!.close, 'the forming close differed (the test would not tell otherwise)')
      const spans = await db.selectFrom('market_coverage').selectAll().where('symbol', '=', symbol).execute()
      assert.ok(spans.every((s) => s.exchange_time_ms === null ? Number(s.to_ms) <= now - 7 * 24 * HOUR : Number(s.exchange_time_ms) === now))
      // Nothing after the exchange's now is covered: a later read asks for it again.
      assert.ok(spans.every((s) => Number(s.to_ms) <= now))
    })
  })
}
