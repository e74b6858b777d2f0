import { sql } from 'kysely'
import type { Db } from '../db/connect.js'
import type { WebhookStatus } from '../db/schema.js'
import { BALANCE_LOW } from './events.js'

/**
 * Fans out up to `limit` outbox events in one statement: claims events no node has fanned out (in the
 * order they were written, SKIP LOCKED so dispatchers on several nodes never share one), marks them, and inserts one
 * delivery per subscribed webhook of the event's user, in event order. The subscription match is
 * events.ts's `subscriptionsMatching` (the type, its group's wildcard, `*`); account.balance_low also
 * needs the webhook's threshold, and a stated balance (`data.available`) below it.
 * Deliveries to active webhooks are inserted already leased to the caller's jobs; those of paused or
 * broken webhooks are held. Returns how many events were claimed and the leased deliveries.
 */
export async function fanOutEvents(trx: Db, now: Date, lease: string, leaseUntil: Date, limit: number) {
  const result = await sql<{ events: string; id: string | null; webhook_id: string | null }>`
    WITH claimed AS (
      SELECT id, user_id, type, data, seq FROM events
      WHERE fanned_out_at IS NULL
      ORDER BY seq
      LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    ), marked AS (
      UPDATE events SET fanned_out_at = ${now} FROM claimed WHERE events.id = claimed.id RETURNING events.id
    ), inserted AS (
      INSERT INTO deliveries (webhook_id, event_id, event_type, body, next_attempt_at, lease, created_at, updated_at)
      SELECT w.id, c.id, c.type, NULL,
        CASE WHEN w.status = 'active' THEN ${leaseUntil}::timestamptz ELSE ${now}::timestamptz END,
        CASE WHEN w.status = 'active' THEN ${lease} ELSE NULL END,
        ${now}, ${now}
      FROM claimed c JOIN webhooks w ON w.user_id = c.user_id
      WHERE w.events && ARRAY[c.type, split_part(c.type, '.', 1) || '.*', '*']
        AND (c.type <> ${BALANCE_LOW} OR (w.balance_low_threshold IS NOT NULL AND CASE
          WHEN (c.data->>'available') ~ '^-?[0-9]{1,30}(\\.[0-9]{1,30})?$' THEN (c.data->>'available')::numeric < w.balance_low_threshold
          ELSE true END))
      ORDER BY c.seq, w.created_at, w.id
      ON CONFLICT (webhook_id, event_id) DO NOTHING
      RETURNING id, webhook_id, lease
    )
    SELECT m.events, i.id, i.webhook_id
    FROM (SELECT count(*) AS events FROM marked) m
    LEFT JOIN inserted i ON i.lease IS NOT NULL`.execute(trx)
  const events = Number(result.rows[0]?.events ?? 0)
  const leased = result.rows.filter((row): row is { events: string; id: string; webhook_id: string } => row.id !== null && row.webhook_id !== null)
  return { events, leased }
}

/** Inserts a test delivery, leased to the request that makes its first attempt. */
export async function insertTestDelivery(
  db: Db,
  delivery: { webhookId: string; eventId: string; eventType: string; body: string; lease: string; leaseUntil: Date; at: Date },
): Promise<string> {
  const row = await db
    .insertInto('deliveries')
    .values({
      webhook_id: delivery.webhookId,
      event_id: delivery.eventId,
      event_type: delivery.eventType,
      body: delivery.body,
      next_attempt_at: delivery.leaseUntil,
      lease: delivery.lease,
      last_status: null,
      last_error: null,
      created_at: delivery.at,
      updated_at: delivery.at,
    })
    .returning('id')
    .executeTakeFirstOrThrow()
  return row.id
}

/**
 * Leases pending deliveries of active webhooks that are due, oldest due first: `lease` marks them as
 * owned by the jobs about to be sent, and `next_attempt_at` becomes the lease's expiry, after which a
 * later sweep hands them out again (a worker that died mid-job loses nothing: at least once).
 */
export async function leaseDueDeliveries(trx: Db, now: Date, lease: string, leaseUntil: Date, limit: number) {
  const result = await sql<{ id: string; webhook_id: string }>`
    UPDATE deliveries SET lease = ${lease}, next_attempt_at = ${leaseUntil}, updated_at = ${now}
    WHERE id IN (
      SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
      WHERE d.state = 'pending' AND d.next_attempt_at <= ${now} AND w.status = 'active'
      ORDER BY d.next_attempt_at, d.id
      LIMIT ${limit}
      FOR UPDATE OF d SKIP LOCKED
    )
    RETURNING id, webhook_id`.execute(trx)
  return result.rows
}

export interface LeasedDelivery {
  id: string
  webhook_id: string
  event_id: string
  event_type: string
  /** The stored body (test deliveries); null for outbox events, whose row follows. */
  body: string | null
  event_created_at: Date | null
  event_data: unknown
  attempts: number
  url: string
  secret_enc: string
  status: WebhookStatus
}

/** The deliveries of a job that the job still owns (a sweep may have re-leased them after expiry). */
export async function loadLeased(db: Db, ids: string[], lease: string): Promise<LeasedDelivery[]> {
  if (ids.length === 0) return []
  return db
    .selectFrom('deliveries as d')
    .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
    .leftJoin('events as e', 'e.id', 'd.event_id')
    .select([
      'd.id',
      'd.webhook_id',
      'd.event_id',
      'd.event_type',
      'd.body',
      'e.created_at as event_created_at',
      'e.data as event_data',
      'd.attempts',
      'w.url',
      'w.secret_enc',
      'w.status',
    ])
    .where('d.id', 'in', ids)
    .where('d.lease', '=', lease)
    .where('d.state', '=', 'pending')
    .orderBy('d.id')
    .execute()
}

/** Gives leased deliveries back unattempted, due at `dueAt` (held ones of a paused webhook, or the rest behind a failure). */
export async function releaseLeased(db: Db, ids: string[], lease: string, dueAt: Date, now: Date): Promise<void> {
  if (ids.length === 0) return
  await db
    .updateTable('deliveries')
    .set({ lease: null, next_attempt_at: dueAt, updated_at: now })
    .where('id', 'in', ids)
    .where('lease', '=', lease)
    .execute()
}

export interface AttemptRecord {
  deliveryId: string
  webhookId: string
  eventId: string
  eventType: string
  attempt: number
  at: Date
  delivered: boolean
  status: number | null
  timeMs: number | null
  error: string | null
}

export async function insertAttempts(trx: Db, attempts: AttemptRecord[]): Promise<void> {
  if (attempts.length === 0) return
  await trx
    .insertInto('delivery_attempts')
    .values(
      attempts.map((a) => ({
        delivery_id: a.deliveryId,
        webhook_id: a.webhookId,
        event_id: a.eventId,
        event_type: a.eventType,
        attempt: a.attempt,
        attempted_at: a.at,
        delivered: a.delivered,
        response_status: a.status,
        response_time_ms: a.timeMs,
        error: a.error,
      })),
    )
    .execute()
}

/** Settles one delivery after an attempt, if the caller still holds its lease. */
export async function settleDelivery(
  trx: Db,
  id: string,
  lease: string,
  outcome: { state: 'pending' | 'delivered' | 'failed'; attempts: number; nextAttemptAt: Date | null; status: number | null; error: string | null },
  now: Date,
): Promise<void> {
  await trx
    .updateTable('deliveries')
    .set({
      state: outcome.state,
      attempts: outcome.attempts,
      next_attempt_at: outcome.nextAttemptAt,
      lease: null,
      last_status: outcome.status,
      last_error: outcome.error,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('lease', '=', lease)
    .execute()
}

/** What a run of attempts to one webhook did, in the order they were made. */
export interface WebhookTally {
  webhookId: string
  /** Failures in the run; added to consecutive_failures when nothing succeeded. */
  failures: number
  /** When something succeeded: the failures after the last success become consecutive_failures. */
  failuresAfterLastSuccess: number | null
  lastAttemptAt: Date
  lastSuccessAt: Date | null
  /** A receiver answered 410 Gone after the last success: the webhook is paused. */
  gone: boolean
}

/**
 * Applies a tally in one statement, so concurrent runs for one webhook add up: consecutive_failures,
 * last_delivery_at, last_success_at, and the automatic moves (pauseAfter consecutive failures or a
 * 410 pauses an active webhook; breakAfter marks it broken; a broken webhook stays broken until PATCH).
 */
export async function applyTally(trx: Db, tally: WebhookTally, limits: { pauseAfter: number; breakAfter: number }, now: Date) {
  const success = tally.failuresAfterLastSuccess !== null
  const failures = sql`(CASE WHEN ${success}::boolean THEN ${tally.failuresAfterLastSuccess ?? 0}::int ELSE consecutive_failures + ${tally.failures}::int END)`
  const result = await sql<{ status: WebhookStatus; consecutive_failures: number }>`
    UPDATE webhooks SET
      consecutive_failures = ${failures},
      last_delivery_at = GREATEST(last_delivery_at, ${tally.lastAttemptAt}::timestamptz),
      last_success_at = GREATEST(last_success_at, ${tally.lastSuccessAt}::timestamptz),
      status = CASE
        WHEN status = 'broken' OR ${failures} >= ${limits.breakAfter}::int THEN 'broken'
        WHEN status = 'active' AND (${failures} >= ${limits.pauseAfter}::int OR ${tally.gone}::boolean) THEN 'paused'
        ELSE status END,
      updated_at = ${now}
    WHERE id = ${tally.webhookId}
    RETURNING status, consecutive_failures`.execute(trx)
  return result.rows[0]
}

/** Held deliveries older than `before` are given up: a webhook paused for days does not replay stale events. */
export async function expireHeld(db: Db, before: Date, now: Date, error: string): Promise<number> {
  const result = await db
    .updateTable('deliveries')
    .set({ state: 'failed', next_attempt_at: null, lease: null, last_error: error, updated_at: now })
    .where('state', '=', 'pending')
    .where('created_at', '<', before)
    .executeTakeFirst()
  return Number(result.numUpdatedRows)
}

/** Deletes up to `limit` finished deliveries (and their attempts) last touched before `before`. */
export async function deleteFinished(db: Db, before: Date, limit: number): Promise<number> {
  const result = await sql`
    DELETE FROM deliveries WHERE id IN (
      SELECT id FROM deliveries WHERE state <> 'pending' AND updated_at < ${before} LIMIT ${limit}
    )`.execute(db)
  return Number(result.numAffectedRows ?? 0)
}
