import { sql } from 'kysely'
import type { Db } from '../../db/connect.js'
import { BALANCE_LOW, subscriptionsMatching } from '../../webhooks/events.js'

export interface WatchedAccount {
  user_id: number
  exchange_key_id: string
  /** The highest threshold of the user's active subscriptions: deliveries pick their own below it. */
  threshold: string
}

/** Verified exchange keys of users with an active webhook that receives account.balance_low, with the threshold to watch. */
export async function watchedAccounts(db: Db): Promise<WatchedAccount[]> {
  const result = await sql<WatchedAccount>`
    SELECT k.user_id, k.id AS exchange_key_id, max(w.balance_low_threshold)::text AS threshold
    FROM webhooks w JOIN exchange_keys k ON k.user_id = w.user_id
    WHERE w.status = 'active' AND w.balance_low_threshold IS NOT NULL
      AND w.events && ${sql.val(subscriptionsMatching(BALANCE_LOW))}::text[]
      AND k.verification_status = 'verified'
    GROUP BY k.user_id, k.id`.execute(db)
  return result.rows
}

/**
 * Records that an asset's balance is below (or not) its threshold; true only for the one caller that
 * moved it from not below (or never seen) to below: that caller fires the event.
 */
export async function markBelow(db: Db, keyId: string, asset: string, below: boolean, now: Date): Promise<boolean> {
  const result = await sql<{ fired: boolean }>`
    INSERT INTO balance_alerts (exchange_key_id, asset, below, changed_at) VALUES (${keyId}, ${asset}, ${below}, ${now})
    ON CONFLICT (exchange_key_id, asset) DO UPDATE SET below = EXCLUDED.below, changed_at = EXCLUDED.changed_at
      WHERE balance_alerts.below IS DISTINCT FROM EXCLUDED.below
    RETURNING below AS fired`.execute(db)
  return below && result.rows.length > 0
}
