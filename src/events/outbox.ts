import crypto from 'node:crypto'
import type { Db } from '../db/connect.js'

/** The NOTIFY channel on which a committed event is announced (trigger in migrations/0003_webhooks.sql). */
export const OUTBOX_CHANNEL = 'perpetua_outbox'

/** An event as a producer hands it to the outbox. */
export interface EventInsert {
  userId: number
  type: string
  data: Record<string, unknown>
  at: Date
}

/**
 * Writes an event to the outbox, inside the caller's transaction; the webhook pipeline delivers it.
 * A trigger on the table NOTIFYs, which PostgreSQL sends only when the caller's transaction commits,
 * so dispatchers wake exactly when the event becomes visible (webhooks/outbox-listener.ts).
 */
export async function recordEvent(trx: Db, event: EventInsert): Promise<string> {
  return (await recordEvents(trx, [event]))[0]!
}

/** Writes events in one statement (the trigger NOTIFYs once per statement); their ids in order. */
export async function recordEvents(trx: Db, events: readonly EventInsert[]): Promise<string[]> {
  if (events.length === 0) return []
  const rows = events.map((event) => ({
    id: `evt_${crypto.randomBytes(6).toString('hex')}`,
    user_id: event.userId,
    type: event.type,
    data: JSON.stringify(event.data),
    created_at: event.at,
  }))
  await trx.insertInto('events').values(rows).execute()
  return rows.map((row) => row.id)
}
