import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'

/**
 * This process's Prometheus registry: process defaults, HTTP (ops/metrics.ts), fairness (ops/work-metrics.ts),
 * the database's view (ops/database-gauges.ts) and the counters below, which the code that does the work
 * increments where it happens. One registry per process, as Prometheus' own clients keep a default one: a
 * runner, an upstream request or a sandbox module run is counted deep inside code that has no app to ask,
 * and `perpetua serve` and `perpetua worker` both render it (ops/metrics-listener.ts). Labels are bounded
 * enums, never an id, key or URL (issue 32).
 */
export const processRegistry = new Registry()
/**
 * nodejs_eventloop_lag_seconds samples the loop every 100 ms, not prom-client's 10: its timer woke an idle node
 * 100 times a second, half of the event loop's idle CPU (10–14 → 5–6.5 ms/s, issue 36), and every request's
 * share of the CPU carries that. A stall of 100 ms or more, the kind worth an alert, is still seen whole.
 */
collectDefaultMetrics({ register: processRegistry, eventLoopMonitoringPrecision: 100 })

const register = [processRegistry]
const DECISION_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300]
const JOB_BUCKETS = [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600]
const DELIVERY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600]

export const MODES = ['live', 'dry_run'] as const
export type RunMode = (typeof MODES)[number]
export const modeOf = (dryRun: boolean): RunMode => (dryRun ? 'dry_run' : 'live')
export const JOB_KINDS = ['backtest', 'sweep'] as const
export type JobKind = (typeof JOB_KINDS)[number]

/** Cache hits counted since perpetua_cache_requests_total was last read (countCacheHit). */
let pendingCacheHits = 0

/** The process counters and histograms (issue 32's names); bounded label values are zeroed at start so every series exists. */
export const metrics = {
  runDecision: new Histogram({ name: 'perpetua_run_decision_seconds', help: "Seconds from a bar's close to the run's decision on it committed", labelNames: ['mode'], buckets: DECISION_BUCKETS, registers: register }),
  reconciliationMismatches: new Counter({ name: 'perpetua_run_reconciliation_mismatches_total', help: "Reconciliations that found the exchange's position or order differing from the run's book", labelNames: ['mode'], registers: register }),
  exchangeCloses: new Counter({ name: 'perpetua_run_exchange_closes_total', help: 'Positions closed on the exchange side (liquidation, adl, a protective order triggering), by the reason the run books', labelNames: ['reason'], registers: register }),
  liveOrders: new Counter({ name: 'perpetua_live_orders_total', help: "Live runs' orders sent, by outcome (accepted, rejected, unknown: no answer)", labelNames: ['outcome'], registers: register }),
  liveOrderLookups: new Counter({ name: 'perpetua_live_order_lookups_total', help: 'Look-ups of a live order whose outcome was unknown, by result', labelNames: ['outcome'], registers: register }),
  protectiveRejected: new Counter({ name: 'perpetua_protective_orders_rejected_total', help: 'Protective orders the exchange rejected (placement or at trigger)', registers: register }),
  jobDuration: new Histogram({ name: 'perpetua_job_duration_seconds', help: 'Seconds from a backtest job or sweep starting to its end, by kind and outcome', labelNames: ['kind', 'outcome'], buckets: JOB_BUCKETS, registers: register }),
  jobsWorkerLost: new Counter({ name: 'perpetua_jobs_worker_lost_total', help: 'Jobs and sweep tasks found with a dead worker (stale heartbeat) and recovered', labelNames: ['kind'], registers: register }),
  jobsRetried: new Counter({ name: 'perpetua_jobs_retried_total', help: 'Jobs and sweep tasks queued again for another attempt', labelNames: ['kind'], registers: register }),
  webhookDeliveries: new Counter({ name: 'perpetua_webhook_deliveries_total', help: 'Webhook delivery attempts by outcome (delivered; failed: retried later; gave_up: no retry left)', labelNames: ['outcome'], registers: register }),
  webhookDelivery: new Histogram({ name: 'perpetua_webhook_delivery_seconds', help: 'Seconds from an event being recorded to its delivery acknowledged', buckets: DELIVERY_BUCKETS, registers: register }),
  upstreamRequests: new Counter({ name: 'perpetua_upstream_requests_total', help: 'Requests to the upstream exchange by endpoint class and HTTP status (error: no answer)', labelNames: ['class', 'status'], registers: register }),
  upstreamWeightUsed: new Gauge({ name: 'perpetua_upstream_weight_used', help: "The upstream's last X-MBX-USED-WEIGHT-1M seen by this process", registers: register }),
  upstreamWeightLimit: new Gauge({ name: 'perpetua_upstream_weight_limit', help: "The upstream's request weight limit per minute", registers: register }),
  archiveFiles: new Counter({ name: 'perpetua_archive_files_total', help: 'Monthly and daily archive files fetched from the data archive, by outcome', labelNames: ['outcome'], registers: register }),
  cacheRequests: new Counter({
    name: 'perpetua_cache_requests_total',
    help: 'Market data cache look-ups by result (hit, miss)',
    labelNames: ['result'],
    registers: register,
    collect() {
      if (pendingCacheHits === 0) return
      this.inc({ result: 'hit' }, pendingCacheHits)
      pendingCacheHits = 0
    },
  }),
  sandboxRuns: new Counter({ name: 'perpetua_sandbox_runs_total', help: "Strategy module runs in the sandbox by outcome (ok, strategy_error, timeout, oom)", labelNames: ['outcome'], registers: register }),
  sandboxWatchdog: new Counter({ name: 'perpetua_sandbox_watchdog_terminations_total', help: "Sandbox threads the watchdog terminated (a module past its time or memory)", registers: register }),
  dbSlowQueries: new Counter({ name: 'perpetua_db_slow_queries_total', help: 'Database queries that took over 1 s', registers: register }),
  sandboxCallsRejected: new Counter({ name: 'perpetua_sandbox_calls_rejected_total', help: "Uploads and params checks refused (429) because their user's sandbox calls were already running and waiting", registers: register }),
  draining: new Gauge({ name: 'perpetua_draining', help: '1 while this node drains after SIGTERM, else 0', registers: register }),
}

for (const mode of MODES) {
  metrics.runDecision.zero({ mode })
  metrics.reconciliationMismatches.inc({ mode }, 0)
}
// The reasons a run books an exchange-side close with (live/brokers/symbol-exchange.ts, live/protection).
for (const reason of ['liquidation', 'adl', 'stop_loss', 'take_profit', 'trailing_stop']) metrics.exchangeCloses.inc({ reason }, 0)
for (const outcome of ['accepted', 'rejected', 'unknown']) metrics.liveOrders.inc({ outcome }, 0)
for (const outcome of ['found', 'not_found', 'failed']) metrics.liveOrderLookups.inc({ outcome }, 0)
for (const kind of JOB_KINDS) {
  metrics.jobsWorkerLost.inc({ kind }, 0)
  metrics.jobsRetried.inc({ kind }, 0)
}
for (const outcome of ['delivered', 'failed', 'gave_up']) metrics.webhookDeliveries.inc({ outcome }, 0)
for (const outcome of ['fetched', 'failed']) metrics.archiveFiles.inc({ outcome }, 0)
for (const result of ['hit', 'miss']) metrics.cacheRequests.inc({ result }, 0)
for (const outcome of ['ok', 'strategy_error', 'timeout', 'oom']) metrics.sandboxRuns.inc({ outcome }, 0)

/**
 * Counts a market cache hit: every cached gateway read makes one, so it is a number here, added to
 * perpetua_cache_requests_total{result="hit"} when the counter is read (its collect), not a labelled inc
 * (label hashing and checks) per request.
 */
export function countCacheHit(): void {
  pendingCacheHits++
}

/** Marks this node draining (1) or not (0); perpetua_ready reads it too (H3's SIGTERM hand-over calls it). */
export function setDraining(draining: boolean): void {
  drainingNow = draining
  metrics.draining.set(draining ? 1 : 0)
}
export const isDraining = (): boolean => drainingNow
let drainingNow = false
metrics.draining.set(0)

/** Seconds since `startedAt` (ms) by `now` (ms), never negative (a clock step back). */
export const secondsSince = (startedAt: number, now: number): number => Math.max(0, (now - startedAt) / 1000)

/** A backtest job or sweep that ended, in perpetua_job_duration_seconds: from its start (its submission if it never started). */
export function observeJob(kind: JobKind, outcome: 'done' | 'failed' | 'cancelled', since: { started_at: Date | null; submitted_at: Date }, now: number): void {
  metrics.jobDuration.observe({ kind, outcome }, secondsSince(new Date(since.started_at ?? since.submitted_at).getTime(), now))
}

/** perpetua_sandbox_runs_total's outcome of a module run that failed with `code` (a StrategyError's; anything else is the module's error). */
export function sandboxOutcomeOf(code: string | undefined): 'strategy_error' | 'timeout' | 'oom' {
  return code === 'STRATEGY_TIMEOUT' ? 'timeout' : code === 'STRATEGY_OOM' ? 'oom' : 'strategy_error'
}

/**
 * The exchange's clock less ours, as last read (GET /fapi/v1/time, when runners start or step): bars are the
 * exchange's time. Binance and our clock differ by drift only; the replay exchange's present is in the past, so
 * a bar's age on our clock alone would read as a year late on every run against it (the default of a node
 * without UPSTREAM_URL). Zero until read; a replay sped up drifts between reads, and its ages are then rough.
 */
let exchangeOffsetMs = 0
export function observeExchangeClock(serverTime: number, localNow: number): void {
  exchangeOffsetMs = serverTime - localNow
}
export const exchangeOffset = (): number => exchangeOffsetMs
