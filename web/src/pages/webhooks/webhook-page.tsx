import { useState } from 'preact/hooks'
import { EVENT_TYPES, TEST_EVENT_TYPE } from '../../../../src/webhooks/events.js'
import { api } from '../../api/endpoints.js'
import type { TestDeliveryResult } from '../../api/types.js'
import { ErrorBox, Loading, TableWrap, toError, useAsync } from '../../components/async.js'
import { time } from '../../format.js'

/** One webhook: its state (reactivate or pause it), a test delivery (any event type, dummy data) and its recent delivery attempts. */
export function WebhookPage({ id }: { id: string }) {
  const hook = useAsync(() => api.webhook(id), [id])
  const deliveries = useAsync(() => api.deliveries(id, 50), [id])
  const [eventType, setEventType] = useState<string>(TEST_EVENT_TYPE)
  const [result, setResult] = useState<TestDeliveryResult>()
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)

  const test = async () => {
    setBusy(true)
    setError(undefined)
    setResult(undefined)
    try {
      setResult(await api.testWebhook(id, eventType === TEST_EVENT_TYPE ? undefined : eventType))
      deliveries.reload()
      hook.reload()
    } catch (failure) {
      setError(toError(failure))
    } finally {
      setBusy(false)
    }
  }

  const setStatus = (status: 'active' | 'paused') => api.setWebhookStatus(id, status).then(hook.reload, (e: unknown) => setError(toError(e)))
  const h = hook.data
  return (
    <section data-testid="webhook" data-webhook-id={id}>
      <div class="heading">
        <h1>{id}</h1>
        {h ? (
          <span class={`badge ${h.status}`} data-testid="webhook-status" data-status={h.status}>
            {h.status}
          </span>
        ) : null}
      </div>
      <ErrorBox error={hook.error} />
      {h ? (
        <>
          <p class="muted">
            <code>{h.url}</code> · {h.events.join(', ')} · {h.consecutive_failures} failures in a row · last success {time(h.last_success_at)}
            {h.description ? ` · ${h.description}` : ''}
          </p>
          {h.status === 'active' ? (
            <button type="button" onClick={() => setStatus('paused')} data-testid="pause-webhook">
              Pause deliveries
            </button>
          ) : (
            <button type="button" class="primary" onClick={() => setStatus('active')} data-testid="reactivate-webhook">
              Reactivate ({h.status === 'broken' ? 'tests are refused while broken' : 'held events are then sent'})
            </button>
          )}
        </>
      ) : null}
      <div class="card inline-form">
        <label>
          Event type
          <select value={eventType} onChange={(e) => setEventType(e.currentTarget.value)}>
            {EVENT_TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <button type="button" class="primary" disabled={busy} onClick={test} data-testid="test-webhook">
          {busy ? 'Sending… (up to 10 s)' : 'Send test delivery'}
        </button>
      </div>
      <ErrorBox error={error} />
      {result ? (
        <p class={result.delivered ? 'ok' : 'error'} data-testid="test-result" data-delivered={String(result.delivered)} data-status={result.response_status ?? ''}>
          {result.test_event_id}: {result.delivered ? 'delivered' : 'not delivered'}
          {result.response_status !== null ? ` · HTTP ${result.response_status}` : ''}
          {result.response_time_ms !== null ? ` · ${result.response_time_ms} ms` : ''}
          {result.error ? ` · ${result.error}` : ''}
        </p>
      ) : null}
      <h2>Recent deliveries</h2>
      <ErrorBox error={deliveries.error} />
      {!deliveries.data ? (
        deliveries.error ? null : <Loading what="deliveries" />
      ) : (
        <TableWrap>
          <table data-testid="deliveries-table">
            <thead>
              <tr>
                <th>Attempted</th>
                <th class="secondary">Event</th>
                <th>Type</th>
                <th class="num secondary">Attempt</th>
                <th data-key="result">Result</th>
                <th class="num secondary">HTTP</th>
                <th class="num secondary">ms</th>
                <th class="secondary">State</th>
                <th class="secondary">Next retry</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data.data.map((d) => (
                <tr key={`${d.event_id}-${d.attempt}`} data-event-id={d.event_id} data-delivered={String(d.delivered)}>
                  <td>{time(d.attempted_at)}</td>
                  <td class="secondary">
                    <code>{d.event_id}</code>
                  </td>
                  <td>{d.event_type}</td>
                  <td class="num secondary">{d.attempt}</td>
                  <td class="wrap">
                    {d.delivered ? 'delivered' : d.error ?? 'failed'}
                    {d.response_status !== null ? ` · HTTP ${d.response_status}` : ''}
                  </td>
                  <td class="num secondary">{d.response_status ?? '—'}</td>
                  <td class="num secondary">{d.response_time_ms ?? '—'}</td>
                  <td class="secondary">{d.delivery_state}</td>
                  <td class="secondary">{time(d.next_attempt_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {deliveries.data?.data.length === 0 ? <p class="muted">No deliveries yet.</p> : null}
    </section>
  )
}
