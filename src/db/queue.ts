import { PgBoss } from 'pg-boss'
import type { DatabaseHandle } from './connect.js'

/**
 * pg-boss over our own pool: in embedded mode that is the single PGlite connection (pg-boss's own
 * pool would be a second connection to a single-session database), and one adapter keeps both modes
 * on one path. Later issues register their queues and workers on the returned instance.
 */
export async function startQueue(database: DatabaseHandle, onError: (error: unknown) => void): Promise<PgBoss> {
  const boss = new PgBoss({
    db: { executeSql: (text: string, values?: unknown[]) => database.pool.query(text, values as unknown[]) },
    backend: database.kind === 'embedded' ? 'pglite' : 'postgres',
    schema: 'pgboss',
  })
  boss.on('error', onError)
  await boss.start()
  return boss
}
