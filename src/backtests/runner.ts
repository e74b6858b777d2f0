import crypto from 'node:crypto'
import { TIMEFRAME_MS } from '../strategies/schemas.js'
import type { FastifyBaseLogger } from 'fastify'
import type { PgBoss } from 'pg-boss'
import type { DatabaseHandle, Db } from '../db/connect.js'
import { recordEvent } from '../events/outbox.js'
import type { MarketData } from '../market/market-data.js'
import { EngineCancelled, EnginePool } from '../work/engine-pool.js'
import { checkedHistory, customJob, describeFailure, engineInput } from './engine-input.js'
import { type HistoryCaches, historyCaches } from '../work/history-cache.js'
import { listenForQueued, sendInTransaction } from '../db/queue.js'
import { claimJob, finishJob, type JobRow, recordProgress, recoverLostJobs } from './queries.js'
import { encodeResult } from './result-codec.js'
import { formatMetrics, formatResult } from './result-format.js'
import type { JobConfig } from './schemas.js'
import { marginTableOf } from '../market/leverage-brackets.js'
import { SWEEP_QUEUE } from '../sweeps/task-message.js'
import { startSweepWorkers } from '../sweeps/tasks.js'

export const BACKTEST_QUEUE = 'backtest-run'
/** How often a running job writes progress and checks for a cancel: a cancel takes effect within this. */
export const BEAT_MS = 500
/**
 * A running job without a heartbeat for this long lost its worker (10 missed beats), and every node
 * looks that often: a dead worker's job is found within LOST_AFTER_MS + SWEEP_MS (issue 12: within
 * 10 s). pg-boss's own job heartbeat cannot do this: its heartbeatSeconds is at least 10.
 */
export const LOST_AFTER_MS = 5_000
export const SWEEP_MS = 1_000
/** Runs of one job before it fails as WORKER_LOST: the engine is deterministic, so a second run is safe. */
export const MAX_ATTEMPTS = 2
/** Share of progress given to loading history before the engine starts. */
const LOADING_SHARE = 0.1

const INTERVAL_MS = TIMEFRAME_MS

/** The queues jobs and sweep tasks are sent to; pg-boss needs them to exist before the first send. */
export async function ensureBacktestQueue(boss: PgBoss): Promise<void> {
  for (const queue of [BACKTEST_QUEUE, SWEEP_QUEUE]) {
    // No pg-boss retries: a lost run is found by our sweep (in seconds, not at pg-boss's expiry) and
    // handed to a new queue job, at most once (MAX_ATTEMPTS).
    await boss.createQueue(queue, { retryLimit: 0, expireInSeconds: 3600 })
    // createQueue drops the queue from pg-boss's metadata cache, and a send that misses the cache reads
    // it through pg-boss's own connection: inside our creating transaction that waits for the
    // transaction's own connection (PGlite is one session; tests use one connection) and deadlocks.
    // Any lookup of the queue refills the cache; pg-boss then refreshes it on its own every minute.
    await boss.getJobById(queue, crypto.randomUUID())
  }
}

export interface BacktestWorkerDeps {
  db: Db
  boss: PgBoss
  market: MarketData
  now: () => number
  log: FastifyBaseLogger
  /** Engine threads, and so jobs run at once on this node. */
  workers: number
  /** Megabytes of decoded bars this node keeps between jobs (HISTORY_CACHE_MB). */
  historyCacheMb: number
  /** Its notifications wake this node's workers when a job or sweep task is enqueued on any node, this one included (db/queue.ts). */
  database: DatabaseHandle
  /** How often pg-boss looks for work without a wake-up: 0.5 s unless a test asks otherwise. */
  pollSeconds?: number
}

/** What a queue job asks: run `attempt` (absent: 1) of backtest job `jobId`. */
export interface BacktestRun {
  jobId: string
  attempt?: number
}

/** Runs backtest jobs from the queue on this node, and re-runs (once) or fails jobs whose worker was lost. */
export async function startBacktestWorkers(deps: BacktestWorkerDeps): Promise<{ stop(): Promise<void> }> {
  const pool = new EnginePool(deps.workers)
  // Decoded history this node keeps between jobs (history-cache.ts).
  const caches = historyCaches(deps.historyCacheMb)
  await ensureBacktestQueue(deps.boss)
  // Sweeps' tasks share this node's engine threads and decoded history with its jobs.
  const sweeps = await startSweepWorkers({ ...deps, pool, caches })
  const workerId = await deps.boss.work<BacktestRun>(
    BACKTEST_QUEUE,
    { batchSize: 1, localConcurrency: deps.workers, pollingIntervalSeconds: deps.pollSeconds ?? 0.5 },
    async (jobs) => {
      for (const job of jobs) await runJob(deps, pool, caches, job.data.jobId, job.data.attempt ?? 1)
    },
  )
  const wake = () => deps.boss.notifyWorker(workerId)
  const listener = await listenForQueued(
    deps.database,
    (queue) => {
      if (queue === BACKTEST_QUEUE || queue === '') wake()
      if (queue === SWEEP_QUEUE || queue === '') sweeps.wake()
    },
    (error) => deps.log.warn({ err: error }, 'listening for queued jobs failed: workers poll every 0.5 s meanwhile'),
  )
  const sweep = async () => {
    const now = deps.now()
    try {
      const lost = await deps.db.transaction().execute(async (trx) => {
        const found = await recoverLostJobs(trx, LOST_AFTER_MS, new Date(now), MAX_ATTEMPTS)
        for (const run of found.rerun) await sendInTransaction(deps.boss, trx, BACKTEST_QUEUE, { jobId: run.id, attempt: run.attempt } satisfies BacktestRun)
        return found
      })
      if (lost.rerun.length > 0) deps.log.warn({ jobs: lost.rerun }, 'backtests whose worker was lost run again')
      if (lost.failed.length > 0) deps.log.warn({ jobs: lost.failed }, 'failed backtests whose worker was lost twice')
    } catch (error) {
      deps.log.warn({ err: error }, 'worker-lost sweep failed')
    }
  }
  await sweep()
  const sweeper = setInterval(() => void sweep(), SWEEP_MS)
  sweeper.unref()
  return {
    async stop() {
      clearInterval(sweeper)
      await listener.close()
      await deps.boss.offWork(BACKTEST_QUEUE, { id: workerId }).catch(() => undefined)
      await sweeps.stop()
      await pool.close()
    },
  }
}

async function runJob(deps: BacktestWorkerDeps, pool: EnginePool, caches: HistoryCaches, jobId: string, attempt: number): Promise<void> {
  const { db, now } = deps
  const job = await claimJob(db, jobId, attempt, new Date(now()))
  if (!job) return // cancelled before a worker took it, or this run was already claimed
  let progress = 0
  let cancelled = false
  let stopEngine = () => undefined as void
  const beat = setInterval(() => {
    void recordProgress(db, jobId, attempt, progress).then((owned) => {
      if (!owned) {
        cancelled = true
        stopEngine()
      }
    }, () => undefined)
  }, BEAT_MS)
  try {
    const config = job.config as JobConfig
    const input = await engineInput(deps, caches, config, jobId, () => cancelled, (fraction) => (progress = LOADING_SHARE * fraction))
    if (cancelled) return
    const warnings = await checkedHistory(deps, config, input)
    const custom = await customJob(deps.db, job.user_id, config, input.bars.reduce((sum, series) => sum + series.openTime.length, 0))
    const run = pool.run(input, (fraction) => (progress = LOADING_SHARE + (1 - LOADING_SHARE) * fraction), custom)
    stopEngine = run.cancel
    const result = await run.result
    // Formatted and compressed before the transaction opens: on PGlite (one session) an open
    // transaction holds every other query back, and this is 30-40 ms of CPU for 5,683 trades.
    const metrics = formatMetrics(result.metrics)
    const stored = encodeResult({ ...formatResult(result, INTERVAL_MS[config.timeframe], marginTableOf(config.symbols)), warnings })
    await db.transaction().execute(async (trx) => {
      const at = new Date(now())
      const done = await finishJob(trx, jobId, attempt, { status: 'done', metrics, result: stored }, at)
      const data = { job_id: jobId, status: 'done', template_id: config.template_id, metrics, warnings }
      if (done) await recordEvent(trx, { userId: job.user_id, type: 'backtest.job_done', data, at })
    })
  } catch (error) {
    if (error instanceof EngineCancelled || cancelled) return
    const failure = describeFailure(error)
    if (failure.code === 'ENGINE_ERROR' || failure.code === 'INTERNAL') deps.log.error({ err: error, job: jobId }, 'backtest failed')
    // A failed job is done too: its event carries the error as the job does.
    await db
      .transaction()
      .execute(async (trx) => {
        const at = new Date(now())
        const failed = await finishJob(trx, jobId, attempt, { status: 'failed', error: failure }, at)
        const data = { job_id: jobId, status: 'failed', template_id: (job.config as JobConfig).template_id, error: failure }
        if (failed) await recordEvent(trx, { userId: job.user_id, type: 'backtest.job_done', data, at })
      })
      .catch(() => undefined)
  } finally {
    clearInterval(beat)
  }
}
