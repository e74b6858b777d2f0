import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, beforeEach, describe, it } from 'node:test'
import { pino } from 'pino'
import { describeFailure, engineInput } from '../../src/backtests/engine-input.js'
import { type DetailSources, detailTimeframes, loadDetail } from '../../src/backtests/exit-history.js'
import { loadBars } from '../../src/backtests/history-store.js'
import type { JobConfig } from '../../src/backtests/schemas.js'
import { UpstreamHistory } from '../../src/backtests/upstream-history.js'
import { type BarSeries, MissingMarkBars } from '../../src/engine/index.js'
import { KlineArchive } from '../../src/market/archive/kline-archive.js'
import { exchangeServerTime } from '../../src/market/exchange-clock.js'
import { variesExits } from '../../src/sweeps/task-handler.js'
import { EngineFailure, EnginePool } from '../../src/work/engine-pool.js'
import { historyCaches } from '../../src/work/history-cache.js'
import { type ReplayExchange, startReplay, startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'

const MINUTE = 60_000
const HOUR = 3_600_000
const silent = pino({ level: 'silent' })
// The replay's BTCUSDT 1m bars begin at 2025-05-04 15:33, so its first whole hour of them here (its 5m bars
// on 2023-01-01); its present is 2025-06-17 08:38.
const FIRST_1M = Date.UTC(2025, 4, 4, 16)
const JOB: JobConfig = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30, allow_short: true },
  symbols: ['BTCUSDT'],
  timeframe: '1h',
  start: '2025-05-10T00:00:00Z',
  end: '2025-06-10T00:00:00Z',
  capital: '10000',
  leverage: 1,
  fee_model: 'fixed_bps',
  exits: { stop_loss: '0.02', take_profit: '0.04', trigger: 'last' },
}

/**
 * The replay exchange behind a proxy that answers ETHUSDT's mark-price klines with [] (Binance's answer
 * for a symbol and range without them): the replay derives marks wherever it has trades, so a symbol
 * without any takes an exchange that has none, at the process boundary.
 */
async function withoutEthMarks(replay: ReplayExchange): Promise<{ url: string; requests: URL[]; close: () => Promise<void> }> {
  const requests: URL[] = []
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? '/', replay.url)
    requests.push(url)
    if (url.pathname === '/fapi/v1/markPriceKlines' && url.searchParams.get('symbol') === 'ETHUSDT') {
      response.writeHead(200, { 'content-type': 'application/json' }).end('[]')
      return
    }
    const upstream = await fetch(url, { method: request.method, headers: { 'x-mbx-apikey': String(request.headers['x-mbx-apikey'] ?? '') } })
    const headers = Object.fromEntries([...upstream.headers].filter(([name]) => !['content-encoding', 'content-length', 'transfer-encoding', 'connection'].includes(name)))
    response.writeHead(upstream.status, headers).end(Buffer.from(await upstream.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, close: () => new Promise((resolve) => server.close(() => resolve())) }
}

const minutes = (series: BarSeries | undefined) => series && { interval: series.intervalMs / MINUTE, first: series.openTime[0], last: series.openTime[series.openTime.length - 1], bars: series.openTime.length }

describe('detail timeframes', () => {
  it('are the finer timeframes for last prices, down to the strategy own for mark prices, finest first', () => {
    assert.deepEqual(detailTimeframes('1h', 'last'), ['1m', '5m', '15m'])
    assert.deepEqual(detailTimeframes('1h', 'mark'), ['1m', '5m', '15m', '1h'])
    assert.deepEqual(detailTimeframes('1d', 'last'), ['1m', '5m', '15m', '1h', '4h'])
    assert.deepEqual(detailTimeframes('1m', 'last'), [])
  })

  it('come for a sweep whose grid or random space varies exits.*', () => {
    assert.equal(variesExits({ grid: { fast: [5, 10] } }), false)
    assert.equal(variesExits({ grid: { fast: [5, 10], 'exits.stop_loss': [0.01, 0.02] } }), true)
    assert.equal(variesExits({ random: { samples: 5, space: { 'exits.trailing_stop': { min: 0.01, max: 0.05 } } } }), true)
  })
})

for (const backend of backends()) {
  describe(`history for protective exits (${backend})`, () => {
    let t: TestApp
    let proxy: Awaited<ReturnType<typeof withoutEthMarks>>
    let replay: ReplayExchange
    before(async () => {
      replay = await startReplay()
      proxy = await withoutEthMarks(replay)
      t = await startTestApp(backend, { UPSTREAM_URL: proxy.url })
    })
    after(async () => {
      await t.close()
      await proxy.close()
      await replay.close()
    })
    beforeEach(async () => {
      replay.faults.clear()
      await t.database.handle.db.deleteFrom('kline_chunks').execute()
      await t.database.handle.db.deleteFrom('market_coverage').execute()
      replay.resetStats()
      proxy.requests.length = 0
    })

    const deps = () => ({ db: t.database.handle.db, market: t.services.market, log: silent })
    const archive = () => ({ client: new KlineArchive(replay.url, { timeoutMs: 5_000, retries: 0 }), warn: (details: Record<string, unknown>) => assert.fail(`archive refused: ${JSON.stringify(details)}`) })
    /** The job's detail bars after its 1h bars are stored (so the requests counted are the detail's alone). */
    const detailOf = async (range: { start: number; end: number; symbol?: string }, trigger: 'last' | 'mark', options: { archive?: boolean } = {}) => {
      const symbol = range.symbol ?? 'BTCUSDT'
      const now = await exchangeServerTime(t.services.market)
      const history = new UpstreamHistory(t.services.market)
      const caches = historyCaches(64)
      const strategy = await loadBars(t.database.handle.db, history, caches, { symbol, interval: '1h', intervalMs: HOUR, start: range.start, end: range.end, now })
      replay.resetStats()
      proxy.requests.length = 0
      const sources: DetailSources = { db: t.database.handle.db, market: t.services.market, history, caches, now, ...(options.archive ? { archive: archive() } : {}) }
      const [detail] = await loadDetail(sources, [{ symbol, intervalMs: HOUR, openTime: strategy.openTime }], '1h', trigger)
      return { detail: detail!, stats: replay.stats() }
    }
    /** The klines requests of one interval as the exchange received them (the node's market cache may answer some). */
    const klineRequests = (interval: string) => proxy.requests.filter((url) => url.pathname === '/fapi/v1/klines' && url.searchParams.get('interval') === interval).map((url) => url.searchParams)
    const firstBarQuestion = (query: URLSearchParams) => query.get('startTime') === '0' && query.get('limit') === '1'
    const pages = (interval: string) => klineRequests(interval).filter((query) => query.get('limit') === '1500').length
    const storedIntervals = async () =>
      (await t.database.handle.db.selectFrom('kline_chunks').select('interval').distinct().orderBy('interval').execute()).map((row) => row.interval)

    it('gives a job with exits over the 1m range its 1m bars and no 5m, through engineInput', async () => {
      const input = await engineInput(deps(), historyCaches(64), JOB, 'job', () => false, () => undefined)
      const series = input.detail![0]!.bars!
      assert.deepEqual(series.map(minutes), [{ interval: 1, first: Date.UTC(2025, 4, 10), last: Date.UTC(2025, 5, 10, 0, 59), bars: 31 * 1440 + 60 }])
      assert.equal(series[0]!.symbol, 'BTCUSDT')
      assert.ok(series[0]!.high.buffer instanceof SharedArrayBuffer, 'detail bars travel to the engine thread in shared memory')
      assert.equal(series[0]!.high.length, series[0]!.openTime.length, 'exactly sized')
      assert.deepEqual(await storedIntervals(), ['1h', '1m'])
      // Without exits the input is what it was: no detail, and nothing loaded for it.
      const plain = await engineInput(deps(), historyCaches(64), { ...JOB, exits: undefined }, 'job', () => false, () => undefined)
      assert.equal(plain.detail, undefined)
      // A module that states levels (the caller says so) gets last-price detail without config exits.
      const stated = await engineInput(deps(), historyCaches(64), { ...JOB, exits: undefined }, 'job', () => false, () => undefined, true)
      assert.equal(stated.detail![0]!.bars!.length, 1)
    })

    it('loads 5m bars only over 2024-03, asking for 1m nothing beyond where they begin', async () => {
      const { detail, stats } = await detailOf({ start: Date.UTC(2024, 2, 1), end: Date.UTC(2024, 2, 31, 23) }, 'last')
      assert.deepEqual(detail.bars!.map(minutes), [{ interval: 5, first: Date.UTC(2024, 2, 1), last: Date.UTC(2024, 2, 31, 23, 55), bars: 31 * 288 }])
      // 1m: at most its first bar (after the range: nothing more is asked); 5m: 31 × 288 bars in 6 pages of 1,500
      // besides its first bar and the last before the range's end (each unless the node holds the answer).
      assert.ok(klineRequests('1m').length <= 1 && klineRequests('1m').every(firstBarQuestion), klineRequests('1m').join(' '))
      assert.equal(pages('5m'), 6)
      assert.equal(stats.requests, proxy.requests.length)
      assert.deepEqual(await storedIntervals(), ['1h', '5m'])
      const coverage = await t.database.handle.db.selectFrom('market_coverage').select('dataset').distinct().execute()
      assert.ok(!coverage.some((row) => row.dataset === 'klines:1m'), 'no 1m span recorded as fetched')
    })

    it('loads 2024-03 from the archive: one monthly 5m file and no 1m file', async () => {
      const { detail, stats } = await detailOf({ start: Date.UTC(2024, 2, 1), end: Date.UTC(2024, 2, 31, 23) }, 'last', { archive: true })
      assert.equal(detail.bars![0]!.openTime.length, 31 * 288)
      assert.deepEqual(Object.keys(stats.archiveByPath).filter((path) => path.endsWith('.zip')), ['/data/futures/um/monthly/klines/BTCUSDT/5m/BTCUSDT-5m-2024-03.zip'])
      assert.equal(pages('5m'), 0, 'no page over REST')
      assert.ok(klineRequests('1m').every(firstBarQuestion))
    })

    it('gives a range straddling the first 1m bar 5m bars before it and 1m bars after', async () => {
      const { detail } = await detailOf({ start: Date.UTC(2025, 3, 20), end: Date.UTC(2025, 4, 20) }, 'last')
      assert.deepEqual(detail.bars!.map(minutes), [
        { interval: 1, first: FIRST_1M, last: Date.UTC(2025, 4, 20, 0, 59), bars: (Date.UTC(2025, 4, 20, 1) - FIRST_1M) / MINUTE },
        { interval: 5, first: Date.UTC(2025, 3, 20), last: FIRST_1M - 5 * MINUTE, bars: (FIRST_1M - Date.UTC(2025, 3, 20)) / (5 * MINUTE) },
      ])
    })

    it('makes no upstream request the second time: the store and the held coverage answer', async () => {
      const range = { start: Date.UTC(2025, 3, 20), end: Date.UTC(2025, 4, 20) }
      const first = await detailOf(range, 'last')
      assert.ok(first.stats.requests > 0)
      const second = await detailOf(range, 'last')
      assert.equal(second.stats.requests, 0)
      assert.equal(second.stats.archiveFiles, 0)
      assert.deepEqual(second.detail.bars!.map(minutes), first.detail.bars!.map(minutes))
      assert.deepEqual(second.detail.bars![0]!.close, first.detail.bars![0]!.close)
    })

    it('loads and stores mark-price bars for trigger mark, the finest first, from REST and the archive alike', async () => {
      const range = { start: Date.UTC(2025, 3, 28), end: Date.UTC(2025, 4, 12) }
      const { detail } = await detailOf(range, 'mark')
      assert.equal(detail.bars, undefined, 'trigger mark examines mark prices only')
      assert.deepEqual(detail.mark!.map(minutes), [
        { interval: 1, first: FIRST_1M, last: Date.UTC(2025, 4, 12, 0, 59), bars: (Date.UTC(2025, 4, 12, 1) - FIRST_1M) / MINUTE },
        { interval: 5, first: Date.UTC(2025, 3, 28), last: FIRST_1M - 5 * MINUTE, bars: (FIRST_1M - Date.UTC(2025, 3, 28)) / (5 * MINUTE) },
      ])
      const [mark1m] = detail.mark!
      assert.ok(mark1m!.volume.every((v) => v === 0), 'mark-price klines carry no volume')
      const last = (await detailOf(range, 'last')).detail.bars![0]!
      assert.notDeepEqual(mark1m!.close, last.close, 'marks, not last prices')
      assert.deepEqual(await storedIntervals(), ['1h', '1m', '5m', 'mark-1m', 'mark-5m'])
      const datasets = (await t.database.handle.db.selectFrom('market_coverage').select('dataset').distinct().orderBy('dataset').execute()).map((row) => row.dataset)
      assert.deepEqual(datasets, ['klines:1h', 'klines:1m', 'klines:5m', 'klines:mark-1m', 'klines:mark-5m'])
      const again = await detailOf(range, 'mark')
      assert.equal(again.stats.requests, 0)
      assert.deepEqual(again.detail.mark![0]!.high, mark1m!.high)

      // The archive's markPriceKlines folder gives the same bars (its files are the REST rows of their span).
      await t.database.handle.db.deleteFrom('kline_chunks').execute()
      await t.database.handle.db.deleteFrom('market_coverage').execute()
      const archived = await detailOf(range, 'mark', { archive: true })
      const files = Object.keys(archived.stats.archiveByPath).filter((path) => path.endsWith('.zip'))
      assert.ok(files.length > 0 && files.every((path) => path.includes('/markPriceKlines/BTCUSDT/')), files.join(', '))
      assert.deepEqual(archived.detail.mark, detail.mark)
    })

    it('fails trigger mark with NO_DATA naming a symbol without mark-price bars, never falling back to last prices', async () => {
      const range = { start: Date.UTC(2025, 4, 10), end: Date.UTC(2025, 4, 12, 23), symbol: 'ETHUSDT' }
      const error = await detailOf(range, 'mark').then(
        () => assert.fail('loaded'),
        (e: unknown) => e,
      )
      assert.deepEqual(describeFailure(error), {
        code: 'NO_DATA',
        message:
          'no ETHUSDT mark-price bars between 2025-05-10T00:00Z and 2025-05-13T00:00Z: exits with trigger "mark" are judged on mark prices, never on last prices instead. Choose trigger "last" or a range with mark-price klines.',
      })
      // Last prices are there: the symbol's job with trigger last loads them.
      assert.equal((await detailOf(range, 'last')).detail.bars![0]!.openTime.length, 3 * 1440)
    })

    it('maps the engine\'s MissingMarkBars to NO_DATA on the engine thread and in describeFailure', async () => {
      assert.deepEqual(describeFailure(new MissingMarkBars('BTCUSDT')), { code: 'NO_DATA', message: 'BTCUSDT: no mark-price bars in the range, which exits with trigger mark need' })
      const input = await engineInput(deps(), historyCaches(64), { ...JOB, exits: undefined }, 'job', () => false, () => undefined)
      const pool = new EnginePool(1)
      try {
        const run = pool.run({ ...input, exits: { stopLoss: 0.02, trigger: 'mark' }, detail: [{ mark: [] }] }, () => undefined)
        const error = await run.result.then(
          () => assert.fail('ran'),
          (e: unknown) => e,
        )
        assert.ok(error instanceof EngineFailure)
        assert.deepEqual(describeFailure(error), { code: 'NO_DATA', message: 'BTCUSDT: no mark-price bars in the range, which exits with trigger mark need' })
      } finally {
        await pool.close()
      }
    })
  })
}
