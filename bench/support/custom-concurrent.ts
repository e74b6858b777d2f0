import os from 'node:os'
import { EnginePool } from '../../src/work/engine-pool.js'
import type { CustomJob, EngineRequest } from '../../src/work/engine-thread.js'
import { concatBars } from '../../src/backtests/kline-codec.js'
import { jobBudgetMs } from '../../src/custom-templates/sandbox/limits.js'
import type { BacktestResult } from '../../src/engine/index.js'
import { engineBenchData, smaCrossInput } from './engine-bars.js'

/**
 * A child process of the custom bench (bench/custom.ts): the process RSS while `jobs` custom backtests
 * run at once. Its own process, so the peak RSS (ru_maxrss, which never goes down) is this measurement's
 * alone and not the parent's 2.6 M bars or its other sandboxes.
 *
 * The jobs go through the service's own EnginePool and engine threads (engine-thread.ts: one
 * StrategyInstance per job, under the watchdog budget the runner gives a custom job). First as the
 * service runs them by default: a pool of WORKERS (cores − 1) threads, the rest queued. Then with the
 * pool sized to `jobs` threads, so that every job holds its sandbox at the same moment: that pool
 * first runs the built-in sma_cross over the same bars, whose peak is the baseline (process, `jobs`
 * engine threads, engine, bars), so the difference is what the sandboxes add. The bars sit in one
 * SharedArrayBuffer, as the history cache hands them to engine threads (kline-codec.ts concatBars).
 *
 * Reads one ConcurrentRequest as JSON on stdin, writes one ConcurrentAnswer as JSON on stdout.
 */
export interface ConcurrentRequest {
  jobs: number
  /** The first this many of the engine bench's bars. */
  bars: number
  job: CustomJob
}

export interface ConcurrentAnswer {
  /** RSS of this process with its bars loaded, before any engine thread. */
  process_rss_mib: number
  /** The same custom jobs queued to a pool of the default WORKERS threads. */
  default_workers: { workers: number; peak_rss_mib: number; wall_ms: number; done: number; failed: string[] }
  /** The built-in sma_cross, `jobs` at once on `jobs` threads: peak RSS. */
  builtin_peak_rss_mib: number
  builtin_wall_ms: number
  /** The custom module, `jobs` at once on the same (warm) threads: peak RSS, and the highest RSS sampled every 10 ms. */
  custom_peak_rss_mib: number
  custom_sampled_max_rss_mib: number
  custom_wall_ms: number
  /** Most jobs seen running at the same moment (between a job's first progress message and its result). */
  custom_max_running: number
  custom_done: number
  custom_failed: string[]
  /** Every custom job's trades equal the built-in's. */
  custom_equals_builtin: boolean
}

const MIB = 2 ** 20

async function main(): Promise<void> {
  const request = JSON.parse(await readStdin()) as ConcurrentRequest
  const data = engineBenchData(request.bars)
  const bars = { ...data.bars, ...concatBars([{ ...data.bars, quoteVolume: new Float64Array(data.bars.openTime.length).fill(Number.NaN), trades: new Float64Array(data.bars.openTime.length).fill(Number.NaN) }], { shared: true }) }
  const builtinInput: EngineRequest['input'] = smaCrossInput({ bars, funding: data.funding })
  const customInput: EngineRequest['input'] = { ...builtinInput, templateId: request.job.source.id }
  const processRss = process.memoryUsage.rss()
  const budget = { job: request.job, budgetMs: jobBudgetMs(request.bars) }

  // As config.ts defaults WORKERS.
  const workers = Math.max(1, os.availableParallelism() - 1)
  const queued = new EnginePool(workers)
  const queuedStarted = performance.now()
  const queuedSettled = await Promise.allSettled(Array.from({ length: request.jobs }, () => queued.run(customInput, () => undefined, budget).result))
  const queuedWall = performance.now() - queuedStarted
  await queued.close()
  const defaultWorkers = {
    workers,
    peak_rss_mib: mib(peakRss()),
    wall_ms: Math.round(queuedWall),
    done: queuedSettled.filter((s) => s.status === 'fulfilled').length,
    failed: queuedSettled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => String((s.reason as Error).message)),
  }

  const pool = new EnginePool(request.jobs)
  try {
    const builtinStarted = performance.now()
    const builtin = await Promise.all(Array.from({ length: request.jobs }, () => pool.run(builtinInput, () => undefined).result))
    const builtinWall = performance.now() - builtinStarted
    const builtinPeak = peakRss()

    let running = 0
    let maxRunning = 0
    let sampled = 0
    const sampler = setInterval(() => (sampled = Math.max(sampled, process.memoryUsage.rss())), 10)
    const customStarted = performance.now()
    const settled = await Promise.allSettled(
      Array.from({ length: request.jobs }, () => {
        let started = false
        const { result } = pool.run(
          customInput,
          () => {
            if (started) return
            started = true
            maxRunning = Math.max(maxRunning, ++running)
          },
          budget,
        )
        return result.finally(() => {
          if (started) running--
        })
      }),
    )
    const customWall = performance.now() - customStarted
    clearInterval(sampler)
    sampled = Math.max(sampled, process.memoryUsage.rss())
    const done = settled.filter((s): s is PromiseFulfilledResult<BacktestResult> => s.status === 'fulfilled').map((s) => s.value)
    const failed = settled.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => String((s.reason as Error).message))
    const expected = JSON.stringify(builtin[0]!.trades)
    const answer: ConcurrentAnswer = {
      process_rss_mib: mib(processRss),
      default_workers: defaultWorkers,
      builtin_peak_rss_mib: mib(builtinPeak),
      builtin_wall_ms: Math.round(builtinWall),
      custom_peak_rss_mib: mib(peakRss()),
      custom_sampled_max_rss_mib: mib(sampled),
      custom_wall_ms: Math.round(customWall),
      custom_max_running: maxRunning,
      custom_done: done.length,
      custom_failed: failed,
      custom_equals_builtin:
        done.length === request.jobs && [...builtin, ...done].every((result) => result.trades.length > 0 && JSON.stringify(result.trades) === expected),
    }
    process.stdout.write(`${JSON.stringify(answer)}\n`)
  } finally {
    await pool.close()
  }
}

/** The process's peak resident set so far (ru_maxrss, KiB on Linux), every thread included. */
function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024
}

function mib(bytes: number): number {
  return Math.round((bytes / MIB) * 10) / 10
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  process.exitCode = 1
})
