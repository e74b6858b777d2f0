import crypto from 'node:crypto'
import type { Db } from '../db/connect.js'

/** The NOTIFY channel on which a committed event is announced (trigger in migrations/0003_webhooks.sql). */
export const OUTBOX_CHANNEL = 'perpetua_outbox'

/**
 * Writes an event to the outbox, inside the caller's transaction; the webhook pipeline delivers it.
 * A trigger on the table NOTIFYs, which PostgreSQL sends only when the caller's transaction commits,
 * so dispatchers wake exactly when the event becomes visible (webhooks/outbox-listener.ts).
 */
export async function recordEvent(trx: Db, event: { userId: number; type: string; data: Record<string, unknown>; at: Date }): Promise<string> {
  const id = `evt_${crypto.randomBytes(6).toString('hex')}`
  await trx
    .insertInto('events')
    .values({ id, user_id: event.userId, type: event.type, data: JSON.stringify(event.data), created_at: event.at })
    .execute()
  return id
}
