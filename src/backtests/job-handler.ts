import type { BacktestResult } from '../engine/index.js'
import { recordEvent } from '../events/outbox.js'
import { marginTableOf } from '../market/leverage-brackets.js'
import { observeJob } from '../ops/registry.js'
import { TIMEFRAME_MS } from '../strategies/timeframes.js'
import type { WorkContext, WorkHandler } from '../work/work-handler.js'
import { checkedHistory, customJob, describeFailure, engineInput } from './engine-input.js'
import { BACKTEST_QUEUE, type BacktestRun } from './job-message.js'
import { anyLostJob, claimJob, finishJob, handBackJob, type JobRow, recordProgress, recoverLostJobs } from './queries.js'
import { encodeResult } from './result-codec.js'
import { formatMetrics, formatResult } from './result-format.js'
import type { JobConfig } from './schemas.js'

/** Share of progress given to loading history before the engine starts. */
const LOADING_SHARE = 0.1

/** A run of a job on this node: `progress` is what its next beat records. */
interface ClaimedJob {
  job: JobRow
  attempt: number
  progress: number
}

/** Backtest jobs on the worker side's loop: one engine thread each, so as many at once as the node has threads. */
export function jobHandler(): WorkHandler<BacktestRun, ClaimedJob> {
  return {
    queue: BACKTEST_QUEUE,
    name: 'backtest jobs',
    kind: 'backtest',
    concurrency: (engineThreads) => engineThreads,
    async claim(work, message) {
      const attempt = message.attempt ?? 1
      const job = await claimJob(work.db, message.jobId, attempt, new Date(work.now()))
      return job && { job, attempt, progress: 0 }
    },
    beat: (work, run) => recordProgress(work.db, run.job.id, run.attempt, run.progress),
    run: runJob,
    fail: failJob,
    handBack: async (trx, { job, attempt }) => ((await handBackJob(trx, job.id, attempt)) ? ({ jobId: job.id, attempt, user: job.user_id } satisfies BacktestRun) : undefined),
    async recover(trx, lost) {
      const found = await recoverLostJobs(trx, lost.lostAfterMs, lost.at, lost.maxAttempts)
      return { rerun: found.rerun.map((run) => ({ jobId: run.id, attempt: run.attempt, user: run.userId }) satisfies BacktestRun), failed: found.failed }
    },
    anyLost: anyLostJob,
  }
}

async function runJob(work: WorkContext, run: ClaimedJob, lost: AbortSignal): Promise<void> {
  const { db, now } = work
  const { job, attempt } = run
  const config = job.config as JobConfig
  const load = (protective: boolean) => engineInput(work, work.caches, config, job.id, () => lost.aborted, (fraction) => (run.progress = LOADING_SHARE * fraction), protective)
  let input = await load(false)
  if (lost.aborted) return
  const warnings = await checkedHistory(work, config, input)
  const custom = await customJob(db, job.user_id, config, input.bars.reduce((sum, series) => sum + series.openTime.length, 0))
  const simulate = async (): Promise<BacktestResult> => {
    const engine = work.pool.run(input, (fraction) => (run.progress = LOADING_SHARE + (1 - LOADING_SHARE) * fraction), custom, { user: job.user_id, lane: 'job' })
    if (lost.aborted) engine.cancel()
    else lost.addEventListener('abort', engine.cancel, { once: true })
    return engine.result
  }
  let result = await simulate()
  // Whether a user's module states protective levels is known only from its answers: one that did is run again
  // with the finer bars config exits get, so its levels are resolved inside the bar as honestly (the run is
  // deterministic: same code, seed and bars). A module that never states one pays nothing.
  if (custom !== undefined && result.exitResolution !== undefined && input.detail === undefined && !lost.aborted) {
    input = await load(true)
    if (input.detail !== undefined) result = await simulate()
  }
  // Formatted and compressed before the transaction opens: on PGlite (one session) an open
  // transaction holds every other query back, and this is 30-40 ms of CPU for 5,683 trades.
  const metrics = formatMetrics(result.metrics)
  const stored = encodeResult({ ...formatResult(result, TIMEFRAME_MS[config.timeframe], marginTableOf(config.symbols)), warnings })
  const done = await db.transaction().execute(async (trx) => {
    const at = new Date(now())
    const done = await finishJob(trx, job.id, attempt, { status: 'done', metrics, result: stored }, at)
    const data = { job_id: job.id, status: 'done', template_id: config.template_id, metrics, warnings }
    if (done) await recordEvent(trx, { userId: job.user_id, type: 'backtest.job_done', data, at })
    return done
  })
  if (done) observeJob('backtest', 'done', job, now())
}

async function failJob(work: WorkContext, { job, attempt, progress }: ClaimedJob, error: unknown): Promise<void> {
  const failure = describeFailure(error)
  if (failure.code === 'ENGINE_ERROR' || failure.code === 'INTERNAL') work.log.error({ err: error, job: job.id }, 'backtest failed')
  // A failed job is done too: its event carries the error as the job does.
  const failed = await work.db.transaction().execute(async (trx) => {
    const at = new Date(work.now())
    const failed = await finishJob(trx, job.id, attempt, { status: 'failed', error: failure, progress }, at)
    const data = { job_id: job.id, status: 'failed', template_id: (job.config as JobConfig).template_id, error: failure }
    if (failed) await recordEvent(trx, { userId: job.user_id, type: 'backtest.job_done', data, at })
    return failed
  })
  if (failed) observeJob('backtest', 'failed', job, work.now())
}
