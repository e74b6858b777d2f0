import type { FastifyBaseLogger } from 'fastify'
import { sql } from 'kysely'
import type { Metric } from 'prom-client'
import type { DatabaseHandle, Db } from '../db/connect.js'
import { LEASE_TTL_MS } from '../live/runner/runner-pool.js'
import { PROTECTION_LOST } from '../live/protection/alarm.js'
import { TIMEFRAME_MS } from '../strategies/schemas.js'
import { exchangeOffset, isDraining, processRegistry } from './registry.js'
import { readWaiting } from './work-metrics.js'

/** The database a process's gauges read, with its clock and log; the last one tracked answers (one per process outside tests). */
interface Tracked {
  database: DatabaseHandle
  now: () => number
  log: FastifyBaseLogger
}

const tracked: Tracked[] = []
/** Margin past a run's timeframe before it counts as behind (issue 32: timeframe + 60 s). */
const BEHIND_MARGIN_MS = 60_000

/**
 * The gauges read from the database at each scrape (the same on every node: alert rules take max()): runs by
 * mode and state, runs behind their bars, the oldest lease renewal, protective orders missing, jobs and sweeps
 * by state, the webhook backlog, fairness (ops/work-metrics.ts), the pool, readiness. A query that fails leaves
 * its families without samples and is logged: a scrape never fails for it (Prometheus would lose every
 * family, the process ones included). Returns the function that stops tracking `database` (at shutdown).
 */
export function trackDatabase(database: DatabaseHandle, now: () => number, log: FastifyBaseLogger): () => void {
  const entry = { database, now, log }
  tracked.push(entry)
  return () => {
    const at = tracked.indexOf(entry)
    if (at >= 0) tracked.splice(at, 1)
  }
}

type Sample = { labels: Record<string, string>; value: number }

/**
 * One read per scrape for each query, shared by the families it feeds: the first family asks, the others
 * reuse the answer until the scrape's turn of the event loop ends.
 */
function perScrape<T>(read: (t: Tracked) => Promise<T>, what: string): () => Promise<T | undefined> {
  let last: Promise<T | undefined> | undefined
  return () => {
    const current = tracked.at(-1)
    if (!current) return Promise.resolve(undefined)
    last ??= read(current)
      .catch((error: unknown) => {
        current.log.error({ err: error }, `metrics: reading ${what} failed; its families are left out of this scrape`)
        return undefined
      })
      .finally(() => setTimeout(() => (last = undefined), 0))
    return last
  }
}

interface RunRow { mode: string; state: string; runs: string | number; behind: string | number; oldest_renewal_age: string | number | null; protection_lost: string | number }
interface JobRow { kind: string; state: string; jobs: string | number; oldest_seconds: string | number | null }
interface WebhookRow { oldest_pending_seconds: string | number | null; disabled: string | number }

const runs = perScrape(async ({ database, now }) => {
  const at = new Date(now())
  // Bars are the exchange's time; leases are ours.
  const exchangeAt = new Date(now() + exchangeOffset())
  const timeframes = Object.entries(TIMEFRAME_MS).map(([name, ms]) => sql`(${name}, ${ms}::bigint)`)
  // A run without a bar yet counts from its start (our clock). The renewal is the expiry less the TTL the pool sets.
  const { rows } = await sql<RunRow>`
    select case when r.dry_run then 'dry_run' else 'live' end as mode, s.status as state, count(*) as runs,
      count(*) filter (where s.status = 'deployed' and case when r.last_bar_at is null
        then r.started_at < ${at}::timestamptz - ((tf.ms + ${BEHIND_MARGIN_MS}) * interval '1 millisecond')
        else r.last_bar_at + (tf.ms * interval '1 millisecond') < ${exchangeAt}::timestamptz - ((tf.ms + ${BEHIND_MARGIN_MS}) * interval '1 millisecond') end) as behind,
      extract(epoch from ${at}::timestamptz - min(coalesce(r.lease_expires_at - ${LEASE_TTL_MS} * interval '1 millisecond', r.started_at))
        filter (where s.status = 'deployed')) as oldest_renewal_age,
      count(*) filter (where s.status = 'deployed' and not r.dry_run and s.last_error_code = ${PROTECTION_LOST} and not exists (
        select 1 from protective_orders p where p.strategy_id = s.id and p.updated_at > s.last_error_at
          and (p.status = 'open' or (p.type = 'MARKET' and p.status = 'finished')))) as protection_lost
    from strategy_runs r join strategies s on s.id = r.strategy_id
      left join (values ${sql.join(timeframes)}) as tf(name, ms) on tf.name = r.timeframe
    where r.ended_at is null
      or (s.status = 'error' and r.run = (select max(x.run) from strategy_runs x where x.strategy_id = r.strategy_id))
    group by 1, 2`.execute(database.db)
  return rows
}, 'runs')

const jobs = perScrape(async ({ database, now }) => {
  const at = new Date(now())
  const { rows } = await sql<JobRow>`
    select 'backtest' as kind, status as state, count(*) as jobs,
        extract(epoch from ${at}::timestamptz - min(submitted_at)) as oldest_seconds
      from backtest_jobs where status in ('queued', 'running') group by status
    union all
    select 'sweep' as kind, status as state, count(*) as jobs,
        extract(epoch from ${at}::timestamptz - min(submitted_at)) as oldest_seconds
      from backtest_sweeps where status in ('queued', 'running') group by status`.execute(database.db)
  return rows
}, 'jobs')

const webhooks = perScrape(async ({ database, now }) => {
  const at = new Date(now())
  const { rows } = await sql<WebhookRow>`
    select (select extract(epoch from ${at}::timestamptz - min(coalesce(d.next_attempt_at, d.created_at)))
        from deliveries d join webhooks w on w.id = d.webhook_id
        where d.state = 'pending' and w.status = 'active' and coalesce(d.next_attempt_at, d.created_at) <= ${at}::timestamptz) as oldest_pending_seconds,
      (select count(*) from webhooks where status = 'broken') as disabled`.execute(database.db)
  return rows[0]
}, 'webhooks')

const waiting = perScrape(({ database }) => readWaiting(database.db), 'engine work waiting')

const ready = perScrape(async ({ database }) => {
  await sql`select 1`.execute(database.db as Db)
  return true
}, 'readiness')

const num = (value: string | number | null | undefined): number => Math.max(0, Number(value ?? 0))

function gauge(name: string, help: string, values: () => Promise<Sample[] | undefined>): Metric {
  return {
    name,
    help,
    type: 'gauge',
    get: async () => ({ name, help, type: 'gauge', values: (await values()) ?? [], aggregator: 'max' }),
  } as unknown as Metric
}

/** Sums rows by the labels `key` picks (a mode's runs over its states, say). */
function sumBy<R>(rows: R[], key: (row: R) => Record<string, string>, value: (row: R) => number): Sample[] {
  const sums = new Map<string, Sample>()
  for (const row of rows) {
    const labels = key(row)
    const id = JSON.stringify(labels)
    const sample = sums.get(id) ?? { labels, value: 0 }
    sample.value += value(row)
    sums.set(id, sample)
  }
  return [...sums.values()]
}

const MODES = ['live', 'dry_run']
const JOB_KINDS = ['backtest', 'sweep']

for (const metric of [
  gauge('perpetua_runs', 'Current runs by mode (live, dry_run) and their strategy state (deployed, paused, ...), and each strategy in error by its last run\'s mode', async () =>
    (await runs())?.map((row) => ({ labels: { mode: row.mode, state: row.state }, value: num(row.runs) })),
  ),
  gauge('perpetua_runs_behind', "Deployed runs whose last processed bar is older than their timeframe plus 60 s", async () => {
    const rows = await runs()
    return rows && sumBy([...MODES.map((mode) => ({ mode, behind: 0 })), ...rows], (row) => ({ mode: row.mode }), (row) => num(row.behind))
  }),
  gauge('perpetua_run_lease_oldest_age_seconds', 'Seconds since the oldest lease renewal among deployed runs (0 if none)', async () => {
    const rows = await runs()
    return rows && [{ labels: {}, value: Math.max(0, ...rows.map((row) => num(row.oldest_renewal_age))) }]
  }),
  gauge('perpetua_protective_orders_missing', 'Deployed live runs under a protection alarm with no protective order resting since it (cleared once one rests again, or the alarm\'s close at market went out)', async () => {
    const rows = await runs()
    return rows && [{ labels: {}, value: rows.reduce((sum, row) => sum + num(row.protection_lost), 0) }]
  }),
  gauge('perpetua_jobs', 'Backtest jobs and sweeps by state (queued, running)', async () => {
    const rows = await jobs()
    const zero = JOB_KINDS.flatMap((kind) => ['queued', 'running'].map((state) => ({ kind, state, jobs: 0, oldest_seconds: null })))
    return rows && sumBy([...zero, ...rows], (row) => ({ kind: row.kind, state: row.state }), (row) => num(row.jobs))
  }),
  gauge('perpetua_jobs_oldest_queued_seconds', 'Seconds the oldest queued backtest job or sweep has waited (0 if none)', async () => {
    const rows = await jobs()
    return rows && JOB_KINDS.map((kind) => ({ labels: { kind }, value: num(rows.find((row) => row.kind === kind && row.state === 'queued')?.oldest_seconds) }))
  }),
  gauge('perpetua_webhook_oldest_pending_seconds', 'Seconds the oldest due delivery of an active webhook has waited past its attempt time (0 if none): retries not yet due and paused or broken webhooks do not count', async () => {
    const row = await webhooks()
    return row && [{ labels: {}, value: num(row.oldest_pending_seconds) }]
  }),
  gauge('perpetua_webhook_endpoints_disabled', 'Webhook endpoints disabled (broken) after failing deliveries', async () => {
    const row = await webhooks()
    return row && [{ labels: {}, value: num(row.disabled) }]
  }),
  gauge('perpetua_work_waiting', 'Engine work waiting to start, by kind (job, sweep_task) and user plan', async () =>
    (await waiting())?.map((row) => ({ labels: { kind: row.kind, plan: row.plan }, value: num(row.waiting) })),
  ),
  gauge('perpetua_work_oldest_wait_seconds', 'Seconds the oldest waiting engine work has waited, by kind and user plan', async () =>
    (await waiting())?.map((row) => ({ labels: { kind: row.kind, plan: row.plan }, value: num(row.oldest_seconds) })),
  ),
  gauge('perpetua_db_pool_connections', "This process's database connections by state (in_use, idle, waiting: queries waiting for one)", async () => {
    const pool = tracked.at(-1)?.database.pool
    if (!pool) return undefined
    return [
      { labels: { state: 'in_use' }, value: pool.totalCount - pool.idleCount },
      { labels: { state: 'idle' }, value: pool.idleCount },
      { labels: { state: 'waiting' }, value: pool.waitingCount },
    ]
  }),
  gauge('perpetua_ready', '1 while this node takes work: its database answers and it is not draining; else 0', async () => [
    { labels: {}, value: !isDraining() && (await ready()) === true ? 1 : 0 },
  ]),
]) {
  processRegistry.registerMetric(metric)
}
