import { useState } from 'preact/hooks'
import { BALANCE_LOW, EVENT_TYPES, WILDCARDS } from '../../../../src/webhooks/events.js'
import { api } from '../../api/endpoints.js'
import type { CreatedWebhook } from '../../api/types.js'
import { ErrorBox, Loading, TableWrap, toError, useAsync } from '../../components/async.js'
import { time } from '../../format.js'
import { Link } from '../../router.js'

/** The user's webhooks (status, failures, last delivery) and a form to register one. */
export function WebhooksPage() {
  const hooks = useAsync(() => api.webhooks({ limit: 100 }), [])
  const [showForm, setShowForm] = useState(false)
  const [created, setCreated] = useState<CreatedWebhook>()
  return (
    <section>
      <div class="heading">
        <h1>Webhooks</h1>
        <button type="button" class="primary" onClick={() => setShowForm((v) => !v)} data-testid="new-webhook">
          {showForm ? 'Close' : 'New webhook'}
        </button>
      </div>
      {showForm ? (
        <WebhookForm
          onCreated={(hook) => {
            setCreated(hook)
            setShowForm(false)
            hooks.reload()
          }}
        />
      ) : null}
      {created ? (
        <div class="card notice" data-testid="webhook-secret">
          <p>
            <strong>Signing secret of {created.id}</strong> — shown only now; store it where your receiver can read it:
          </p>
          <code class="secret">{created.secret}</code>
          <p class="hint">{created._secret_warning}</p>
          <button type="button" onClick={() => setCreated(undefined)}>
            I have stored it
          </button>
        </div>
      ) : null}
      <ErrorBox error={hooks.error} />
      {!hooks.data ? (
        hooks.error ? null : <Loading what="webhooks" />
      ) : (
        <TableWrap>
          <table data-testid="webhooks-table">
            <thead>
              <tr>
                <th>URL</th>
                <th>Events</th>
                <th>Status</th>
                <th class="num">Failures in a row</th>
                <th>Last delivery</th>
                <th>Last success</th>
              </tr>
            </thead>
            <tbody>
              {hooks.data.data.map((h) => (
                <tr key={h.id} data-webhook-id={h.id} data-status={h.status}>
                  <td>
                    <Link href={`/webhooks/${h.id}`}>{h.url}</Link>
                    {h.description ? <div class="muted">{h.description}</div> : null}
                  </td>
                  <td>{h.events.join(', ')}</td>
                  <td>
                    <span class={`badge ${h.status}`}>{h.status}</span>
                  </td>
                  <td class="num">{h.consecutive_failures}</td>
                  <td>{time(h.last_delivery_at)}</td>
                  <td>{time(h.last_success_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableWrap>
      )}
      {hooks.data?.data.length === 0 ? <p class="muted">No webhooks yet.</p> : null}
    </section>
  )
}

function WebhookForm({ onCreated }: { onCreated: (hook: CreatedWebhook) => void }) {
  const [url, setUrl] = useState('https://')
  const [events, setEvents] = useState<string[]>(['strategy.*'])
  const [description, setDescription] = useState('')
  const [threshold, setThreshold] = useState('')
  const [error, setError] = useState<Error>()
  const toggle = (event: string) => setEvents((previous) => (previous.includes(event) ? previous.filter((e) => e !== event) : [...previous, event]))
  const submit = async (e: Event) => {
    e.preventDefault()
    setError(undefined)
    try {
      onCreated(
        await api.createWebhook({
          url: url.trim(),
          events,
          ...(description.trim() ? { description: description.trim() } : {}),
          ...(threshold.trim() ? { balance_low_threshold: threshold.trim() } : {}),
        }),
      )
    } catch (failure) {
      setError(toError(failure))
    }
  }
  return (
    <form class="card form-grid" onSubmit={submit} data-testid="webhook-form">
      <label class="wide">
        URL (https)
        <input name="url" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </label>
      <fieldset class="wide events">
        <legend>Events</legend>
        {[...WILDCARDS, ...EVENT_TYPES].map((event) => (
          <label key={event} class="check">
            <input type="checkbox" checked={events.includes(event)} onChange={() => toggle(event)} data-event={event} />
            {event}
          </label>
        ))}
      </fieldset>
      <label>
        Description
        <input name="description" maxLength={200} value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
      </label>
      <label>
        Balance-low threshold
        <input name="balance_low_threshold" inputMode="decimal" placeholder={`needed with ${BALANCE_LOW}`} value={threshold} onInput={(e) => setThreshold(e.currentTarget.value)} />
      </label>
      <div class="wide">
        <ErrorBox error={error} />
        <button type="submit" class="primary">
          Create
        </button>
      </div>
    </form>
  )
}
