import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { openTestDatabase } from '../support/database.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'
import { runState } from './backtest-parity.js'

// 1m bars close five times a wall second: every runner commits a bar (its run row, then its strategy's
// stats, orders and trades) while the pauses below lock the same strategies.
const REPLAY = { speed: 300, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0) }
const STRATEGIES = 100
const PAUSES = 1_000
const AT_ONCE = 4

// Only the PostgreSQL server runs transactions side by side: PGlite is one connection whose transactions
// take turns, so no two writers can wait on each other there and a deadlock cannot happen (skipped).
describe('concurrent pauses of running strategies (PostgreSQL server)', { skip: !process.env.TEST_DATABASE_URL }, () => {
  let t: TestApp
  let pool: RunnerPool
  const strategies: { key: KeyPair; id: string }[] = []

  before(async () => {
    // As `perpetua serve` with its default DB_POOL_MAX: the requests and the runners share ten connections.
    const database = await openTestDatabase('postgres', { poolMax: 10 })
    t = await startTestApp('postgres', {}, { replay: REPLAY, database })
    const log = pino({ level: 'silent' })
    pool = new RunnerPool({ db: database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log, signals: t.services.runSignals })
    pool.start()
    // One strategy per user: a user's dry runs may not share a symbol yet, and every run trades BTCUSDT.
    for (let i = 0; i < STRATEGIES; i++) {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const created = await t.signed(key, 'POST', '/v1/strategies', {
        name: `s${i}`,
        template_id: 'sma_cross',
        params: { fast: 3, slow: 8, allow_short: true },
        symbols: ['BTCUSDT'],
        timeframe: '1m',
        capital: '1000',
      })
      assert.equal(created.statusCode, 200, created.body)
      const id = created.json().id as string
      const deployed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
      assert.equal(deployed.statusCode, 200, deployed.body)
      strategies.push({ key, id })
    }
    await poll('every run to act on bars', 120_000, async () => {
      for (const { id } of strategies) if (!(await runState(t, id))?.broker.lastOpenTime) return undefined
      return true
    })
  })
  after(async () => {
    await pool.stop()
    await t.close()
    await t.database.close()
  })

  it(`${PAUSES} pauses sent ${AT_ONCE} at a time while every runner commits bars: none fails`, async () => {
    const failures: string[] = []
    let pauses = 0
    let tradedPauses = 0
    let next = 0
    const latencies: number[] = []
    const cycle = async () => {
      for (let n = next++; n < PAUSES; n = next++) {
        const { key, id } = strategies[n % STRATEGIES]!
        // Every other pause closes the paper position too (trades, orders and stats in the pause's transaction).
        const close = n % 2 === 0
        const sent = performance.now()
        const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, { close_positions: close })
        latencies.push(performance.now() - sent)
        pauses++
        if (paused.statusCode !== 200) failures.push(`pause ${n}: ${paused.statusCode} ${paused.body}`)
        const state = await runState(t, id)
        if (state?.broker.lastOpenTime) tradedPauses++
        const deployed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
        if (deployed.statusCode !== 200) failures.push(`deploy after pause ${n}: ${deployed.statusCode} ${deployed.body}`)
      }
    }
    const started = Date.now()
    await Promise.all(Array.from({ length: AT_ONCE }, cycle))
    const seconds = (Date.now() - started) / 1000
    const failedPauses = failures.filter((f) => f.startsWith('pause')).length
    latencies.sort((a, b) => a - b)
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!.toFixed(0)
    process.stdout.write(`# ${pauses} pauses and deploys in ${seconds.toFixed(1)} s (pause p50 ${at(0.5)} ms, p99 ${at(0.99)} ms); ${tradedPauses} paused a run that had acted on bars; ${failedPauses} pauses failed\n`)
    assert.equal(pauses, PAUSES)
    assert.deepEqual(failures.slice(0, 10), [], `${failures.length} of ${PAUSES} pause/deploy cycles failed`)
    // The pauses met runners that were writing: most paused runs had acted on bars (else the test proves nothing).
    assert.ok(tradedPauses > PAUSES / 2, `only ${tradedPauses} pauses met a run that had acted on bars`)
  })
})
