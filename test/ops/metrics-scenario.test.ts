import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { trackDatabase } from '../../src/ops/database-gauges.js'
import { type MetricsListener, startMetricsListener } from '../../src/ops/metrics-listener.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { pollEnded, SMA_CROSS_JOB } from '../support/backtest-job.js'
import { backends } from '../support/database.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates } from '../support/https-receiver.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'

const MINUTE = 60_000
// 1m bars close five times a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes).
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
const RECORDING = new URL('./fixtures/metrics-scrape.txt', import.meta.url)

/** Every family issue 32 names (docs/operating.md "Metrics"); the alert rules use these names. */
const FAMILIES = [
  'perpetua_runs', 'perpetua_runs_behind', 'perpetua_run_lease_oldest_age_seconds', 'perpetua_protective_orders_missing',
  'perpetua_jobs', 'perpetua_jobs_oldest_queued_seconds', 'perpetua_webhook_oldest_pending_seconds', 'perpetua_webhook_endpoints_disabled',
  'perpetua_run_decision_seconds', 'perpetua_run_reconciliation_mismatches_total', 'perpetua_run_exchange_closes_total',
  'perpetua_live_orders_total', 'perpetua_live_order_lookups_total', 'perpetua_protective_orders_rejected_total',
  'perpetua_job_duration_seconds', 'perpetua_jobs_worker_lost_total', 'perpetua_jobs_retried_total',
  'perpetua_webhook_deliveries_total', 'perpetua_webhook_delivery_seconds', 'perpetua_upstream_requests_total',
  'perpetua_upstream_weight_used', 'perpetua_upstream_weight_limit', 'perpetua_archive_files_total', 'perpetua_cache_requests_total',
  'perpetua_sandbox_runs_total', 'perpetua_sandbox_watchdog_terminations_total', 'perpetua_db_pool_connections',
  'perpetua_db_slow_queries_total', 'perpetua_ready', 'perpetua_draining',
  'perpetua_http_requests_total', 'perpetua_http_request_duration_seconds', 'perpetua_work_waiting', 'perpetua_work_oldest_wait_seconds',
  'perpetua_sandbox_calls_rejected_total',
]

/** The samples of a scrape by series (`name{labels}`), as numbers. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>()
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue
    const at = line.lastIndexOf(' ')
    out.set(line.slice(0, at), Number(line.slice(at + 1)))
  }
  return out
}

/** The sum of a family's samples whose series match every `labels` pair (name exact, or name_suffix). */
function sum(scrape: Map<string, number>, name: string, labels: Record<string, string> = {}): number {
  let total = 0
  for (const [series, value] of scrape) {
    const brace = series.indexOf('{')
    if ((brace < 0 ? series : series.slice(0, brace)) !== name) continue
    if (Object.entries(labels).every(([k, v]) => series.includes(`${k}="${v}"`))) total += value
  }
  return total
}

/**
 * Issue 32's scenario: a dry run over a few bars on the replay exchange, a backtest, and a webhook whose
 * receiver answers 500, then one scrape of the metrics listener checked family by family. The process
 * registry is this process's, so the scenario runs once (on PostgreSQL when it is there). RECORD_METRICS=1
 * keeps the scrape in test/ops/fixtures/metrics-scrape.txt: the alert rules' names are checked against it.
 */
const backend = backends().at(-1)!
describe(`metrics after a scripted scenario (${backend})`, () => {
  let t: TestApp
  let pool: RunnerPool
  let receiver: HttpsReceiver
  let listener: MetricsListener
  let untrack: () => void
  let key: KeyPair

  before(async () => {
    receiver = await startHttpsReceiver({ answer: () => ({ status: 500 }) })
    t = await startTestApp(
      backend,
      { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' },
      { replay: { speed: 300, replayStart: REPLAY_START }, queue: 'workers', config: { webhookTimeoutMs: 1000 } },
    )
    untrack = trackDatabase(t.database.handle, Date.now, pino({ level: 'silent' }))
    listener = await startMetricsListener({ host: '127.0.0.1', port: 0 }, pino({ level: 'silent' }))
    pool = new RunnerPool({ db: t.database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals })
    pool.start()
    key = await t.createKey(['strategies:read', 'strategies:write', 'backtests:read', 'backtests:write', 'webhooks:read', 'webhooks:write'])
  })
  after(async () => {
    await pool.stop()
    untrack()
    await listener.close()
    await t.close()
    await receiver.close()
  })

  it('shows each family with the values the scenario made', async () => {
    const hook = await t.signed(key, 'POST', '/v1/webhooks', { url: `${receiver.url}/failing`, events: ['backtest.job_done'] })
    assert.equal(hook.statusCode, 200, hook.body)

    // A dry run over a few bars.
    const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'metered', template_id: 'sma_cross', params: { fast: 3, slow: 8 }, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', leverage: 2 })
    assert.equal(created.statusCode, 200, created.body)
    const id = created.json().id as string
    const deployed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
    assert.equal(deployed.statusCode, 200, deployed.body)
    const db = t.database.handle.db
    await poll('the dry run to act on 3 bars after its warm-up', 60_000, async () => {
      const run = await db.selectFrom('strategy_runs').select(['state']).where('strategy_id', '=', id).where('ended_at', 'is', null).executeTakeFirst()
      const state = run?.state as { broker?: { lastOpenTime?: number | null }; firstActive?: number } | null | undefined
      const last = state?.broker?.lastOpenTime
      return typeof last === 'number' && state?.firstActive !== undefined && last >= state.firstActive + 3 * MINUTE ? true : undefined
    })

    // A backtest; its job_done event goes to the failing receiver.
    const job = await t.signed(key, 'POST', '/v1/backtest/jobs', SMA_CROSS_JOB)
    assert.equal(job.statusCode, 200, job.body)
    const ended = await pollEnded(t, key, `/v1/backtest/jobs/${job.json().id}`)
    assert.equal(ended.status, 'done', JSON.stringify(ended.error))
    await receiver.waitFor(1, 30_000)

    const scrapeText = async () => {
      const res = await fetch(`${listener.url}/metrics`)
      assert.equal(res.status, 200)
      return res.text()
    }
    // The failed attempt is counted once its answer is in; the scrape is then taken as the test sees it.
    const text = await poll('the failed delivery to be counted', 30_000, async () => {
      const body = await scrapeText()
      return sum(samples(body), 'perpetua_webhook_deliveries_total', { outcome: 'failed' }) >= 1 ? body : undefined
    })
    if (process.env.RECORD_METRICS === '1') fs.writeFileSync(RECORDING, text)
    const scrape = samples(text)

    for (const family of FAMILIES) assert.match(text, new RegExp(`^# TYPE ${family} (counter|gauge|histogram)$`, 'm'), `${family} is exposed`)
    assert.doesNotMatch(text, new RegExp(id), 'no strategy id in any label')

    // Runs: the dry run is deployed, on time, its lease fresh, and its decisions timed.
    assert.equal(sum(scrape, 'perpetua_runs', { mode: 'dry_run', state: 'deployed' }), 1)
    assert.equal(sum(scrape, 'perpetua_runs', { mode: 'live' }), 0)
    assert.equal(sum(scrape, 'perpetua_runs_behind', { mode: 'dry_run' }), 0)
    const leaseAge = sum(scrape, 'perpetua_run_lease_oldest_age_seconds')
    assert.ok(leaseAge >= 0 && leaseAge < 30, `the oldest lease renewal is ${leaseAge} s old`)
    assert.ok(sum(scrape, 'perpetua_run_decision_seconds_count', { mode: 'dry_run' }) >= 1, 'the dry run decided on bars')
    assert.equal(sum(scrape, 'perpetua_run_decision_seconds_count', { mode: 'live' }), 0)
    assert.equal(sum(scrape, 'perpetua_protective_orders_missing'), 0)
    assert.equal(sum(scrape, 'perpetua_live_orders_total'), 0, 'a dry run sends no order')

    // Jobs: one backtest done, nothing queued or running.
    assert.equal(sum(scrape, 'perpetua_job_duration_seconds_count', { kind: 'backtest', outcome: 'done' }), 1)
    assert.equal(sum(scrape, 'perpetua_job_duration_seconds_count', { outcome: 'failed' }), 0)
    assert.equal(sum(scrape, 'perpetua_jobs', { kind: 'backtest', state: 'queued' }), 0)
    assert.equal(sum(scrape, 'perpetua_jobs', { kind: 'backtest', state: 'running' }), 0)
    assert.equal(sum(scrape, 'perpetua_jobs_oldest_queued_seconds', { kind: 'backtest' }), 0)
    assert.equal(sum(scrape, 'perpetua_jobs_worker_lost_total'), 0)

    // Webhooks: the receiver's 500 is a failed attempt with a retry pending; nothing delivered.
    assert.ok(sum(scrape, 'perpetua_webhook_deliveries_total', { outcome: 'failed' }) >= 1)
    assert.equal(sum(scrape, 'perpetua_webhook_deliveries_total', { outcome: 'delivered' }), 0)
    assert.equal(sum(scrape, 'perpetua_webhook_delivery_seconds_count'), 0)
    assert.ok(scrape.has('perpetua_webhook_oldest_pending_seconds'))
    assert.equal(sum(scrape, 'perpetua_webhook_endpoints_disabled'), 0)

    // Upstream: the replay exchange answered; its weight header was read; the cache was asked.
    assert.ok(sum(scrape, 'perpetua_upstream_requests_total', { status: '200' }) > 0)
    assert.ok(sum(scrape, 'perpetua_upstream_requests_total', { class: 'klines' }) > 0, 'klines is an endpoint class')
    assert.ok(sum(scrape, 'perpetua_upstream_weight_used') > 0)
    assert.equal(sum(scrape, 'perpetua_upstream_weight_limit'), 2400)
    assert.ok(sum(scrape, 'perpetua_cache_requests_total') > 0)

    // Storage and readiness.
    assert.ok(scrape.has('perpetua_db_pool_connections{state="idle"}') && scrape.has('perpetua_db_pool_connections{state="waiting"}'))
    assert.equal(sum(scrape, 'perpetua_ready'), 1)
    assert.equal(sum(scrape, 'perpetua_draining'), 0)
    assert.ok(sum(scrape, 'perpetua_http_requests_total', { route: '/v1/backtest/jobs', method: 'POST' }) >= 1)
  })
})
