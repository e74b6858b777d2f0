import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import * as esbuild from 'esbuild'
import { compileModule } from '../src/custom-templates/sandbox/compile-module.js'
import { customTemplate, type CustomTemplateSource } from '../src/custom-templates/sandbox/custom-template.js'
import { inspectModule } from '../src/custom-templates/sandbox/inspect-module.js'
import { SANDBOX_LIMITS } from '../src/custom-templates/sandbox/limits.js'
import { loadSmokeData } from '../src/custom-templates/sandbox/smoke-bars.js'
import { StrategyInstance } from '../src/custom-templates/sandbox/strategy-instance.js'
import { type BacktestInput, type BacktestResult, type BarSeries, type FundingSeries, runBacktest } from '../src/engine/index.js'
import { atLeast, atMost } from './support/ceiling.js'
import type { ConcurrentAnswer, ConcurrentRequest } from './support/custom-concurrent.js'
import { engineBenchData, SOURCE, smaCrossInput } from './support/engine-bars.js'
import { log } from './support/log.js'
import { REPO_ROOT } from './support/server.js'
import type { SuiteResult } from './support/suite.js'

/**
 * The goals of issue 22 ("Speed"): the custom sma_cross over the engine bench's 2.6 M 1m bars at ≥ 3 M
 * bars/s on one core, a sandbox started within 20 ms, and 20 custom backtests running at once within
 * the memory caps (20 × the instance's 64 MiB over the process's own baseline).
 */
const GOAL_BARS_PER_S = 3_000_000
const GOAL_START_MS = 20
const CONCURRENT_JOBS = 20
/** Each concurrent job's bars: a tenth of the engine bench's (half a year of 1m bars), so 20 of them finish in a minute on 2 cores. */
const CONCURRENT_BARS = 260_000
const START_RUNS = 20
const BUILTIN_WARMUP_RUNS = 3
const BUILTIN_RUNS = 9
/** A custom run takes seconds: one unmeasured run (as the built-in gets its warm-up runs), then three. */
const CUSTOM_WARMUP_RUNS = 1
const CUSTOM_RUNS = 3
const MODULE = path.join(REPO_ROOT, 'examples', 'strategies', 'sma-cross.js')
const SEED = 1
const MIB = 2 ** 20
/** A module that answers NaN at once: what the guest driver and the crossings cost with no strategy in them. */
const EMPTY_MODULE = 'export function create() { return { onBar() { return NaN } } }'

/**
 * examples/strategies/sma-cross.js, a user's module, run as the engine thread runs a custom job
 * (src/work/engine-thread.ts: StrategyInstance.load, customTemplate, runBacktest), beside the
 * built-in sma_cross on the same bars and input (bench/backtest.ts), trade for trade; then how long a
 * sandbox takes to start, and the process's memory with 20 custom jobs at once (a child process).
 */
export async function run(): Promise<SuiteResult> {
  const failures: string[] = []
  const code = compileModule(fs.readFileSync(MODULE, 'utf8'), 'javascript').code
  const params = { fast: 10, slow: 30, allow_short: false }

  // First, so that the cold start is this process's first WebAssembly instance.
  log(`start: StrategyInstance.load to the first call, ${START_RUNS} times after one cold start`)
  const start = await measureStart(code, params)
  // The same inspection an upload gets (contract, params, warmup, smoke run): its description drives the run.
  const description = await inspectModule(code, loadSmokeData())
  const source: CustomTemplateSource = { id: 'tpl-0000000000bench0', version: 1, description, timeframe: '1m' }

  // In a child process: its peak RSS is the jobs' alone, not this process's bars and instances.
  log(`memory: ${CONCURRENT_JOBS} custom backtests of ${CONCURRENT_BARS} bars at once, in a child process`)
  const concurrent = await measureConcurrent({ jobs: CONCURRENT_JOBS, bars: CONCURRENT_BARS, job: { source, code, seed: SEED } })
  const capMib = SANDBOX_LIMITS.memoryBytes / MIB
  const allowedMib = concurrent.builtin_peak_rss_mib + CONCURRENT_JOBS * capMib
  if (concurrent.default_workers.done !== CONCURRENT_JOBS) failures.push(`${CONCURRENT_JOBS - concurrent.default_workers.done} of the queued custom jobs failed: ${concurrent.default_workers.failed[0]}`)
  if (concurrent.custom_done !== CONCURRENT_JOBS) failures.push(`${CONCURRENT_JOBS - concurrent.custom_done} of the concurrent custom jobs failed: ${concurrent.custom_failed[0]}`)
  if (concurrent.custom_max_running < CONCURRENT_JOBS) failures.push(`only ${concurrent.custom_max_running} custom jobs ran at the same moment, not ${CONCURRENT_JOBS}`)
  if (!concurrent.custom_equals_builtin) failures.push('a concurrent custom job made other trades than the built-in sma_cross')

  log(`loading ${SOURCE}`)
  const { bars, funding, sourceBars } = engineBenchData()
  const input = { ...smaCrossInput({ bars, funding }), params }
  const n = bars.openTime.length
  log(`built ${n} bars (${sourceBars} real bars, played forward and backward) and ${funding.time.length} funding events`)

  log(`built-in sma_cross: ${BUILTIN_WARMUP_RUNS} + ${BUILTIN_RUNS} runs`)
  const builtin = await timeRuns(BUILTIN_WARMUP_RUNS, BUILTIN_RUNS, (timed) => timed(() => runBacktest(input)))

  log(`custom sma_cross: ${CUSTOM_WARMUP_RUNS} + ${CUSTOM_RUNS} runs (seconds each)`)
  let instanceMemory = 0
  // Per run, the wall time spent inside StrategyInstance.bars (the crossings and the guest), timed around the real calls.
  const sandboxMs: number[] = []
  const custom = await timeRuns(CUSTOM_WARMUP_RUNS, CUSTOM_RUNS, async (timed) => {
    const instance = await StrategyInstance.load(code, SEED)
    const inside = timeCalls(instance)
    try {
      const template = customTemplate(source, instance)
      const result = timed(() => runBacktest({ ...input, templateId: source.id, template }))
      sandboxMs.push(inside.ms)
      instanceMemory = instance.memoryBytes()
      return result
    } finally {
      instance.dispose()
    }
  })
  sandboxMs.splice(0, CUSTOM_WARMUP_RUNS)
  const parity = compareResults(builtin.result, custom.result)
  if (!parity.equal) failures.push(`the custom sma_cross differs from the built-in: ${parity.difference}`)
  if (builtin.result.trades.length === 0) failures.push('sma_cross made no trades: the measured runs did no real work')
  if (custom.result.barsProcessed !== n) failures.push('the custom run did not process every bar')

  log('breakdown: the bars straight into three sandboxes batch by batch (the module, an empty module, no bars)')
  const medianRun = custom.ms.indexOf(custom.medianMs)
  const breakdown = await measureBreakdown(code, input, bars, funding, { totalMs: custom.medianMs, sandboxMs: sandboxMs[medianRun]! })

  const rate = (ms: number) => Math.round((n / ms) * 1000)
  const report = {
    suite: 'custom',
    module: 'examples/strategies/sma-cross.js',
    bars: n,
    source: `${SOURCE}, ${sourceBars} bars played alternately forward and backward (bench/backtest.ts's bars and input)`,
    funding_events: funding.time.length,
    params: input.params,
    custom: {
      runs: CUSTOM_RUNS,
      warmup_runs: CUSTOM_WARMUP_RUNS,
      runs_ms: custom.ms.map(round1),
      median_ms: round1(custom.medianMs),
      median_bars_per_s: rate(custom.medianMs),
      best_bars_per_s: rate(custom.bestMs),
      // On a shared host the wall clock also counts time other processes held the core; CPU time does not.
      median_cpu_ms: round1(custom.medianCpuMs),
      median_bars_per_cpu_s: rate(custom.medianCpuMs),
      trades: custom.result.trades.length,
      final_equity: custom.result.finalEquity,
      instance_memory_mib: round1(instanceMemory / MIB),
    },
    builtin: {
      runs: BUILTIN_RUNS,
      warmup_runs: BUILTIN_WARMUP_RUNS,
      median_ms: round1(builtin.medianMs),
      median_bars_per_s: rate(builtin.medianMs),
      best_bars_per_s: rate(builtin.bestMs),
      median_cpu_ms: round1(builtin.medianCpuMs),
      median_bars_per_cpu_s: rate(builtin.medianCpuMs),
      trades: builtin.result.trades.length,
      final_equity: builtin.result.finalEquity,
    },
    custom_over_builtin_time: Math.round((custom.medianMs / builtin.medianMs) * 10) / 10,
    parity: parity.equal,
    parity_checked: 'trades (times, sides, prices, qty, fees, funding, pnl), open positions, final equity, fees and funding paid, equity curve',
    ...(parity.equal ? {} : { parity_difference: parity.difference }),
    breakdown,
    start,
    concurrent: {
      what:
        `${CONCURRENT_JOBS} custom sma_cross backtests of ${CONCURRENT_BARS} 1m bars each, through the service's EnginePool and ` +
        `engine threads (engine-thread.ts: one sandbox per job, the runner's watchdog budget), in a child process running compiled JS. ` +
        `default_workers: queued to a pool of the default WORKERS (cores − 1), as the service runs them. The rest: submitted at once to ` +
        `a pool of ${CONCURRENT_JOBS} threads (WORKERS=${CONCURRENT_JOBS}), so all ${CONCURRENT_JOBS} sandboxes are live together; ` +
        `its baseline is the same pool running the built-in sma_cross on the same bars just before.`,
      ...concurrent,
      instance_cap_mib: capMib,
      added_by_sandboxes_mib: round1(concurrent.custom_peak_rss_mib - concurrent.builtin_peak_rss_mib),
      added_per_job_mib: round1((concurrent.custom_peak_rss_mib - concurrent.builtin_peak_rss_mib) / CONCURRENT_JOBS),
    },
    goal: {
      custom_median_bars_per_s: atLeast(rate(custom.medianMs), GOAL_BARS_PER_S),
      start_median_ms: atMost(start.load_to_first_call_median_ms, GOAL_START_MS),
      concurrent_peak_rss_mib: { ...atMost(concurrent.custom_peak_rss_mib, round1(allowedMib)), bound: `the built-in baseline's peak + ${CONCURRENT_JOBS} × ${capMib} MiB` },
    },
    load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
    node: process.version,
  }
  return { report, failures }
}

type Timed = <T>(work: () => T) => T

/** `warmup` unmeasured runs, then `runs` measured ones: wall and process CPU time of what `run` passes to `timed`. */
async function timeRuns(warmup: number, runs: number, run: (timed: Timed) => BacktestResult | Promise<BacktestResult>) {
  let result: BacktestResult | undefined
  const ms: number[] = []
  const cpuMs: number[] = []
  for (let k = 0; k < warmup + runs; k++) {
    result = await run((work) => {
      const cpu = process.cpuUsage()
      const started = performance.now()
      const value = work()
      if (k >= warmup) {
        ms.push(performance.now() - started)
        const used = process.cpuUsage(cpu)
        cpuMs.push((used.user + used.system) / 1000)
      }
      return value
    })
  }
  return { result: result!, ms, medianMs: median(ms), bestMs: Math.min(...ms), medianCpuMs: median(cpuMs) }
}

/**
 * StrategyInstance.load to the answer of the first call into it (the driver's info()), and on to the
 * first target (create, then one bar through the driver). The first load in a process also compiles
 * the WebAssembly module; an engine thread pays that once, so it is reported apart from the median.
 */
async function measureStart(code: string, params: Record<string, unknown>) {
  const once = async () => {
    const cpu = process.cpuUsage()
    const started = performance.now()
    const instance = await StrategyInstance.load(code, SEED)
    try {
      instance.info()
      const firstCall = performance.now() - started
      const used = process.cpuUsage(cpu)
      const firstCallCpu = (used.user + used.system) / 1000
      instance.create(params, { symbols: ['BTCUSDT'], timeframe: '1m', interval_ms: 60_000, rules: { BTCUSDT: { tick_size: 0.1, step_size: 0.001, min_qty: 0.001, min_notional: 100 } } })
      instance.bars(new Float64Array([0, 1, 1, 1, 1, 1]), 1, new Float64Array(0), 0)
      return { firstCall, firstCallCpu, firstTarget: performance.now() - started }
    } finally {
      instance.dispose()
    }
  }
  const cold = await once()
  const warm = []
  for (let k = 0; k < START_RUNS; k++) warm.push(await once())
  const calls = warm.map((w) => w.firstCall)
  return {
    runs: START_RUNS,
    cold_first_call_ms: round2(cold.firstCall),
    load_to_first_call_median_ms: round2(median(calls)),
    load_to_first_call_min_ms: round2(Math.min(...calls)),
    load_to_first_call_max_ms: round2(Math.max(...calls)),
    // CPU time of the process (every thread) over the same span: what contention on a shared host does not inflate.
    load_to_first_call_median_cpu_ms: round2(median(warm.map((w) => w.firstCallCpu))),
    load_to_first_target_median_ms: round2(median(warm.map((w) => w.firstTarget))),
  }
}

/** Wraps the instance's bars() (the engine's only call into it during a run) to add up the wall time spent in it. */
function timeCalls(instance: StrategyInstance): { ms: number } {
  const spent = { ms: 0 }
  const bars = instance.bars.bind(instance)
  instance.bars = (...args) => {
    const started = performance.now()
    try {
      return bars(...args)
    } finally {
      spent.ms += performance.now() - started
    }
  }
  return spent
}

/**
 * Where a custom run's time goes. The median run itself splits into the host engine (V8: packing the
 * batches, fills, ledger, curve, metrics) and the time inside StrategyInstance.bars. That time is split
 * by the shares of a second pass over the same bars, in CustomSignal's batches packed beforehand, fed
 * batch by batch in turn to three sandboxes:
 * - the module: sma-cross.js;
 * - an empty module (onBar returns NaN): the guest driver, which builds a bar object per bar, calls onBar
 *   and checks the target, plus the crossing;
 * - the module again with a count of 0: the crossing alone (bars copied in, the call, the answer out).
 * Interleaving matters on a shared host: separate passes a minute apart moved by 2× (wall and CPU
 * alike) and their differences came out negative.
 */
async function measureBreakdown(code: string, input: BacktestInput, bars: BarSeries, funding: FundingSeries, run: { totalMs: number; sandboxMs: number }) {
  const batches = packBatches(bars, funding)
  const rules = input.rules[0]!
  const context = {
    symbols: [bars.symbol],
    timeframe: '1m',
    interval_ms: bars.intervalMs,
    rules: { [bars.symbol]: { tick_size: rules.tickSize, step_size: rules.stepSize, min_qty: rules.minQty, min_notional: rules.minNotional } },
  }
  const real = await StrategyInstance.load(code, SEED)
  const empty = await StrategyInstance.load(EMPTY_MODULE, SEED)
  const spent = { module: 0, empty: 0, crossing: 0 }
  try {
    real.create(input.params as Record<string, unknown>, context)
    empty.create({}, context)
    for (const batch of batches) {
      let started = performance.now()
      real.bars(batch.columns, batch.count, batch.events, batch.eventCount)
      spent.module += performance.now() - started
      started = performance.now()
      empty.bars(batch.columns, batch.count, batch.events, batch.eventCount)
      spent.empty += performance.now() - started
      started = performance.now()
      real.bars(batch.columns, 0, batch.events, 0)
      spent.crossing += performance.now() - started
    }
  } finally {
    real.dispose()
    empty.dispose()
  }
  const n = bars.openTime.length
  const part = (ms: number) => ({ ms: Math.round(ms), us_per_bar: Math.round((ms * 1e6) / n) / 1000, share: Math.round((ms / run.totalMs) * 1000) / 1000 })
  const ofSandbox = (ms: number) => part((run.sandboxMs * ms) / spent.module)
  return {
    method: 'the median custom run split at its calls into the sandbox; that time split by an interleaved pass (module, empty module, no bars): bench/custom.ts measureBreakdown',
    batches: batches.length,
    batch_bars: SANDBOX_LIMITS.batchBars,
    custom_run: part(run.totalMs),
    host_engine: part(run.totalMs - run.sandboxMs),
    inside_sandbox: part(run.sandboxMs),
    crossing: ofSandbox(spent.crossing),
    guest_driver: ofSandbox(spent.empty - spent.crossing),
    guest_module: ofSandbox(spent.module - spent.empty),
    interleaved_pass_ms: { module: Math.round(spent.module), empty_module: Math.round(spent.empty), no_bars: Math.round(spent.crossing) },
  }
}

/** The bars and funding in CustomSignal's batches, packed as it packs them. */
function packBatches(bars: BarSeries, funding: FundingSeries) {
  const batches: { columns: Float64Array; count: number; events: Float64Array; eventCount: number }[] = []
  let f = 0
  for (let start = 0; start < bars.openTime.length; start += SANDBOX_LIMITS.batchBars) {
    const end = Math.min(bars.openTime.length, start + SANDBOX_LIMITS.batchBars)
    const count = end - start
    const columns = new Float64Array(count * 6)
    for (let k = 0; k < count; k++) {
      const i = start + k
      columns.set([bars.openTime[i]!, bars.open[i]!, bars.high[i]!, bars.low[i]!, bars.close[i]!, bars.volume[i]!], k * 6)
    }
    const first = f
    while (f < funding.time.length && funding.time[f]! < bars.openTime[end - 1]! + bars.intervalMs) f++
    const events = new Float64Array((f - first) * 3)
    for (let k = first; k < f; k++) events.set([funding.time[k]!, funding.rate[k]!, funding.markPrice[k]!], (k - first) * 3)
    batches.push({ columns, count, events, eventCount: f - first })
  }
  return batches
}

/** The built-in's and the custom module's results compared: equal, or the first field that differs. */
function compareResults(builtin: BacktestResult, custom: BacktestResult): { equal: boolean; difference?: string } {
  if (builtin.trades.length !== custom.trades.length) return { equal: false, difference: `${builtin.trades.length} trades against ${custom.trades.length}` }
  for (let k = 0; k < builtin.trades.length; k++) {
    const a = JSON.stringify(builtin.trades[k])
    const b = JSON.stringify(custom.trades[k])
    if (a !== b) return { equal: false, difference: `trade ${k}: ${a} against ${b}` }
  }
  for (const field of ['openPositions', 'finalEquity', 'feesPaid', 'fundingPaid', 'equityCurve'] as const) {
    if (JSON.stringify(builtin[field]) !== JSON.stringify(custom[field])) return { equal: false, difference: field }
  }
  return { equal: true }
}

/**
 * Runs bench/support/custom-concurrent.ts as the service runs in production: plain JavaScript in plain
 * node, engine threads loading compiled files. Under tsx every engine thread compiles our sources itself:
 * measured, 20 threads' built-in peak was 1964 MiB under tsx against 1214 MiB compiled (~37 MiB more a
 * thread), more than the sandboxes add. Our sources
 * are transpiled file by file, not bundled, as tsc's dist/ is, into .tmp-dist/bench-custom/.
 */
async function measureConcurrent(request: ConcurrentRequest): Promise<ConcurrentAnswer> {
  const outDir = path.join(REPO_ROOT, '.tmp-dist', 'bench-custom')
  fs.rmSync(outDir, { recursive: true, force: true })
  const sources = (dir: string) =>
    fs
      .readdirSync(path.join(REPO_ROOT, dir), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
      .map((file) => path.join(REPO_ROOT, dir, file))
  await esbuild.build({
    entryPoints: [...sources('src'), path.join(REPO_ROOT, 'bench', 'support', 'custom-concurrent.ts'), path.join(REPO_ROOT, 'bench', 'support', 'engine-bars.ts')],
    outdir: outDir,
    outbase: REPO_ROOT,
    bundle: false,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  })
  const child = spawn(process.execPath, [path.join(outDir, 'bench', 'support', 'custom-concurrent.js')], { cwd: REPO_ROOT, stdio: ['pipe', 'pipe', 'inherit'] })
  child.stdin.end(JSON.stringify(request))
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk))
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  fs.rmSync(outDir, { recursive: true, force: true })
  if (code !== 0) throw new Error(`the concurrent-jobs child exited with ${code}`)
  return JSON.parse(out) as ConcurrentAnswer
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const round1 = (x: number) => Math.round(x * 10) / 10
const round2 = (x: number) => Math.round(x * 100) / 100
