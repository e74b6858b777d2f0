import type { Db } from '../db/connect.js'
import { insertInTransaction, sendInTransaction } from '../db/queue.js'
import { EngineCancelled, type EnginePool } from '../work/engine-pool.js'
import type { CustomJob, RunSummary } from '../work/engine-thread.js'
import type { HistoryCaches } from '../work/history-cache.js'
import { formatMetrics } from '../backtests/result-format.js'
import { checkedHistory, customJob, describeFailure, type EngineInput, engineInput } from '../backtests/engine-input.js'
import { BEAT_MS, type BacktestWorkerDeps, LOST_AFTER_MS, MAX_ATTEMPTS, SWEEP_MS } from '../backtests/runner.js'
import type { JobConfig } from '../backtests/schemas.js'
import { beatTask, claimTask, configurationsOf, finishRunsTask, finishSweep, recoverLostTasks, type StoredRun, storeRuns } from './queries.js'
import { encodeFloats, returnsMatrix } from './returns.js'
import { sweepResult } from './result.js'
import type { Objective, SweepConfig } from './schemas.js'
import { SWEEP_QUEUE, type SweepTask } from './task-message.js'

/** Runs stored together: one transaction per batch, and at least every STORE_MS. */
const STORE_MS = 250
/** Configurations of one task queued on the node's engine threads at once, so a thread never waits for the task's store. */
const IN_FLIGHT = 4
/** Sweeps whose history this node keeps ready for their next task. */
const KEPT_SWEEPS = 4

export interface SweepWorkerDeps extends BacktestWorkerDeps {
  pool: EnginePool
  caches: HistoryCaches
}

/** A sweep's history as this node shares it across the sweep's tasks: loaded once, in shared memory. */
interface SweepInput {
  input: EngineInput
  custom: { job: CustomJob; budgetMs: number } | undefined
}

/** Runs sweep tasks from the queue on this node, and re-runs (once) or fails tasks whose worker was lost. */
export async function startSweepWorkers(deps: SweepWorkerDeps): Promise<{ wake(): void; stop(): Promise<void> }> {
  const inputs = new Map<string, Promise<SweepInput>>()
  let wake = () => undefined as void
  // One task more than engine threads: the next task is claimed and its configurations read while
  // the others run, so no thread waits between tasks.
  const workerId = await deps.boss.work<SweepTask>(SWEEP_QUEUE, { batchSize: 1, localConcurrency: deps.workers + 1, pollingIntervalSeconds: deps.pollSeconds ?? 0.5 }, async (jobs) => {
    for (const job of jobs) await runTask(deps, inputs, job.data)
    // pg-boss would look for the next task at its next poll (0.5 s): a sweep's next task is there now.
    wake()
  })
  wake = () => deps.boss.notifyWorker(workerId)
  const recover = async () => {
    try {
      const lost = await deps.db.transaction().execute(async (trx) => {
        const found = await recoverLostTasks(trx, LOST_AFTER_MS, new Date(deps.now()), MAX_ATTEMPTS)
        await insertInTransaction(deps.boss, trx, SWEEP_QUEUE, found.rerun.map((run) => ({ sweepId: run.sweepId, task: run.task, attempt: run.attempt }) satisfies SweepTask))
        return found
      })
      if (lost.rerun.length > 0) deps.log.warn({ tasks: lost.rerun }, 'sweep tasks whose worker was lost run again')
      if (lost.failed.length > 0) deps.log.warn({ sweeps: lost.failed }, 'failed sweeps whose worker was lost twice')
    } catch (error) {
      deps.log.warn({ err: error }, 'sweep worker-lost check failed')
    }
  }
  await recover()
  const timer = setInterval(() => void recover(), SWEEP_MS)
  timer.unref()
  return {
    wake: () => wake(),
    async stop() {
      clearInterval(timer)
      await deps.boss.offWork(SWEEP_QUEUE, { id: workerId }).catch(() => undefined)
    },
  }
}

async function runTask(deps: SweepWorkerDeps, inputs: Map<string, Promise<SweepInput>>, message: SweepTask): Promise<void> {
  const { db, now } = deps
  const claimed = await claimTask(db, message.sweepId, message.task, message.attempt, new Date(now()))
  if (!claimed) return // cancelled, ended, or this run of the task was already claimed
  const { task, sweep } = claimed
  const config = sweep.config as SweepConfig
  const identity = { id: message.sweepId, userId: sweep.user_id, templateId: config.base.template_id }
  const fence = { taskNo: task.task_no, attempt: task.attempt }
  let stopped = false
  const stops = new Set<() => void>()
  const beat = setInterval(() => {
    void beatTask(db, message.sweepId, task.task_no, task.attempt).then((owned) => {
      if (owned) return
      stopped = true
      for (const stop of stops) stop()
    }, () => undefined)
  }, BEAT_MS)
  try {
    if (task.kind === 'statistics') {
      const matrix = await returnsMatrix(db, message.sweepId)
      const result = sweepResult(config, matrix)
      await db.transaction().execute((trx) => finishSweep(trx, identity, fence, { status: 'done', result, best: result.best as Record<string, unknown> }, new Date(now())))
      return
    }
    const shared = await sweepInput(deps, inputs, message.sweepId, sweep.user_id, config.base)
    const configurations = await configurationsOf(db, message.sweepId, task.first_run, task.run_count)
    await runConfigurations(deps, message.sweepId, shared, config.objective, task.first_run, configurations, () => stopped, stops)
    if (stopped) return
    await db.transaction().execute(async (trx) => {
      const finished = await finishRunsTask(trx, message.sweepId, task.task_no, task.attempt)
      if (finished.statisticsTask !== undefined) {
        await sendInTransaction(deps.boss, trx, SWEEP_QUEUE, { sweepId: message.sweepId, task: finished.statisticsTask, attempt: 1 } satisfies SweepTask)
      }
    })
  } catch (error) {
    if (error instanceof EngineCancelled || stopped) return
    const failure = task.kind === 'statistics' ? statisticsFailure(error) : describeFailure(error)
    if (failure.code === 'ENGINE_ERROR' || failure.code === 'INTERNAL' || failure.code === 'STATISTICS_ERROR') deps.log.error({ err: error, sweep: message.sweepId }, 'sweep failed')
    inputs.delete(message.sweepId)
    await db
      .transaction()
      .execute((trx) => finishSweep(trx, identity, fence, { status: 'failed', error: failure }, new Date(now())))
      .catch(() => undefined)
  } finally {
    clearInterval(beat)
  }
}

/**
 * The task's configurations on this node's engine threads, IN_FLIGHT at a time, each run's metrics and
 * daily equity (only those cross from the thread) stored as it comes, in batches behind the loop.
 */
async function runConfigurations(
  deps: SweepWorkerDeps,
  sweepId: string,
  shared: SweepInput,
  objective: Objective,
  firstRun: number,
  configurations: Record<string, unknown>[],
  isStopped: () => boolean,
  stops: Set<() => void>,
): Promise<void> {
  const pending: StoredRun[] = []
  let days: Buffer | undefined
  let lastStore = Date.now()
  // Stores run behind the loop (one at a time, in order): the loop keeps the engine threads fed meanwhile.
  let storing = Promise.resolve()
  const store = () => {
    const batch = pending.splice(0)
    lastStore = Date.now()
    if (batch.length === 0) return
    storing = storing.then(() => deps.db.transaction().execute(async (trx) => void (await storeRuns(trx, sweepId, batch, days!))))
    storing.catch(() => undefined) // awaited at the end; never an unhandled rejection meanwhile
  }
  const inFlight: Promise<RunSummary>[] = []
  let submitted = 0
  const submit = () => {
    if (submitted >= configurations.length) return
    const run = deps.pool.summarize({ ...shared.input, params: configurations[submitted++] }, shared.custom)
    stops.add(run.cancel)
    const result = run.result.finally(() => stops.delete(run.cancel))
    result.catch(() => undefined) // awaited in the loop, or settled below when the loop ends early
    inFlight.push(result)
  }
  for (let i = 0; i < IN_FLIGHT; i++) submit()
  for (let k = 0; k < configurations.length && !isStopped(); k++) {
    const result = await inFlight.shift()!
    submit()
    days ??= encodeFloats(result.times)
    pending.push(storedRun(firstRun + k, result, objective))
    if (Date.now() - lastStore >= STORE_MS) store()
  }
  if (isStopped()) await Promise.allSettled(inFlight)
  else store()
  await storing
}

function storedRun(runNo: number, result: RunSummary, objective: Objective): StoredRun {
  const metrics = formatMetrics(result.metrics)
  const value = metrics[objective]
  return {
    run_no: runNo,
    params: result.params,
    metrics,
    objective: value === null || value === undefined ? null : Number(value),
    equity: encodeFloats(result.values),
  }
}

/** The sweep's history on this node: loaded and checked once, then shared by every task of the sweep here. */
function sweepInput(deps: SweepWorkerDeps, inputs: Map<string, Promise<SweepInput>>, sweepId: string, userId: number, base: JobConfig): Promise<SweepInput> {
  let input = inputs.get(sweepId)
  if (!input) {
    input = loadSweepInput(deps, sweepId, userId, base)
    inputs.set(sweepId, input)
    input.catch(() => inputs.delete(sweepId))
    for (const old of inputs.keys()) if (inputs.size > KEPT_SWEEPS) inputs.delete(old)
  }
  return input
}

async function loadSweepInput(deps: SweepWorkerDeps, sweepId: string, userId: number, base: JobConfig): Promise<SweepInput> {
  const loaded = await engineInput(deps, deps.caches, base, sweepId, () => false, () => undefined)
  await checkedHistory(deps, base, loaded)
  // In shared memory: each run's input then reaches its engine thread without a copy of the bars.
  const input = {
    ...loaded,
    bars: loaded.bars.map((series) => ({ ...series, ...shareColumns(series, ['openTime', 'open', 'high', 'low', 'close', 'volume'] as const) })),
    funding: loaded.funding.map((series) => ({ ...series, ...shareColumns(series, ['time', 'rate', 'markPrice'] as const) })),
  }
  const custom = await customJob(deps.db, userId, base, input.bars.reduce((sum, series) => sum + series.openTime.length, 0))
  return { input, custom }
}

function shareColumns<K extends string>(series: Record<K, Float64Array>, keys: readonly K[]): Record<K, Float64Array> {
  const shared = {} as Record<K, Float64Array>
  for (const key of keys) {
    const column = new Float64Array(new SharedArrayBuffer(series[key].byteLength))
    column.set(series[key])
    shared[key] = column
  }
  return shared
}

function statisticsFailure(error: unknown): { code: string; message: string } {
  return { code: 'STATISTICS_ERROR', message: `the sweep's statistics could not be computed: ${error instanceof Error ? error.message : String(error)}` }
}

