import { sql } from 'kysely'
import type { Metric, Registry } from 'prom-client'
import type { StrategySandbox } from '../custom-templates/sandbox/contract.js'
import type { Db } from '../db/connect.js'
import { AppError } from '../http/errors.js'

const WAITING = 'perpetua_work_waiting'
const OLDEST = 'perpetua_work_oldest_wait_seconds'
const REJECTED = 'perpetua_sandbox_calls_rejected_total'

/** Sandbox calls refused because their user already had its share running and waiting (429), counted by countRejections. */
export interface SandboxRejections {
  total: number
}

/**
 * The operator's view of fairness (issue 34), read at each scrape: engine work waiting by kind (a
 * backtest job, a sweep's task) and user class (the user's plan), the age of the oldest of each (the
 * time the next one taken has waited), from the database, so any node answers for every node's queue;
 * and this process's sandbox calls refused for their user's limit. Labels are bounded: 2 kinds × 3 plans.
 */
export function registerWorkMetrics(registry: Registry, db: Db, rejections: SandboxRejections): void {
  let last: Promise<WaitingRow[]> | undefined
  // One query per scrape serves both gauges: the first asks, the second reuses its answer.
  const waiting = () => (last ??= readWaiting(db).finally(() => setTimeout(() => (last = undefined), 0)))
  registry.registerMetric(
    gauge(WAITING, 'Engine work waiting to start, by kind (job, sweep_task) and user plan', async () =>
      (await waiting()).map((row) => ({ labels: { kind: row.kind, plan: row.plan }, value: Number(row.waiting) })),
    ),
  )
  registry.registerMetric(
    gauge(OLDEST, 'Seconds the oldest waiting engine work has waited, by kind and user plan', async () =>
      (await waiting()).map((row) => ({ labels: { kind: row.kind, plan: row.plan }, value: Math.max(0, Number(row.oldest_seconds)) })),
    ),
  )
  registry.registerMetric({
    name: REJECTED,
    help: "Uploads and params checks refused (429) because their user's sandbox calls were already running and waiting",
    type: 'counter',
    get: () => ({ name: REJECTED, help: '', type: 'counter', values: [{ labels: {}, value: rejections.total }], aggregator: 'sum' }),
  } as unknown as Metric)
}

/** The sandbox, with each call refused for its user's limit (AppError RATE_LIMITED) counted. */
export function countRejections(sandbox: StrategySandbox, rejections: SandboxRejections): StrategySandbox {
  const counted = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    try {
      return await call(...args)
    } catch (error) {
      if (error instanceof AppError && error.code === 'RATE_LIMITED') rejections.total++
      throw error
    }
  }
  return {
    inspect: counted(sandbox.inspect.bind(sandbox)),
    resolveParams: counted(sandbox.resolveParams.bind(sandbox)),
    resolveParamsMany: counted(sandbox.resolveParamsMany.bind(sandbox)),
    close: () => sandbox.close(),
  }
}

interface WaitingRow {
  kind: string
  plan: string
  waiting: string | number
  oldest_seconds: string | number
}

/** Queued jobs and queued tasks of running sweeps (a sweep's statistics task is queued only when it can run), by plan. */
async function readWaiting(db: Db): Promise<WaitingRow[]> {
  const { rows } = await sql<WaitingRow>`
    select 'job' as kind, u.plan, count(*) as waiting, extract(epoch from now() - min(j.submitted_at)) as oldest_seconds
      from backtest_jobs j join users u on u.id = j.user_id
      where j.status = 'queued' group by u.plan
    union all
    select 'sweep_task' as kind, u.plan, count(*) as waiting, extract(epoch from now() - min(s.submitted_at)) as oldest_seconds
      from backtest_sweep_tasks t join backtest_sweeps s on s.id = t.sweep_id join users u on u.id = s.user_id
      where t.status = 'queued' and s.status in ('queued', 'running') group by u.plan`.execute(db)
  return rows
}

function gauge(name: string, help: string, values: () => Promise<object[]>): Metric {
  return { name, help, type: 'gauge', get: async () => ({ name, help, type: 'gauge', values: await values(), aggregator: 'sum' }) } as unknown as Metric
}
