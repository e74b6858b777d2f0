import { PerpetuaClient, PerpetuaError } from '../../../src/client/index.js'

/**
 * Who the dashboard acts as: a typed client (src/client) holding the app token, or the API key and
 * secret it signs with. An app token is also kept in this tab's sessionStorage, so a reload keeps the
 * tab signed in; sign-out, a closed tab or a token the API refuses clears it. The API secret is held
 * in this module's memory only — never in any storage, cookie or the URL — so a key sign-in ends with
 * a reload (docs/decisions/dashboard-and-cli.md, "Dashboard: phones, long runs, units and the tab's session").
 */
export type Credentials = { kind: 'token'; token: string } | { kind: 'key'; apiKey: string; apiSecret: string }

/** The sessionStorage entry holding the tab's app token. */
export const TOKEN_STORAGE_KEY = 'perpetua.appToken'

const listeners = new Set<() => void>()
let current: PerpetuaClient | null = restore()

/** A client of this origin's API with these credentials (none: public routes only). */
export function clientFor(credentials: Credentials | null): PerpetuaClient {
  const baseUrl = location.origin
  if (!credentials) return new PerpetuaClient({ baseUrl })
  if (credentials.kind === 'token') return new PerpetuaClient({ baseUrl, token: credentials.token })
  return new PerpetuaClient({ baseUrl, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret })
}

/** The signed-in client; before sign-in one for the public routes (the market pages). */
export function client(): PerpetuaClient {
  return current ?? clientFor(null)
}

export function signedIn(): boolean {
  return current !== null
}

/** Signs in with a client `credentials` opened; an app token is kept for the tab's session, a secret never. */
export function signIn(next: PerpetuaClient, credentials: Credentials): void {
  if (credentials.kind === 'token') storage()?.setItem(TOKEN_STORAGE_KEY, credentials.token)
  else storage()?.removeItem(TOKEN_STORAGE_KEY)
  current = next
  for (const listener of listeners) listener()
}

export function signOut(): void {
  storage()?.removeItem(TOKEN_STORAGE_KEY)
  current = null
  for (const listener of listeners) listener()
}

/** Calls `listener` on every sign-in and sign-out; returns the unsubscribe function. */
export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}

/**
 * The client of the token this tab kept, checked once in the background (GET /v1/templates, signed,
 * no scope): an expired or revoked token signs out instead of leaving every page on a 401.
 */
function restore(): PerpetuaClient | null {
  const token = storage()?.getItem(TOKEN_STORAGE_KEY)
  if (!token) return null
  const restored = clientFor({ kind: 'token', token })
  restored.get('/v1/templates').catch((error: unknown) => {
    if (error instanceof PerpetuaError && error.status === 401 && current === restored) signOut()
  })
  return restored
}

/** The tab's sessionStorage, or undefined where the browser refuses it (storage disabled). */
function storage(): Storage | undefined {
  try {
    return globalThis.sessionStorage
  } catch {
    return undefined
  }
}
