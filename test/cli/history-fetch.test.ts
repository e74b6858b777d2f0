import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { openDatabase } from '../../src/db/connect.js'
import { startReplay, type ReplayExchange } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { killChildren, parseSingleJsonLine, runCli, startServe } from './cli-process.js'

interface Summary {
  fetched: { symbol: string; interval: string; bars: number; funding_events: number; archive_files: number; rest_requests: number }[]
  bars: number
  refused_files: number
}

// Embedded (DATA_DIR) only: the command stores through the same history store as backtests (tested on both backends).
describe('perpetua history fetch', () => {
  const dataDir = tempDir('history-fetch')
  let replay: ReplayExchange
  before(async () => {
    replay = await startReplay()
  })
  after(async () => {
    await killChildren()
    await replay.close()
    fs.rmSync(dataDir, { recursive: true, force: true })
  })
  const env = () => ({ DATA_DIR: dataDir, UPSTREAM_URL: replay.url, UPSTREAM_ARCHIVE_URL: replay.url, LOG_LEVEL: 'warn' })

  it('fills the store from archive files with REST for the last days, then has nothing left to download', async () => {
    const result = await runCli(['history', 'fetch', '--symbols', 'BTCUSDT,ETHUSDT', '--intervals', '1h', '--start', '2025-01-01', '--json'], env())
    assert.equal(result.code, 0, result.stderr)
    const summary = parseSingleJsonLine(result.stdout) as Summary
    assert.deepEqual(summary.fetched.map((f) => `${f.symbol} ${f.interval}`), ['BTCUSDT 1h', 'ETHUSDT 1h'])
    // 2025-01-01 to the replay's present (2025-06-17 08:38): 167 days and 8 hours of hourly bars each.
    for (const fetched of summary.fetched) {
      assert.equal(fetched.bars, 167 * 24 + 8)
      assert.equal(fetched.archive_files, 5 + 15, 'January to May monthly, June 1–15 daily')
      assert.ok(fetched.rest_requests <= 3, `klines for June 16–17 and the funding: ${fetched.rest_requests}`)
      assert.ok(fetched.funding_events > 500)
    }
    assert.equal(summary.refused_files, 0)
    assert.equal(replay.stats().archiveFiles, 40)

    const { database, ready } = openDatabase({ dataDir, databaseUrl: undefined, poolMax: 1 })
    await ready
    const stored = await database.db.selectFrom('kline_chunks').select((eb) => eb.fn.sum<string>('bars').as('bars')).where('interval', '=', '1h').executeTakeFirstOrThrow()
    await database.close()
    assert.equal(Number(stored.bars), 2 * (167 * 24 + 8))

    replay.resetStats()
    const again = await runCli(['history', 'fetch', '--symbols', 'BTCUSDT', '--intervals', '1h', '--start', '2025-01-01'], env())
    assert.equal(again.code, 0, again.stderr)
    assert.match(again.stdout, /BTCUSDT 1h: 4016 bars, \d+ funding events \(0 archive files/)
    assert.equal(replay.stats().archiveFiles, 0)
  })

  it('runs inside the server that holds the embedded DATA_DIR, through its control socket', async () => {
    const held = tempDir('history-fetch-served')
    const served = { DATA_DIR: held, UPSTREAM_URL: replay.url, UPSTREAM_ARCHIVE_URL: replay.url, LOG_LEVEL: 'warn' }
    const server = await startServe({ ...served, WORKERS: '1', LOG_LEVEL: 'info' })
    try {
      replay.resetStats()
      const result = await runCli(['history', 'fetch', '--symbols', 'BTCUSDT', '--intervals', '1h', '--start', '2025-03-01', '--json'], served)
      assert.equal(result.code, 0, result.stderr)
      assert.match(result.stderr, new RegExp(`perpetua process ${server.child.pid} holds .*: the history is fetched inside it`))
      const [fetched] = (parseSingleJsonLine(result.stdout) as Summary).fetched
      // 2025-03-01 to the replay's present (2025-06-17 08:38): 108 days and 8 hours.
      assert.deepEqual([fetched!.bars, fetched!.archive_files], [108 * 24 + 8, 3 + 15])
      assert.equal(replay.stats().archiveFiles, 18, 'the server downloaded them')
      // Stored in the server's database: a second fetch downloads nothing.
      const again = await runCli(['history', 'fetch', '--symbols', 'BTCUSDT', '--intervals', '1h', '--start', '2025-03-01', '--json'], served)
      assert.equal(again.code, 0, again.stderr)
      assert.deepEqual((parseSingleJsonLine(again.stdout) as Summary).fetched.map((f) => [f.bars, f.archive_files]), [[108 * 24 + 8, 0]])
      const unknown = await runCli(['history', 'fetch', '--symbols', 'NOPEUSDT', '--intervals', '1h', '--start', '2025-03-01'], served)
      assert.equal(unknown.code, 1)
      assert.match(unknown.stderr, /the exchange lists no symbol NOPEUSDT/)
    } finally {
      server.child.kill('SIGTERM')
      await server.exited()
      fs.rmSync(held, { recursive: true, force: true })
    }
  })

  it('refuses bad arguments before opening anything, naming them', async () => {
    for (const [args, message] of [
      [['--symbols', 'BTC-USDT', '--intervals', '1h', '--start', '2025-01-01'], /"BTC-USDT" is not a symbol/],
      [['--symbols', 'BTCUSDT', '--intervals', '2h', '--start', '2025-01-01'], /"2h" is not one of 1m, 5m, 15m, 1h, 4h, 1d/],
      [['--symbols', 'BTCUSDT', '--intervals', '1h', '--start', 'yesterday'], /not a UTC day/],
      [['--symbols', 'BTCUSDT', '--intervals', '1h'], /required option '--start <date>' not specified/],
    ] as const) {
      const result = await runCli(['history', 'fetch', ...args], env())
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, message)
    }
    const unknown = await runCli(['history', 'fetch', '--symbols', 'NOPEUSDT', '--intervals', '1h', '--start', '2025-01-01'], env())
    assert.equal(unknown.code, 1)
    assert.match(unknown.stderr, /the exchange lists no symbol NOPEUSDT/)
  })
})
