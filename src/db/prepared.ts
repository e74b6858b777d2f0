import crypto from 'node:crypto'
import type { RawBuilder } from 'kysely'
import type pg from 'pg'
import type { Db } from './connect.js'

/**
 * Runs `query` as a named (server-prepared) statement: parsed and planned once per connection, not at every
 * call. For the statements a node runs every second whatever its traffic, the webhook round and the look for
 * lost work: on PGlite planning was half or more of their cost (docs/decisions/performance.md, "An idle
 * node"). The name is a digest of the text, so one name never stands for two texts on a connection. Past
 * Kysely, so not counted by perpetua_db_slow_queries_total (as pg-boss's statements are not).
 */
export async function runPrepared<R>(pool: pg.Pool, db: Db, query: RawBuilder<R>): Promise<R[]> {
  const { sql, parameters } = query.compile(db)
  const name = `perpetua_${crypto.createHash('sha256').update(sql).digest('hex').slice(0, 24)}`
  return (await pool.query({ name, text: sql, values: parameters as unknown[] })).rows as R[]
}
