import { sql } from 'kysely'
import type { StrategySandbox } from '../custom-templates/sandbox/contract.js'
import type { Db } from '../db/connect.js'
import { AppError } from '../http/errors.js'
import { metrics } from './registry.js'

/** Sandbox calls refused because their user already had its share running and waiting (429), counted by countRejections. */
export interface SandboxRejections {
  total: number
}

/** The sandbox, with each call refused for its user's limit (AppError RATE_LIMITED) counted. */
export function countRejections(sandbox: StrategySandbox, rejections: SandboxRejections = { total: 0 }): StrategySandbox {
  const counted = <A extends unknown[], R>(call: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    try {
      return await call(...args)
    } catch (error) {
      if (error instanceof AppError && error.code === 'RATE_LIMITED') {
        rejections.total++
        metrics.sandboxCallsRejected.inc()
      }
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

export interface WaitingRow {
  kind: string
  plan: string
  waiting: string | number
  oldest_seconds: string | number
}

/**
 * The operator's view of fairness (issue 34): engine work waiting by kind (a backtest job, a sweep's task) and
 * user class (the user's plan) and the oldest wait of each, read from the database at each scrape
 * (ops/database-gauges.ts), so any node answers for every node's queue; and this process's sandbox calls
 * refused for their user's limit (countRejections). Labels are bounded: 2 kinds × 3 plans. Reads queued jobs and
 * queued tasks of running sweeps (a sweep's statistics task is queued only when it can run), by plan.
 */
export async function readWaiting(db: Db): Promise<WaitingRow[]> {
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
