import type { CreatedWebhook, Operation, QueryParams, Webhook, WebhookCreate, WebhookTestResult, WebhookUpdate } from './operations.js'
import type { ApiClient } from './api-client.js'

type ListQuery = QueryParams<Operation<'/v1/webhooks', 'get'>>
type DeliveryQuery = QueryParams<Operation<'/v1/webhooks/{id}/deliveries', 'get'>>

export class WebhooksApi {
  constructor(private readonly client: ApiClient) {}

  list(query: ListQuery = {}) {
    return this.client.get('/v1/webhooks', { query })
  }
  iterate(query: Omit<ListQuery, 'cursor'> = {}) {
    return this.client.iterate('/v1/webhooks', { query })
  }
  get(id: string): Promise<Webhook> {
    return this.client.get('/v1/webhooks/{id}', { path: { id } })
  }
  /** Subscribes a URL; the answer's `secret` (shown only here) verifies deliveries: verifyWebhook(). */
  create(webhook: WebhookCreate): Promise<CreatedWebhook> {
    return this.client.post('/v1/webhooks', { body: webhook }) as Promise<CreatedWebhook>
  }
  update(id: string, changes: WebhookUpdate): Promise<Webhook> {
    return this.client.patch('/v1/webhooks/{id}', { path: { id }, body: changes }) as Promise<Webhook>
  }
  delete(id: string): Promise<void> {
    return this.client.delete('/v1/webhooks/{id}', { path: { id } }) as Promise<void>
  }
  /** Sends a test delivery through the real pipeline and reports how the receiver answered. */
  test(id: string, eventType?: string): Promise<WebhookTestResult> {
    return this.client.post('/v1/webhooks/{id}/test', { path: { id }, body: eventType === undefined ? {} : { event_type: eventType } }) as Promise<WebhookTestResult>
  }
  /** One page of recent delivery attempts, newest first. */
  deliveries(id: string, query: DeliveryQuery = {}) {
    return this.client.get('/v1/webhooks/{id}/deliveries', { path: { id }, query })
  }
}
