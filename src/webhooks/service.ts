import type { SecretBox } from '../auth/secret-box.js'
import type { Db } from '../db/connect.js'
import { isUniqueViolation } from '../db/errors.js'
import type { WebhookStatus } from '../db/schema.js'
import { DecimalString, isPositiveDecimal } from '../http/common-schemas.js'
import { decodeCursor, encodeCursor } from '../http/cursor.js'
import { AppError, invalidParameter, notFound } from '../http/errors.js'
import { newId } from '../http/ids.js'
import { BALANCE_LOW, EVENT_TYPES, isEventType, isSubscribable, receives, subscriptionsFoundBy, TEST_EVENT_TYPE, WILDCARDS } from './events.js'
import type { WebhookPipeline } from './pipeline.js'
import {
  deleteWebhook,
  findWebhook,
  insertWebhook,
  listAttempts,
  listWebhooks,
  lockUserAndCountWebhooks,
  updateWebhook,
  type WebhookRow,
} from './queries.js'
import type {
  CreatedWebhook,
  DeliveryAttempt,
  DeliveryListQuery,
  TestDeliveryBody,
  TestDeliveryResult,
  Webhook,
  WebhookCreate,
  WebhookListQuery,
  WebhookPatch,
} from './schemas.js'
import { releaseHeld } from './delivery-queries.js'
import { newWebhookSecret } from './signing.js'
import { vetWebhookUrl } from './url-policy.js'

/** Webhooks one account may have (spec "Limits"). */
export const MAX_WEBHOOKS = 25

export const SECRET_WARNING =
  'Store this secret now: it is shown only in this response and cannot be retrieved again. ' +
  'Verify the webhook-signature header of every delivery with it: it works as is with the Standard Webhooks libraries ' +
  '(new Webhook(secret) of standardwebhooks or svix); the HMAC key is the base64url decoding of the secret.'

export interface WebhookContext {
  db: Db
  userId: number
  now: Date
  secrets: SecretBox
  /** WEBHOOK_ALLOW_PRIVATE_HOSTS (tests only): skip the address checks of urls. */
  allowPrivateHosts: boolean
  pipeline: WebhookPipeline
}

export async function createWebhook(context: WebhookContext, input: WebhookCreate): Promise<CreatedWebhook> {
  const { db, userId, now } = context
  const events = checkEvents(input.events)
  const threshold = checkThreshold(events, input.balance_low_threshold ?? null)
  const url = await checkUrl(input.url, context.allowPrivateHosts)
  const secret = newWebhookSecret()
  const secretEnc = context.secrets.seal(secret)
  for (let attempt = 0; ; attempt++) {
    try {
      const row = await db.transaction().execute(async (trx) => {
        const count = await lockUserAndCountWebhooks(trx, userId)
        if (count >= MAX_WEBHOOKS) {
          throw new AppError('LIMIT_REACHED', `this account already has ${count} webhooks; the limit is ${MAX_WEBHOOKS}. Delete one first`)
        }
        return insertWebhook(trx, {
          id: newId('wh'),
          userId,
          url,
          events,
          description: input.description ?? null,
          balanceLowThreshold: threshold,
          secretEnc,
          at: now,
        })
      })
      return { ...toWebhook(row), secret, _secret_warning: SECRET_WARNING }
    } catch (error) {
      if (isUniqueViolation(error, 'webhooks_user_url_key')) throw duplicateUrl(url)
      // 2^32 ids: a collision is rare but possible; draw again.
      if (attempt < 3 && isUniqueViolation(error, 'webhooks_pkey')) continue
      throw error
    }
  }
}

export async function pageWebhooks({ db, userId }: WebhookContext, query: WebhookListQuery) {
  const limit = query.limit ?? 25
  if (query.event !== undefined && !isSubscribable(query.event)) {
    throw invalidParameter('event', `event must be an event type or wildcard: ${describeCatalog()}`)
  }
  const rows = await listWebhooks(db, userId, {
    status: query.status as WebhookStatus | undefined,
    subscriptions: query.event === undefined ? undefined : subscriptionsFoundBy(query.event),
    after: query.cursor !== undefined ? decodeCursor(query.cursor) : undefined,
    limit: limit + 1,
  })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return {
    data: page.map(toWebhook),
    next_cursor: rows.length > limit && last ? encodeCursor({ time: last.created_at, id: last.id }) : null,
  }
}

export async function getWebhook({ db, userId }: WebhookContext, id: string): Promise<Webhook> {
  return toWebhook(await ownWebhook(db, userId, id))
}

export async function patchWebhook(context: WebhookContext, id: string, input: WebhookPatch): Promise<Webhook> {
  const { db, userId, now } = context
  const current = await ownWebhook(db, userId, id)
  const events = input.events !== undefined ? checkEvents(input.events) : current.events
  const threshold = checkThreshold(events, input.balance_low_threshold !== undefined ? input.balance_low_threshold : current.balance_low_threshold)
  const url = input.url !== undefined && input.url !== current.url ? await checkUrl(input.url, context.allowPrivateHosts) : undefined
  if (input.status === 'paused' && current.status === 'broken') {
    // Paused would let tests through again; a broken webhook comes back only as active (spec "States").
    throw new AppError('INVALID_STATE', `webhook ${id} is broken; reactivate it with {"status":"active"}`)
  }
  const reactivated = input.status === 'active' && current.status !== 'active'
  let row: WebhookRow
  try {
    row = await db.transaction().execute(async (trx) => {
      const locked = await findWebhook(trx, userId, id, { forUpdate: true })
      if (!locked) throw notFound(`webhook ${id}`)
      if (reactivated) await releaseHeld(trx, id, now)
      return updateWebhook(
        trx,
        id,
        {
          events,
          balance_low_threshold: threshold,
          ...(url !== undefined ? { url } : {}),
          ...(input.description !== undefined ? { description: input.description } : {}),
          ...(input.status !== undefined ? { status: input.status } : {}),
          // Reactivation starts the count afresh, or the next failure would pause it again at once.
          ...(reactivated ? { consecutive_failures: 0 } : {}),
        },
        now,
      )
    })
  } catch (error) {
    if (url !== undefined && isUniqueViolation(error, 'webhooks_user_url_key')) throw duplicateUrl(url)
    throw error
  }
  // Deliveries waiting on this node go out to the new URL, or are held while it is paused.
  if (url !== undefined || (input.status !== undefined && input.status !== 'active')) context.pipeline.changed(id)
  // Deliveries held while it was paused or broken go out now.
  if (reactivated) context.pipeline.wake()
  return toWebhook(row)
}

export async function removeWebhook({ db, userId, pipeline }: WebhookContext, id: string): Promise<void> {
  if (!isWebhookId(id) || !(await deleteWebhook(db, userId, id))) throw notFound(`webhook ${id}`)
  pipeline.changed(id)
}

export async function testWebhook(context: WebhookContext, id: string, body: TestDeliveryBody): Promise<TestDeliveryResult> {
  const type = body.event_type ?? TEST_EVENT_TYPE
  const webhook = await ownWebhook(context.db, context.userId, id)
  if (!isEventType(type)) {
    throw invalidParameter('event_type', `event_type must be a concrete event type (no wildcards): one of ${describeCatalog(false)}`)
  }
  if (webhook.status === 'broken') {
    throw new AppError(
      'INVALID_STATE',
      `webhook ${id} is broken after ${webhook.consecutive_failures} consecutive failed deliveries; reactivate it with PATCH /v1/webhooks/${id} {"status":"active"} first`,
    )
  }
  return context.pipeline.testDelivery(webhook, type)
}

export async function pageDeliveries({ db, userId }: WebhookContext, id: string, query: DeliveryListQuery) {
  const limit = query.limit ?? 25
  // A bad query is 400 whichever webhook it names, as on every list.
  const after = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined
  if (after && !/^\d{1,18}$/.test(after.id)) throw invalidParameter('cursor', 'cursor is not a value returned as next_cursor')
  const webhook = await ownWebhook(db, userId, id)
  const rows = await listAttempts(db, webhook.id, { after, limit: limit + 1 })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  const data: DeliveryAttempt[] = page.map((row) => ({
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    attempted_at: row.attempted_at.toISOString(),
    delivered: row.delivered,
    response_status: row.response_status,
    response_time_ms: row.response_time_ms,
    error: row.error,
    delivery_state: row.state ?? (row.delivered ? 'delivered' : 'failed'),
    // While a job holds the delivery, next_attempt_at is its lease's expiry, not a retry time.
    next_attempt_at: row.state === 'pending' && row.lease === null ? (row.next_attempt_at?.toISOString() ?? null) : null,
  }))
  return { data, next_cursor: rows.length > limit && last ? encodeCursor({ time: last.attempted_at, id: last.id }) : null }
}

/** The API representation; never the secret. */
export function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    description: row.description,
    status: row.status,
    balance_low_threshold: row.balance_low_threshold,
    consecutive_failures: row.consecutive_failures,
    last_delivery_at: row.last_delivery_at?.toISOString() ?? null,
    last_success_at: row.last_success_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  }
}

async function ownWebhook(db: Db, userId: number, id: string): Promise<WebhookRow> {
  const row = isWebhookId(id) ? await findWebhook(db, userId, id) : undefined
  if (!row) throw notFound(`webhook ${id}`)
  return row
}

/** Ids not of our form cannot exist: not found without a query. */
const isWebhookId = (id: string): boolean => /^wh_[0-9a-f]{6,8}$/.test(id)

function checkEvents(events: string[]): string[] {
  const unknown = events.find((event) => !isSubscribable(event))
  if (unknown !== undefined) {
    throw invalidParameter('events', `events contains ${JSON.stringify(unknown)}, which is not an event type or wildcard: ${describeCatalog()}`)
  }
  return [...new Set(events)]
}

const DECIMAL = new RegExp((DecimalString('') as { pattern?: string }).pattern!)

/**
 * The threshold to store: required with an explicit account.balance_low, kept when a wildcard covers
 * that event (the wildcard then receives it), and dropped when nothing subscribed receives it (spec: "ignored otherwise").
 */
function checkThreshold(events: string[], threshold: string | null): string | null {
  if (threshold !== null && (!DECIMAL.test(threshold) || !isPositiveDecimal(threshold))) {
    throw invalidParameter('balance_low_threshold', `balance_low_threshold must be a positive decimal string such as "100" or "250.5" (got ${JSON.stringify(threshold)})`)
  }
  if (threshold === null && events.includes(BALANCE_LOW)) {
    throw invalidParameter('balance_low_threshold', 'balance_low_threshold is required when events includes account.balance_low')
  }
  return receives(events, BALANCE_LOW) ? threshold : null
}

async function checkUrl(raw: string, allowPrivateHosts: boolean): Promise<string> {
  const problem = await vetWebhookUrl(raw, { allowPrivateHosts })
  if (problem !== undefined) throw invalidParameter('url', problem)
  // Stored in WHATWG form, so https://Example.com/hook and https://example.com/hook are one URL.
  return new URL(raw).href
}

function duplicateUrl(url: string): AppError {
  return new AppError('DUPLICATE_URL', `a webhook for ${url} is already registered on this account`, { field: 'url' })
}

function describeCatalog(withWildcards = true): string {
  return withWildcards ? `${EVENT_TYPES.join(', ')}, or a wildcard ${WILDCARDS.join(', ')}` : EVENT_TYPES.join(', ')
}
