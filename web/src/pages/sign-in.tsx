import { Fragment } from 'preact'
import { useState } from 'preact/hooks'
import { api } from '../api/endpoints.js'
import { signIn, type Credentials } from '../api/session.js'
import { ErrorBox, toError } from '../components/async.js'

/** The scopes the dashboard uses, which the key hint's command asks for. */
const KEY_SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write', 'webhooks:read', 'webhooks:write', 'market:read']

/**
 * Sign in with an app token or an API key and secret. They are checked with GET /v1/templates
 * (signed, no scope needed) before the session keeps them (web/src/api/session.ts says where).
 */
export function SignIn() {
  const [mode, setMode] = useState<'token' | 'key'>('token')
  const [token, setToken] = useState('')
  const [apiKey, setApiKey] = useState('')
  const [apiSecret, setApiSecret] = useState('')
  const [error, setError] = useState<Error>()
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    const next: Credentials = mode === 'token' ? { kind: 'token', token: token.trim() } : { kind: 'key', apiKey: apiKey.trim(), apiSecret: apiSecret.trim() }
    setError(undefined)
    if (next.kind === 'key' && !globalThis.crypto?.subtle) {
      // WebCrypto (which signs requests) exists only in secure contexts: https, or http on localhost.
      setError(new Error('signing with an API key needs this page on https or on localhost; sign in with an app token here'))
      return
    }
    setBusy(true)
    try {
      signIn(await api.check(next), next)
    } catch (failure) {
      setError(toError(failure))
      setBusy(false)
    }
  }

  return (
    <main class="sign-in">
      <h1>Perpetua</h1>
      <form class="card" onSubmit={submit} data-testid="sign-in">
        <div class="tabs" role="tablist">
          <button type="button" role="tab" aria-selected={mode === 'token'} onClick={() => setMode('token')} data-testid="mode-token">
            App token
          </button>
          <button type="button" role="tab" aria-selected={mode === 'key'} onClick={() => setMode('key')} data-testid="mode-key">
            API key
          </button>
        </div>
        {mode === 'token' ? (
          <>
            <label>
              App token
              <textarea name="token" rows={3} required autocomplete="off" spellcheck={false} value={token} onInput={(e) => setToken(e.currentTarget.value)} />
            </label>
            <p class="hint">
              From the app's sign-in, or in the server's folder: <Command text="node dist/cli.js tokens issue --email you@example.com" />
            </p>
            <p class="hint">Kept for this tab until you sign out or close it.</p>
          </>
        ) : (
          <>
            <label>
              API key
              <input name="api_key" required autocomplete="off" spellcheck={false} placeholder="pk_…" value={apiKey} onInput={(e) => setApiKey(e.currentTarget.value)} />
            </label>
            <label>
              API secret
              <input name="api_secret" type="password" required autocomplete="off" value={apiSecret} onInput={(e) => setApiSecret(e.currentTarget.value)} />
            </label>
            <p class="hint">
              <Command text={`node dist/cli.js keys create --email you@example.com --scopes ${KEY_SCOPES.join(',')}`} />
            </p>
            <p class="hint">The secret stays in this tab's memory only: a reload asks for it again.</p>
          </>
        )}
        <ErrorBox error={error} />
        <button type="submit" class="primary" disabled={busy} data-testid="sign-in-submit">
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  )
}

/**
 * A command to copy: it wraps between words and after a list's commas, never inside a word (not at
 * the hyphens of `--scopes` either), and copies as the plain text it shows.
 */
function Command({ text }: { text: string }) {
  const words = text.split(' ')
  return (
    <code class="command">
      {words.map((word, i) => (
        <Fragment key={i}>
          {i > 0 ? ' ' : ''}
          {word.split(',').map((part, j) => (
            <Fragment key={j}>
              {j > 0 ? ',' : ''}
              {j > 0 ? <wbr /> : null}
              <span>{part}</span>
            </Fragment>
          ))}
        </Fragment>
      ))}
    </code>
  )
}
