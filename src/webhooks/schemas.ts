import { type Static, Type } from 'typebox'
import { Cursor, IsoTimestamp, PageLimit } from '../http/common-schemas.js'
import { EVENT_TYPES, WILDCARDS } from './events.js'

export const WEBHOOK_STATUSES = ['active', 'paused', 'broken'] as const

const catalog = `one of ${[...EVENT_TYPES, ...WILDCARDS].join(', ')}`

const fields = {
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'https:// URL of a publicly reachable host with a valid TLS certificate',
    example: 'https://example.com/hook',
  }),
  events: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems: 1,
    maxItems: 20,
    description: `Event types or wildcards, ${catalog}`,
    example: ['backtest.job_done'],
  }),
  description: Type.String({ maxLength: 200, description: 'At most 200 characters' }),
  balance_low_threshold: Type.String({
    maxLength: 40,
    description: 'Positive decimal; required when events lists account.balance_low, kept when a wildcard covers it, ignored otherwise',
    example: '100',
  }),
}

export const WebhookCreateSchema = Type.Object(
  {
    url: fields.url,
    events: fields.events,
    description: Type.Optional(fields.description),
    balance_low_threshold: Type.Optional(fields.balance_low_threshold),
  },
  { additionalProperties: false },
)
export type WebhookCreate = Static<typeof WebhookCreateSchema>

export const WebhookPatchSchema = Type.Object(
  {
    url: Type.Optional(fields.url),
    events: Type.Optional(fields.events),
    description: Type.Optional(Type.Union([fields.description, Type.Null()])),
    status: Type.Optional(
      Type.Enum(['active', 'paused'] as const, {
        description: 'active reactivates a paused or broken webhook (consecutive_failures back to 0); paused stops deliveries, which are held',
      }),
    ),
    balance_low_threshold: Type.Optional(Type.Union([fields.balance_low_threshold, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1, description: 'Any subset of the fields; a new url is vetted as at create.' },
)
export type WebhookPatch = Static<typeof WebhookPatchSchema>

export const WebhookSchema = Type.Object({
  id: Type.String({ pattern: '^wh_[0-9a-f]{6,8}$' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Type.Union([Type.String(), Type.Null()]),
  status: Type.Enum(WEBHOOK_STATUSES),
  balance_low_threshold: Type.Union([Type.String(), Type.Null()], { description: 'Our addition: the account.balance_low threshold, null when none' }),
  consecutive_failures: Type.Integer(),
  last_delivery_at: Type.Union([IsoTimestamp, Type.Null()]),
  last_success_at: Type.Union([IsoTimestamp, Type.Null()]),
  created_at: IsoTimestamp,
})
export type Webhook = Static<typeof WebhookSchema>

export const CreatedWebhookSchema = Type.Object({
  ...WebhookSchema.properties,
  secret: Type.String({
    description:
      '40 characters of base64url without `-` or `_` (letters and digits), so base64 and base64url read the same 30-byte HMAC key: ' +
      'pass it as is to the Standard Webhooks libraries (`new Webhook(secret)` of standardwebhooks or svix). Shown only here.',
    pattern: '^[A-Za-z0-9]{40}$',
  }),
  _secret_warning: Type.String(),
})
export type CreatedWebhook = Static<typeof CreatedWebhookSchema>

export const WebhookIdSchema = Type.Object({ id: Type.String({ maxLength: 64 }) })

export const WebhookListQuerySchema = Type.Object(
  {
    status: Type.Optional(Type.Enum(WEBHOOK_STATUSES)),
    event: Type.Optional(Type.String({ maxLength: 64, description: `An event type or wildcard, ${catalog}; wildcard subscriptions match their concrete events` })),
    limit: PageLimit(100, 25),
    cursor: Cursor,
  },
  { additionalProperties: false },
)
export type WebhookListQuery = Static<typeof WebhookListQuerySchema>

export const WebhookPageSchema = Type.Object({
  data: Type.Array(WebhookSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
})

export const TestDeliveryBodySchema = Type.Object(
  {
    event_type: Type.Optional(Type.String({ maxLength: 64, description: `Default webhook.test; any of ${EVENT_TYPES.join(', ')} (data holds dummy values)` })),
  },
  { additionalProperties: false },
)
export type TestDeliveryBody = Static<typeof TestDeliveryBodySchema>

export const TestDeliveryResultSchema = Type.Object({
  test_event_id: Type.String({ pattern: '^evt_test_[0-9a-f]{10,12}$' }),
  delivered: Type.Boolean({ description: 'true when the receiver answered 2xx within 10 s' }),
  response_status: Type.Union([Type.Integer(), Type.Null()], { description: 'null without an answer (TLS error, refused, timeout)' }),
  response_time_ms: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
})
export type TestDeliveryResult = Static<typeof TestDeliveryResultSchema>

export const NoQuerySchema = Type.Object({}, { additionalProperties: false })

export const DeliveryListQuerySchema = Type.Object(
  {
    limit: PageLimit(100, 25),
    cursor: Cursor,
  },
  { additionalProperties: false },
)
export type DeliveryListQuery = Static<typeof DeliveryListQuerySchema>

export const DeliveryAttemptSchema = Type.Object({
  event_id: Type.String(),
  event_type: Type.String(),
  attempt: Type.Integer({ description: '1 for the first attempt of the event, then one more per retry' }),
  attempted_at: IsoTimestamp,
  delivered: Type.Boolean(),
  response_status: Type.Union([Type.Integer(), Type.Null()]),
  response_time_ms: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  delivery_state: Type.Enum(['pending', 'delivered', 'failed'] as const, { description: "The event's delivery now: pending (a retry is due or held), delivered, or failed (retries exhausted)" }),
  next_attempt_at: Type.Union([IsoTimestamp, Type.Null()], { description: 'When the next retry is due; null once delivered or failed' }),
})
export type DeliveryAttempt = Static<typeof DeliveryAttemptSchema>

export const DeliveryPageSchema = Type.Object({
  data: Type.Array(DeliveryAttemptSchema),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
})
