import type pg from 'pg'
import { Coalescer } from '../db/coalescer.js'
import { findStrategiesByKeys, type StrategyRow } from './queries.js'

export type StrategyReads = Coalescer<{ userId: number; id: string }, StrategyRow | undefined>

/**
 * Reads of single strategies, coalesced: the reads that arrive while a statement is in flight share
 * the next one. Each read still starts after its request arrived, so a client reads its own writes
 * (unlike joining a read already running). With a PostgreSQL server a query per signed GET was the
 * largest cost left after the admission batching (issue 13).
 */
export function batchedStrategyReads(pool: pg.Pool): StrategyReads {
  return new Coalescer(async (keys) => {
    const rows = await findStrategiesByKeys(pool, keys)
    const found = new Map(rows.map((row) => [`${row.user_id}/${row.id}`, row]))
    return keys.map((key) => found.get(`${key.userId}/${key.id}`))
  }, 2)
}
