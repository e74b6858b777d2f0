import { type Selectable, sql } from 'kysely'
import type { Db } from '../db/connect.js'
import type { DeliveriesTable, DeliveryAttemptsTable, WebhookStatus, WebhooksTable } from '../db/schema.js'
import type { KeysetPosition } from '../http/cursor.js'

export type WebhookRow = Selectable<WebhooksTable>
export type DeliveryRow = Selectable<DeliveriesTable>
export type AttemptRow = Selectable<DeliveryAttemptsTable>

/** Counts the user's webhooks while holding a lock on the user's row, so concurrent creates take turns (limit 25). */
export async function lockUserAndCountWebhooks(trx: Db, userId: number): Promise<number> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirstOrThrow()
  const row = await trx
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return Number(row.count)
}

export async function insertWebhook(
  db: Db,
  webhook: { id: string; userId: number; url: string; events: string[]; description: string | null; balanceLowThreshold: string | null; secretEnc: string; at: Date },
): Promise<WebhookRow> {
  return db
    .insertInto('webhooks')
    .values({
      id: webhook.id,
      user_id: webhook.userId,
      url: webhook.url,
      events: webhook.events,
      description: webhook.description,
      balance_low_threshold: webhook.balanceLowThreshold,
      secret_enc: webhook.secretEnc,
      last_delivery_at: null,
      last_success_at: null,
      created_at: webhook.at,
      updated_at: webhook.at,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function findWebhook(db: Db, userId: number, id: string, options: { forUpdate?: boolean } = {}): Promise<WebhookRow | undefined> {
  const query = db.selectFrom('webhooks').selectAll().where('id', '=', id).where('user_id', '=', userId)
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst()
}

export async function listWebhooks(
  db: Db,
  userId: number,
  filter: { status?: WebhookStatus; subscriptions?: string[]; after?: KeysetPosition; limit: number },
): Promise<WebhookRow[]> {
  let query = db.selectFrom('webhooks').selectAll().where('user_id', '=', userId)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.subscriptions) query = query.where(sql<boolean>`events && ${sql.val(filter.subscriptions)}::text[]`)
  if (filter.after) {
    const { time, id } = filter.after
    query = query.where((eb) => eb.or([eb('created_at', '<', time), eb.and([eb('created_at', '=', time), eb('id', '<', id)])]))
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute()
}

export async function updateWebhook(
  db: Db,
  id: string,
  changes: Partial<Pick<WebhookRow, 'url' | 'events' | 'description' | 'status' | 'balance_low_threshold' | 'consecutive_failures'>>,
  at: Date,
): Promise<WebhookRow> {
  return db
    .updateTable('webhooks')
    .set({ ...changes, updated_at: at })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function deleteWebhook(db: Db, userId: number, id: string): Promise<boolean> {
  const rows = await db.deleteFrom('webhooks').where('id', '=', id).where('user_id', '=', userId).returning('id').execute()
  return rows.length > 0
}

/** A page of one webhook's attempts, newest first, with the state of each attempt's delivery now. */
export async function listAttempts(db: Db, webhookId: string, filter: { after?: KeysetPosition; limit: number }) {
  let query = db
    .selectFrom('delivery_attempts as a')
    // A left join: retention may have removed the delivery before its last attempts.
    .leftJoin('deliveries as d', 'd.id', 'a.delivery_id')
    .select([
      'a.id',
      'a.event_id',
      'a.event_type',
      'a.attempt',
      'a.attempted_at',
      'a.delivered',
      'a.response_status',
      'a.response_time_ms',
      'a.error',
      'd.state',
      'd.next_attempt_at',
      'd.lease',
    ])
    .where('a.webhook_id', '=', webhookId)
  if (filter.after) {
    const { time, id } = filter.after
    // Attempt ids are bigint; the cursor carries them as digits.
    query = query.where((eb) =>
      eb.or([eb('a.attempted_at', '<', time), eb.and([eb('a.attempted_at', '=', time), eb('a.id', '<', sql<string>`${id}::bigint`)])]),
    )
  }
  return query.orderBy('a.attempted_at', 'desc').orderBy('a.id', 'desc').limit(filter.limit).execute()
}
