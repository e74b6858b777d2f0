import crypto from 'node:crypto'
import { sql } from 'kysely'
import type { Db } from '../db/connect.js'

/** The NOTIFY channel that tells webhook dispatchers an event was committed. */
export const OUTBOX_CHANNEL = 'perpetua_outbox'

/**
 * Writes an event to the outbox, inside the caller's transaction; the webhook pipeline delivers it.
 * The NOTIFY is transactional: PostgreSQL sends it only when the caller's transaction commits, so a
 * dispatcher wakes exactly when the event becomes visible, with no polling delay (webhooks/outbox-listener.ts).
 */
export async function recordEvent(trx: Db, event: { userId: number; type: string; data: Record<string, unknown>; at: Date }): Promise<string> {
  const id = `evt_${crypto.randomBytes(6).toString('hex')}`
  await trx
    .insertInto('events')
    .values({ id, user_id: event.userId, type: event.type, data: JSON.stringify(event.data), created_at: event.at })
    .execute()
  await sql`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`.execute(trx)
  return id
}
