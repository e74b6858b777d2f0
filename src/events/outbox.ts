import crypto from 'node:crypto'
import type { Db } from '../db/connect.js'

/** Writes an event to the outbox, inside the caller's transaction; the webhook pipeline delivers it. */
export async function recordEvent(trx: Db, event: { userId: number; type: string; data: Record<string, unknown>; at: Date }): Promise<string> {
  const id = `evt_${crypto.randomBytes(6).toString('hex')}`
  await trx
    .insertInto('events')
    .values({ id, user_id: event.userId, type: event.type, data: JSON.stringify(event.data), created_at: event.at })
    .execute()
  return id
}
