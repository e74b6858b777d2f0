import { sendInTransaction } from '../db/queue.js'
import { checkedHistory, customJob, describeFailure, type EngineInput, engineInput } from '../backtests/engine-input.js'
import { formatMetrics } from '../backtests/result-format.js'
import type { JobConfig } from '../backtests/schemas.js'
import type { BarSeries } from '../engine/index.js'
import type { CustomJob, RunSummary } from '../work/engine-thread.js'
import type { WorkContext, WorkHandler } from '../work/work-handler.js'
import { observeJob } from '../ops/registry.js'
import { anyLostTask, beatTask, claimTask, configurationsOf, finishRunsTask, finishSweep, handBackTask, recoverLostTasks, type StoredRun, storeRuns } from './queries.js'
import { encodeFloats, returnsMatrix } from './returns.js'
import { sweepResult } from './result.js'
import type { Objective, SweepConfig } from './schemas.js'
import { configurationExits, splitConfiguration } from './swept-exits.js'
import { exitRulesOf } from '../strategies/exits.js'
import { SWEEP_QUEUE, type SweepTask } from './task-message.js'

/** Runs stored together: one transaction per batch, and at least every STORE_MS. */
const STORE_MS = 250
/** Configurations of one task queued on the node's engine threads at once, so a thread never waits for the task's store. */
const IN_FLIGHT = 4
/** Sweeps whose history this node keeps ready for their next task. */
const KEPT_SWEEPS = 4

/** A run of a task on this node: the task and its sweep as claimTask took them. */
type ClaimedTask = NonNullable<Awaited<ReturnType<typeof claimTask>>> & { message: SweepTask }

/** A sweep's history as this node shares it across the sweep's tasks: loaded once, in shared memory. */
interface SweepInput {
  input: EngineInput
  custom: { job: CustomJob; budgetMs: number } | undefined
}

/**
 * Sweep tasks on the worker side's loop. A node keeps the history of its last KEPT_SWEEPS sweeps
 * loaded, in shared memory, for their next tasks.
 */
export function taskHandler(): WorkHandler<SweepTask, ClaimedTask> {
  const inputs = new Map<string, Promise<SweepInput>>()
  return {
    queue: SWEEP_QUEUE,
    name: 'sweep tasks',
    kind: 'sweep',
    // One task more than engine threads: the next task is claimed and its configurations read while
    // the others run, so no thread waits between tasks.
    concurrency: (engineThreads) => engineThreads + 1,
    async claim(work, message) {
      const claimed = await claimTask(work.db, message.sweepId, message.task, message.attempt, new Date(work.now()))
      return claimed && { ...claimed, message }
    },
    beat: (work, { message, task }) => beatTask(work.db, message.sweepId, task.task_no, task.attempt),
    run: (work, claimed, lost) => runTask(work, inputs, claimed, lost),
    async fail(work, claimed, error) {
      const failure = claimed.task.kind === 'statistics' ? statisticsFailure(error) : describeFailure(error)
      if (failure.code === 'ENGINE_ERROR' || failure.code === 'INTERNAL' || failure.code === 'STATISTICS_ERROR') work.log.error({ err: error, sweep: claimed.message.sweepId }, 'sweep failed')
      inputs.delete(claimed.message.sweepId)
      const { identity, fence } = ownership(claimed)
      const ended = await work.db.transaction().execute((trx) => finishSweep(trx, identity, fence, { status: 'failed', error: failure }, new Date(work.now())))
      if (ended) observeJob('sweep', 'failed', claimed.sweep, work.now())
    },
    recover: (trx, lost) => recoverLostTasks(trx, lost.lostAfterMs, lost.at, lost.maxAttempts),
    anyLost: anyLostTask,
    handBack: async (trx, { message, task }) => ((await handBackTask(trx, message.sweepId, task.task_no, task.attempt)) ? message : undefined),
  }
}

/** The sweep a task ends (finishSweep), and the run of the task that must still own it. */
function ownership({ message, task, sweep }: ClaimedTask) {
  const identity = { id: message.sweepId, userId: sweep.user_id, templateId: (sweep.config as SweepConfig).base.template_id }
  return { identity, fence: { taskNo: task.task_no, attempt: task.attempt } }
}

async function runTask(work: WorkContext, inputs: Map<string, Promise<SweepInput>>, claimed: ClaimedTask, lost: AbortSignal): Promise<void> {
  const { db, now } = work
  const { message, task, sweep } = claimed
  const config = sweep.config as SweepConfig
  if (task.kind === 'statistics') {
    const matrix = await returnsMatrix(db, message.sweepId)
    const result = sweepResult(config, matrix)
    const { identity, fence } = ownership(claimed)
    const ended = await db.transaction().execute((trx) => finishSweep(trx, identity, fence, { status: 'done', result, best: result.best as Record<string, unknown> }, new Date(now())))
    if (ended) observeJob('sweep', 'done', sweep, now())
    return
  }
  const configurations = await configurationsOf(db, message.sweepId, task.first_run, task.run_count)
  const shared = await sweepInput(work, inputs, message.sweepId, sweep.user_id, config)
  await runConfigurations(work, message.sweepId, sweep.user_id, shared, config, task.first_run, configurations, lost)
  if (lost.aborted) return
  await db.transaction().execute(async (trx) => {
    const finished = await finishRunsTask(trx, message.sweepId, task.task_no, task.attempt)
    if (finished.statisticsTask !== undefined) {
      await sendInTransaction(work.boss, trx, SWEEP_QUEUE, { sweepId: message.sweepId, task: finished.statisticsTask, attempt: 1, user: sweep.user_id } satisfies SweepTask)
    }
  })
}

/**
 * The task's configurations on this node's engine threads, IN_FLIGHT at a time (each taking its turn as
 * a sweep's run of the sweep's user: engine-pool.ts), each run's metrics and
 * daily equity (only those cross from the thread) stored as it comes, in batches behind the loop.
 */
async function runConfigurations(
  work: WorkContext,
  sweepId: string,
  userId: number,
  shared: SweepInput,
  { base, objective }: SweepConfig,
  firstRun: number,
  configurations: Record<string, unknown>[],
  lost: AbortSignal,
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
    storing = storing.then(() => work.db.transaction().execute(async (trx) => void (await storeRuns(trx, sweepId, batch, days!))))
    storing.catch(() => undefined) // awaited at the end; never an unhandled rejection meanwhile
  }
  const inFlight: Promise<{ summary: RunSummary; swept: Record<string, string> }>[] = []
  const running = new Set<() => void>()
  lost.addEventListener('abort', () => {
    for (const cancel of running) cancel()
  })
  let submitted = 0
  const submit = () => {
    if (submitted >= configurations.length) return
    // Only the run's params and exits are its own: the history is the sweep's, shared.
    const { params, swept } = splitConfiguration(configurations[submitted++]!)
    const exits = configurationExits(base.exits, swept)
    const run = work.pool.summarize({ ...shared.input, params, exits: exits && exitRulesOf(exits) }, shared.custom, { user: userId, lane: 'sweep' })
    running.add(run.cancel)
    const result = run.result.then((summary) => ({ summary, swept })).finally(() => running.delete(run.cancel))
    result.catch(() => undefined) // awaited in the loop, or settled below when the loop ends early
    inFlight.push(result)
  }
  for (let i = 0; i < IN_FLIGHT; i++) submit()
  for (let k = 0; k < configurations.length && !lost.aborted; k++) {
    const { summary, swept } = await inFlight.shift()!
    submit()
    days ??= encodeFloats(summary.times)
    pending.push(storedRun(firstRun + k, summary, swept, objective))
    if (Date.now() - lastStore >= STORE_MS) store()
  }
  if (lost.aborted) await Promise.allSettled(inFlight)
  else store()
  await storing
}

/** A run as stored: its params show the swept exits it ran with, under the grid's keys (swept-exits.ts). */
function storedRun(runNo: number, result: RunSummary, swept: Record<string, string>, objective: Objective): StoredRun {
  const metrics = formatMetrics(result.metrics)
  const value = metrics[objective]
  return {
    run_no: runNo,
    params: { ...result.params, ...swept },
    metrics,
    objective: value === null || value === undefined ? null : Number(value),
    equity: encodeFloats(result.values),
  }
}

/** The sweep's history on this node: loaded and checked once, then shared by every task of the sweep here. */
function sweepInput(work: WorkContext, inputs: Map<string, Promise<SweepInput>>, sweepId: string, userId: number, config: SweepConfig): Promise<SweepInput> {
  let input = inputs.get(sweepId)
  if (!input) {
    input = loadSweepInput(work, sweepId, userId, config.base, variesExits(config))
    inputs.set(sweepId, input)
    input.catch(() => inputs.delete(sweepId))
    for (const old of inputs.keys()) if (inputs.size > KEPT_SWEEPS) inputs.delete(old)
  }
  return input
}

/** Whether the sweep's configurations set protective exits its base lacks (grid or random keys `exits.*`). */
export function variesExits(config: Pick<SweepConfig, 'grid' | 'random'>): boolean {
  return [...Object.keys(config.grid ?? {}), ...Object.keys(config.random?.space ?? {})].some((key) => key.startsWith('exits'))
}

async function loadSweepInput(work: WorkContext, sweepId: string, userId: number, base: JobConfig, protective: boolean): Promise<SweepInput> {
  const loaded = await engineInput(work, work.caches, base, sweepId, () => false, () => undefined, protective)
  await checkedHistory(work, base, loaded)
  // In shared memory: each run's input then reaches its engine thread without a copy of the bars.
  // Finer bars for exits, when the input holds them, are shared as the strategy's bars are.
  const input = {
    ...loaded,
    bars: loaded.bars.map(shareBars),
    funding: loaded.funding.map((series) => ({ ...series, ...shareColumns(series, ['time', 'rate', 'markPrice'] as const) })),
    detail: loaded.detail?.map((symbol) => symbol && { ...(symbol.bars && { bars: symbol.bars.map(shareBars) }), ...(symbol.mark && { mark: symbol.mark.map(shareBars) }) }),
  }
  const custom = await customJob(work.db, userId, base, input.bars.reduce((sum, series) => sum + series.openTime.length, 0))
  return { input, custom }
}

/** A series with the columns the engine reads in shared memory. */
function shareBars<S extends BarSeries>(series: S): S {
  return { ...series, ...shareColumns(series, ['openTime', 'open', 'high', 'low', 'close', 'volume'] as const) }
}

/** The columns in shared memory; one already there (the store's loads are) is shared as it is, not copied. */
function shareColumns<K extends string>(series: Record<K, Float64Array>, keys: readonly K[]): Record<K, Float64Array> {
  const shared = {} as Record<K, Float64Array>
  for (const key of keys) {
    if (series[key].buffer instanceof SharedArrayBuffer) {
      shared[key] = series[key]
      continue
    }
    const column = new Float64Array(new SharedArrayBuffer(series[key].byteLength))
    column.set(series[key])
    shared[key] = column
  }
  return shared
}

function statisticsFailure(error: unknown): { code: string; message: string } {
  return { code: 'STATISTICS_ERROR', message: `the sweep's statistics could not be computed: ${error instanceof Error ? error.message : String(error)}` }
}

