import { PerpetuaClient } from '../../../src/client/index.js'

/**
 * Who the dashboard acts as: a typed client (src/client) holding the app token, or the API key and
 * secret it signs with. Held in this module's memory only — never localStorage, sessionStorage,
 * cookies or the URL — so a reload or a closed tab signs out and nothing is left on the device.
 */
export type Credentials = { kind: 'token'; token: string } | { kind: 'key'; apiKey: string; apiSecret: string }

let current: PerpetuaClient | null = null
const listeners = new Set<() => void>()

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

export function signIn(next: PerpetuaClient): void {
  current = next
  for (const listener of listeners) listener()
}

export function signOut(): void {
  current = null
  for (const listener of listeners) listener()
}

/** Calls `listener` on every sign-in and sign-out; returns the unsubscribe function. */
export function onSessionChange(listener: () => void): () => void {
  listeners.add(listener)
  return () => listeners.delete(listener)
}
